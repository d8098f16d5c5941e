"""Pilot and text tests for what a first player's review found at 80×24: a player who is
out, a spectator's reveal, show and reroll against quick bots, lines that must fit."""

from __future__ import annotations

from msgspec.structs import replace
from textual.content import Content
from textual.widgets import DataTable

from perudo_ssh import protocol as P
from perudo_ssh.i18n import translator
from perudo_ssh.rules import DeclareCalzone, Roll, apply, new_game, observe, options_for
from screens import tableview
from screens.app import make_app
from screens.dialogs import RerollDialog
from screens.rulestext import rules_summary
from screens.table import TableScreen
from screens.widgets import Cup, CupsPanel
from screens.wording import raise_hint, reveal_story, tally_line
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
EN = translator("en")
TERMS = EN.terms(None)


def ben_out():
    """One die each; ben doubted a true 1×6 and is out; carl opens round 2."""
    state = rolled(dice=((6,), (5,), (4,)), dice_per_player=1)
    state = call(bid(state, 0, 1, 6), 1)
    return apply(state, Roll(dice=((3,), (), (3,))))


async def start(session: FakeSession, *events: P.Event):
    app = make_app(session)
    session.feed(P.Welcome(name=session.name), *events)
    return app


def footer_text(app) -> str:
    return screen_text(app).splitlines()[-1]


