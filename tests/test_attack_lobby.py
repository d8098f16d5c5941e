"""Attacks on the lobby actor through `Lobby.connect(...).send(...)`: commands out of place,
floods from one session, and hidden dice that must reach nobody else, whoever comes and goes.

Every wait is on an event, bounded by `test_lobby_support.WAIT`.
"""

from __future__ import annotations

import asyncio
import random

from perudo_ssh import lobby as lobby_module
from perudo_ssh import protocol as P
from tests.test_lobby_support import Player, connected, play_randomly, running_lobby


def _leaks(player: Player) -> list[tuple[int | None, int]]:
    """(viewer seat, seat) for each other seat's hidden dice in the events `player` got."""
    found = []
    for event in player.events:
        if isinstance(event, P.TableState) and event.game is not None:
            assert event.game.me == event.me
            others = [s for s in event.game.seats if s.seat != event.me]
            found += [(event.me, s.seat) for s in others if s.hidden is not None]
    return found


async def _game_over(player: Player) -> P.TableState:
    return await player.expect(P.TableState, lambda e: e.game and e.game.winner is not None)


async def _until_reveal(player: Player) -> P.TableState:
    """Doubt when possible, else bid the lowest, on each of `player`'s turns, until a call
    ends the round; returns the reveal."""
    while True:
        state = await player.expect(P.TableState, lambda e: e.game is not None)
        game = state.game
        if game.phase == "rolling":
            return state
        if game.phase == "bidding" and game.turn == state.me:
            if game.choices.dudo:
                player.send(P.MakeCall(call="dudo"))
            else:
                bid = game.choices.bids[0]
                player.send(P.MakeBid(count=bid.count, face=bid.face))


async def test_hidden_dice_reach_no_other_seat_spectator_or_leaver():
    async with running_lobby(reveal_timeout=0.05) as lobby:
        ana, ben, cat, spy = [await connected(lobby, n) for n in ("ana", "ben", "cat", "spy")]
        ana.send(P.CreateTable(preset="club", seats=5, bots=2))
        created = await ana.expect(P.TableState)
        spy.send(P.SpectateTable(table=created.id))
        ben.send(P.JoinTable(table=created.id))
        cat.send(P.JoinTable(table=created.id))
        games = [
            asyncio.create_task(play_randomly(p, random.Random(i), dudo_chance=0.2))
            for i, p in enumerate((ana, ben, cat))
        ]
        await spy.expect(P.TableState, lambda e: e.game and e.game.round_index >= 2)
        games[1].cancel()  # ben leaves mid-game and comes back to watch his old seat
        ben.send(P.LeaveTable())
        await ben.expect(P.LeftTable)
        ben.send(P.SpectateTable(table=created.id))
        assert (await ben.expect(P.TableState)).me is None
        await spy.expect(P.TableState, lambda e: e.game and e.game.round_index >= 3)
        games[2].cancel()  # cat's connection drops mid-game
        cat.session.close()
        final = await games[0]
        assert final.game.winner is not None
        assert final.seats[1].bot and final.seats[2].bot
        await _game_over(ben)
        await _game_over(spy)
        for player in (ana, ben, cat, spy):
            assert _leaks(player) == [], player.name
        watched = [e for e in spy.table_states() if e.game is not None]
        assert len(watched) > 10 and all(e.me is None for e in watched)


async def test_play_again_flood_does_not_drop_the_other_players():
    async with running_lobby(outbox_size=16) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(seats=2, bots=0))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        await asyncio.gather(
            play_randomly(ana, random.Random(1)), play_randomly(ben, random.Random(2))
        )
        for _ in range(100):  # one batch: the lobby never yields in between
            ben.send(P.PlayAgain())
        await ben.expect(P.TableState, lambda e: e.play_again == ("ben",))
        ana.send(P.JoinTable(table=999))  # a marker, answered after the flood's batch
        await ana.expect(P.Refused)
        asked = [e for e in ana.events if isinstance(e, P.TableState) and e.play_again]
        assert len(asked) == 1
        ana.send(P.PlayAgain())
        started = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert not ana.session.closed and not ben.session.closed
        assert started.game is not None and started.game.bids == ()


