"""The lobby actor: names, seating, starting, refusals, robustness (real `Lobby`, no sleeps)."""

from __future__ import annotations

import asyncio
import logging
import random
import subprocess
import sys

from perudo_ssh import lobby as lobby_module
from perudo_ssh import protocol as P
from perudo_ssh.lobby import commands as lobby_commands
from tests.test_lobby_support import Player, connected, play_randomly, running_lobby


async def test_unique_names_and_online_list():
    async with running_lobby() as lobby:
        names = []
        for wanted in ("ana", "ana", "Ana", "  "):
            player = Player(lobby, wanted)
            welcome = await player.expect(P.Welcome)
            assert player.name == welcome.name
            names.append(welcome.name)
        assert names == ["ana", "ana-2", "Ana-3", "player"]
        state = await player.expect(P.LobbyState)
        assert state.online == tuple(sorted(names))


async def test_create_table_seats_creator_and_bots():
    async with running_lobby() as lobby:
        watcher = await connected(lobby, "watcher")
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset="gamerules", seats=4, bots=2, name="fun"))
        table = await ana.expect(P.TableState)
        assert (table.status, table.size, table.me, table.creator) == ("waiting", 4, 0, 0)
        assert table.seats[0] == P.SeatInfo(name="ana", bot=False)
        assert [s.bot for s in table.seats] == [False, True, True]
        bot_names = [s.name for s in table.seats[1:]]
        assert all(n.startswith("bot-") for n in bot_names) and len(set(bot_names)) == 2
        assert table.game is None
        listed = await watcher.expect(P.LobbyState, lambda e: e.tables)
        (summary,) = listed.tables
        assert (summary.name, summary.preset, summary.calza) == ("fun", "gamerules", "on-turn")
        assert (summary.status, summary.seats, summary.bots, summary.free) == ("waiting", 4, 2, 1)


async def test_join_fills_the_table_and_the_game_starts():
    async with running_lobby(bot_delay=(30.0, 30.0)) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="classic", seats=3, bots=1))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        for player, me in ((ana, 0), (ben, 2)):
            state = await player.expect(P.TableState, lambda e: e.status == "playing")
            assert state.me == me and state.game is not None
            assert state.game.phase == "bidding" and state.game.round_index == 0
            hidden = state.game.seats[me].hidden
            assert hidden is not None and len(hidden) == 5
            # The opening roll (RULES.md §2.2): the last roll-off has one highest total.
            last_roll = state.opening[-1]
            best = max(t for t in last_roll if t is not None)
            assert last_roll.count(best) == 1 and last_roll.index(best) == state.game.opener
            assert all(2 <= t <= 12 for roll in state.opening for t in roll if t is not None)
        cyd = await connected(lobby, "cyd")
        cyd.send(P.JoinTable(table=created.id))
        refused = await cyd.expect(P.Refused)
        assert refused.code == "table_full"


async def test_creator_starts_and_empty_seats_are_removed():
    async with running_lobby(bot_delay=(30.0, 30.0)) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="classic", seats=5, bots=0))
        created = await ana.expect(P.TableState)
        ana.send(P.StartGame())
        assert (await ana.expect(P.Refused)).code == "bad_command"  # alone at the table
        ben.send(P.JoinTable(table=created.id))
        await ben.expect(P.TableState)
        ben.send(P.StartGame())
        assert (await ben.expect(P.Refused)).code == "not_creator"
        ana.send(P.StartGame())
        state = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert state.size == 2 and len(state.seats) == 2 and len(state.game.seats) == 2


async def test_add_bot_until_full_starts():
    async with running_lobby(bot_delay=(30.0, 30.0)) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="club", seats=3, bots=0))
        created = await ana.expect(P.TableState)
        ben.send(P.SpectateTable(table=created.id))
        await ben.expect(P.TableState)
        ben.send(P.AddBot())
        assert (await ben.expect(P.Refused)).code == "not_creator"
        ana.send(P.AddBot())
        await ana.expect(P.TableState, lambda e: len(e.seats) == 2)
        ana.send(P.AddBot())
        state = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert len({s.name for s in state.seats}) == 3
        assert state.game.tokens is not None  # club stakes
        watched = await ben.expect(P.TableState, lambda e: e.status == "playing")
        assert watched.me is None and all(s.hidden is None for s in watched.game.seats)