async def test_a_player_who_is_out_is_offered_no_moves_and_leaves_without_asking():
    session = FakeSession("ben")
    state = ben_out()
    app = await start(session, table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("space")  # the reveal of round 1
        await wait_until(pilot, lambda: not app.screen.has_class("-reveal"))
        text = screen_text(app)
        assert "None" not in text
        assert "You are out of this game" in text and "none left" in text
        assert "Waiting for carl" in text
        footer = footer_text(app)
        for key in ("Dudo", "Bid", "Type", "Count"):
            assert key not in footer, footer
        await pilot.press("tab", "d")  # no hidden input swallows the keys
        await pilot.pause()
        assert app.focused is None and session.sent == []
        await pilot.press("l")  # nobody takes over a seat with no dice: no question
        await pilot.pause()
        assert session.sent == [P.LeaveTable()] and isinstance(app.screen, TableScreen)


async def test_a_spectators_reveal_gives_way_to_the_next_rounds_bids():
    session = FakeSession("dan")
    state = bid(rolled(), 0, 3, 4)
    app = await start(session, table_state(observe(state, None), me=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        ended = call(state, 1)
        session.feed(table_state(observe(ended, None), me=None))
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        rolled_again = apply(ended, Roll(dice=((2, 2, 2, 2, 2), (3, 3, 3, 3), (4, 4, 4, 4, 4))))
        session.feed(table_state(observe(rolled_again, None), me=None))
        await pilot.pause()
        assert app.screen.has_class("-reveal")  # nobody has bid yet: the reveal stays
        opener = rolled_again.turn
        session.feed(table_state(observe(bid(rolled_again, opener, 2, 5), None), me=None))
        await wait_until(pilot, lambda: not app.screen.has_class("-reveal"))
        assert "Current bid: 2×5" in screen_text(app)
        assert session.sent == []  # a spectator is never waited for


async def test_dice_to_show_can_be_chosen_before_the_bid_and_go_with_it():
    session = FakeSession()
    state = rolled("club")  # ana (seat 0) opens; her dice 2 4 4 1 6
    app = await start(session, table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        assert "r Reroll" in footer_text(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RerollDialog))
        assert "With your bid" in screen_text(app)
        await pilot.press("2", "3", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        assert "then show 4 4" in str(app.screen.query_one("#composer").render())
        await pilot.press("4", "up", "enter")  # 2×4, then the two 4s at once
        await pilot.pause()
        assert session.sent == [P.MakeBid(count=2, face=4), P.ShowAndReroll(reveal=(4, 4))]


async def test_the_reroll_dialog_closes_once_the_chance_has_passed():
    session = FakeSession()
    state = bid(rolled("club"), 0, 3, 4)  # ana just bid: she may still show and reroll
    app = await start(session, table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RerollDialog))
        session.feed(table_state(observe(bid(state, 1, 4, 4), 0)))  # ben was quicker
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        assert "Too late to show and reroll" in str(app.screen.query_one("#status").render())
        assert session.sent == []


async def test_typing_a_bid_shows_how_to_get_back_to_the_keys():
    session = FakeSession()
    app = await start(session, table_state(observe(rolled(), 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("tab")
        await pilot.pause()
        assert "esc Back to keys" in footer_text(app)
        await pilot.press("tab")  # Tab again: back to the keys as well
        await pilot.pause()
        assert app.focused is None and "⏎ Bid" in footer_text(app)
        assert "esc Back to keys" not in footer_text(app)


async def test_club_cups_keep_one_line_each_at_80_columns():
    session = FakeSession()
    state = rolled("club")
    seats = tuple(P.SeatInfo(name=n, bot=True) for n in ("ana", "a-long-bot-name", "carl"))
    app = await start(session, table_state(observe(state, 0), seats=seats))
    async with app.run_test(size=(80, 14)) as pilot:  # few rows: one line per seat
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        lines = screen_text(app).splitlines()[1:]  # below the title
        for name in ("ana (you)", "a-long-bot-n", "carl (bot)"):
            (line,) = [line for line in lines if name in line]
            assert "5 dice" in line and "¤-10" in line, line


def test_title_keeps_the_round_and_dice_within_80_columns():
    state = rolled("calza-anytime")
    table = table_state(observe(state, 0), name="a table name of 24 chars")
    title = tableview.title_line(EN, table)
    assert title == "Table 1 · a table name of 24 chars · round 1 · 15 dice in play"
    wide = tableview.title_line(EN, table, width=100)  # rule words where there is room
    assert wide.endswith("15 dice in play · calza-anytime · calza: any time")
    club = tableview.title_line(EN, table_state(observe(rolled("club"), 0)))
    assert "bank ¤30" in club and "calza" not in club


def test_opening_roll_shows_every_roll_off_and_who_opens():
    state = rolled(opener=2)  # carl won the tie's roll-off
    table = table_state(observe(state, 0), opening=((4, 6, 6), (None, 2, 5)))
    lines = [line.plain for line in tableview.history_lines(EN, table, observe(state, 0))]
    assert lines == ["Opening roll: 2 dice each",
                     "  ana         4", "  ben         6 → 2", "  carl        6 → 5",
                     "  ties roll again", "▶ carl opens"]  # fmt: skip
    assert all(len(line) <= 26 for line in lines)  # the sidebar: 28 less its padding
    one_die = observe(rolled("calza-anytime"), 0)
    opening = replace(table, game=one_die, opening=((3, 1, 2),))
    lines = [line.plain for line in tableview.history_lines(EN, opening, one_die)]
    assert lines == ["Opening roll: 1 die each", "  ana         3", "  ben         1",
                     "  carl        2", "▶ you open"]  # fmt: skip
    line = tableview.current_bid_line(EN, opening, one_die).plain
    assert line == "You won the opening roll: you open · your turn"
    watching = observe(state, None)
    line = tableview.current_bid_line(EN, replace(table, me=None, game=watching), watching).plain
    assert line == "carl won the opening roll and opens · carl to play"


def test_waiting_for_names_you_first():
    state = call(bid(rolled(), 0, 3, 4), 1)
    table = table_state(observe(state, 1), me=1, waiting_for=("ana", "ben", "carl"))
    line = tableview.current_bid_line(EN, table, observe(state, 1)).plain
    assert line == "Round over: waiting for you, ana and carl to go on…"


def test_words_for_one_die_and_one_paco():
    state = rolled(dice=((2, 2, 3, 3, 5), (5, 5, 3, 3, 2), (6, 6, 6, 4, 3)))
    result = call(bid(bid(state, 0, 5, 2), 1, 3, 1), 2).results[-1]
    assert reveal_story(EN, TERMS, result, ("ana", "ben", "carl")) == (
        "carl called Dudo on ben's 3 pacos: there were 0, so ben loses a die"
    )
    assert tally_line(EN, TERMS, result) == "Counted 0 — bid was 3 pacos (only pacos count)"
    one = call(bid(rolled(dice=((2, 2, 3, 3, 5), (5, 5, 4, 3, 2), (6, 6, 6, 3, 3))), 0, 2, 4), 1)
    story = reveal_story(EN, TERMS, one.results[-1], ("ana", "ben", "carl"))
    assert "there was 1, so ana loses" in story
    view = observe(bid(rolled(), 0, 1, 5), 1)
    assert raise_hint(EN, view) is not None and raise_hint(EN, view).endswith("or 1 paco")


def test_calzone_is_offered_in_words_and_its_banner_fits_80_columns():
    state = replace(new_game(options_for("club"), 3, 0), counts=(2, 5, 5))
    state = apply(state, Roll(dice=((3, 3), (2, 2, 2, 2, 2), (4, 4, 4, 4, 4))))
    state = call(bid(state, 0, 3, 3), 1)  # two 3s: ana drops to one die and opens
    state = apply(state, Roll(dice=((5,), (2, 2, 2, 2, 2), (4, 4, 4, 4, 4))))
    view = observe(state, 0)
    assert view.choices.calzone
    assert tableview.hint_line(EN, view).startswith("z: declare a Calzone round")
    state = apply(state, DeclareCalzone(seat=0))
    table = table_state(observe(state, 0))
    assert tableview.banner_line(EN, table, observe(state, 0)) == (
        "CALZONE — pacos not wild; may change face: you"
    )
    for viewer in (1, None):  # the others and spectators see who may change face
        banner = tableview.banner_line(EN, table, observe(state, viewer))
        assert banner == "CALZONE — pacos not wild; may change face: ana"
    six = replace(state, seats=6, counts=(1,) * 6, hidden=((2,),) * 6, shown=((),) * 6)
    names = tuple(P.SeatInfo(name=f"player-number-{n}", bot=False) for n in range(6))
    banner = tableview.banner_line(EN, table_state(observe(six, 0), seats=names, size=6),
                                   observe(six, 0))  # fmt: skip
    assert banner is not None and len(banner) == 80 and banner.endswith("…")


def test_a_cup_shows_its_set_aside_dice_face_up():
    parts = CupsPanel._dice(Cup(name="ana", dice=4, shown=(3, 5), tokens=8))
    text = Content.assemble(*parts).plain
    assert text.startswith("[?][?][3][5] ") and "4 dice" in text and text.endswith("¤8")


def test_rules_say_when_a_table_changed_its_presets_calza():
    view = observe(rolled("classic", calza="on-turn"), 0)
    first = rules_summary(view.options)[0]
    assert first.endswith("calza off), changed at this table: Calza: on your turn.")
    assert rules_summary(observe(rolled(), 0).options)[0].endswith("calza off.")


async def test_the_lobby_list_fits_80_columns_with_a_long_table_name():
    session = FakeSession()
    long = summary(12, name="Très long nom [b]xyzwvuts 12345", preset="calza-anytime")
    app = await start(session, lobby_state(long))
    async with app.run_test(size=SIZE) as pilot:
        grid = app.screen.query_one("#tables", DataTable)
        await wait_until(pilot, lambda: grid.row_count == 1)
        await pilot.pause()
        text = screen_text(app)
        assert "Watch" in text and "Très long nom [b…" in text
        assert grid.virtual_size.width <= grid.size.width  # no sideways scrolling
