"""The lobby and its fronts over the bus (issue 12): `LobbyHost` and `RemoteLobby`, with the
in-memory bus and with NATS against a real nats-server. Sessions on different fronts play at
one table; a front's messages carry only its own sessions' events; a front lost, a lobby
restarted and a bus that went down are each recovered from."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

import msgspec

from perudo_ssh import protocol as P
from perudo_ssh import relay
from perudo_ssh.bus import Bus
from perudo_ssh.front import remote as remote_module
from perudo_ssh.front.remote import RECONNECTED, RECONNECTING, RemoteLobby
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.host import LobbyHost, _Outgoing, _split
from perudo_ssh.records import Account
from tests.sshterm import until
from tests.test_lobby_support import WAIT as WAIT_SECONDS
from tests.test_lobby_support import Player, connected, play_randomly


@dataclass
class Relayed:
    bus: Bus
    lobby: Lobby
    host: LobbyHost
    fronts: list[RemoteLobby]


@contextlib.asynccontextmanager
async def relayed(
    bus: Bus, fronts: int = 2, front_timeout: float = 60.0, heartbeat: float = 0.05, **lobby_args
) -> AsyncIterator[Relayed]:
    lobby_args.setdefault("bot_delay", (0.0, 0.0))
    lobby_args.setdefault("reveal_timeout", 30.0)
    lobby_args.setdefault("rng", random.Random(7))
    lobby = Lobby(**lobby_args)
    lobby.start()
    host = LobbyHost(lobby, bus, front_timeout=front_timeout, heartbeat=heartbeat)
    await host.start()
    made = []
    for _ in range(fronts):
        front = RemoteLobby(bus, heartbeat=heartbeat)
        await front.start()
        made.append(front)
    try:
        yield Relayed(bus, lobby, host, made)
    finally:
        for front in made:
            await front.stop()
        await host.stop()
        await lobby.stop()


def _watch_front(front: RemoteLobby) -> list[relay.ToFront]:
    """Every `ToFront` message `front` receives once started, decoded as it arrives."""
    seen: list[relay.ToFront] = []
    received = front._received

    async def recording(data: bytes) -> None:
        seen.append(relay.decode_to_front(data))
        await received(data)

    front._received = recording  # type: ignore[method-assign]
    return seen


async def test_players_on_two_fronts_play_a_whole_game_and_a_spectator_sees_no_dice(any_bus):
    async with relayed(any_bus, fronts=2) as r:
        spectator_front = RemoteLobby(any_bus, heartbeat=0.05)
        seen = _watch_front(spectator_front)  # what the bus brings it, from the start
        await spectator_front.start()
        try:
            ana = await connected(r.fronts[0], "ana")
            ben = await connected(r.fronts[1], "ben")
            assert (ana.name, ben.name) == ("ana", "ben")
            ana.send(P.CreateTable(preset="classic", seats=3, bots=1))
            created = await ana.expect(P.TableState)
            ben.send(P.JoinTable(table=created.id))
            await ben.expect(P.TableState, lambda e: e.status == "playing")
            cy = await connected(spectator_front, "cy")
            cy.send(P.SpectateTable(table=created.id))
            rng = random.Random(5)
            ana_end, ben_end = await asyncio.gather(
                play_randomly(ana, rng), play_randomly(ben, rng)
            )
            assert ana_end.game is not None and ben_end.game is not None
            assert ana_end.game.winner == ben_end.game.winner is not None
            watched = await cy.expect(P.TableState, lambda e: e.game is not None and e.game.winner)
            assert watched.me is None
            assert r.host.sessions == 3
        finally:
            await spectator_front.stop()
    # everything the spectator's front got: its own session's events, and no hidden die
    # in any table state (a reveal after a call shows the dice to all: RULES.md §4)
    tables = 0
    for message in seen:
        assert {local for local, _ in message.to} <= {cy.session.id}
        for data in message.payloads:
            event = P.decode_event(data)
            if isinstance(event, P.TableState) and event.game is not None:
                tables += 1
                assert all(seat.hidden is None for seat in event.game.seats)
    assert tables > 3


async def test_names_and_accounts_cross_and_the_lobby_decides_unique_names(memory_bus):
    async with relayed(memory_bus) as r:
        joined: list[tuple[int, Account | None]] = []
        r.host.joined = lambda session, account: joined.append((session.id, account))
        ana = Player.__new__(Player)
        ana.session = r.fronts[0].connect("ana", "SHA256:ana", account=Account(7, "ana"))
        ana.events = []
        await ana.joined()
        ana2 = await connected(r.fronts[1], "ana")
        assert (ana.name, ana2.name) == ("ana", "ana-2")
        assert [account for _, account in joined] == [Account(7, "ana"), None]


async def test_a_malformed_command_is_refused_at_the_front_and_changes_nothing(memory_bus):
    async with relayed(memory_bus) as r:
        ana = await connected(r.fronts[0], "ana")
        ana.send(P.CreateTable(seats=2.5))  # type: ignore[arg-type]  # a float seat count
        refused = await ana.expect(P.Refused)
        assert refused.code == "bad_command"
        ana.send(P.Say(text="still here"))
        line = await ana.expect(P.ChatLine)
        assert line.text == "still here"


async def test_a_session_closed_at_its_front_leaves_the_lobby(memory_bus):
    async with relayed(memory_bus) as r:
        ana = await connected(r.fronts[0], "ana")
        ben = await connected(r.fronts[1], "ben")
        await ana.expect(P.LobbyState, lambda e: "ben" in e.online)
        ben.session.close()
        state = await ana.expect(P.LobbyState, lambda e: "ben" not in e.online)
        assert state.online == ("ana",)
        assert r.host.sessions == 1


async def test_a_session_too_slow_to_read_is_dropped_at_its_front(memory_bus):
    async with relayed(memory_bus) as r:
        r.fronts[1].outbox_size = 3
        ana = await connected(r.fronts[0], "ana")
        slow = r.fronts[1].connect("slow")  # never reads
        for n in range(20):
            ana.send(P.Say(text=f"line {n}"))
        state = await ana.expect(P.LobbyState, lambda e: e.online == ("ana",))
        assert state.online == ("ana",)
        assert slow.closed
        goodbye = await slow.next_event()
        assert isinstance(goodbye, P.Goodbye) and goodbye.reason == "too slow"


async def test_a_front_lost_has_its_seats_held_and_gets_them_back_when_heard_again(memory_bus):
    async with relayed(memory_bus, front_timeout=0.3, bot_delay=(30.0, 30.0)) as r:
        ana = Player.__new__(Player)
        ana.session = r.fronts[0].connect("ana", "SHA256:ana")
        ana.events = []
        await ana.joined()
        ben = await connected(r.fronts[1], "ben")
        ana.send(P.CreateTable(preset="classic", seats=3, bots=1, grace_seconds=120))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        await ana.expect(P.TableState, lambda e: e.status == "playing")
        heartbeat = r.fronts[0]._tasks[1]
        heartbeat.cancel()  # front 0 goes silent
        held = await ben.expect(P.Notice, lambda e: "lost their connection" in e.text)
        assert held.args["name"] == "ana"
        assert r.host.fronts[r.fronts[0].front].lost
        # heard again: the lobby asks for its sessions, ana is seated back
        r.fronts[0]._tasks[1] = asyncio.get_running_loop().create_task(
            r.fronts[0]._heartbeat_loop()
        )
        back = await ben.expect(P.Notice, lambda e: e.text == "{name} is back")
        assert back.args["name"] == "ana"
        mine = await ana.expect(P.TableState, lambda e: e.me is not None)
        assert mine.me == 0 and mine.status == "playing"
        assert mine.game is not None and mine.game.seats[0].hidden is not None


async def _hosted(bus: Bus, seed: int) -> tuple[Lobby, LobbyHost]:
    """A started lobby and its host on `bus` (a lobby process, as far as the fronts know)."""
    lobby = Lobby(bot_delay=(0.0, 0.0), rng=random.Random(seed))
    lobby.start()
    host = LobbyHost(lobby, bus, heartbeat=0.05)
    await host.start()
    return lobby, host


async def test_a_restarted_lobby_is_told_every_live_session_again(memory_bus):
    bus = memory_bus
    lobby, host = await _hosted(bus, 1)
    front = RemoteLobby(bus, heartbeat=0.05)
    await front.start()
    try:
        ana = await connected(front, "ana")
        await lobby.stop()  # the lobby process ends: its sessions are told, the front too
        await host.stop()
        goodbye = await ana.next()
        assert isinstance(goodbye, P.Goodbye)
        ben = await _connect_soon(front, "ben")  # a session made while it is away
        lobby, host = await _hosted(bus, 2)
        welcome = await ben.expect(P.Welcome)
        assert welcome.name == "ben"
        state = await ben.expect(P.LobbyState)
        assert state.online == ("ben",)
    finally:
        await front.stop()
        await host.stop()
        await lobby.stop()


async def test_who_sent_a_command_to_a_lobby_that_died_is_told_it_may_not_have_reached_it(
    memory_bus,
):
    """A lobby that dies takes nothing more, and a command sent before the fronts notice may
    have gone to it: once a restarted lobby is heard, its sender (only) is told to check and
    do it again."""
    bus = memory_bus
    lobby, host = await _hosted(bus, 1)
    front = RemoteLobby(bus, heartbeat=0.05)
    await front.start()
    again: LobbyHost | None = None
    try:
        ana, ben = await connected(front, "ana"), await connected(front, "ben")
        # the lobby process dies (kill -9): it hears nothing more and says nothing more
        assert host._subscription is not None
        await host._subscription.stop()
        for task in host._tasks:
            task.cancel()
        ana.send(P.Say(text="anyone there?"))
        await until(lambda: front.sessions[ana.session.id].sent_at > 0, "ana's line sent")
        _, again = await _hosted(bus, 2)  # a new incarnation: ana and ben attached again
        told = await ana.expect(P.Notice, lambda e: e.text == remote_module.MAYBE_LOST)
        assert told.args == {}
        await ben.expect(P.Welcome)  # attached again: what the front told ben came before
        assert not any(
            isinstance(e, P.Notice) and e.text == remote_module.MAYBE_LOST for e in ben.events
        )
    finally:
        await front.stop()
        if again is not None:
            await again.stop()
            await again.lobby.stop()
        await lobby.stop()


async def _connect_soon(front: RemoteLobby, name: str) -> Player:
    player = Player.__new__(Player)
    player.session = front.connect(name)
    player.events = []
    return player


async def test_a_bus_that_went_down_is_said_and_every_session_gets_its_state_again(
    memory_bus, monkeypatch
):
    monkeypatch.setattr(remote_module, "RECONNECTING_AFTER", 0.0)
    async with relayed(memory_bus) as r:
        ana = await connected(r.fronts[0], "ana")
        ana.send(P.CreateTable(preset="classic", seats=3, bots=1))
        await ana.expect(P.TableState)
        r.fronts[0]._bus_state("disconnected")
        down = await ana.expect(P.Notice)
        assert down.text == RECONNECTING
        r.fronts[0]._bus_state("reconnected")
        back = await ana.expect(P.Notice)
        assert back.text == RECONNECTED
        again = await ana.expect(P.TableState)  # sent afresh by `Lobby.refresh`
        assert again.me == 0 and again.status == "waiting"


def test_a_batch_too_large_for_one_message_is_split_in_order_each_payload_once():
    big = b"x" * 400
    shared = b"lobby list"
    outgoing = _Outgoing(
        events=[(1, shared), (2, shared), (1, big), (2, bytes(bytearray(big))), (3, shared)],
        ends=[(4, b"bye")],
        again=[5],
    )
    messages = _split(outgoing, limit=500)
    assert len(messages) == 2
    first, second = messages
    assert first.payloads == (shared, big) and first.to == ((1, 0), (2, 0), (1, 1))
    assert second.payloads == (big, shared) and second.to == ((2, 0), (3, 1))
    assert (first.ends, first.again) == ((), ())
    assert (second.ends, second.again) == (((4, b"bye"),), (5,))


async def test_what_is_not_a_front_message_is_logged_and_ignored(memory_bus, caplog):
    async with relayed(memory_bus, fronts=1) as r:
        ana = await connected(r.fronts[0], "ana")
        await memory_bus.publish(relay.lobby_subject("perudo"), b"\xc1garbage")
        await memory_bus.publish(
            relay.lobby_subject("perudo"),
            msgspec.msgpack.encode({"front": "x", "items": [{"type": "Nope"}]}),
        )
        ana.send(P.Say(text="after"))
        line = await ana.expect(P.ChatLine)
        assert line.text == "after"
        assert "not a front's" in caplog.text


async def test_the_fronts_learn_the_lobbys_bans_as_they_change(memory_bus):
    async with relayed(memory_bus) as r:
        front = r.fronts[0]
        assert await front.bans_known(WAIT_SECONDS)
        assert front.bans.active_ban("SHA256:eve", None) is None
        row = r.lobby.moderation.ban("key", "SHA256:eve", "spam", None)
        await until(lambda: front.bans.active_ban("SHA256:eve", None) == row, "the ban")
        assert front.bans.banned_keys() == {"SHA256:eve"}
        assert front.bans.active_ban("SHA256:ana", "10.0.0.1") is None
        r.lobby.moderation.lift_ban(row.id)
        await until(lambda: front.bans.banned_keys() == frozenset(), "the ban lifted")


async def test_what_is_said_while_the_lobby_is_gone_is_held_and_taken_once_it_is_back(
    memory_bus,
):
    bus = memory_bus
    lobby = Lobby(bot_delay=(0.0, 0.0), rng=random.Random(1))
    lobby.start()
    host = LobbyHost(lobby, bus, heartbeat=0.05)
    await host.start()
    front = RemoteLobby(bus, heartbeat=0.05)
    await front.start()
    second: Lobby | None = None
    try:
        ana = await _connect_soon(front, "ana")
        await ana.joined()
        await host.stop()  # the lobby process dies: nothing more comes from it
        await until(lambda: not front._lobby_here, "the front to take the lobby as gone")
        down = await ana.expect(P.Notice)
        assert down.text == RECONNECTING
        ana.send(P.Say(text="anyone?"))
        second = Lobby(bot_delay=(0.0, 0.0), rng=random.Random(2))
        second.start()
        host = LobbyHost(second, bus, heartbeat=0.05)
        await host.start()
        back = await ana.expect(P.Notice)
        assert back.text == RECONNECTED
        await ana.expect(P.Welcome)  # attached to the new lobby first, then the line
        line = await ana.expect(P.ChatLine)
        assert (line.name, line.text) == ("ana", "anyone?")
    finally:
        await front.stop()
        await host.stop()
        await lobby.stop()
        if second is not None:
            await second.stop()
