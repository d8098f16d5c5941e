"""Never losing a game, at the lobby actor (issue 5, items 1–3): the turn timer and its
automatic move, a disconnected player's seat held, played by a bot, taken back, and every
accepted move saved before anyone sees it, then restored exactly.

Turn timers and grace periods run at `timer_scale` of their seconds so that a wait for them
is short; every wait is on an event, bounded by `WAIT`.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from perudo_ssh import protocol as P
from perudo_ssh.bots import automatic_move
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.snapshot import restore_table
from perudo_ssh.rules import (
    Bid,
    Call,
    PlaceBid,
    Roll,
    apply,
    legal_bids,
    new_game,
    observe,
    options_for,
)
from tests.test_lobby_support import Player, running_lobby

SCALE = 0.01
"""Timers at 1/100: a 60 s turn is 0.6 s, a 120 s grace 1.2 s."""


class KeyPlayer(Player):
    """A player logged in with an SSH key (an identity that may come back)."""

    def __init__(self, lobby: Lobby, name: str, key: str) -> None:
        self.session = lobby.connect(name, key)
        self.events = []


async def with_key(lobby: Lobby, name: str, key: str) -> KeyPlayer:
    player = KeyPlayer(lobby, name, key)
    await player.expect(P.Welcome)
    return player


# ---- the automatic move (bots.automatic_move) -----------------------------------------------


def _rolled(*hands: tuple[int, ...], opener: int = 0):
    state = new_game(options_for("classic"), len(hands), opener)
    return apply(state, Roll(dice=hands))


def test_the_automatic_move_is_the_smallest_of_the_surest_raises():
    # ben holds 4 4 4 1 1 (five fours with wild pacos): every bid up to five fours is sure
    # for him; the medium bot's steady play takes the smallest of them
    state = apply(_rolled((2, 2, 3, 5, 6), (4, 4, 4, 1, 1)), PlaceBid(seat=0, bid=Bid(3, 2)))
    assert automatic_move(observe(state, 1)) == P.MakeBid(count=3, face=4)


def test_the_automatic_opening_bid_is_its_best_face_as_high_as_stays_likely():
    """Issue 14: the timeout move is the medium bot's steady play. ana holds 2 2 3 5 6 and
    sees none of the other five dice: 3×2 is true with 1 − (2/3)^5 ≈ 87 %, 4×2 with 54 %,
    under the 65 % an opening keeps to (the middle of `OPEN_AT_LEAST`)."""
    state = _rolled((2, 2, 3, 5, 6), (4, 4, 4, 1, 1))
    assert automatic_move(observe(state, 0)) == P.MakeBid(count=3, face=2)


def test_with_no_raise_supported_the_automatic_move_is_dudo():
    state = apply(_rolled((2, 2, 3, 5, 6), (4, 4, 4, 1, 1)), PlaceBid(seat=0, bid=Bid(9, 6)))
    # ten sixes would need 10 of 10 dice; pacos would need 5 (ben has 2 + 5/6 expected)
    assert automatic_move(observe(state, 1)) == P.MakeCall(call="dudo")


def test_the_automatic_move_is_refused_when_it_is_not_the_seats_turn():
    state = _rolled((2, 2, 3, 5, 6), (4, 4, 4, 1, 1))
    with pytest.raises(ValueError, match="not this seat's turn"):
        automatic_move(observe(state, 1))


@pytest.mark.parametrize("preset", ["classic", "calza-anytime", "gamerules", "club"])
def test_automatic_moves_alone_always_finish_a_game(preset):
    """Every automatic move is legal (the engine would raise) and a game of them ends."""
    rng = random.Random(preset)
    state = new_game(options_for(preset), 4, 0)
    moves = 0
    while state.phase != "over":
        if state.phase == "rolling":
            state = apply(
                state,
                Roll(dice=tuple(tuple(rng.randint(1, 6) for _ in range(n)) for n in state.counts)),
            )
            continue
        command = automatic_move(observe(state, state.turn))
        if isinstance(command, P.MakeCall):
            state = apply(state, Call(seat=state.turn, call="dudo"))
        else:
            state = apply(state, PlaceBid(seat=state.turn, bid=Bid(command.count, command.face)))
        moves += 1
        assert moves < 2000
    assert state.winner is not None


# ---- the turn timer --------------------------------------------------------------------------


async def _two_player_game(lobby: Lobby, **create: object):
    ana = await with_key(lobby, "ana", "SHA256:ana")
    ben = await with_key(lobby, "ben", "SHA256:ben")
    ana.send(P.CreateTable(seats=2, bots=0, **create))  # type: ignore[arg-type]
    created = await ana.expect(P.TableState)
    ben.send(P.JoinTable(table=created.id))
    start = await ana.expect(P.TableState, lambda e: e.status == "playing")
    await ben.expect(P.TableState, lambda e: e.status == "playing")
    return ana, ben, start


async def test_a_player_who_does_not_move_gets_an_automatic_move_shown_to_everyone():
    async with running_lobby(timer_scale=SCALE) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=60)
        assert start.turn_seconds == 60
        opener = start.game.turn
        assert start.clock is not None and start.clock.seat == opener
        assert start.clock.seconds == 60 and 0 < start.clock.left <= 60
        # nobody moves: the opener's time runs out and the server bids for them
        mover, other = (ana, ben) if opener == start.me else (ben, ana)
        notice = await other.expect(P.Notice, lambda e: "ran out of time" in e.text)
        assert notice.args["name"] == ("ana" if mover is ana else "ben")
        state = await other.expect(P.TableState, lambda e: e.automatic)
        (auto,) = state.automatic
        assert (auto.round, auto.seat, auto.bids, auto.call) == (0, opener, 0, None)
        assert state.game.bids[0].seat == opener
        assert state.clock is not None and state.clock.seat == 1 - opener


async def test_no_turn_timer_when_the_table_has_none():
    async with running_lobby(timer_scale=SCALE) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=0)
        assert start.clock is None and start.turn_seconds == 0
        table = lobby.tables[start.id]
        assert "turn" not in lobby._timers.get(table.id, {})


@pytest.mark.parametrize(
    ("turn", "grace", "why"),
    [(5, 120, "turn timer"), (601, 120, "turn timer"), (60, -1, "held"), (60, 3601, "held")],
)
async def test_timer_settings_out_of_range_are_refused(turn, grace, why):
    async with running_lobby() as lobby:
        ana = await with_key(lobby, "ana", "SHA256:ana")
        ana.send(P.CreateTable(seats=2, bots=1, turn_seconds=turn, grace_seconds=grace))
        refused = await ana.expect(P.Refused)
        assert refused.code == "bad_command" and why in refused.message
        assert lobby.tables == {}


# ---- disconnects -----------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_dropped_player_keeps_the_seat_then_a_bot_plays_it_then_they_take_it_back():
    async with running_lobby(timer_scale=SCALE) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=0, grace_seconds=120)
        tid = start.id
        ben_seat = 1 - start.me
        before = lobby.tables[tid].state
        ben_dice = before.hidden[ben_seat]
        ben.session.close()  # the connection drops
        notice = await ana.expect(P.Notice, lambda e: "lost their connection" in e.text)
        assert notice.args == {"name": "ben", "seconds": 120}
        held = await ana.expect(P.TableState, lambda e: e.seats[ben_seat].away)
        assert not held.seats[ben_seat].bot and 0 < held.seats[ben_seat].grace <= 120
        # the grace period ends: a bot plays ben's seat, still shown as away
        await ana.expect(P.Notice, lambda e: "has not come back" in e.text)
        stood_in = await ana.expect(P.TableState, lambda e: e.seats[ben_seat].bot)
        assert stood_in.seats[ben_seat].away and stood_in.seats[ben_seat].grace is None
        # ben logs in again with the same key: straight back at his seat, his dice shown
        back = await with_key(lobby, "ben", "SHA256:ben")
        state = await back.expect(P.TableState)
        assert state.id == tid and state.me == ben_seat
        assert not state.seats[ben_seat].bot and not state.seats[ben_seat].away
        table = lobby.tables[tid]
        if table.state.round_index == before.round_index:
            assert state.game.seats[ben_seat].hidden == ben_dice
        assert state.game.seats[ben_seat].hidden == table.state.hidden[ben_seat]
        await ana.expect(P.Notice, lambda e: e.text == "{name} is back")
        assert table.seats[ben_seat].left_round is None  # not ranked as gone
        # ben is not told that ben is back: everything sent to him before a refusal came
        back.send(P.JoinTable(table=10**6))
        await back.expect(P.Refused)
        assert not [e for e in back.events if isinstance(e, P.Notice) and "is back" in e.text]


async def test_a_reconnect_within_the_grace_period_takes_the_seat_back_at_once():
    async with running_lobby(timer_scale=1.0) as lobby:  # 120 s: the grace cannot end here
        ana, ben, start = await _two_player_game(lobby, turn_seconds=0)
        ben_seat = 1 - start.me
        ben.session.close()
        await ana.expect(P.TableState, lambda e: e.seats[ben_seat].away)
        back = await with_key(lobby, "ben", "SHA256:ben")
        state = await back.expect(P.TableState)
        assert state.me == ben_seat and not state.seats[ben_seat].away
        slots = [slot for timers in lobby._timers.values() for slot in timers]
        assert not [slot for slot in slots if slot.startswith("grace")]


async def test_another_key_does_not_get_the_held_seat():
    async with running_lobby(timer_scale=1.0) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=0)
        ben.session.close()
        await ana.expect(P.TableState, lambda e: e.seats[1 - start.me].away)
        other = await with_key(lobby, "ben", "SHA256:not-ben")
        await other.expect(P.LobbyState)
        assert not [e for e in other.events if isinstance(e, P.TableState)]
        assert lobby.tables[start.id].seats[1 - start.me].sid is None


async def test_a_held_seat_whose_turn_comes_gets_automatic_moves_and_the_table_goes_on():
    async with running_lobby(timer_scale=SCALE) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=60, grace_seconds=3600)
        ben_seat = 1 - start.me
        ben.session.close()
        await ana.expect(P.TableState, lambda e: e.seats[ben_seat].away)
        # ana never moves either: the timer moves for both, the table never freezes
        state = await ana.expect(
            P.TableState, lambda e: any(m.seat == ben_seat for m in e.automatic)
        )
        assert not state.seats[ben_seat].bot  # still held, not yet a bot's


# ---- saved before it is sent; restored exactly ----------------------------------------------


async def test_every_accepted_move_is_saved_before_anyone_sees_it():
    saved: dict[int, bytes | None] = {}
    gate = asyncio.Event()
    calls: list[set[int]] = []

    async def persist(changes):
        calls.append(set(changes))
        await gate.wait()
        saved.update(changes)

    gate.set()
    async with running_lobby(persist=persist, timer_scale=1.0) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=0)
        tid = start.id
        table = lobby.tables[tid]
        assert saved[tid] is not None
        turn = table.state.turn
        mover = ana if table.seats[turn].name == "ana" else ben
        bid = legal_bids(table.state, turn)[0]
        gate.clear()
        mover.send(P.MakeBid(count=bid.count, face=bid.face))
        while not table.state.bids:  # accepted by the actor...
            await asyncio.sleep(0)
        for _ in range(20):
            await asyncio.sleep(0)
        assert calls[-1] == {tid}
        # ...but held back from everyone until the save returns
        for player in (ana, ben):
            while not player.session.outbox.empty():
                event = P.decode_event(player.session.outbox.get_nowait())
                assert not (isinstance(event, P.TableState) and event.game.bids), event
        assert restore_table(saved[tid])[0].state.bids == ()
        gate.set()
        seen = await ana.expect(P.TableState, lambda e: e.game.bids)
        assert restore_table(saved[tid])[0].state == table.state
        assert seen.game.bids[0].bid == bid


async def test_a_restarted_lobby_restores_the_game_exactly_and_seats_come_back():
    saved: dict[int, bytes | None] = {}

    async def persist(changes):
        saved.update(changes)

    async with running_lobby(persist=persist, reveal_timeout=0.05, timer_scale=SCALE) as lobby:
        ana = await with_key(lobby, "ana", "SHA256:ana")
        guest = Player(lobby, "gus")
        await guest.expect(P.Welcome)
        ana.send(P.CreateTable(seats=4, bots=2, turn_seconds=45, grace_seconds=90, rated=False))
        created = await ana.expect(P.TableState)
        guest.send(P.JoinTable(table=created.id))
        state = await ana.expect(P.TableState, lambda e: e.status == "playing")
        tid = state.id
        table = lobby.tables[tid]
        # play until a few moves are in
        while len(table.log.rounds) < 2 or not table.state.bids:
            for player in (ana, guest):
                while not player.session.outbox.empty():
                    event = P.decode_event(player.session.outbox.get_nowait())
                    if isinstance(event, P.TableState) and event.game and event.me is not None:
                        game = event.game
                        if game.phase == "rolling":
                            player.send(P.Ready(round=game.round_index - 1))
                        elif game.turn == event.me and game.phase == "bidding":
                            bids = game.choices.bids
                            if bids and len(game.bids) < 3:
                                player.send(P.MakeBid(count=bids[0].count, face=bids[0].face))
                            else:
                                player.send(P.MakeCall(call="dudo"))
            await asyncio.sleep(0.01)
        before = table.state
        before_seats = [(s.name, s.bot) for s in table.seats]
    assert saved[tid] is not None  # stopped mid-game: the game stays saved

    again = Lobby(bot_delay=(30.0, 30.0), rng=random.Random(1), persist=persist)
    assert again.restore(saved.items()) == [tid]
    again.start()
    try:
        restored = again.tables[tid]
        assert restored.state == before  # every die, bid and count
        assert (restored.turn_seconds, restored.grace_seconds, restored.rated) == (45, 90, False)
        names = [s.name for s in restored.seats]
        assert names == [n for n, _ in before_seats]
        ana_seat, gus_seat = names.index("ana"), names.index("gus")
        assert restored.seats[ana_seat].away and not restored.seats[ana_seat].bot
        assert restored.seats[gus_seat].bot  # a guest cannot come back: a bot plays on
        # ana logs in again: back at her seat, with her own dice
        back = await with_key(again, "ana", "SHA256:ana")
        view = await back.expect(P.TableState)
        assert view.id == tid and view.me == ana_seat
        assert view.game.seats[ana_seat].hidden == before.hidden[ana_seat]
        assert [b.bid for b in view.game.bids] == [b.bid for b in before.bids]
        # a new table gets a fresh id
        back.send(P.LeaveTable())
        await back.expect(P.LeftTable)
        back.send(P.CreateTable(seats=2, bots=1))
        created = await back.expect(P.TableState, lambda e: e.id != tid)
        assert created.id == tid + 1
    finally:
        await again.stop()


async def test_a_finished_game_is_forgotten_and_a_snapshot_that_cannot_be_read_is_skipped(caplog):
    saved: dict[int, bytes | None] = {}

    async def persist(changes):
        saved.update(changes)

    async with running_lobby(persist=persist) as lobby:
        ana = await with_key(lobby, "ana", "SHA256:ana")
        ana.send(P.CreateTable(seats=2, bots=1, turn_seconds=0))
        await ana.expect(P.TableState, lambda e: e.status == "playing")
        ana.send(P.LeaveTable())  # a bot plays ana's seat: bots finish the game
        await ana.expect(P.LeftTable)
        for _ in range(500):
            if saved and all(v is None for v in saved.values()):
                break
            await asyncio.sleep(0.01)
        assert saved and all(v is None for v in saved.values())

    again = Lobby()
    assert again.restore([(9, b'{"not": "a snapshot"}')]) == []
    assert "could not restore table 9" in caplog.text


async def test_a_game_played_on_for_players_who_never_came_back_ends_and_the_table_closes():
    async with running_lobby(timer_scale=SCALE, reveal_timeout=0.01) as lobby:
        ana = await with_key(lobby, "ana", "SHA256:ana")
        ana.send(P.CreateTable(seats=3, bots=2, turn_seconds=0, grace_seconds=10))
        start = await ana.expect(P.TableState, lambda e: e.status == "playing")
        ana.session.close()
        for _ in range(3000):  # held 0.1 s, then the bots play it out: the table closes
            if start.id not in lobby.tables:
                break
            await asyncio.sleep(0.01)
        assert start.id not in lobby.tables


async def test_an_automatic_move_is_not_announced_before_it_is_saved():
    """Found by the fault-injection review: notices went out while the save was pending."""
    gate = asyncio.Event()
    gate.set()

    async def persist(changes):
        await gate.wait()

    async with running_lobby(persist=persist, timer_scale=SCALE) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=60)
        table = lobby.tables[start.id]
        gate.clear()
        for _ in range(500):
            if table.automatic:
                break
            await asyncio.sleep(0.01)
        assert table.automatic
        for _ in range(20):
            await asyncio.sleep(0)
        told = [
            P.decode_event(p.session.outbox.get_nowait())
            for p in (ana, ben)
            for _ in range(p.session.outbox.qsize())
        ]
        gate.set()
        assert not [e for e in told if isinstance(e, P.Notice)], told
        await ana.expect(P.Notice, lambda e: "ran out of time" in e.text)


async def test_a_new_login_takes_over_the_seat_from_an_older_session_of_the_same_key():
    async with running_lobby(timer_scale=1.0) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=0)
        table = lobby.tables[start.id]
        seat = start.me
        dice = table.state.hidden[seat]
        # ana's old connection is silently dead; she logs in again before it is found out
        again = await with_key(lobby, "ana", "SHA256:ana")
        view = await again.expect(P.TableState)
        assert view.me == seat and view.game.seats[seat].hidden == dice
        assert table.seats[seat].sid == again.session.id
        await ana.expect(P.LeftTable)
        moved = await ana.expect(P.Notice)
        assert moved.text == "your seat at {table} went to your new session"
        # the old connection's end changes nothing for the seat
        ana.session.close()
        await ben.expect(P.Notice, lambda e: e.text == "{name} is back")
        for _ in range(20):
            await asyncio.sleep(0)
        assert table.seats[seat].sid == again.session.id and not table.seats[seat].away


async def test_a_paused_tables_held_seat_shows_its_whole_grace():
    async with running_lobby(timer_scale=1.0) as lobby:
        ana, ben, start = await _two_player_game(lobby, turn_seconds=0, grace_seconds=90)
        lobby.paused.add(start.id)  # as an admin's PauseTable does
        ben.session.close()
        state = await ana.expect(P.TableState, lambda e: e.seats[1 - start.me].away)
        assert state.seats[1 - start.me].grace == 90.0
