"""The `perudo-ssh` console script as a user runs it: `serve` and `referee`."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sshterm import Terminal

SCRIPT = Path(sys.executable).with_name("perudo-ssh")
SAMPLE = Path(__file__).with_name("records") / "sample.json"


def test_referee_console_script_judges_the_sample_record() -> None:
    done = subprocess.run([SCRIPT, "referee", SAMPLE], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["legal"] is True
    assert verdict["rounds"][0]["loser"] == "ana"


def test_referee_console_script_reads_standard_input_and_refuses_garbage() -> None:
    done = subprocess.run(
        [SCRIPT, "referee", "-"], input="not json", capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
async def test_serve_starts_generates_a_host_key_lets_a_guest_in_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "host_keys"
    server = await asyncio.create_subprocess_exec(
        SCRIPT, "serve", "--port", "0", "--host-keys", str(keys), "--db", str(tmp_path / "p.db"),
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        port = None
        async with asyncio.timeout(30):
            while port is None:
                line = (await server.stderr.readline()).decode()
                assert line, "the server ended before listening"
                if match := re.search(r"perudo-ssh listening on [\d.]+:(\d+)", line):
                    port = int(match.group(1))
        key_file = keys / "ssh_host_ed25519_key"
        assert key_file.stat().st_mode & 0o777 == 0o600
        guest = Terminal()
        await guest.connect(port, "zoe", None)
        await guest.wait_for("welcome, guest-1")  # a guest's name is never kept
        server.send_signal(signal.SIGTERM)
        await guest.wait_for("Server stopping")  # told before the session ends
        async with asyncio.timeout(30):
            assert await server.wait() == 0
        await guest.close()
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()


def test_serve_on_a_port_already_taken_says_so_in_one_line(tmp_path: Path, capsys) -> None:
    import socket

    from perudo_ssh.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status = main([
            "serve", "--port", str(port), "--db", str(tmp_path / "p.db"),
            "--host-keys", str(tmp_path / "keys"), "--config", str(tmp_path / "no.toml"),
        ])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert f"perudo-ssh serve: cannot listen on 127.0.0.1:{port}: " in err
    assert "Traceback" not in err
