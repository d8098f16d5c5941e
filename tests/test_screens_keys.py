"""Pilot tests of keys and screens under pressure, 80×24: a screen closed while it opens, a
huge paste into the bid input, the footer's keys during a reveal, keys arriving in a burst."""

from __future__ import annotations

import pytest
from textual import events

from perudo_ssh import protocol as P
from perudo_ssh.rules import observe
from screens.app import make_app
from screens.bidinput import BidInput
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
    table_state,
    wait_until,
)

SIZE = (80, 24)


async def start(session: FakeSession, *events: P.Event):
    app = make_app(session)
    session.feed(P.Welcome(name=session.name), *events)
    return app


def footer_text(app) -> str:
    return screen_text(app).splitlines()[-1]


def status_of(app) -> str:
    return str(app.screen.query_one("#status").render())


def _table() -> TableScreen:
    screen = TableScreen()
    screen.show(table_state(observe(rolled(), 0)))
    return screen


def _game_over() -> GameOverScreen:
    screen = GameOverScreen()
    screen.show(table_state(observe(rolled(), 0)))
    return screen


OPENING = {
    "create": lambda: CreateTableDialog("ana"),
    "reroll": lambda: RerollDialog((2, 4, 4), planning=True),
    "game-over": _game_over,
    "table": _table,
}


@pytest.mark.parametrize("close", ["app-exits", "popped"])
@pytest.mark.parametrize("screen", sorted(OPENING))
async def test_a_screen_closed_while_it_opens_does_not_crash_the_app(screen, close):
    """The client leaves (or the screen is replaced) right after the screen was pushed: its
    on_mount runs without its widgets and must not query them (`NoMatches`)."""
    session = FakeSession()
    app = await start(session, lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.lobby is not None)
        app.push_screen(OPENING[screen]())
        if close == "app-exits":
            app.exit()
        else:
            app.pop_screen()
            await pilot.pause()
            assert isinstance(app.screen, LobbyScreen)
    assert app._exception is None  # run_test would have raised it


@pytest.mark.slow
async def test_a_huge_paste_into_the_bid_input_is_refused_whole_with_a_reason():
    session = FakeSession()
    app = await start(session, table_state(observe(bid(rolled(), 0, 3, 4), 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("tab", *"5x")
        bid_input = app.screen.query_one(BidInput)
        assert bid_input.value == "5x"
        app.post_message(events.Paste("4" * 64 * 1024))  # as the driver posts a paste
        await pilot.pause()
        assert bid_input.value == "5x"
        assert "at most 32 characters" in status_of(app)
        await pilot.press(*"4" * 40)  # typed: it stops at the limit
        assert len(bid_input.value) == BidInput.MAX_LENGTH
        await pilot.press("ctrl+u", *"5x4", "enter")  # the input still works
        await pilot.pause()
        assert bid_input.value == "" and session.sent == [P.MakeBid(count=5, face=4)]


async def test_a_spectator_leaves_with_l_during_a_reveal():
    session = FakeSession("dan")
    state = bid(rolled(), 0, 3, 4)
    app = await start(session, table_state(observe(state, None), me=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        session.feed(table_state(observe(call(state, 1), None), me=None))
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        await pilot.pause()
        assert footer_text(app).split() == ["l", "Leave", "g", "Rounds", "?", "Help"]
        await pilot.press("l")
        await pilot.pause()
        assert session.sent == [P.LeaveTable()]


@pytest.mark.slow
async def test_during_a_reveal_the_footer_keys_work_and_any_other_key_closes_it():
    session = FakeSession("ben")
    state = bid(rolled(), 0, 3, 4)
    app = await start(session, table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        session.feed(table_state(observe(call(state, 1), 1), me=1))
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        await pilot.pause()
        # no moves offered
        assert footer_text(app).split() == ["l", "Leave", "g", "Rounds", "?", "Help"]
        table = app.screen
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await pilot.press("l")  # mid-game: asked first
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is table)
        assert table.has_class("-reveal") and session.sent == []
        await pilot.press("tab")  # a move's key: only closes the reveal, as any other key
        await wait_until(pilot, lambda: not table.has_class("-reveal"))
        assert session.sent == [P.Ready(round=0)] and app.focused is None
        assert "Type" in footer_text(app)


async def test_keys_in_one_burst_after_tab_go_to_the_bid_input():
    """The driver posts every key of one read at once: the keys behind Tab are routed
    before any handler runs, so Tab must move the focus as soon as the app reads it."""
    session = FakeSession("ben")
    app = await start(session, table_state(observe(bid(rolled(), 0, 3, 4), 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        for key, character in [("tab", "\t"), ("3", "3"), ("x", "x"), ("6", "6")]:
            app.post_message(events.Key(key, character))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: session.sent)
        await pilot.pause()
        assert session.sent == [P.MakeBid(count=3, face=6)]
        assert app.focused is None and app.screen.query_one(BidInput).value == ""