async def test_spectate_and_leave():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="classic", seats=4, bots=1))
        created = await ana.expect(P.TableState)
        ben.send(P.SpectateTable(table=created.id))
        watched = await ben.expect(P.TableState)
        assert watched.me is None and watched.spectators == ("ben",)
        assert (await ana.expect(P.TableState)).spectators == ("ben",)
        ben.send(P.LeaveTable())
        await ben.expect(P.LeftTable)
        listed = await ben.expect(P.LobbyState)
        assert listed.tables[0].spectators == 0
        ben.send(P.LeaveTable())
        assert (await ben.expect(P.Refused)).code == "not_seated"


async def test_refused_commands_change_nothing():
    async with running_lobby(bot_delay=(30.0, 30.0)) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        for command, code in (
            (P.JoinTable(table=99), "no_table"),
            (P.SpectateTable(table=99), "no_table"),
            (P.MakeBid(count=2, face=3), "not_seated"),
            (P.StartGame(), "not_seated"),
            (P.CreateTable(preset="nope"), "bad_options"),
            (P.CreateTable(seats=7, bots=0), "bad_command"),
            (P.CreateTable(seats=3, bots=3), "bad_command"),
            (P.CreateTable(preset="club", options={"dice_per_player": 1}), "bad_options"),
            (P.CreateTable(options={"calza": "sometimes"}), "bad_options"),
        ):
            ana.send(command)
            refused = await ana.expect(P.Refused)
            assert refused.code == code, (command, refused)
            assert refused.message
        assert lobby.tables == {}
        ana.send(P.CreateTable(preset="classic", seats=2, bots=0))
        created = await ana.expect(P.TableState)
        ana.send(P.CreateTable())
        assert (await ana.expect(P.Refused)).code == "bad_command"  # one table at a time
        ana.send(P.MakeBid(count=1, face=2))
        assert (await ana.expect(P.Refused)).code == "bad_command"  # not started
        ben.send(P.JoinTable(table=created.id))
        state = await ben.expect(P.TableState, lambda e: e.status == "playing")
        table = lobby.tables[created.id]
        await ana.expect(P.TableState, lambda e: e.status == "playing")
        before = table.state
        me, other = (ben, ana) if state.game.turn == state.me else (ana, ben)
        seen = {ana: len(ana.events), ben: len(ben.events)}
        other.send(P.MakeBid(count=1, face=2))
        assert (await other.expect(P.Refused)).code == "not_your_turn"
        me.send(P.MakeBid(count=1, face=1))
        assert (await me.expect(P.Refused)).code == "opening_on_pacos"
        me.send(P.MakeBid(count=11, face=2))
        assert (await me.expect(P.Refused)).code == "count_out_of_range"
        me.send(P.MakeCall(call="dudo"))
        assert (await me.expect(P.Refused)).code == "nothing_to_call"
        me.send(P.ShowAndReroll(reveal=(1,)))
        assert (await me.expect(P.Refused)).code == "reroll_not_allowed"
        assert table.state is before and table.log.rounds[0].actions == []
        for player in (ana, ben):  # nothing but the refusals went out
            player.send(P.JoinTable(table=99))
            await player.expect(P.Refused, lambda e: e.code == "bad_command")
            assert all(isinstance(e, P.Refused) for e in player.events[seen[player] :])


async def test_exception_in_a_handler_does_not_kill_the_actor(monkeypatch, caplog):
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ana.send(object())  # not a command at all
        assert (await ana.expect(P.Refused)).code == "bad_command"

        def boom(*args):
            raise RuntimeError("boom")

        with caplog.at_level(logging.ERROR, logger="perudo_ssh.lobby"):
            monkeypatch.setattr(lobby_commands, "create_table", boom)
            ana.send(P.CreateTable())
            assert (await ana.expect(P.Refused)).code == "bad_command"
        assert any("boom" in (r.exc_text or "") for r in caplog.records)
        monkeypatch.undo()
        ana.send(P.CreateTable(seats=2, bots=0))
        assert (await ana.expect(P.TableState)).status == "waiting"


async def test_lobby_list_is_coalesced():
    async with running_lobby() as lobby:
        watcher = await connected(lobby, "watcher")
        ana = await connected(lobby, "ana")
        await watcher.expect(P.LobbyState, lambda e: "ana" in e.online)
        seen = len(watcher.events)
        for _ in range(4):  # one burst: nine changes to the lobby list
            ana.send(P.CreateTable(seats=3, bots=1))
            ana.send(P.LeaveTable())
        ana.send(P.CreateTable(seats=3, bots=1))
        await ana.expect(P.TableState, lambda e: e.id == 5)
        watcher.send(P.JoinTable(table=999))  # a marker, answered after the burst's flush
        await watcher.expect(P.Refused)
        burst = watcher.events[seen:-1]
        assert len(burst) == 1 and isinstance(burst[0], P.LobbyState)
        assert [t.id for t in burst[0].tables] == [5]


