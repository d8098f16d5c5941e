"""The operator's metrics (issue 15, item 3): what the lobby counts on its turn, what the
log events count, the census of sessions and tables, the endpoint's text format, the sum
`serve --workers` serves over its processes — and, end to end, a real `perudo-ssh serve
--metrics` scraped and parsed during a game, and `serve --workers 2 --metrics`."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import asyncssh
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from perudo_ssh import protocol as P
from perudo_ssh.lobby.meter import LOCAL_FRONT, census
from perudo_ssh.logs import log_event
from perudo_ssh.metrics import (
    DROPS,
    MULTIPROC_ENV,
    REFUSED,
    MetricsServer,
    count_event,
    observe_events,
    parse_address,
    process_exited,
    serve_aggregate,
)
from tests.sshterm import Terminal
from tests.test_e2e_faults import start_against_a_bot
from tests.test_lobby_support import Player, play_randomly, running_lobby

SCRIPT = Path(sys.executable).with_name("perudo-ssh")


class Recorded:
    """A `Meter` that keeps every call."""

    def __init__(self) -> None:
        self.moves: Counter[str] = Counter()
        self.broadcasts: list[float] = []
        self.saves: list[bool] = []
        self.games = 0
        self.drops: list[str] = []

    def moved(self, by: str) -> None:
        self.moves[by] += 1

    def broadcast(self, seconds: float) -> None:
        self.broadcasts.append(seconds)

    def saved(self, ok: bool) -> None:
        self.saves.append(ok)

    def game_finished(self) -> None:
        self.games += 1

    def dropped(self, reason: str) -> None:
        self.drops.append(reason)


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of the endpoint on `port`, parsed as Prometheus parses them: (name,
    sorted labels) -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain")
        text = answer.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_the_lobby_counts_each_move_the_finished_game_and_times_the_players_moves():
    meter = Recorded()
    async with running_lobby(meter=meter) as lobby:
        ana = Player(lobby, "ana")
        await ana.joined()
        ana.send(P.CreateTable(preset="classic", seats=3, bots=2))
        created = await ana.expect(P.TableState)
        final = await play_randomly(ana, random.Random(5), start=created)
        assert final.game is not None and final.game.winner is not None
        (table,) = lobby.tables.values()
        assert table.log is not None
        seat = [s.name for s in table.seats].index("ana")
        actions = [a for r in table.log.rounds for a in r.actions]
        assert meter.moves["player"] == sum(a.seat == seat for a in actions) > 0
        assert meter.moves["bot"] > 0 and meter.moves["timeout"] == 0
        assert meter.games == 1
        # each of ana's moves timed once, from her command to its events handed out
        assert len(meter.broadcasts) == meter.moves["player"]
        assert all(0 <= seconds < 5 for seconds in meter.broadcasts)
        assert meter.saves == [] and meter.drops == []  # no store here: nothing saved


async def test_saves_are_counted_by_result():
    meter = Recorded()
    failing = {"now": False}

    async def persist(changes: object) -> None:
        if failing["now"]:
            raise OSError(28, "No space left on device")

    async with running_lobby(meter=meter, persist=persist) as lobby:
        ana, ben = Player(lobby, "ana"), Player(lobby, "ben")
        for player in (ana, ben):
            await player.joined()
        ana.send(P.CreateTable(preset="classic", seats=2, bots=1))  # starts: saved
        await ana.expect(P.TableState, lambda e: e.game is not None)
        assert meter.saves and all(meter.saves)
        failing["now"] = True
        ben.send(P.CreateTable(preset="classic", seats=2, bots=1))  # its save fails
        await ben.expect(P.Notice, lambda e: e.text == P.SAVE_PAUSED)
        assert meter.saves[-1] is False


async def test_the_census_counts_sessions_by_place_and_tables_by_status():
    async with running_lobby() as lobby:
        ana, ben, cyd = Player(lobby, "ana"), Player(lobby, "ben"), Player(lobby, "cyd")
        for player in (ana, ben, cyd):
            await player.joined()
        ana.send(P.CreateTable(preset="classic", seats=3, bots=0))
        created = await ana.expect(P.TableState)
        cyd.send(P.SpectateTable(table=created.id))
        await cyd.expect(P.TableState)
        counted = census(lobby)
        assert counted.sessions == {
            (LOCAL_FRONT, "table"): 1,
            (LOCAL_FRONT, "spectating"): 1,
            (LOCAL_FRONT, "lobby"): 1,
        }
        assert counted.tables == {"waiting": 1}


def test_refusals_and_drops_are_counted_from_the_log_events():
    stop = observe_events(count_event)
    try:
        before = (
            REFUSED.labels("session", "per_key")._value.get(),
            DROPS.labels("input_flood")._value.get(),
            DROPS.labels("idle")._value.get(),
        )
        log_event(__import__("logging").getLogger("t"), "session_refused", reason="per_key")
        log_event(__import__("logging").getLogger("t"), "client_dropped", reason="input_flood")
        log_event(__import__("logging").getLogger("t"), "connection_idle", peer="x")
        log_event(__import__("logging").getLogger("t"), "table_created", table=1)  # not one
        after = (
            REFUSED.labels("session", "per_key")._value.get(),
            DROPS.labels("input_flood")._value.get(),
            DROPS.labels("idle")._value.get(),
        )
    finally:
        stop()
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1, 1]


def test_the_address_is_host_and_port():
    assert parse_address("127.0.0.1:9100") == ("127.0.0.1", 9100)
    assert parse_address("[::1]:9100") == ("::1", 9100)
    assert parse_address(":9100") == ("127.0.0.1", 9100)
    for wrong in ("9100", "localhost", "host:port", "h:70000", ""):
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_address(wrong)


def test_the_endpoint_serves_the_text_format_of_this_process():
    server = MetricsServer.start("127.0.0.1:0")
    try:
        before = REGISTRY.get_sample_value("perudo_drops_total", {"reason": "test"}) or 0
        DROPS.labels("test").inc()
        samples = scrape(server.port)
    finally:
        server.stop()
    assert value(samples, "perudo_drops_total", reason="test") == before + 1
    assert ("process_resident_memory_bytes", ()) in samples  # the client's own


def test_workers_metrics_are_the_sum_of_their_processes_and_a_dead_ones_gauges_go(tmp_path):
    child = (
        "from perudo_ssh.metrics import DROPS, SESSIONS\n"
        "import sys\n"
        "DROPS.labels('too_slow').inc(int(sys.argv[1]))\n"
        "SESSIONS.labels(sys.argv[2], 'lobby').set(int(sys.argv[1]))\n"
    )
    env = dict(os.environ, **{MULTIPROC_ENV: str(tmp_path)})
    pids = []
    for count, front in ((2, "a"), (3, "b")):
        done = subprocess.run(
            [sys.executable, "-c", child, str(count), front],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        pids.append(int(next(p.stem.split("_")[-1] for p in tmp_path.glob("gauge_*")
                             if int(p.stem.split("_")[-1]) not in pids)))  # fmt: skip
    server = serve_aggregate("127.0.0.1:0", tmp_path)
    try:
        samples = scrape(server.port)
        assert value(samples, "perudo_drops_total", reason="too_slow") == 5
        assert value(samples, "perudo_sessions", front="a", place="lobby") == 2
        assert value(samples, "perudo_sessions", front="b", place="lobby") == 3
        process_exited(pids[0], tmp_path)  # front a's process exited
        samples = scrape(server.port)
        assert value(samples, "perudo_drops_total", reason="too_slow") == 5  # kept
        assert ("perudo_sessions", (("front", "a"), ("place", "lobby"))) not in samples
        assert value(samples, "perudo_sessions", front="b", place="lobby") == 3
    finally:
        server.stop()


# ---- end to end ---------------------------------------------------------------------------


async def start(
    *args: str, fronts: int = 0
) -> tuple[asyncio.subprocess.Process, list[str], dict[str, int]]:
    """Start `perudo-ssh ARGS` and read its log until it listens (and `fronts` front
    processes do): (process, log lines, the ports it names: "ssh" and "metrics")."""
    process = await asyncio.create_subprocess_exec(
        SCRIPT, *args, stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    log: list[str] = []
    ports: dict[str, int] = {}
    try:
        async with asyncio.timeout(60):
            while "ssh" not in ports or "metrics" not in ports or fronts:
                line = (await process.stderr.readline()).decode()
                assert line, f"it ended before listening: {log}"
                log.append(line)
                if match := re.search(r"metrics on http://[\d.]+:(\d+)/metrics", line):
                    ports["metrics"] = int(match.group(1))
                if match := re.search(r"(?:listening on|fronts on) [\d.]+:(\d+)", line):
                    ports["ssh"] = int(match.group(1))
                if re.search(r"perudo-ssh front [\w-]+ listening on", line):
                    fronts -= 1
    except BaseException:  # it never listened: not left running after the test
        if process.returncode is None:
            process.kill()  # its children die with it (PR_SET_PDEATHSIG)
        await process.wait()
        raise

    async def read_on() -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            log.append(line.decode())

    asyncio.get_running_loop().create_task(read_on())
    return process, log, ports


async def stop(process: asyncio.subprocess.Process) -> int:
    process.terminate()
    async with asyncio.timeout(30):
        return await process.wait()


async def scraped_until(port: int, condition, what: str) -> dict:
    """Scrape until `condition(samples)` (the census is taken every 2 s)."""
    async with asyncio.timeout(20):
        while True:
            samples = await asyncio.to_thread(scrape, port)
            if condition(samples):
                return samples
            await asyncio.sleep(0.2)  # polling a server's state: no event to wait on


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_running_server_is_scraped_during_a_game(tmp_path):
    config = tmp_path / "perudo.toml"
    config.write_text("[limits]\nmax_sessions_per_key = 1\n")
    process, log, ports = await start(
        "serve", "--port", "0", "--metrics", "127.0.0.1:0", "--db", str(tmp_path / "perudo.db"),
        "--host-keys", str(tmp_path / "keys"), "--config", str(config),
    )  # fmt: skip
    key = asyncssh.generate_private_key("ssh-ed25519")
    ana, again = Terminal(), Terminal()
    try:
        await ana.connect(ports["ssh"], "ana", key)
        await ana.wait_for("welcome, ana")
        await start_against_a_bot(ana)
        await ana.wait_for(lambda t: "Your turn" in t or "Current bid" in t)
        samples = await scraped_until(
            ports["metrics"],
            lambda s: value(s, "perudo_sessions", front="local", place="table") == 1,
            "ana at her table",
        )
        assert value(samples, "perudo_tables", status="playing") == 1
        assert value(samples, "perudo_saves_total", result="ok") >= 1
        # ana bids (Enter takes the bid the composer offers, on her turn)
        await ana.wait_for(lambda t: re.search(r"\b[Yy]our turn\b", t) is not None, 30)
        ana.send("enter")
        samples = await scraped_until(
            ports["metrics"],
            lambda s: (
                value(s, "perudo_moves_total", by="player") >= 1
                and value(s, "perudo_broadcast_seconds_count") >= 1
            ),  # once saved and sent
            "ana's bid counted and timed",
        )
        assert value(samples, "perudo_broadcast_seconds_bucket", le="+Inf") >= 1
        # the same key again: refused by the limit of one session a key, and counted
        await again.connect(ports["ssh"], "ana", key)
        await again.wait_for(lambda t: "too many sessions" in t or again.closed, 20)
        samples = await scraped_until(
            ports["metrics"],
            lambda s: any(
                n == "perudo_logins_refused_total" and v >= 1 for (n, _), v in s.items()
            ),  # fmt: skip
            "the refusal counted",
        )
        refused = {labels: v for (n, labels), v in samples.items()
                   if n == "perudo_logins_refused_total"}  # fmt: skip
        assert list(refused.values()) == [1.0], refused
        (labels,) = refused
        assert dict(labels)["stage"] == "session"
    finally:
        await ana.close()
        await again.close()
        status = await stop(process)
    assert status == 0, log[-5:]


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_serve_workers_serves_the_sum_of_its_processes_metrics(tmp_path):
    process, log, ports = await start(
        "serve", "--workers", "2", "--port", "0", "--metrics", "127.0.0.1:0",
        "--db", str(tmp_path / "perudo.db"), "--host-keys", str(tmp_path / "keys"),
        "--config", str(tmp_path / "none.toml"), fronts=2,
    )  # fmt: skip
    terms = [Terminal() for _ in range(3)]
    try:
        for n, term in enumerate(terms):
            await term.connect(ports["ssh"], f"p{n}", None)
            await term.wait_for("welcome, ")
        samples = await scraped_until(
            ports["metrics"],
            lambda s: sum(
                v for (n, labels), v in s.items()
                if n == "perudo_sessions" and dict(labels)["place"] == "lobby"
            ) == 3 and value(s, "perudo_bus_round_trip_seconds_count") > 0,
            "three sessions in the lobby and a round trip timed",
        )  # fmt: skip
        fronts = {dict(labels)["front"] for (n, labels), v in samples.items()
                  if n == "perudo_sessions" and v}  # fmt: skip
        workers = {dict(labels)["worker"]: v for (n, labels), v in samples.items()
                   if n == "perudo_worker_resident_memory_bytes"}  # fmt: skip
        assert set(workers) == {"lobby", "front-1", "front-2", "nats-server"}
        assert all(v > 5e6 for v in workers.values()), workers  # each a live process
        assert value(samples, "perudo_worker_cpu_seconds_total", worker="lobby") > 0
        assert fronts and LOCAL_FRONT not in fronts  # every session on a front process
        # named as the supervisor names them, a random part after (unique at each start)
        assert all(re.fullmatch(r"front-[12]-[0-9a-f]{6}", front) for front in fronts), fronts
        events = [json.loads(line) for line in log if line.startswith("{")]
        assert any(e.get("event") == "front_joined" and e.get("front") in fronts for e in events)
    finally:
        for term in terms:
            await term.close()
        status = await stop(process)
    assert status == 0, log[-5:]


def test_a_taken_metrics_port_is_logged_and_the_game_goes_on(caplog):
    from perudo_ssh.metrics import start_metrics

    taken = MetricsServer.start("127.0.0.1:0")
    try:
        assert start_metrics(f"127.0.0.1:{taken.port}") is None
    finally:
        taken.stop()
    assert any(
        "cannot serve metrics on" in r.getMessage() and r.levelname == "ERROR"
        for r in caplog.records
    )
