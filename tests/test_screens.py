"""Pilot tests of the Textual screens against a fake lobby session (80×24).

Game views come from the real rules engine with fixed dice (see `test_screens_fakes`).
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace
from rich.text import Text
from textual.widgets import DataTable

from perudo_ssh import protocol as P
from perudo_ssh.rules import Roll, apply, new_game, observe, options_for
from screens import boundary
from screens.app import PerudoApp, make_app
from screens.create import CreateTableDialog
from screens.dialogs import ConfirmDialog, RerollDialog
from screens.gameover import GameOverScreen
from screens.help import HelpScreen
from screens.lobby import LobbyScreen
from screens.table import TableScreen
from tests.test_screens_fakes import (
    FakeSession,
    bid,
    call,
    lobby_state,
    rolled,
    screen_text,
    summary,
    table_state,
    wait_until,
)

SIZE = (80, 24)


def apply_roll(state, dice):
    return apply(state, Roll(dice=dice))


def status_of(app: PerudoApp) -> str:
    return str(app.screen.query_one("#status").render())


async def start(session: FakeSession, *events: P.Event):
    app = make_app(session)
    session.feed(P.Welcome(name=session.name), *events)
    return app


async def test_the_lobby_footer_shows_leaders_profile_and_account_where_there_is_room():
    """Issue 13, item 12: `l`, `p` and `k` work in the lobby; its footer names them when the
    line has room (not at 80 columns in English; at 200, and again after a resize), in the
    player's language."""
    session = FakeSession()
    app = await start(session, lobby_state(summary(1)))
    base = "c Create table  g Quick play  j/⏎ Join  s Watch"
    extra = "h History  l Leaders  p Profile  k Account  e Invite code  x Challenge"
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: base in screen_text(app))
        footer = screen_text(app).splitlines()[-1]
        assert f"{base}  F2 Language  q Quit" in footer and "Leaders" not in footer
        await pilot.resize_terminal(200, 50)
        want = f"{base}  {extra}  F2 Language  q Quit  ? Help"
        await wait_until(pilot, lambda: want in screen_text(app).splitlines()[-1])
        await pilot.press("f2")  # French: the words change, the keys stay
        await wait_until(pilot, lambda: "l Classement" in screen_text(app).splitlines()[-1])
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: " l " not in screen_text(app).splitlines()[-1])


async def test_lobby_shows_tables_and_updates_rows_in_place():
    session = FakeSession()
    app = await start(session, lobby_state(summary(1), summary(2, status="playing", free=0)))
    async with app.run_test(size=SIZE) as pilot:
        grid = app.screen.query_one("#tables", DataTable)
        await wait_until(pilot, lambda: grid.row_count == 2)
        cells = grid.get_row("1")
        assert [str(cell) for cell in cells] == ["1", "table 1", "classic", "1/4", "waiting", "0"]
        assert all(isinstance(cell, Text) and cell.no_wrap for cell in cells)  # not markup
        assert str(grid.get_row("2")[1]) == "table 2"
        text = screen_text(app)
        assert "welcome, ana" in text and "Online (2)" in text and "ben" in text
        row_one = grid.get_row_index("1")
        session.feed(lobby_state(summary(1, status="playing", free=0, spectators=2)))
        await wait_until(pilot, lambda: grid.row_count == 1)
        assert grid.get_row_index("1") == row_one
        assert [str(cell) for cell in grid.get_row("1")[3:]] == ["4/4", "playing", "2"]


async def test_join_and_spectate_send_commands_for_the_selected_table():
    session = FakeSession()
    app = await start(session, lobby_state(summary(1), summary(2, status="playing", free=0)))
    async with app.run_test(size=SIZE) as pilot:
        grid = app.screen.query_one("#tables", DataTable)
        await wait_until(pilot, lambda: grid.row_count == 2)
        await pilot.press("enter")
        await pilot.press("down", "j", "s")
        await pilot.pause()
        assert session.sent == [P.JoinTable(table=1), P.SpectateTable(table=2)]


