"""Notifications drawn over the screen (`screens.notices`, issue 10): the same cells as
Textual's toasts drew, no widget mounted and no layout as a table chat line comes and goes,
the terminal always a whole repaint of what is there."""

from __future__ import annotations

from typing import Any

import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.widgets import Static
from textual.widgets._toast import Toast

import screens.chat
from perudo_ssh import protocol as P
from perudo_ssh.rules import observe
from screens.app import make_app
from screens.notices import NOTICE_CSS, DrawnNotices, Overlay, palette_of
from screens.table import TableScreen
from tests.frames import Shown
from tests.test_screens_capacity import settled
from tests.test_screens_fakes import (
    FakeSession,
    bid,
    lobby_state,
    rolled,
    screen_text,
    summary,
    table_state,
    wait_until,
)

NOTICES: list[dict[str, Any]] = [
    {"message": "hi there, nice bid", "title": "ben", "markup": False},
    {"message": "Pick at least one die to show.", "markup": False},
    {"message": "warn me", "severity": "warning", "markup": False},
    {"message": "a very long line " * 9 + "with_a_word_longer_than_the_box" * 3, "title": "cleo"},
    {"message": "[b]bold[/b] and [i]not[/i]", "severity": "error", "title": "Refused"},
    {"message": "Élan · ñandú · 骰子", "markup": False},
]


class Behind(App[None]):
    """Text in every cell, so what a notice covers and leaves is seen."""

    CSS = NOTICE_CSS

    def compose(self) -> ComposeResult:
        yield Static("\n".join(f"{y:02d}" + "abcdefghij" * 30 for y in range(80)))


class DrawnBehind(DrawnNotices, Behind):
    pass


Cells = list[list[tuple[str, Style | None]]]


def cells(strips: list[Strip]) -> Cells:
    return [[(ch, seg.style) for seg in strip for ch in seg.text] for strip in strips]


async def screen_with_notices(app: App[None], size: tuple[int, int]) -> Cells:
    async with app.run_test(size=size, notifications=True) as pilot:
        for notice in NOTICES:
            app.notify(timeout=60, **notice)
        if isinstance(app, DrawnNotices):
            await wait_until(pilot, lambda: len(app._notifications) == len(NOTICES))
        else:
            await wait_until(pilot, lambda: len(app.screen.query(Toast)) == len(NOTICES))
        await pilot.pause()
        await pilot.pause()
        return cells(app.screen._compositor.render_strips())


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (46, 30)])
async def test_notices_are_drawn_in_the_cells_textual_s_toasts_drew(size) -> None:
    """Textual's toasts under our CSS and the notices drawn over the screen: every cell of
    the screen alike (character, colours, bold), titles and severities, wrapped and folded
    lines, markup, wide characters; the rack's two-column gutter shows what is beneath."""
    theirs = await screen_with_notices(Behind(), size)
    ours = await screen_with_notices(DrawnBehind(), size)
    assert len(ours) == len(theirs) == size[1]
    differ = [y for y in range(size[1]) if ours[y] != theirs[y]]
    assert not differ, (differ, ours[differ[0]][:6], theirs[differ[0]][:6])
    bottom = size[1] - 2
    assert ours[bottom][0][0] == "▌"
    # the rack's gutter (left of the screen's own scrollbar) shows the text beneath
    assert any(row[size[0] - 4][0].isalpha() for row in ours[bottom - 5 : bottom + 1])


def test_notices_that_do_not_fit_show_their_newest_lines() -> None:
    """As the toast rack scrolled to its end: the oldest lines are cut, the last line stays
    just above the footer's line."""
    from textual.notifications import Notification

    from screens.notices import Palette

    palette = Palette(App().get_css_variables())
    many = [Notification(f"line {i}", title=f"t{i}") for i in range(20)]
    top, lines = Overlay(many, palette).placed(80, 24)
    assert (top, len(lines)) == (0, 23)
    assert "line 19" in lines[-1].text and "t19" in lines[-2].text
    assert Overlay(many[:2], palette).placed(80, 24)[0] == 23 - 4
    assert Overlay(many, palette).placed(5, 24) == (0, ())


def test_a_notice_whose_markup_is_broken_is_drawn_as_written() -> None:
    """A Toast failed to draw a notice whose markup did not parse (its app crashed); a
    notice shows the text as it is written."""
    from textual.notifications import Notification

    from screens.notices import Palette, notice_lines

    palette = Palette(App().get_css_variables())
    (line,) = notice_lines(Notification("[/b] stray tag", markup=True), 40, palette)
    assert line.text.startswith("▌ [/b] stray tag") and line.cell_length == 40
    (line,) = notice_lines(Notification("[b]bold[/b] tag", markup=True), 40, palette)
    assert line.text.startswith("▌ bold tag")


def at_a_table() -> tuple[FakeSession, Any, Shown]:
    """A player's app at a 3-seat table where ana bid 3×4 (not yet running), its session
    and its terminal at 80×24."""
    session = FakeSession()
    app = make_app(session)
    session.feed(
        P.Welcome(name="ana"),
        lobby_state(summary(1)),
        table_state(observe(bid(rolled(), 0, 3, 4), 0)),
    )
    return session, app, Shown(app, (80, 24))


