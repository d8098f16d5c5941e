"""The session limits and the guest numbers over every front (issue 12, item 3): each front
counts its own sessions and then asks the lobby, which counts those of all fronts
(`LobbyHost`, `relay.Admit`); a session past a limit on one front is refused even when its
own front holds nothing; places come back when sessions end, when their front is lost, and
an admission never followed by its session expires. Guests are numbered once over all
fronts. Over the in-memory bus and NATS, and through two real SSH fronts."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import relay
from perudo_ssh.admission import Connections, SessionCounts
from perudo_ssh.bus import Bus, MemoryBus
from perudo_ssh.front.remote import RemoteLobby
from perudo_ssh.front.server import close_connections, start_front
from perudo_ssh.limits import Limits
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.host import LobbyHost
from tests.sshterm import Terminal, until

pytestmark = pytest.mark.timeout(60)

ANA = asyncssh.generate_private_key("ssh-ed25519")
ANA_FP = ANA.get_fingerprint("sha256")
BEN_FP = "SHA256:ben"


@contextlib.asynccontextmanager
async def two_fronts(
    bus: Bus, limits: Limits, admit_hold: float = relay.ADMIT_HOLD, front_timeout: float = 60.0
) -> AsyncIterator[tuple[Lobby, LobbyHost, list[RemoteLobby]]]:
    lobby = Lobby(bot_delay=(0.0, 0.0), rng=random.Random(3))
    lobby.start()
    host = LobbyHost(
        lobby, bus, limits=limits, admit_hold=admit_hold, front_timeout=front_timeout,
        heartbeat=0.05,
    )  # fmt: skip
    await host.start()
    fronts = [RemoteLobby(bus, heartbeat=0.05) for _ in range(2)]
    for front in fronts:
        await front.start()
    try:
        yield lobby, host, fronts
    finally:
        for front in fronts:
            await front.stop()
        await host.stop()
        await lobby.stop()


async def test_a_key_past_its_limit_on_another_front_is_refused_until_a_place_is_free(any_bus):
    limits = Limits(max_sessions_per_key=1, max_sessions_per_address=0)
    async with two_fronts(any_bus, limits) as (_, host, (one, two)):
        assert await one.admit("10.0.0.1", ANA_FP) is None
        ana = one.connect("ana", ANA_FP, address="10.0.0.1")
        refused = await two.admit("10.0.0.2", ANA_FP)  # another front, another address
        assert refused is not None and refused.reason == "key_full"
        assert refused.args == {"limit": 1} and "too many sessions with this key" in refused.message
        assert await two.admit("10.0.0.2", BEN_FP) is None  # another key: in
        assert host.counts is not None and host.counts.total == 2
        ana.close()  # ended on its front: the place is given back at the lobby
        await until(lambda: host.counts.of_key(ANA_FP) == 0, "ana's place", timeout=5)
        assert await two.admit("10.0.0.2", ANA_FP) is None


async def test_the_total_and_the_address_count_over_every_front(memory_bus):
    limits = Limits(max_sessions=3, max_sessions_per_address=2)
    async with two_fronts(memory_bus, limits) as (_, host, (one, two)):
        for front, name in ((one, "a"), (two, "b")):
            assert await front.admit("10.0.0.1", None) is None
            front.connect(name, None, address="10.0.0.1")
        refused = await one.admit("10.0.0.1", None)
        assert refused is not None and refused.reason == "address_full"
        assert await two.admit("10.0.0.9", None) is None
        two.connect("c", None, address="10.0.0.9")
        full = await one.admit("10.0.0.7", None)
        assert full is not None and (full.reason, full.args) == ("server_full", {"limit": 3})


async def test_an_admission_whose_session_never_comes_is_given_back(memory_bus):
    limits = Limits(max_sessions_per_key=1, max_sessions_per_address=0)
    async with two_fronts(memory_bus, limits, admit_hold=0.2) as (_, host, (one, two)):
        assert await one.admit("10.0.0.1", ANA_FP) is None  # its client leaves: no Attach
        refused = await two.admit("10.0.0.2", ANA_FP)
        assert refused is not None and refused.reason == "key_full"
        await until(lambda: host.counts.total == 0, "the admission to expire", timeout=5)
        assert await two.admit("10.0.0.2", ANA_FP) is None


async def test_a_lost_front_gives_its_places_back_and_a_restarted_lobby_counts_them_again(
    memory_bus,
):
    limits = Limits(max_sessions_per_key=1, max_sessions_per_address=0)
    async with two_fronts(memory_bus, limits, front_timeout=0.3) as (lobby, host, (one, two)):
        assert await one.admit("10.0.0.1", ANA_FP) is None
        one.connect("ana", ANA_FP, address="10.0.0.1")
        await until(lambda: host.sessions == 1, "ana attached", timeout=5)
        one._tasks[1].cancel()  # front one goes silent: taken for dead, its places given back
        await until(lambda: host.counts.total == 0, "front one's places", timeout=5)
        assert host.fronts[one.front].lost
        # a new lobby knows nothing: the fronts attach their sessions again, and they count
        await host.stop()
        again = LobbyHost(lobby, memory_bus, limits=limits, heartbeat=0.05)
        await again.start()
        try:
            one._tasks[1] = asyncio.get_running_loop().create_task(one._heartbeat_loop())
            await until(lambda: again.counts.of_key(ANA_FP) == 1, "ana counted again", timeout=5)
            refused = await two.admit("10.0.0.2", ANA_FP)
            assert refused is not None and refused.reason == "key_full"
        finally:
            await again.stop()


async def test_guests_are_numbered_once_over_every_front(any_bus):
    async with two_fronts(any_bus, Limits()) as (_, _, (one, two)):
        numbers = [await one.guest_number(), await two.guest_number(), await one.guest_number()]
        assert numbers == [1, 2, 3]


async def test_without_a_lobby_a_front_counts_alone_and_numbers_its_own_guests(memory_bus):
    front = RemoteLobby(memory_bus)
    await front.start()
    try:
        assert await front.admit("10.0.0.1", ANA_FP) is None  # nobody answers: its own count
        assert [await front.guest_number(), await front.guest_number()] == [1, 2]
    finally:
        await front.stop()


@pytest.mark.slow
async def test_over_ssh_a_second_session_of_a_key_on_the_other_front_is_told_and_refused(
    tmp_path: Path,
) -> None:
    bus = MemoryBus()
    limits = Limits(max_sessions_per_key=1, max_sessions_per_address=0)
    acceptors, connections = [], []
    async with two_fronts(bus, limits) as (_, host, fronts):
        try:
            for front in fronts:
                conns = Connections(limits)
                acceptor = await start_front(
                    front.connect, None, front.bans, port=0, host_key_dir=tmp_path / "keys",
                    limits=limits, connections=conns,
                    sessions=SessionCounts(limits, shared=front.admit),
                    guests=front.guest_number,
                )  # fmt: skip
                acceptors.append(acceptor)
                connections.append(conns)
            one, two = (a.get_port() for a in acceptors)
            ana = Terminal()
            await ana.connect(one, "ana", ANA)
            await ana.wait_for("welcome, ana")
            again = Terminal()
            await again.connect(two, "ana", ANA)  # the other front holds no session of ana's
            assert await again.ended() == 1
            assert "too many sessions with this key (limit: 1)" in again.raw.decode()
            await again.close()
            await ana.close()
            await until(lambda: host.counts.total == 0, "ana's place", timeout=10)
            back = Terminal()
            await back.connect(two, "ana", ANA)
            await back.wait_for("welcome, ana")
            await back.close()
        finally:
            for acceptor, conns in zip(acceptors, connections, strict=True):
                acceptor.close()
                await close_connections(acceptor, conns)
    await bus.close()