async def test_a_command_flood_costs_the_others_one_update_per_batch():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(seats=4, bots=1))
        created = await ana.expect(P.TableState)
        for _ in range(50):  # each pair changes ana's table twice
            ben.send(P.SpectateTable(table=created.id))
            ben.send(P.LeaveTable())
        ben.send(P.JoinTable(table=999))
        await ben.expect(P.Refused)
        ana.send(P.JoinTable(table=999))
        await ana.expect(P.Refused)
        assert not ana.session.closed and not ben.session.closed
        seen = [e for e in ana.events if isinstance(e, P.TableState)]
        # the table as created, then one update per batch of the flood's 101 messages
        assert len(seen) <= 2 + 101 // lobby_module.BATCH
        assert seen[-1].spectators == ()


async def test_ready_flood_during_the_reveal_is_one_confirmation():
    async with running_lobby() as lobby:  # reveal_timeout 30 s: only Ready moves on
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(seats=3, bots=1))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        await asyncio.gather(_until_reveal(ana), _until_reveal(ben))
        round_ = lobby.tables[created.id].state.round_index
        for bad in (-1, round_ + 5, 10**30):
            ben.send(P.Ready(round=bad))  # odd rounds: ignored
        for _ in range(50):
            ben.send(P.Ready(round=round_))
        ben.send(P.JoinTable(table=999))
        await ben.expect(P.Refused)
        table = lobby.tables[created.id]
        assert table.in_reveal and table.ready == {table.seat_of(ben.session.id)}
        await ana.expect(P.TableState, lambda e: e.waiting_for == ("ana",))
        ana.send(P.JoinTable(table=999))  # a marker, answered after the flood's batch
        await ana.expect(P.Refused)
        confirmed = [e for e in ana.events if isinstance(e, P.TableState) and e.waiting_for]
        assert [e.waiting_for for e in confirmed].count(("ana",)) == 1
        ana.send(P.Ready(round=round_))
        await ana.expect(P.TableState, lambda e: e.game.phase == "bidding")


async def test_out_of_place_commands_are_refused_and_change_nothing():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")

        async def refused(player: Player, command: object) -> str:
            player.send(command)  # type: ignore[arg-type]
            return (await player.expect(P.Refused)).code

        for command in (P.MakeBid(count=2, face=3), P.StartGame(), P.AddBot(), P.PlayAgain()):
            assert await refused(ana, command) == "not_seated"
        assert await refused(ana, P.Ready(round=0)) == "not_seated"
        assert await refused(ana, P.JoinTable(table=-1)) == "no_table"
        assert await refused(ana, "not a command") == "bad_command"
        ana.send(P.CreateTable(seats=3, bots=1))
        created = await ana.expect(P.TableState)
        assert await refused(ana, P.JoinTable(table=created.id)) == "bad_command"
        assert await refused(ana, P.SpectateTable(table=created.id)) == "bad_command"
        assert await refused(ana, P.MakeBid(count=1, face=2)) == "bad_command"
        ben.send(P.SpectateTable(table=created.id))
        await ben.expect(P.TableState)
        assert await refused(ben, P.StartGame()) == "not_creator"
        assert await refused(ben, P.MakeCall(call="dudo")) == "not_seated"
        ana.send(P.StartGame())
        started = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert await refused(ana, P.StartGame()) == "bad_command"  # start twice
        assert await refused(ana, P.AddBot()) == "bad_command"
        assert await refused(ana, P.MakeBid(count=0, face=7)) not in ("", "bad_command")
        ana.send(P.Ready(round=-1))  # no reveal going on: ignored
        assert await refused(ana, P.JoinTable(table=999)) == "bad_command"  # a marker
        table = lobby.tables[created.id]
        assert table.state.round_index == started.game.round_index
        assert not lobby._task.done()