async def test_a_table_line_comes_and_goes_without_a_widget_or_a_layout(monkeypatch) -> None:
    """A table chat line said while the chat is closed shows above the footer, over the key
    hints, and goes after its time: no widget mounted, no layout of the screen, and after
    each the terminal is exactly a whole repaint (the rows it covered drawn again)."""
    monkeypatch.setattr(screens.chat, "NOTIFY_SECONDS", 0.4)
    session, app, shown = at_a_table()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: "Current bid: 3×4" in screen_text(app))
        await settled(pilot, shown)
        screen = app.screen
        assert isinstance(screen, TableScreen)
        await wait_until(pilot, lambda: not screen._layout_required)  # one still to come
        before = list(shown.screen.display)
        widgets = len(list(screen.walk_children()))
        layouts = []
        refresh_layout = screen._refresh_layout

        def counted(*args: Any, **kwargs: Any) -> None:
            layouts.append(args)
            refresh_layout(*args, **kwargs)

        screen._refresh_layout = counted  # type: ignore[method-assign]
        session.feed(P.ChatLine(id=10, scope="table", table=1, name="ben", text="nice bid"))
        await wait_until(pilot, lambda: "nice bid" in shown.screen.display[22])
        assert shown.screen.display[21].startswith("▌ ben")
        assert len(list(screen.walk_children())) == widgets
        await settled(pilot, shown)
        await wait_until(pilot, lambda: list(shown.screen.display) == before)
        await settled(pilot, shown)
        assert not app._notifications
        assert layouts == []


async def test_a_notice_moves_to_the_screen_on_top_and_back() -> None:
    """A notice is drawn over whichever screen is on top: the help over the table shows it,
    and the table shows it again once the help closes."""
    _session, app, shown = at_a_table()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: "Current bid: 3×4" in screen_text(app))
        app.notify("stays a while", timeout=30, markup=False)
        await wait_until(pilot, lambda: "stays a while" in shown.screen.display[22])
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: not isinstance(app.screen, TableScreen))
        await settled(pilot, shown)
        assert "stays a while" in shown.screen.display[22]
        assert palette_of(app) is palette_of(app)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await settled(pilot, shown)
        assert "stays a while" in shown.screen.display[22]


async def test_a_clock_under_a_notice_is_not_written_over_it() -> None:
    """The turn clock's ticks go to the terminal at once (`TickingStatic._send_at_once`)
    only where nothing is drawn over them: with notices stacked over the bid line, each
    tick leaves the terminal a whole repaint (the notices whole, the clock beneath)."""
    from screens.ticking import TickingStatic

    session = FakeSession()
    now = [1000.0]
    app = make_app(session)
    app.clock = lambda: now[0]
    clock = P.TurnClock(seat=1, seconds=60, left=30.0)
    session.feed(
        P.Welcome(name="ana"),
        lobby_state(summary(1)),
        table_state(observe(rolled(opener=1), 0), clock=clock, turn_seconds=60),
    )
    shown = Shown(app, (80, 24))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await settled(pilot, shown)
        line = app.screen.query_one("#current-bid", TickingStatic)
        row = line.region.y
        for i in range(6):
            app.notify(f"notice {i}", title=f"t{i}", timeout=30, markup=False)
        await wait_until(pilot, lambda: "notice 5" in shown.screen.display[22])
        await settled(pilot, shown)
        assert shown.screen.display[row].startswith("▌")  # the bid line is under a notice
        for _ in range(3):
            now[0] += 1.0
            app.screen.tick()
            await pilot.pause()
            await settled(pilot, shown)
            assert shown.screen.display[row].startswith("▌")


async def mouse_click(pilot, x: int, y: int) -> None:
    """A press and release at (`x`, `y`) as the terminal's driver posts them to the app
    (the pilot's own click skips the app's handling of mouse events)."""
    from textual import events

    for kind in (events.MouseDown, events.MouseUp):
        pilot.app.post_message(kind(None, x, y, 0, 0, 1, False, False, False, x, y))
        await pilot.pause()


async def test_a_click_on_a_notice_dismisses_it_and_reaches_nothing_beneath() -> None:
    """As a click on a toast did: the notice clicked goes (the others stay), and the
    widget beneath neither gets the press nor a click (the lobby chat keeps its focus
    off); a click elsewhere goes where it went."""
    from screens.chat import ChatInput

    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)))
    shown = Shown(app, (80, 24))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        app.notify("first", timeout=30, markup=False)
        app.notify("second", title="ben", timeout=30, markup=False)
        await wait_until(pilot, lambda: "second" in shown.screen.display[22])
        focused = app.focused
        assert shown.screen.display[20].startswith("▌ first")
        await mouse_click(pilot, 10, 20)  # on "first"
        await wait_until(pilot, lambda: len(app._notifications) == 1)
        assert [n.message for n in app._notifications] == ["second"]
        await settled(pilot, shown)
        assert "first" not in "\n".join(shown.screen.display)
        assert app.focused is focused and not isinstance(app.focused, ChatInput)
        await mouse_click(pilot, 79, 22)  # the gutter: beneath, not the notice
        await pilot.pause()
        assert len(app._notifications) == 1