async def test_slow_session_is_dropped_without_blocking_others():
    async with running_lobby(outbox_size=8, reveal_timeout=0.05) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        slow = lobby.connect("slow")  # never reads
        ana.send(P.CreateTable(preset="classic", seats=3, bots=1))
        created = await ana.expect(P.TableState)
        slow.send(P.JoinTable(table=created.id))
        started = await ana.expect(P.TableState, lambda e: e.status == "playing")
        slow_seat = next(i for i, s in enumerate(started.seats) if s.name == "slow")
        game = asyncio.create_task(play_randomly(ana, random.Random(3), start=started))
        for _ in range(8):  # every coming and going is a TableState for slow too
            ben.send(P.SpectateTable(table=created.id))
            await ben.expect(P.TableState)
            ben.send(P.LeaveTable())
            await ben.expect(P.LeftTable)
        final = await game
        assert final.game.winner is not None
        assert final.seats[slow_seat] == P.SeatInfo(name="slow", bot=True)
        assert (
            P.Notice(text="{name} left; a bot plays their seat", args={"name": "slow"})
            in ana.events
        )
        assert (await slow.next_event()) == P.Goodbye(reason="too slow")
        assert (await slow.next_event()) == P.Goodbye(reason="too slow")  # stays ended
        assert slow.closed
        slow.send(P.LeaveTable())  # ignored, does not raise
        listed = await ben.expect(P.LobbyState, lambda e: "slow" not in e.online)
        assert listed.online == ("ana", "ben")


async def test_slow_spectator_is_dropped_and_the_game_goes_on():
    async with running_lobby(outbox_size=8) as lobby:
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset="calza-anytime", seats=4, bots=3))
        created = await ana.expect(P.TableState)
        slow = lobby.connect("slow")
        slow.send(P.SpectateTable(table=created.id))
        final = await play_randomly(ana, random.Random(4))
        assert final.game.winner is not None and final.spectators == ()
        assert (await slow.next_event()) == P.Goodbye(reason="too slow")


async def test_table_closes_when_nobody_is_left():
    async with running_lobby() as lobby:
        watcher = await connected(lobby, "watcher")
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(seats=4, bots=2))
        created = await ana.expect(P.TableState)
        ben.send(P.SpectateTable(table=created.id))
        await ben.expect(P.TableState)
        ana.send(P.LeaveTable())
        await ana.expect(P.LeftTable)
        watched = await ben.expect(P.TableState, lambda e: all(s.bot for s in e.seats))
        assert watched.creator is None  # a spectator keeps it open, nobody may start it
        await watcher.expect(P.LobbyState, lambda e: e.tables)
        ben.session.close()  # disconnect = leave
        await watcher.expect(
            P.LobbyState, lambda e: not e.tables and e.online == ("ana", "watcher")
        )
        assert lobby.tables == {}


async def test_a_guest_who_disconnects_mid_game_hands_the_seat_to_a_bot():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(seats=2, bots=0))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        await ben.expect(P.TableState, lambda e: e.status == "playing")
        ben.session.close()
        ben.session.close()  # idempotent
        state = await ana.expect(P.TableState, lambda e: e.seats[1].bot)
        assert state.seats[1].name == "ben" and state.creator == 0
        final = await play_randomly(ana, random.Random(5), start=state)
        assert final.game.winner is not None


async def test_stop_says_goodbye():
    lobby_cm = running_lobby()
    lobby = await lobby_cm.__aenter__()
    ana = await connected(lobby, "ana")
    await lobby_cm.__aexit__(None, None, None)
    assert (await ana.next()) == P.Goodbye(reason="server stopping")
    await lobby.stop()  # twice is fine


def test_lobby_imports_neither_textual_nor_asyncssh():
    code = (
        "import sys, perudo_ssh.lobby, perudo_ssh.bots, perudo_ssh.session, perudo_ssh.lobby.table;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'asyncssh')];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_a_long_stream_of_messages_does_not_hold_back_updates():
    async with running_lobby() as lobby:
        watcher = await connected(lobby, "watcher")
        seen = len(watcher.events)
        for n in range(200):  # 200 arrivals queued at once: the inbox is never empty
            lobby.connect(f"p{n}")
        watcher.send(P.JoinTable(table=999))  # a marker, answered after the stream
        await watcher.expect(P.Refused)
        lists = [e for e in watcher.events[seen:] if isinstance(e, P.LobbyState)]
        assert len(lists) >= 200 // lobby_module.BATCH  # flushed along the way, not once
        assert len(lists[0].online) < 201
