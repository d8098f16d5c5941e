"""Whole games through the real lobby: humans play random legal moves from their own view,
bots play themselves; privacy of hidden dice, the reveal, leaving, play again, the game log."""

from __future__ import annotations

import asyncio
import random

import pytest

from perudo_ssh import protocol as P
from perudo_ssh.record import decode_record, encode_record
from perudo_ssh.referee import verdict_of
from perudo_ssh.rules import PRESET_NAMES
from tests.test_lobby_support import assert_private, connected, play_randomly, running_lobby


@pytest.mark.parametrize("preset", PRESET_NAMES)
async def test_one_human_and_bots_play_to_a_winner(preset):
    finished = []
    async with running_lobby(on_game_over=lambda table, log: finished.append(log)) as lobby:
        ana = await connected(lobby, "ana")
        spy = await connected(lobby, "spy")
        ana.send(P.CreateTable(preset=preset, seats=4, bots=3))
        created = await ana.expect(P.TableState)
        spy.send(P.SpectateTable(table=created.id))
        final = await play_randomly(ana, random.Random(11), start=created)
        game = final.game
        assert game.phase == "over" and game.winner is not None
        assert sum(s.dice > 0 for s in game.seats) == 1
        watched = await spy.expect(P.TableState, lambda e: e.game and e.game.winner is not None)
        assert watched.game.winner == game.winner
        assert assert_private(ana.events, 0) > 10
        assert assert_private(spy.events, None) > 10
        # The game log replays through the engine to the same end.
        table = lobby.tables[created.id]
        assert finished == [table.log]
        assert table.log.replay() == table.state
        record = decode_record(encode_record(table.log.to_record()))
        assert record.format == "perudo-record/1" and record.rules["preset"] == preset
        assert record.players == tuple(s.name for s in final.seats)
        assert len(record.rounds) == game.round_index
        verdict = verdict_of(record)
        assert verdict.legal and verdict.winner == final.seats[game.winner].name


async def test_two_humans_and_a_bot_with_ready_confirmations():
    async with running_lobby() as lobby:  # reveal_timeout 30 s: only Ready moves on
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="classic", seats=3, bots=1))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        finals = await asyncio.gather(
            play_randomly(ana, random.Random(1)), play_randomly(ben, random.Random(2))
        )
        assert finals[0].game.winner == finals[1].game.winner is not None
        assert assert_private(ana.events, 0) and assert_private(ben.events, 2)
        reveals = [
            e for e in ana.table_states() if e.game and e.game.phase == "rolling" and e.waiting_for
        ]
        assert reveals and all(set(e.waiting_for) <= {"ana", "ben"} for e in reveals)
        # Each reveal shows every hand of the finished round, to everyone.
        last = reveals[0].game.last
        assert all(len(h) == d for h, d in zip(last.hands, (5, 5, 5), strict=True))


async def test_reveal_times_out_without_ready():
    async with running_lobby(reveal_timeout=0.02) as lobby:
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset="gamerules", seats=3, bots=2))
        final = await play_randomly(ana, random.Random(8), ready=False)
        assert final.game.winner is not None


async def test_leaving_mid_game_a_bot_takes_over_and_the_game_finishes():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="classic", seats=3, bots=1))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        await ben.expect(P.TableState, lambda e: e.status == "playing")
        ben.send(P.LeaveTable())
        await ben.expect(P.LeftTable)
        listed = await ben.expect(P.LobbyState)
        assert listed.tables[0].status == "playing" and listed.tables[0].bots == 2
        took = await ana.expect(P.TableState, lambda e: e.seats[2].bot)
        assert took.seats[2].name == "ben"
        assert (
            P.Notice(text="{name} left; a bot plays their seat", args={"name": "ben"}) in ana.events
        )
        final = await play_randomly(ana, random.Random(6), start=took)
        assert final.game.winner is not None
        assert final.seats[2] == P.SeatInfo(name="ben", bot=True)
        bot = created.seats[1].name
        assert lobby.tables[created.id].log.players == ("ana", bot, "ben")


async def test_play_again_starts_a_new_game_at_the_same_table():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset="classic", seats=2, bots=1))
        first = await play_randomly(ana, random.Random(9))
        assert first.status == "over"
        ana.send(P.MakeBid(count=1, face=2))
        assert (await ana.expect(P.Refused)).code == "game_over"
        ana.send(P.PlayAgain())
        again = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert again.seats == first.seats and again.game.round_index == 0
        assert all(s.dice == 5 for s in again.game.seats)
        second = await play_randomly(ana, random.Random(10), start=again)
        assert second.game.winner is not None


async def test_leaving_after_game_over_frees_the_seat():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="classic", seats=3, bots=1))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        await asyncio.gather(
            play_randomly(ana, random.Random(3)), play_randomly(ben, random.Random(4))
        )
        ana.send(P.PlayAgain())
        asked = await ben.expect(P.TableState, lambda e: e.play_again)
        assert asked.play_again == ("ana",) and asked.status == "over"
        ben.send(P.LeaveTable())
        await ben.expect(P.LeftTable)
        # ana was the last human to ask: the table waits for a newcomer in ben's seat.
        waiting = await ana.expect(P.TableState, lambda e: e.status == "waiting")
        assert [s.name for s in waiting.seats] == ["ana", waiting.seats[1].name]
        assert waiting.seats[1].bot and waiting.size == 3
        assert waiting.game is None
        cyd = await connected(lobby, "cyd")
        cyd.send(P.JoinTable(table=created.id))
        started = await cyd.expect(P.TableState, lambda e: e.status == "playing")
        assert started.me == 2


@pytest.mark.parametrize("preset", ["classic", "club"])
async def test_a_game_left_to_bots_is_played_out_at_once_and_stored(preset):
    """Issue 13, item 8: the last person leaves mid-game (nobody watching): the bots play
    the game out at once, even with bots slow and a long reveal (no one to wait for); the
    game over is handed to `on_game_over` with a winner, the leaver placed when they left,
    and the table then closes. A legal record of the whole game."""
    finished = []
    async with running_lobby(
        on_game_over=lambda table, log: finished.append(log),
        bot_delay=(30.0, 30.0),
        reveal_timeout=300.0,
    ) as lobby:
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset=preset, seats=3, bots=2))
        created = await ana.expect(P.TableState, lambda e: e.game is not None)
        ana.send(P.LeaveTable())
        await ana.expect(P.LeftTable)
        for _ in range(2000):
            if finished and created.id not in lobby.tables:
                break
            await asyncio.sleep(0.005)
        (log,) = finished
        assert created.id not in lobby.tables
        verdict = verdict_of(log.to_record())
        assert verdict.legal and verdict.winner is not None and verdict.winner != "ana"