@pytest.mark.slow
async def test_create_dialog_sends_the_chosen_table():
    session = FakeSession()
    app = await start(session, lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        dialog = app.screen
        await pilot.press("down", "down", "enter")  # the radio set: gamerules
        dialog.query_one("#seats").value = 3
        await pilot.pause()
        assert dialog.query_one("#bots").value == 2
        dialog.query_one("#table-name").focus()
        await pilot.press(*"fun", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent == [
            P.CreateTable(preset="gamerules", seats=3, bots=2, options={}, name="fun")
        ]


async def test_create_dialog_overrides_calza_and_cancels():
    session = FakeSession()
    app = await start(session, lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        app.screen.query_one("#calza").value = "on-turn"
        app.screen.query_one("#seats").value = 2
        await pilot.pause()
        assert app.screen.query_one("#bots").value == 1
        await pilot.press("ctrl+s")
        await pilot.press("c", "escape")
        await pilot.pause()
        assert session.sent == [
            P.CreateTable(
                preset="classic", seats=2, bots=1, options={"calza": "on-turn"}, name="ana's table"
            )
        ]


async def test_the_table_title_names_the_table_and_fits_the_terminal_width():
    """Issue 13, item 10: the title says "Table 1" (games kept have numbers of their own);
    at 80 columns the preset's name gives way to a long table name, and a wider terminal
    shows every word, redrawn as it is resized."""
    session = FakeSession()
    app = await start(session, table_state(observe(rolled(), 0), name="a table name of 20 c"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        first = "Table 1 · a table name of 20 c · round 1 · 15 dice in play"
        await wait_until(pilot, lambda: f" {first} · calza: off " in screen_text(app))
        await pilot.resize_terminal(200, 50)
        await wait_until(pilot, lambda: f"{first} · classic · calza: off" in screen_text(app))
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "classic" not in screen_text(app).splitlines()[0])


async def test_table_shows_own_dice_and_no_one_elses():
    session = FakeSession()
    evil = "[@click=app.quit]evil[/]"  # a table name is the player's own text, not markup
    app = await start(session, table_state(observe(rolled(), 0), name=evil))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        text = screen_text(app)
        assert evil in text
        assert "│ 2 │" in text and "║ 1 ║" in text and "│ 6 │" in text  # ana: 2 4 4 1 6
        assert text.count("┌───┐") + text.count("╔═══╗") == 5  # her five dice, no others
        assert "│ 5 │" not in text and "│ 3 │" not in text  # ben's and carl's faces
        # at 80 columns the preset's name gives way to the table's number and a long name
        assert "Table 1 · " in text and "15 dice in play" in text and "calza: off" in text
        session.feed(table_state(observe(rolled(), None), me=None))
        await pilot.pause()
        text = screen_text(app)
        assert "┌───┐" not in text and "never the dice" in text


async def test_typed_bid_is_sent():
    session = FakeSession()
    state = bid(rolled(), 0, 3, 4)  # ana opened 3×4: ben (seat 1) to bid
    app = await start(session, table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("tab", *"5x4", "enter")
        await pilot.pause()
        assert session.sent == [P.MakeBid(count=5, face=4)]
        assert "Current bid: 3×4 by ana" in screen_text(app)


@pytest.mark.slow
async def test_garbage_input_explains_and_sends_nothing():
    session = FakeSession()
    app = await start(session, table_state(observe(bid(rolled(), 0, 3, 4), 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("tab", *"lots of 4", "enter")
        await pilot.pause()
        assert session.sent == []
        assert "Type a bid like 5x4: five dice showing 4" in status_of(app)


async def test_illegal_bid_is_refused_locally_with_a_reason():
    session = FakeSession()
    app = await start(session, table_state(observe(bid(rolled(), 0, 5, 4), 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("tab", *"5 3", "enter")
        await pilot.pause()
        assert session.sent == []
        expected = "After 5×4 you must raise: more dice, or the same count of a higher face, or"
        assert expected in status_of(app) and "3 pacos" in status_of(app)
        # the face key keeps the count where it is legal (5 pacos), three down: 2, too few
        await pilot.press("escape", "1", "down", "down", "down", "enter")
        await pilot.pause()
        assert session.sent == []
        assert "3 pacos" in status_of(app)


async def test_keys_compose_a_bid_from_the_lowest_legal_one():
    session = FakeSession()
    app = await start(session, table_state(observe(bid(rolled(), 0, 3, 4), 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        assert "4×4" in str(app.screen.query_one("#composer").render())
        await pilot.press("enter")
        # a face key keeps the count where that bid is legal (issue 13): 4x6, then 5x6
        await pilot.press("6", "up", "plus", "minus", "enter")
        await pilot.press("1", "enter")  # 5 pacos are legal too
        await pilot.press("down", "down", "down", "down", "3")  # 1x3 is not: 4x3, the lowest
        await pilot.press("enter")
        await pilot.pause()
        assert session.sent == [
            P.MakeBid(count=4, face=4),
            P.MakeBid(count=5, face=6),
            P.MakeBid(count=5, face=1),
            P.MakeBid(count=4, face=3),
        ]


async def test_dudo_only_when_allowed():
    session = FakeSession()
    state = rolled()
    app = await start(session, table_state(observe(state, 1), me=1))  # ana opens, not ben
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("d")
        await pilot.pause()
        assert session.sent == []
        assert "Dudo is called on your turn: ana is to play" in status_of(app)
        session.feed(table_state(observe(bid(state, 0, 3, 4), 1), me=1))
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert session.sent == [P.MakeCall(call="dudo")]


async def test_calza_key_only_where_calza_is_played():
    session = FakeSession()
    state = bid(rolled("calza-anytime"), 0, 3, 4)
    app = await start(session, table_state(observe(state, 2), me=2))  # carl, out of turn
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        assert "c Calza" in screen_text(app)
        await pilot.press("c", "d")
        await pilot.pause()
        assert session.sent == [P.MakeCall(call="calza")]
        session.feed(table_state(observe(bid(rolled(), 0, 3, 4), 2), me=2))
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        assert "Calza" not in screen_text(app) and session.sent == [P.MakeCall(call="calza")]


async def test_palifico_banner():
    session = FakeSession()
    state = replace(new_game(options_for("classic"), 3, 0), counts=(2, 5, 5))
    state = apply_roll(state, ((3, 3), (2, 2, 2, 2, 2), (4, 4, 4, 4, 4)))
    state = call(bid(state, 0, 3, 3), 1)  # two 3s: ana drops to one die, palifico follows
    state = apply_roll(state, ((5,), (2, 2, 2, 2, 2), (4, 4, 4, 4, 4)))
    assert state.special == "palifico"
    app = await start(session)
    async with app.run_test(size=SIZE) as pilot:
        session.feed(table_state(observe(state, 1), me=1))
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        assert "PALIFICO — pacos are not wild, face is fixed" in screen_text(app)
        session.feed(table_state(observe(bid(state, 0, 2, 5), 1), me=1))
        await pilot.pause()
        await pilot.press("tab", *"3x6", "enter")
        await pilot.pause()
        assert session.sent == []
        assert "In this Palifico round the face stays 5s" in status_of(app)


async def test_reveal_shows_the_tally_and_sends_ready():
    session = FakeSession()
    state = bid(rolled(), 0, 3, 4)
    app = await start(session, table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        session.feed(table_state(observe(call(state, 1), 1), me=1))  # ben doubts 3×4
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        await pilot.pause()
        text = screen_text(app)
        # ana 2 4 4 1 6, ben 5 5 3 3 2, carl 1 6 6 4 3: three 4s and two pacos
        assert "Counted 5 — bid was 3×4 (pacos wild)" in text
        assert "ben called Dudo on ana's 3×4: there were 5, so ben loses a die" in text
        assert "[4] [4] [1]" in text
        await pilot.press("space")
        await wait_until(pilot, lambda: not app.screen.has_class("-reveal"))
        assert session.sent == [P.Ready(round=0)]
        assert "Current bid" not in text and "Round over" in screen_text(app)


async def test_a_reveal_left_open_closes_when_the_next_round_waits_on_your_bid():
    """The table goes on once the reveal times out (8 s): a player still on the reveal
    whose turn it is to open is shown the table, not the old round over a running clock
    with keys that do nothing; the round stays in `g Rounds`."""
    session = FakeSession()
    state = bid(rolled(), 0, 3, 4)
    app = await start(session, table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        revealed = call(state, 1)  # ben doubts 3×4 and loses a die: he opens the next round
        session.feed(table_state(observe(revealed, 1), me=1))
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        nxt = apply_roll(revealed, ((2, 4, 4, 1, 6), (5, 5, 3, 3), (1, 6, 6, 4, 3)))
        assert nxt.turn == 1 and not nxt.bids
        session.feed(table_state(observe(nxt, 1), me=1))
        await wait_until(pilot, lambda: not app.screen.has_class("-reveal"))
        await pilot.press("tab", *"4x3", "enter")
        await wait_until(pilot, lambda: bool(session.sent))
        assert session.sent == [P.MakeBid(count=4, face=3)]


async def test_ctrl_q_mid_game_asks_first_and_ctrl_c_says_how_to_quit_in_your_language():
    """Seated with dice in a game being played, Ctrl+Q asks (n: the game goes on; y: the
    app ends); Ctrl+C says how to quit in the player's language, not Textual's English."""
    session = FakeSession()
    app = await start(session, table_state(observe(bid(rolled(), 0, 3, 4), 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("f2")  # français
        await pilot.press("ctrl+c")
        await wait_until(
            pilot, lambda: any("Ctrl+Q pour quitter" in n.message for n in app._notifications)
        )
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Quitter en pleine partie ?" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        assert app.is_running
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.is_running, timeout=5)


async def test_ctrl_q_in_the_lobby_quits_at_once():
    session = FakeSession()
    app = await start(session, lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, timeout=5)


async def test_game_over_shows_the_winner_then_play_again_or_leave():
    session = FakeSession()
    state = rolled(dice=((6,), (5,), (4,)), dice_per_player=1)
    state = call(bid(state, 0, 1, 6), 1)  # one 6: ben is out
    state = apply_roll(state, ((3,), (), (3,)))
    state = call(bid(state, 2, 2, 4), 0)  # carl opens 2×4, no 4 at all: carl is out
    assert state.winner == 0
    app = await start(session, table_state(observe(state, 2), me=2, status="over"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        assert "carl called" not in screen_text(app)  # the reveal first, then game over
        await pilot.press("space")
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverScreen))
        text = screen_text(app)
        assert "Game over: ana wins" in text
        assert text.index("1. ana") < text.index("2. carl (you)") < text.index("3. ben")
        await pilot.press("a", "l")
        await pilot.pause()
        assert session.sent == [P.PlayAgain(), P.LeaveTable()]
        session.feed(P.LeftTable())
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))


async def test_help_opens_everywhere():
    session = FakeSession()
    app = await start(session, lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert "create a table" in screen_text(app)
        await pilot.press("escape")
        session.feed(table_state(observe(rolled("gamerules"), 0)))
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        rules = str(app.screen.query_one("#help-rules").render())
        assert "Calza (instead of bidding, on your turn)" in rules
        assert "Not in a Palifico round" in rules
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))


async def test_leave_mid_game_asks_first_and_left_table_returns_to_lobby():
    session = FakeSession()
    app = await start(session, table_state(observe(rolled(), 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("l", "n")
        await pilot.pause()
        assert session.sent == []
        await pilot.press("escape", "y")
        await pilot.pause()
        assert session.sent == [P.LeaveTable()]
        session.feed(P.LeftTable())
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))


async def test_waiting_table_offers_bots_and_start_to_its_creator():
    session = FakeSession()
    waiting = table_state(
        None, status="waiting", seats=(P.SeatInfo(name="ana", bot=False),), size=3
    )
    app = await start(session, waiting)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        text = screen_text(app)
        assert "Waiting for 2 more players" in text and "— free —" in text
        await pilot.press("b", "s", "l")
        await pilot.pause()
        assert session.sent == [P.AddBot(), P.StartGame(), P.LeaveTable()]


async def test_the_same_refusal_again_is_told_once_while_it_is_shown(monkeypatch):
    """Enter pressed five times out of turn: one "not your turn" notice, not five stacked
    over the table; another refusal is told beside it, and once the first is gone (here
    cleared, as a game's start clears them) the same one is told again."""
    monkeypatch.setattr(boundary, "REFUSAL_SECONDS", 600.0)  # none expires on a slow run
    session = FakeSession()
    turn = P.Refused(code="not_your_turn", message="it is not your turn")
    app = await start(session, *[turn] * 5)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app._notifications) == 1)
        session.feed(turn, P.Refused(code="table_full", message="every seat is taken"), turn)
        await wait_until(pilot, lambda: session._events.empty())
        await pilot.pause()
        assert sorted(n.message for n in app._notifications) == [
            "Every seat is taken",
            "It is not your turn",
        ]
        app.clear_notifications()
        session.feed(turn)
        await wait_until(pilot, lambda: len(app._notifications) == 1)


@pytest.mark.slow
async def test_refused_and_notice_are_notified_and_goodbye_exits():
    session = FakeSession()
    app = await start(session, P.Refused(code="table_full", message="every seat is [b]taken"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app._notifications) == 1)
        session.feed(P.Notice(text="ben left"), P.Goodbye(reason="server stopping"))
        await wait_until(pilot, lambda: not app.is_running, timeout=5)
    assert app.return_value == "server stopping"
    assert session.closed


async def test_club_show_and_reroll_picks_dice_to_set_aside():
    session = FakeSession()
    state = bid(rolled("club"), 0, 3, 4)  # ana just bid: she may show some dice and reroll
    app = await start(session, table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        text = screen_text(app)
        # jonti is offered only while allowed: ana holds all her dice (RULES.md §5)
        assert "r Reroll" in text and "j Jonti" not in text and "c Calza" not in text
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RerollDialog))
        await pilot.press("1", "3")
        # picked dice are marked, not only coloured (issue 13), and said in words
        await wait_until(pilot, lambda: "1:[2]✓ 2:[4]  3:[4]✓ " in screen_text(app))
        assert "Set aside: 2 4 · re-rolled: 4 " in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        assert session.sent == [P.ShowAndReroll(reveal=(2, 4))]


@pytest.mark.parametrize(
    ("language", "preset", "said"),
    [
        ("en", "classic", "No bid can top 3 pacos: only Dudo."),
        ("en", "calza-anytime", "No bid can top 3 pacos: only Dudo or Calza."),
        ("fr", "classic", "Aucune enchère ne peut dépasser 3 pacos : seulement Dudo."),
        ("ru", "calza-anytime", "Перебить 3 пако нельзя: только Dudo или Calza."),
    ],
)
async def test_when_no_bid_tops_the_last_the_composer_says_so_and_names_the_calls(
    language, preset, said
):
    """Three dice in play and 3 pacos bid (issue 13, item 3): no bid is left. The composer
    says so and names the calls the table allows; Enter and a face key say the same, and
    nothing is sent."""
    state = rolled(preset, dice=((2,), (5,), (1,)), opener=1, dice_per_player=1)
    for seat, count, face in ((1, 3, 6), (2, 2, 1), (0, 3, 1)):
        state = bid(state, seat, count, face)
    session = FakeSession()
    session.feed(P.Welcome(name="ben"), lobby_state())
    session.feed(table_state(observe(state, 1), me=1))
    app = make_app(session, language)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        assert said in screen_text(app).replace("\n", " ")
        for key in ("enter", "4"):
            await pilot.press(key)
            await pilot.pause()
            assert said in status_of(app)
        assert session.sent == []


async def test_the_footer_offers_a_call_only_when_it_would_work_now():
    """Issue 13, item 6: at a 2-seat gamerules table calza is never played (RULES.md: it
    needs 3 players), out of turn dudo is not the viewer's: neither key is offered; on the
    viewer's turn after a bid, dudo is. A key not offered still says why when pressed."""
    state = new_game(options_for("gamerules"), 2, 0)
    state = bid(apply(state, Roll(dice=((2, 4, 4, 1, 6), (5, 5, 3, 3, 2)))), 0, 3, 4)
    seats = (P.SeatInfo(name="ana", bot=False), P.SeatInfo(name="ben", bot=False))
    for me, offered in ((0, ()), (1, ("d Dudo",))):
        session = FakeSession()
        app = await start(
            session, lobby_state(), table_state(observe(state, me), me=me, seats=seats, size=2)
        )
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda app=app: isinstance(app.screen, TableScreen))
            await pilot.pause()
            footer = screen_text(app).splitlines()[-1]
            assert "c Calza" not in footer
            assert ("d Dudo" in footer) == ("d Dudo" in offered)
            await pilot.press("c")
            await pilot.pause()
            assert session.sent == [] and status_of(app)


async def test_a_language_switch_clears_what_was_said_in_the_old_one_and_keeps_words():
    """Issue 13, item 7: a refusal in the status line and a refusal's notification, said in
    English, are gone after F2 (French); a table chat line's notification (a player's own
    words) and an announcement stay."""
    session = FakeSession("ben")
    app = await start(session, lobby_state(), table_state(observe(rolled(), 1), me=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("d")  # not ben's turn: refused in the status line
        session.feed(
            P.Refused(code="not_your_turn", message="it is not your turn to bid"),
            P.ChatLine(id=1, scope="table", name="ana", text="bonne chance", table=1),
            P.Announcement(text="Server restarts at noon", by="boss"),
        )
        await wait_until(pilot, lambda: len(app._notifications) == 3)
        assert "Dudo is called on your turn" in status_of(app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: any("Langue" in n.message for n in app._notifications))
        messages = {n.message for n in app._notifications}
        assert "bonne chance" in messages and "Server restarts at noon" in messages
        assert not any("turn" in m for m in messages)
        assert "Dudo is called" not in status_of(app)
        assert "your turn" not in screen_text(app)


@pytest.mark.parametrize(
    ("language", "hint"),
    [
        ("en", "Waiting for 2 more players. The next player to sit down can start the game."),
        ("fr", "Le prochain joueur qui s'assoit peut lancer la partie."),
        ("ru", "Следующий севший за стол игрок может начать игру."),
    ],
)
async def test_a_waiting_table_left_by_its_creator_says_who_may_start_it(language, hint):
    """Issue 13, item 9: the creator and the other person left a 3-seat table, a bot stays
    and a spectator watches: no creator is named ("the creator" was), the next player to sit
    down may start it (Table.sit gives them the creator's right)."""
    session = FakeSession()
    session.feed(P.Welcome(name="ana"), lobby_state())
    waiting = table_state(
        None,
        status="waiting",
        seats=(P.SeatInfo(name="bot-Luis", bot=True),),
        size=3,
        me=None,
        creator=None,
    )
    session.feed(waiting)
    app = make_app(session, language)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        assert hint in " ".join(screen_text(app).split())


@pytest.mark.parametrize(("language", "mark"), [("en", "⌛ not yet"), ("fr", "⌛ pas encore")])
async def test_the_reveal_marks_the_players_the_table_waits_for(language, mark):
    """Issue 13 ("who the table waits for"): during the reveal each hand of a player the
    table still waits for (to press Space) is marked; the mark goes once they went on."""
    state = call(bid(rolled(), 0, 3, 4), 1)  # ben calls dudo: the round is over
    session = FakeSession("ben")
    session.feed(P.Welcome(name="ben"), lobby_state())
    session.feed(table_state(observe(state, 1), me=1, waiting_for=("ana", "ben")))
    app = make_app(session, language)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        await pilot.pause()

        def hand(name: str) -> str:
            (line,) = [ln for ln in screen_text(app).splitlines() if ln.startswith(f" {name:<17}")]
            return line

        assert mark in hand("ana") and mark in hand("ben") and mark not in hand("carl")
        session.feed(table_state(observe(state, 1), me=1, waiting_for=("ben",)))
        await wait_until(pilot, lambda: mark not in hand("ana"))
        assert mark in hand("ben")
