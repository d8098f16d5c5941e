"""The cheaper widgets of issue 10 behave as the ones they replace (80×24, a fake lobby
session): the one-widget footer, the chat lines drawn a screen at a time, the online column
drawn as far as it has rows; and the process-wide tuning (shared parsed CSS, the collector)."""

from __future__ import annotations

import asyncio
import gc
import random as random_module
import re

import msgspec
import pytest
from textual import events
from textual.app import App
from textual.geometry import Region
from textual.screen import Screen

from perudo_ssh import protocol as P
from perudo_ssh.front.server import COLLECTOR_THRESHOLDS, tune_collector
from perudo_ssh.rules import observe
from perudo_ssh.ssh.isolation import (
    install_drawing_savers,
    install_shared_css,
)
from screens.app import make_app
from screens.chat import ChatInput, ChatLines
from screens.cheaper import PartialBackground, QuietInput
from screens.create import CreateTableDialog
from screens.footer import Footer
from screens.help import HelpScreen
from screens.lobby import LobbyScreen
from screens.table import TableScreen
from tests.frames import Shown, _cells
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

SIZE = (80, 24)


def wheel(widget: ChatLines, up: bool) -> None:
    """One notch of the mouse wheel over `widget`."""
    kind = events.MouseScrollUp if up else events.MouseScrollDown
    widget.post_message(kind(widget, 1, 1, 0, -1 if up else 1, 0, False, False, False))


def lobby_app(*arrived: P.Event):
    """An app on a fake lobby session that has already received `arrived`."""
    session = FakeSession()
    app = make_app(session)
    session.feed(*arrived)
    return app


def line(i: int, text: str, name: str = "ben") -> P.ChatLine:
    return P.ChatLine(id=i, scope="lobby", name=name, text=text)


async def test_footer_shows_the_keys_in_one_line_and_a_click_presses_one() -> None:
    app = lobby_app(P.Welcome(name="ana"), lobby_state(summary(1)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        footer = app.screen.query_one(Footer)
        assert [key[:3] for key in footer.keys][:3] == [
            ("c", "c", "Create table"),
            ("g", "g", "Quick play"),
            ("j", "j/⏎", "Join"),
        ]
        bottom = screen_text(app).splitlines()[-1]
        assert bottom.startswith(" c Create table  g Quick play  j/⏎ Join  s Watch ")
        assert footer.key_at(0) == "c" and footer.key_at(16) == "g" and footer.key_at(30) == "j"
        assert footer.key_at(79) is None  # past the last key
        await pilot.click(Footer, offset=(5, 0))  # on "Create table"
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))


async def test_footers_alike_share_their_line_and_each_key_is_where_it_is_drawn() -> None:
    """Two lobby apps show the same keys: the second footer's line is the first one's (the
    same strips, from SHARED_RENDERS); every column of each key drawn is that key's
    (`key_at`), the columns between none, in English and in Russian (wider words)."""
    apps = [lobby_app(P.Welcome(name="ana"), lobby_state(summary(1))) for _ in range(2)]
    async with apps[0].run_test(size=SIZE) as one, apps[1].run_test(size=SIZE) as two:
        for pilot, app in ((one, apps[0]), (two, apps[1])):
            await wait_until(pilot, lambda app=app: "c Create table" in screen_text(app))
        first, second = (app.screen.query_one(Footer) for app in apps)
        crop = first.size.region
        assert first.render_lines(crop)[0] is second.render_lines(crop)[0]
        for press in (False, True):
            if press:
                await two.press("f2", "f2")  # English -> French -> Russian
                await wait_until(two, lambda: "Создать стол" in screen_text(apps[1]))
            bottom = screen_text(apps[1]).splitlines()[-1]
            for start, end, key in second._spans:
                assert bottom[start:end] == f" {key[1]} " + (f"{key[2]} " if key[2] else "")
                assert {second.key_at(x) for x in range(start, end)} == {key[0]}


async def test_footer_follows_the_language() -> None:
    app = lobby_app(P.Welcome(name="ana"), lobby_state(summary(1)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        await pilot.press("f2")
        await wait_until(pilot, lambda: "c Créer une table" in screen_text(app))


async def test_lobby_screens_alike_share_their_chat_rows_until_one_scrolls_back() -> None:
    history = tuple(line(i, f"line {i}") for i in range(1, 31))
    arrived = (lobby_state(), P.ChatHistory(scope="lobby", lines=history))
    apps = [lobby_app(P.Welcome(name=name), *arrived) for name in ("ana", "ben")]
    async with apps[0].run_test(size=SIZE) as one, apps[1].run_test(size=SIZE) as two:
        for pilot, app in ((one, apps[0]), (two, apps[1])):
            await wait_until(pilot, lambda app=app: "ben: line 30" in screen_text(app))
        chats = [app.screen.query_one(ChatLines) for app in apps]
        assert chats[0].render() is chats[1].render()  # worked out once for both
        wheel(chats[1], up=True)
        await wait_until(two, lambda: "ben: line 30" not in screen_text(apps[1]))
        assert chats[0].render() is not chats[1].render()
        assert "ben: line 30" in screen_text(apps[0])


async def test_chat_lines_show_the_newest_and_scroll_back_with_the_wheel() -> None:
    session = FakeSession()
    app = make_app(session)
    history = tuple(line(i, f"line {i}") for i in range(1, 51))
    session.feed(P.Welcome(name="ana"), lobby_state(), P.ChatHistory(scope="lobby", lines=history))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "ben: line 50" in screen_text(app))
        chat = app.screen.query_one(ChatLines)
        rows = chat.content_region.height
        text = screen_text(app)
        assert f"ben: line {51 - rows}" in text and f"ben: line {50 - rows}\n" not in text + "\n"
        for _ in range(3):
            wheel(chat, up=True)
        await wait_until(pilot, lambda: f"ben: line {48 - rows}" in screen_text(app))
        assert "ben: line 50" not in screen_text(app)
        # a new line while scrolled back keeps the view where it is
        session.feed(line(51, "line 51"))
        await wait_until(pilot, lambda: chat.scrolled_back == 4)
        assert f"ben: line {48 - rows}" in screen_text(app)
        for _ in range(10):
            wheel(chat, up=False)
        await wait_until(pilot, lambda: "ben: line 51" in screen_text(app))
        assert chat.scrolled_back == 0


async def test_a_long_chat_line_wraps_and_keeps_every_word() -> None:
    session = FakeSession()
    app = make_app(session)
    words = " ".join(f"w{i}" for i in range(40))  # ~150 characters: two rows at 80 columns
    session.feed(P.Welcome(name="ana"), lobby_state(), line(1, words))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "w39" in screen_text(app))
        text = screen_text(app)
        assert all(f"w{i}" in text for i in range(40))


async def test_online_column_draws_the_names_it_has_rows_for() -> None:
    session = FakeSession()
    app = make_app(session)
    online = tuple(f"p{i:03d}" for i in range(300))
    session.feed(P.Welcome(name="ana"), P.LobbyState(tables=(summary(1),), online=online))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Online (300)" in screen_text(app))
        screen = app.screen
        assert isinstance(screen, LobbyScreen)
        column = screen.query_one("#online")
        rows = column.content_region.height
        drawn = str(column.render()).splitlines()
        assert len(drawn) == rows and drawn[-1] == f"p{rows - 2:03d}"
        await pilot.resize_terminal(80, 40)  # 16 rows more: 16 names more
        await wait_until(pilot, lambda: column.content_region.height == rows + 16)
        await wait_until(pilot, lambda: f"p{rows + 14:03d}" in screen_text(app))
        assert f"p{rows + 15:03d}" not in str(column.render())


def test_apps_share_their_parsed_css_per_theme() -> None:
    install_shared_css()
    install_shared_css()  # idempotent

    class One(App[None]):
        CSS = "Static { color: red; }"

    first, second = One(), One()
    for app in (first, second):
        app.stylesheet.add_source(One.CSS, read_from=("one", ""))
        app.stylesheet.parse()
    assert first.stylesheet.rules[0] is second.stylesheet.rules[0]
    third = One()
    third.stylesheet.set_variables({**third.stylesheet._variables, "primary": "#123456"})
    third.stylesheet.add_source(One.CSS, read_from=("one", ""))
    third.stylesheet.parse()
    assert third.stylesheet.rules[0] is not first.stylesheet.rules[0]  # another theme


def test_tune_collector_freezes_start_up_and_collects_less_often() -> None:
    before = gc.get_threshold()
    try:
        tune_collector()
        assert gc.get_threshold() == COLLECTOR_THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_strips_make_their_caches_when_first_used_and_work_as_before() -> None:
    from rich.segment import Segment
    from textual.strip import Strip

    from perudo_ssh.ssh.garbage import STRIP_CACHES, install_lazy_strip_caches

    install_lazy_strip_caches()
    install_lazy_strip_caches()  # idempotent
    strip = Strip([Segment("hello "), Segment("world")])
    assert strip.crop(2, 8).text == "llo wo"
    assert strip.crop(2, 8) is strip.crop(2, 8)  # memoised, as Textual's strips are
    assert strip._crop_cache._maxsize == STRIP_CACHES["_crop_cache"]
    assert [s.text for s in strip.divide([5, 11])] == ["hello", " world"]
    assert strip.cell_length == 11
    try:
        strip.no_such_thing  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("an unknown attribute must raise AttributeError")


# ---- drawing shared between apps (screens/shared.py) --------------------------------------


def drawn(widget) -> list[list[tuple[str, object]]]:
    """The widget's lines as drawn now: (text, style) segments, line by line."""
    from textual.geometry import Region

    strips = widget.render_lines(Region(0, 0, *widget.size))
    return [[(segment.text, segment.style) for segment in strip] for strip in strips]


class Grids(App[None]):
    """A DataTable and a SharedGrid of the same rows, one above the other."""

    CSS = "DataTable { height: 8; }"

    def compose(self):
        from textual.widgets import DataTable

        from screens.sharedgrid import SharedGrid

        for grid in (DataTable(id="plain"), SharedGrid(id="shared")):
            grid.cursor_type, grid.zebra_stripes = "row", True
            grid.add_columns("#", "Table", "Seats")
            for i in range(1, 7):
                grid.add_row(str(i), f"table {i}", f"{i % 4}/4", key=str(i))
            yield grid


async def test_a_shared_grid_draws_as_a_data_table_does() -> None:
    app = Grids()
    async with app.run_test(size=(40, 20)) as pilot:
        plain, shared = app.query_one("#plain"), app.query_one("#shared")
        app.set_focus(None)
        await pilot.pause()
        assert drawn(shared) == drawn(plain)
        for grid in (plain, shared):
            grid.update_cell("3", grid.ordered_columns[2].key, "4/4")
            grid.move_cursor(row=4)
        await pilot.pause()
        assert drawn(shared) == drawn(plain)
        assert "4/4" in "".join(text for text, _ in drawn(shared)[3])
        plain.focus()  # the focused look (cursor colours) too
        await pilot.pause()
        focused_plain = drawn(plain)
        shared.focus()
        await pilot.pause()
        assert drawn(shared) == focused_plain != drawn(plain)


async def test_a_cell_update_repaints_its_row_only() -> None:
    app = Grids()
    async with app.run_test(size=(40, 20)) as pilot:
        shared = app.query_one("#shared")
        await pilot.pause()
        shared._repaint_regions.clear()
        shared.update_cell("2", shared.ordered_columns[1].key, "renamed")
        assert [region.height for region in shared._repaint_regions] == [1]
        await pilot.pause()
        assert "renamed" in "".join(text for text, _ in drawn(shared)[2])


async def test_scrollbars_alike_are_drawn_once_and_as_textual_draws_them() -> None:
    """`install_shared_scrollbars`: two apps scrolled alike share their scrollbar's lines,
    which are Textual's; scrolled elsewhere, one draws its own."""
    from textual.geometry import Region
    from textual.widget import Widget
    from textual.widgets import DataTable

    from screens.shared import install_shared_scrollbars

    install_shared_scrollbars()

    class Long(App[None]):
        CSS = "DataTable { height: 8; }"

        def compose(self):
            grid: DataTable[str] = DataTable()
            grid.add_columns("#", "Table")
            for i in range(30):
                grid.add_row(str(i), f"table {i}")
            yield grid

    one, two = Long(), Long()
    async with one.run_test(size=(30, 10)) as first, two.run_test(size=(30, 10)) as second:
        await first.pause()
        await second.pause()
        bars = [app.query_one(DataTable).vertical_scrollbar for app in (one, two)]
        crop = Region(0, 0, *bars[0].size)
        mine, his = (bar.render_lines(crop) for bar in bars)
        assert mine is his  # drawn once for both
        textual = Widget.render_lines(bars[1], crop)
        assert [list(line) for line in textual] == [list(line) for line in his]
        two.query_one(DataTable).scroll_to(y=20, animate=False)
        await second.pause()
        moved = bars[1].render_lines(crop)
        assert moved is not mine
        assert [list(line) for line in Widget.render_lines(bars[1], crop)] == [
            list(line) for line in moved
        ]


async def test_lobby_screens_alike_share_their_drawn_lines_and_others_draw_their_own() -> None:
    from screens.lobby import OnlineColumn
    from screens.sharedgrid import SharedGrid

    tables = tuple(summary(i) for i in range(1, 5))
    state = P.LobbyState(tables=tables, online=("ana", "ben", "carl"))
    apps = [lobby_app(P.Welcome(name=name), state) for name in ("ana", "ben", "zoé")]
    async with apps[0].run_test(size=SIZE) as one, apps[1].run_test(size=SIZE) as two:
        async with apps[2].run_test(size=SIZE) as three:
            for pilot, app in ((one, apps[0]), (two, apps[1]), (three, apps[2])):
                await wait_until(pilot, lambda app=app: "Online (3)" in screen_text(app))
            await three.press("f2")  # zoé reads French
            await wait_until(three, lambda: "En ligne (3)" in screen_text(apps[2]))
            grids = [app.screen.query_one(SharedGrid) for app in apps]
            onlines = [app.screen.query_one(OnlineColumn) for app in apps]

            def lines(grid: SharedGrid) -> list[object]:
                return [grid.render_line(y) for y in range(grid.size.height)]

            def sent(grid: SharedGrid) -> list[object]:  # styled, as the screen sends them
                return grid.render_lines(grid.size.region)

            mine, his, hers = (lines(grid) for grid in grids)
            assert all(a is b for a, b in zip(mine, his, strict=True))  # drawn once
            assert mine[0] is not hers[0]  # French headings: her own
            assert all(a is b for a, b in zip(sent(grids[0]), sent(grids[1]), strict=True))
            online = [column.render_lines(column.size.region) for column in onlines]
            assert online[0] is online[1] and online[2] is not online[0]
            assert onlines[0].render() is onlines[1].render()  # one content, made once
            await two.press("down")  # ben's cursor on the second row: his rows 1-2 differ
            await two.pause()
            mine, his = lines(grids[0]), lines(grids[1])
            assert mine[0] is his[0] and mine[3] is his[3]  # the heading, an untouched row
            assert mine[1] is not his[1] and mine[2] is not his[2]
            mine, his = sent(grids[0]), sent(grids[1])
            assert [a is b for a, b in zip(mine, his, strict=True)][:5] == [
                True, False, False, True, True
            ]  # fmt: skip
            assert [line.text for line in mine] == [line.text for line in lines(grids[0])]


async def test_lobby_lists_keep_no_dead_drawings_and_share_their_cells() -> None:
    """Each update of the list moves DataTable's counter in the keys of its own caches: what
    a lobby screen drew before is dead but was kept (up to 10,000 cells a screen, ~85 objects
    an update for the collector to walk). A SharedGrid keeps none of it, and two lobby
    screens hold the same cell objects (`plain_cell`), drawn as before."""
    from screens.sharedgrid import SharedGrid

    tables = tuple(summary(i) for i in range(1, 9))
    sessions = [FakeSession(name) for name in ("ana", "ben")]
    apps = [make_app(session) for session in sessions]
    for session in sessions:
        session.feed(P.Welcome(name=session.name), P.LobbyState(tables=tables, online=("ana",)))
    async with apps[0].run_test(size=SIZE) as one, apps[1].run_test(size=SIZE) as two:
        pilots = (one, two)
        for pilot, app in zip(pilots, apps, strict=True):
            await wait_until(pilot, lambda app=app: "table 8" in screen_text(app))
        grids = [app.screen.query_one(SharedGrid) for app in apps]
        for update in range(1, 13):
            row = update % 8 + 1
            changed = tuple(summary(i, spectators=update if i == row else 0) for i in range(1, 9))
            for session in sessions:
                session.feed(P.LobbyState(tables=changed, online=("ana",)))
            for pilot, grid in zip(pilots, grids, strict=True):
                await wait_until(
                    pilot, lambda g=grid, r=row, u=update: str(g.get_row(str(r))[5]) == str(u)
                )
                await pilot.pause()  # drawn
        for grid in grids:
            kept = (grid._line_cache, grid._row_render_cache, grid._cell_render_cache,
                    grid._row_renderable_cache)  # fmt: skip
            assert [len(cache) for cache in kept] == [0, 0, 0, 0]
        cells = [grid.get_row("5") for grid in grids]
        assert all(a is b for a, b in zip(*cells, strict=True))
        shown = [str(cell) for cell in cells[0]]
        assert shown == ["5", "table 5", "classic", "1/4", "waiting", "12"]


async def test_shared_lines_are_drawn_again_once_the_text_or_the_style_changes() -> None:
    from textual.app import ComposeResult
    from textual.geometry import Region

    from screens.shared import SharedStatic

    class One(App[None]):
        CSS = "Screen.-loud SharedStatic { color: red; }"

        def compose(self) -> ComposeResult:
            yield SharedStatic("quiet words")

    app = One()
    async with app.run_test(size=(30, 3)) as pilot:
        widget = app.query_one(SharedStatic)
        crop = Region(0, 0, *widget.size)
        first = widget.render_lines(crop)
        assert widget.render_lines(crop) is first  # nothing changed: what it drew
        app.screen.add_class("-loud")  # an ancestor's class restyles it
        await pilot.pause()
        loud = widget.render_lines(crop)
        assert loud[0].text == first[0].text
        colours = [next(iter(lines[0])).style.color for lines in (first, loud)]  # type: ignore[union-attr]
        assert colours[0] != colours[1] and colours[1].triplet == (255, 0, 0)
        app.screen.remove_class("-loud")
        await pilot.pause()
        assert widget.render_lines(crop) is first  # its look as before: the lines kept
        app.screen.styles.background = "blue"  # an ancestor's inline style: a new background
        await pilot.pause()
        blue = widget.render_lines(crop)
        assert blue is not first and blue[0].text == first[0].text
        widget.update("other words")
        await pilot.pause()
        assert widget.render_lines(crop)[0].text.startswith("other words")


async def settled(pilot, shown: Shown) -> None:
    """Wait until the terminal shows exactly a whole repaint of the app's state (or fail
    with the cells that differ)."""
    try:
        await wait_until(pilot, lambda: not shown.differences(), timeout=3.0)
    except AssertionError:
        raise AssertionError("\n".join(shown.differences()[:20])) from None


async def open_create_dialog(pilot, app, shown: Shown) -> None:
    """From the lobby, open the create dialog (`c`) and wait until the terminal shows it."""
    await wait_until(pilot, lambda: "c Create table" in screen_text(app))
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
    await settled(pilot, shown)


@pytest.mark.slow
async def test_a_change_of_focus_redraws_what_it_changes_and_the_terminal_shows_it() -> None:
    """With `install_quiet_focus` (no whole-screen repaint on each change of focus), every
    step through the create dialog's fields and lists and the lobby's chat leaves the
    terminal showing exactly what a whole repaint would: focus marks, the lists' overlays
    and what was under them, the footer's keys."""
    install_drawing_savers()
    install_drawing_savers()  # idempotent
    app = lobby_app(P.Welcome(name="ana"), lobby_state(summary(1), summary(2)))
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        await settled(pilot, shown)
        colours = {cell[1] for row in _cells(shown.screen) for cell in row}
        assert len(colours) > 2  # the frames carry colours: the comparison sees styles
        steps = (
            ("c",), ("tab",), ("enter",), ("down",), ("enter",), ("tab",), ("enter",),
            ("escape",), ("tab", "tab", "tab"), ("shift+tab",), ("space",), ("up",),
            ("enter",), ("escape",), ("m",), ("escape",), ("down",),
        )  # fmt: skip
        for keys in steps:
            before = shown.frames
            await pilot.press(*keys)
            await wait_until(pilot, lambda before=before: shown.frames > before)
            await settled(pilot, shown)
        assert isinstance(app.screen, LobbyScreen)


async def test_a_table_line_s_toast_is_in_the_first_frame_drawn_after_it() -> None:
    """Textual showed the toast rack, then mounted the toast in it: a frame drawn in between
    showed the rack without it, and the line reached the terminal a frame later (~33 ms on the
    server). A notice is now drawn over the screen (`screens.notices`), in the next frame."""
    install_drawing_savers()
    session = FakeSession()
    app = make_app(session)
    session.feed(
        P.Welcome(name="ana"),
        lobby_state(summary(1)),
        table_state(observe(bid(rolled(), 0, 3, 4), 0)),
    )
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: "Current bid: 3×4" in screen_text(app))
        terminal: list[str] = []  # what the terminal shows after each frame
        display = app._display

        def drawn(screen: Screen, update: object) -> None:
            display(screen, update)  # type: ignore[arg-type]
            terminal.append("\n".join(shown.screen.display))

        app._display = drawn  # type: ignore[method-assign]
        for i in range(4):
            # idle first, the screen's frame timer paused: a line then finds it so
            await wait_until(pilot, lambda: not app.screen._update_timer._active.is_set())
            before = len(terminal)
            session.feed(P.ChatLine(id=10 + i, scope="table", table=1, name="ben", text=f"hi {i}"))
            await wait_until(pilot, lambda before=before: len(terminal) > before)
            assert f"hi {i}" in terminal[before]
        assert len(app._notifications) == 4


def test_one_broadcast_is_decoded_once_per_process_and_kept_a_while() -> None:
    state = P.LobbyState(tables=(summary(1),), online=("ana", "ben"))
    data = P.encode(state)
    first = P.decode_event(data)
    assert first == state
    assert P.decode_event(data) is first  # the same bytes, another session: not decoded again
    assert P.decode_event(bytes(bytearray(data))) is first  # equal bytes alike
    for i in range(P.DECODED_EVENTS):
        P.decode_event(P.encode(P.ChatLine(id=i, scope="lobby", name="ben", text=f"hi {i}")))
    again = P.decode_event(data)
    assert again == state and again is not first  # 32 newer ones came: decoded afresh
    with pytest.raises(msgspec.DecodeError):
        P.decode_event(b"\xc1")  # never a valid msgpack byte
    with pytest.raises(msgspec.ValidationError):
        P.decode_event(P.encode(P.Say(text="a command, not an event")))


def test_a_table_line_unchanged_from_one_lobby_list_to_the_next_is_the_same_object() -> None:
    """Each lobby list is decoded afresh; its lines already decoded in an earlier list are
    those objects, so a lobby screen tells what it shows by identity."""
    one, two = summary(1), summary(2, name="two's table")
    first = P.decode_event(P.encode(P.LobbyState(tables=(one, two), online=("ana",))))
    moved = summary(2, name="two's table", free=1)  # a seat taken at table 2
    later = P.decode_event(P.encode(P.LobbyState(tables=(one, moved), online=("ana", "ben"))))
    assert isinstance(first, P.LobbyState) and isinstance(later, P.LobbyState)
    assert later.tables == (one, moved)
    assert later.tables[0] is first.tables[0]
    assert later.tables[1] is not first.tables[1] and first.tables[1] == two


async def test_the_table_list_grows_and_shrinks_without_a_layout_and_shows_it_exactly() -> None:
    """Rows added and removed (a scrollbar appearing, its thumb moving, disappearing): the
    terminal shows exactly a whole repaint each time, and only the rows that showed or hid
    the scrollbar laid the screen out (the list's scroll range changes without a layout)."""
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1), summary(2)))
    install_drawing_savers()
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "table 2" in screen_text(app))
        await settled(pilot, shown)
        grid = app.screen.query_one("#tables")
        layouts = []
        original = app.screen._refresh_layout

        def counted(*args, **kwargs):
            layouts.append(grid.show_vertical_scrollbar)
            return original(*args, **kwargs)

        app.screen._refresh_layout = counted
        counts = (2, 30, 31, 32, 31, 29, 3, 2)  # rows: a few, a scrollbar, back to a few
        for count in counts:
            session.feed(lobby_state(*(summary(i) for i in range(1, count + 1))))
            await wait_until(pilot, lambda count=count: grid.row_count == count)
            await settled(pilot, shown)
            assert grid.show_vertical_scrollbar == (count > grid.size.height - 1), count
        assert len(layouts) <= 3  # the scrollbar shown, then hidden (not one per row change)


@pytest.mark.slow
async def test_under_a_dialog_the_lobby_goes_on_and_the_terminal_shows_it_exactly() -> None:
    """With the create dialog open, chat lines, names online and table rows change the
    dimmed lobby under it: only the rows touched are drawn again (`PartialBackground`), and
    the terminal shows exactly a whole repaint each time."""
    install_drawing_savers()
    app = lobby_app(P.Welcome(name="ana"), lobby_state(summary(1), summary(2)))
    session = app.session
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE) as pilot:
        await open_create_dialog(pilot, app, shown)
        dialog = app.screen
        assert isinstance(dialog, PartialBackground)
        for step in range(12):
            before = shown.frames
            if step % 3 == 0:
                session.feed(line(100 + step, f"under the dialog {step}"))
            elif step % 3 == 1:
                online = ("ana", "ben", *(f"p{i}" for i in range(step)))
                session.feed(P.LobbyState(tables=(summary(1), summary(2)), online=online))
            else:
                tables = tuple(summary(i) for i in range(1, 3 + step // 3))
                session.feed(lobby_state(*tables))
            await wait_until(pilot, lambda before=before: shown.frames > before)
            await settled(pilot, shown)
        assert dialog.partial_draws >= 8  # most changes drew only their rows again
        assert isinstance(app.screen, CreateTableDialog)


@pytest.mark.slow
async def test_typing_a_long_line_lays_nothing_out_and_scrolls_as_before() -> None:
    """The lobby's chat line (a `QuietInput`): keys typed past its width lay nothing out,
    the line scrolls to keep the cursor in view, and the terminal shows exactly a whole
    repaint; what was typed is what is said."""
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)))
    install_drawing_savers()
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.focused, ChatInput))
        field = app.focused
        assert isinstance(field, QuietInput)
        await settled(pilot, shown)
        layouts = []
        original = app.screen._refresh_layout
        app.screen._refresh_layout = lambda *a, **k: (layouts.append(1), original(*a, **k))[1]
        text = " ".join(f"w{i:02d}" for i in range(25))  # 99 characters: past the field
        await pilot.press(*text)
        await wait_until(pilot, lambda: field.value == text)
        await settled(pilot, shown)
        assert layouts == []
        assert text[-20:] in screen_text(app)  # scrolled to the cursor, at the end
        assert text[:10] not in screen_text(app)
        await pilot.press("home")
        await wait_until(pilot, lambda: text[:10] in screen_text(app))
        await settled(pilot, shown)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(isinstance(c, P.Say) for c in session.sent))
        assert [c.text for c in session.sent if isinstance(c, P.Say)] == [text]


def _rules_of(screen) -> dict[object, dict[str, object]]:
    """Every node's rules from the stylesheet (what a restyle sets), by node."""
    return {
        node: dict(node._css_styles.get_rules()) for node in screen.walk_children(with_self=True)
    }


async def test_a_table_screen_mode_restyles_only_its_nodes_and_styles_as_a_whole_restyle() -> None:
    """`set_mode` restyles only the nodes `TableScreen.MODES` names for a mode class; every
    node of the screen then has exactly the rules a whole restyle gives, for each mode on
    and off (a stylesheet rule for a mode whose node is not listed fails this)."""
    session = FakeSession()
    app = make_app(session)
    view = observe(bid(rolled(opener=0), 0, 2, 4), 0)
    session.feed(P.Welcome(name="ana"), lobby_state(), table_state(view))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        screen = app.screen
        assert set(screen.MODES) == {"-waiting", "-idle", "-reveal", "-chat", "-log"}
        restyled: list[int] = []
        update_nodes = app.stylesheet.update_nodes

        def counted(nodes, animate=False):
            nodes = list(nodes)
            restyled.append(len(nodes))
            return update_nodes(nodes, animate=animate)

        app.stylesheet.update_nodes = counted
        for mode in screen.MODES:
            for on in (not screen.has_class(mode), screen.has_class(mode)):
                restyled.clear()
                screen.set_mode(on, mode)
                assert screen.has_class(mode) == on
                assert restyled and max(restyled) <= 4  # the screen and its mode's nodes
                targeted = _rules_of(screen)
                app.stylesheet.update(screen)  # a whole restyle of the screen
                assert _rules_of(screen) == targeted, (mode, on)
                await pilot.pause()


async def test_component_styles_follow_their_widget_on_the_same_virtual_nodes() -> None:
    """`install_reused_component_nodes`: restyling a widget (a class toggled, focus) applies
    the stylesheet to the same component nodes, and the component styles still follow the
    rules (here the placeholder's colour by a class of the input)."""
    from textual.color import Color
    from textual.widgets import Input

    install_drawing_savers()

    class One(App[None]):
        CSS = "Input.-alt > .input--placeholder { color: #ff0000; }"

        def compose(self):
            yield Input(placeholder="say")

    app = One()
    async with app.run_test(size=SIZE) as pilot:
        field = app.query_one(Input)
        await pilot.pause()
        kept = dict(field._perudo_components)
        assert "input--placeholder" in kept
        red = Color.parse("#ff0000")
        assert field.get_component_styles("input--placeholder").color != red
        field.add_class("-alt")
        await pilot.pause()
        assert field.get_component_styles("input--placeholder").color == red
        field.focus()
        await pilot.pause()
        field.remove_class("-alt")
        await pilot.pause()
        assert field.get_component_styles("input--placeholder").color != red
        assert field._perudo_components == kept  # the same nodes, restyled
        assert all(field._perudo_components[k] is kept[k] for k in kept)


async def test_component_styles_made_on_demand_match_textual_s() -> None:
    """Component nodes are made only for the components a widget's drawing asks for, and
    each answers as a node Textual would make now: a lobby and a table (a table list, inputs,
    footers), before and after a change of focus and of the table's mode classes."""
    from textual.dom import DOMNode

    install_drawing_savers()
    session = FakeSession()
    app = make_app(session)  # type: ignore[arg-type]
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1, name="ana's table")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()

        def check() -> tuple[int, int]:
            made = possible = 0
            for screen in app.screen_stack:
                for node in screen.walk_children(with_self=True):
                    components = node._get_component_classes()
                    kept = node.__dict__.get("_perudo_components", {})
                    assert set(kept) <= components
                    made, possible = made + len(kept), possible + len(components)
                    for name in components:
                        fresh = DOMNode(classes=name)
                        fresh._attach(node)
                        app.stylesheet.apply(fresh, animate=False)
                        asked = node.get_component_styles(name)  # made now if not yet
                        assert asked.get_rules() == fresh.styles.get_rules(), (node, name)
            return made, possible

        made, possible = check()
        assert 0 < made < possible  # drawn with some of them, not all
        await pilot.press("tab")
        await pilot.pause()
        session.feed(table_state(observe(rolled(opener=0), 0)))
        await pilot.pause()
        assert isinstance(app.screen, TableScreen)
        check()
        await pilot.press("tab")
        await pilot.pause()
        check()


def _cyclic_garbage(kind: type | str) -> list[object]:
    """The objects of `kind` (a type, or a function's name) that the collector finds
    unreachable now (only those: another thread's garbage is not counted)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = [
            o
            for o in gc.garbage
            if (
                isinstance(o, kind)
                if isinstance(kind, type)
                else getattr(o, "__name__", None) == kind
            )
        ]
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
    return found


def test_a_strip_never_keeps_itself_in_its_caches() -> None:
    """A strip's memo of a result that is the strip itself (no cut inside it, the length it
    has) is not kept: no reference cycle per strip for the collector, same results."""
    from rich.segment import Segment
    from textual.strip import Strip

    from perudo_ssh.ssh.garbage import install_lazy_strip_caches

    install_lazy_strip_caches()
    gc.collect()
    made = []
    for i in range(50):
        strip = Strip([Segment(f"hello {i}"), Segment(" world")])
        width = strip.cell_length
        assert strip.divide([width]) == [strip]
        assert strip.extend_cell_length(width) is strip
        assert strip.crop_extend(0, width, None).text == strip.text
        assert [s.text for s in strip.divide([5, width])] == ["hello", strip.text[5:]]
        assert strip.divide([5, width]) is strip.divide([5, width])  # other results memoised
        made.append(strip)
    del made, strip
    assert _cyclic_garbage(Strip) == []  # freed by their reference counts alone


async def test_a_layout_leaves_no_cycle_for_the_collector() -> None:
    """`install_acyclic_layout`: Textual's layout, with its recursive placing function's
    cell emptied before it returns, gives the same map and leaves nothing for the garbage
    collector (each layout left its whole map in a reference cycle)."""
    from textual._compositor import Compositor

    from perudo_ssh.ssh.garbage import install_acyclic_layout

    assert install_acyclic_layout() and install_acyclic_layout()  # installed, idempotent
    app = lobby_app(P.Welcome(name="ana"), lobby_state(summary(1), summary(2)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "table 2" in screen_text(app))
        screen = app.screen
        compositor = screen._compositor
        original = Compositor._arrange_root.perudo_original
        ours = compositor._arrange_root(screen, screen.size, visible_only=False)
        assert ours == original(compositor, screen, screen.size, visible_only=False)
        gc.collect()
        for _ in range(20):
            compositor._arrange_root(screen, screen.size, visible_only=False)
        assert _cyclic_garbage("add_widget") == []


def _whole_render(widget) -> list[str]:
    """`widget`'s lines as Textual draws its whole content afresh, as text with styles."""
    from textual.visual import Visual

    width, height = widget.size
    strips = Visual.to_strips(widget, widget.render(), width, height, widget.visual_style)
    return [repr(list(strip)) for strip in strips]


def _visible(frame: str) -> str:
    """The characters a frame writes, without its escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", frame)


@pytest.mark.parametrize("size", [SIZE, (200, 50)])
async def test_a_table_over_the_lobby_loses_no_change_while_the_lobby_changes(size) -> None:
    """At a table screen over the lobby, twelve times a lobby chat line and a table-list
    change arrive as the player moves in and out of the bid input (Tab, the footer's keys
    changing each time): after each the terminal shows exactly a whole repaint and the
    footer shows the keys of where the player is. (The lobby's drawn changes came up as a
    partial repaint of the table screen, whose next frame then dropped its other changed
    widgets: the footer stayed `tab Type` after Tab, one focus change in ~250 under load.)"""
    install_drawing_savers()
    session = FakeSession()
    app = make_app(session)
    shown = Shown(app, size)
    game = rolled(opener=0)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)), table_state(observe(game, 0)))
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await settled(pilot, shown)
        assert [type(screen).__name__ for screen in app.screen_stack] == [
            "LobbyScreen",
            "TableScreen",
        ]
        for i in range(12):
            session.feed(line(100 + i, f"hello {i}"), lobby_state(summary(1), summary(2 + i)))
            await pilot.press("tab")
            await pilot.pause()
            await settled(pilot, shown)
            keys = screen_text(app).splitlines()[-1]
            assert ("esc Back to keys" in keys) == (i % 2 == 0), keys


async def test_a_dialog_keeps_its_own_changes_while_the_screen_under_it_changes() -> None:
    """The create dialog over the lobby: twelve times a lobby chat line and a table-list
    change arrive as the player moves through the dialog's fields (Tab): after each the
    terminal shows exactly a whole repaint. (The lobby's changed regions are repainted
    through the dialog as a partial refresh of it, after which Textual's next frame drew
    only those regions and dropped the dialog's own changes: the focus mark and the footer
    stayed where they were.)"""
    install_drawing_savers()
    app = lobby_app(P.Welcome(name="ana"), lobby_state(summary(1)))
    session = app.session
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE) as pilot:
        await open_create_dialog(pilot, app, shown)
        for i in range(12):
            session.feed(line(200 + i, f"hi {i}"), lobby_state(summary(1), summary(2 + i)))
            await pilot.press("tab")
            await pilot.pause()
            await settled(pilot, shown)
        assert isinstance(app.screen, CreateTableDialog)


class _Bordered(App[None]):
    """One `TickingStatic` inside a border, with padding on every side."""

    CSS = "TickingStatic { border: round $accent; padding: 1 3; height: 5; width: 40; }"

    def compose(self):
        from screens.ticking import TickingStatic

        yield TickingStatic(id="line")


async def test_a_clock_inside_a_border_and_padding_ticks_in_its_own_cells() -> None:
    """`TickingStatic` finds its clock's cells inside its border and padding (top and left):
    each second is sent at once and the terminal equals a whole repaint."""
    from textual.content import Content

    from screens.ticking import TickingStatic

    install_drawing_savers()
    app = _Bordered()
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE) as pilot:
        line = app.query_one(TickingStatic)
        line.show(Content("ben to play — 0:30 · 3×4"), (14, 18))
        await pilot.pause()
        await settled(pilot, shown)
        at_once = line.sent_at_once
        for left in range(29, 24, -1):
            frames = shown.frames
            line.show(Content(f"ben to play — 0:{left} · 3×4"), (14, 18))
            await wait_until(pilot, lambda frames=frames: shown.frames > frames)
            await settled(pilot, shown)
            assert f"0:{left}" in screen_text(app)
        assert line.sent_at_once >= at_once + 4


def _cell_styles(strips) -> list[list[tuple[str, object]]]:
    """Each cell of `strips` as (character, style): what a terminal is sent for it."""
    return [
        [(character, segment.style) for segment in strip for character in segment.text]
        for strip in strips
    ]


@pytest.mark.parametrize("size", [SIZE, (200, 50)])
@pytest.mark.parametrize("mover", [0, 1])
async def test_a_turn_clock_tick_sends_only_its_time_and_draws_as_a_whole_draw(size, mover) -> None:
    """`TickingStatic` (the bid line): each second of the turn clock, from 0:13 down to 0:07
    (the player's own turn and another's), the frame sends the clock's four characters and
    nothing else (at once, not through the screen's update) while its words keep their
    colour; the second the warning colour starts (0:10) the line is drawn again whole. After
    each tick the terminal shows exactly a whole repaint and the line's cells are Textual's
    own drawing of its content."""
    from textual.widget import Widget

    from screens.ticking import TickingStatic

    session = FakeSession()
    now = [1000.0]
    app = make_app(session)
    app.clock = lambda: now[0]
    shown = Shown(app, size)
    clock = P.TurnClock(seat=mover, seconds=60, left=15.0)
    game = rolled(opener=mover)
    session.feed(
        P.Welcome(name="ana"),
        lobby_state(),
        table_state(observe(game, 0), clock=clock, turn_seconds=60),
    )
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await settled(pilot, shown)
        line = app.screen.query_one("#current-bid", TickingStatic)
        assert "0:15" in screen_text(app)
        sent, ticked, at_once = [], line.ticked, line.sent_at_once
        for left in range(14, 6, -1):
            now[0] += 1.0
            frames = shown.frames
            app.screen.tick()
            await wait_until(pilot, lambda frames=frames: shown.frames > frames)
            await settled(pilot, shown)
            sent.append(_visible(shown.last))
            time = f"0:{left:02d}"
            assert time in screen_text(app)
            crop = Region(0, 0, *line.outer_size)
            ours = _cell_styles(line.render_lines(crop))
            line._styles_cache.clear()
            assert ours == _cell_styles(Widget.render_lines(line, crop)), time
        times = [f"0:{left:02d}" for left in range(13, 6, -1)]
        for time, text in zip(times, sent[1:], strict=True):  # the first frame may be whole
            if time == "0:10":  # the warning colour: the line drawn again whole
                assert time in text and "·" in text
            else:  # the clock's four cells, alone
                assert text == time, (time, text)
        assert line.ticked >= ticked + 6  # drawn from the line before, but after 0:10
        assert line.sent_at_once >= at_once + 6  # and sent at once
        whole = sent[4]
        assert ("Your turn" in whole) == (mover == 0)


@pytest.mark.parametrize("size", [SIZE, (200, 50)])
async def test_a_bid_draws_again_only_the_rows_it_changed_and_they_are_as_a_whole_draw(
    size,
) -> None:
    """`ChangedRows` (the cups and the bid list): bids going round a 3-seat table, then a new
    round, then a long name that no longer fits a row. After each change the terminal shows
    exactly a whole repaint, every row of both widgets is what a whole draw of their content
    gives, and the bids drew only some rows one by one (not every row each time)."""
    from perudo_ssh.i18n import translator
    from screens.shared import SHARED_ROWS
    from screens.widgets import BidHistory, CupsPanel

    SHARED_ROWS.clear()  # rows another test drew would be found, not drawn
    session = FakeSession()
    app = make_app(session)
    shown = Shown(app, size)
    game = rolled(opener=1)
    session.feed(P.Welcome(name="ana"), lobby_state(), table_state(observe(game, 0)))
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await settled(pilot, shown)
        cups, history = app.screen.query_one(CupsPanel), app.screen.query_one(BidHistory)
        start = cups.rendered_rows + history.rendered_rows
        bids = [(1, 1, 2), (2, 1, 3), (0, 2, 3), (1, 2, 5), (2, 3, 5), (0, 4, 5)]
        for seat, count, face in bids:
            game = bid(game, seat, count, face)
            clock = P.TurnClock(seat=(seat + 1) % 3, seconds=60, left=60.0)
            session.feed(table_state(observe(game, 0), clock=clock, turn_seconds=60))
            await pilot.pause()
            await settled(pilot, shown)
            for widget in (cups, history):
                drawn = [repr(list(s)) for s in widget._render_cache.lines]
                assert drawn == _whole_render(widget)[: len(drawn)], type(widget).__name__
        assert cups.rendered_rows + history.rendered_rows > start
        session.feed(table_state(observe(rolled(opener=2), 0)))  # a new round: fewer rows
        await pilot.pause()
        await settled(pilot, shown)
        seats = tuple(
            P.SeatInfo(name=name, bot=True)
            for name in ("ana", "ben" * 12, "cyd")  # wider than the cups' row: whole draws
        )
        session.feed(table_state(observe(rolled(opener=2), 0), seats=seats))
        await pilot.pause()
        await settled(pilot, shown)
        for widget in (cups, history):
            drawn = [repr(list(s)) for s in widget._render_cache.lines]
            assert drawn == _whole_render(widget)[: len(drawn)]
        # a bid, then a language switch before it is drawn: the rows worked out for the bid
        # are not drawn in the old language
        game = bid(rolled(opener=2), 2, 1, 3)
        session.feed(table_state(observe(game, 0), seats=seats))
        app.set_language("fr")
        await pilot.pause()
        await settled(pilot, shown)
        for widget in (cups, history):
            drawn = [repr(list(s)) for s in widget._render_cache.lines]
            assert drawn == _whole_render(widget)[: len(drawn)]
        assert "Enchères de la manche" in screen_text(app)
        # rows worked out by a redraw, then new words before they are drawn (the widget
        # refreshed whole, as a language switch does): drawn in the new words
        history.show(["ana 2×3"])
        app.tr = translator("ru")
        history.refresh()
        await pilot.pause()
        await settled(pilot, shown)
        assert [repr(list(s)) for s in history._render_cache.lines] == _whole_render(history)
        assert "Ставки раунда" in screen_text(app)


async def test_a_dialog_opens_with_one_styling_and_no_layout_of_the_screen_under_it() -> None:
    """`install_quiet_resume`: opening the create dialog or the help restyles none of the
    nodes just mounted and lays the lobby under it out no more (it was laid out again at the
    size it had, by the new screen's first `Resize`); every node then has exactly the rules
    a whole restyle gives, and the terminal shows exactly a whole repaint. Closing it shows
    the lobby as it was."""
    install_drawing_savers()
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1), summary(2)))
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        await settled(pilot, shown)
        lobby = app.screen
        lobby_layouts: list[int] = []
        original = lobby._refresh_layout

        def counted_layout(*args, **kwargs):
            if app.screen is not lobby:  # under the dialog
                lobby_layouts.append(1)
            return original(*args, **kwargs)

        lobby._refresh_layout = counted_layout
        restyled: list[object] = []  # the screens restyled whole
        update_nodes = app.stylesheet.update_nodes

        def counted(nodes, animate=False):
            nodes = list(nodes)
            restyled.extend(node for node in nodes if isinstance(node, Screen))
            return update_nodes(nodes, animate=animate)

        app.stylesheet.update_nodes = counted
        for key, kind in (("c", CreateTableDialog), ("question_mark", HelpScreen)):
            # a layout the lobby asked for before the dialog (its first show, a new row)
            # is its own: wait it out, so what is counted is the dialog's doing
            await wait_until(pilot, lambda: not lobby._layout_required)
            lobby_layouts.clear()
            restyled.clear()
            await pilot.press(key)
            await wait_until(pilot, lambda kind=kind: isinstance(app.screen, kind))
            await settled(pilot, shown)
            dialog = app.screen
            assert restyled == [], kind  # no whole restyle
            assert lobby_layouts == [], kind
            styled = _rules_of(dialog)
            app.stylesheet.update(dialog)  # a whole restyle of the dialog
            assert _rules_of(dialog) == styled, kind
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is lobby)
            await settled(pilot, shown)


async def test_a_notification_takes_the_hint_line_above_the_footer_and_hides_nothing_else():
    """Issue 13, item 5: a notification shows on the one line of key hints above the footer
    (a second line only for a long one), not as a four-line block over the chat, the bid's
    legality hint or a dialog's buttons; the hint is back once it goes."""
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)))
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        await settled(pilot, shown)
        before = list(shown.screen.display)
        hint = before[22]
        assert hint.startswith(" Type a line, Enter to say it")
        app.notify("The name ana is now yours: log in with this key to keep it.", timeout=2)
        await wait_until(pilot, lambda: "now yours" in shown.screen.display[22])
        rows = list(shown.screen.display)
        assert rows[:22] == before[:22] and rows[23] == before[23]  # nothing else hidden
        await wait_until(pilot, lambda: shown.screen.display[22] == hint, timeout=8.0)


async def test_players_at_one_table_share_the_rows_a_bid_draws_and_each_sees_a_whole_draw() -> None:
    """`SHARED_ROWS`: two players at a 3-seat table get each bid. The first draws the changed
    rows of the cups and the bid list; the second, whose rows are alike but for its own seat,
    finds most of them drawn (it draws fewer). Each terminal shows exactly a whole repaint of
    its own screen, its own seat marked in its own cups."""
    import contextlib

    from screens.shared import SHARED_ROWS
    from screens.widgets import BidHistory, CupsPanel

    SHARED_ROWS.clear()
    sessions = [FakeSession(), FakeSession()]
    apps = [make_app(session) for session in sessions]
    shown = [Shown(app, SIZE) for app in apps]
    game = rolled(opener=1)
    for me, (name, session) in enumerate(zip(("ana", "ben"), sessions, strict=True)):
        session.feed(P.Welcome(name=name), lobby_state(), table_state(observe(game, me)))
    async with contextlib.AsyncExitStack() as stack:
        pilots = [await stack.enter_async_context(app.run_test(size=SIZE)) for app in apps]
        for pilot, app, each in zip(pilots, apps, shown, strict=True):
            await wait_until(pilot, lambda app=app: isinstance(app.screen, TableScreen))
            await settled(pilot, each)
        drawn = [0, 0]
        for seat, count, face in [(1, 1, 2), (2, 1, 3), (0, 2, 3), (1, 2, 5), (2, 3, 5)]:
            game = bid(game, seat, count, face)
            clock = P.TurnClock(seat=(seat + 1) % 3, seconds=60, left=60.0)
            for me, (pilot, app, each) in enumerate(zip(pilots, apps, shown, strict=True)):
                widgets = (app.screen.query_one(CupsPanel), app.screen.query_one(BidHistory))
                before = sum(w.rendered_rows for w in widgets)
                sessions[me].feed(table_state(observe(game, me), clock=clock, turn_seconds=60))
                await pilot.pause()
                await settled(pilot, each)
                drawn[me] += sum(w.rendered_rows for w in widgets) - before
                for widget in widgets:
                    lines = [repr(list(s)) for s in widget._render_cache.lines]
                    assert lines == _whole_render(widget)[: len(lines)], type(widget).__name__
        assert drawn[0] > 0
        assert drawn[1] < drawn[0]
        assert "(you)" in screen_text(apps[0]) and "(you)" in screen_text(apps[1])


async def test_a_lobby_chat_line_is_sent_at_once_and_the_terminal_shows_a_whole_repaint() -> None:
    """`ChatLines.show` sends the pane's rows to the terminal at once (`send_at_once`, no
    frame of the screen) when nothing else waits to be drawn; not where a notice is drawn
    over them, nor while a dialog is over the lobby (then the usual way). After each line,
    wrapped or not, and with the view scrolled back (it stays), the terminal is exactly a
    whole repaint."""
    install_drawing_savers()
    history = tuple(line(i, f"line {i}") for i in range(1, 11))
    session = FakeSession()
    app = make_app(session)
    session.feed(
        P.Welcome(name="ana"), lobby_state(summary(1)), P.ChatHistory(scope="lobby", lines=history)
    )
    shown = Shown(app, SIZE)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: "ben: line 10" in screen_text(app))
        await settled(pilot, shown)
        chat = app.screen.query_one(ChatLines)
        screen = app.screen

        def quiet() -> bool:  # nothing waits to be drawn, no message (the pilot's own
            # waits post callbacks to the screen: they are waited out with plain sleeps)
            return not (
                screen._layout_required
                or screen._dirty_widgets
                or not screen._message_queue.empty()
            )

        async def until(predicate) -> None:  # as `wait_until`, posting nothing to the app
            for _ in range(500):
                if predicate():
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(f"timed out waiting for {predicate}")

        sent = chat.sent_at_once
        for i in range(11, 16):  # one of them wraps over two rows
            words = "a long line " * 8 if i == 13 else f"line {i}"
            await until(quiet)
            frames = shown.frames
            session.feed(line(i, words))
            await until(lambda frames=frames: shown.frames > frames)
            await settled(pilot, shown)
            assert f"ben: {words}".split()[-1] in "\n".join(shown.screen.display)
        assert chat.sent_at_once == sent + 5
        wheel(chat, up=True)  # scrolled back: new lines keep the view where it is
        await until(lambda: chat.scrolled_back > 0)
        await settled(pilot, shown)
        await until(quiet)
        before = list(shown.screen.display)
        session.feed(line(16, "line 16"))
        await until(lambda: chat._lines[-1].id == 16)
        await settled(pilot, shown)
        assert list(shown.screen.display) == before
        while chat.scrolled_back:  # back to the newest rows
            back = chat.scrolled_back
            wheel(chat, up=False)
            await until(lambda back=back: chat.scrolled_back < back)
        await settled(pilot, shown)
        after_scroll = chat.sent_at_once
        app.notify("over the chat", title="ben", timeout=30, markup=False)  # two rows: over
        # the hint line and the chat's last row
        await wait_until(pilot, lambda: "over the chat" in shown.screen.display[22])
        await until(quiet)
        session.feed(line(17, "line 17"))
        await until(lambda: chat._lines[-1].id == 17)
        await settled(pilot, shown)
        assert shown.screen.display[20].startswith(" ben: line 16")  # 17 under the notice
        at_once = chat.sent_at_once
        assert at_once == after_scroll  # under the notice: the usual way
        await pilot.press("c")  # the create dialog over the lobby
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        session.feed(line(18, "line 18"))
        await pilot.pause(0.1)
        await settled(pilot, shown)
        assert chat.sent_at_once == at_once  # the usual way under the dialog


def test_seats_are_drawn_once_for_every_app_and_each_player_s_own_apart() -> None:
    """`SEAT_DRAWINGS`: two players' panels draw a seat they both see once between them
    (the same lines), each player's own seat (`(you)`) apart, another width or language
    apart; what is drawn is what the panel drew before the sharing."""
    from perudo_ssh.i18n import translator
    from screens.widgets import SEAT_DRAWINGS, Cup, CupsPanel

    SEAT_DRAWINGS.clear()
    ana, ben = CupsPanel(), CupsPanel()
    en, fr = translator("en"), translator("fr")
    carl = Cup(name="carl", dice=4, turn=True, rating=1014)
    first = ana._card(carl, 46, en)
    assert ben._card(carl, 46, en) == first
    assert all(a is b for a, b in zip(ben._card(carl, 46, en), first, strict=True))
    drawn = ana._draw_card(carl, 46, en)  # as drawn without the sharing, styles too
    assert [(a.plain, a.spans) for a in first] == [(b.plain, b.spans) for b in drawn]
    assert [line.plain for line in first] == [
        "╭─ ▶ carl ──────────────────────────── 1014 ─╮",
        "│ [?][?][?][?]    4 dice                     │",
        "╰────────────────────────────────────────────╯",
    ]
    mine = ana._card(carl._replace(me=True), 46, en)
    assert mine[0].plain.startswith("╭─ ▶ carl (you)")
    assert ben._card(carl, 30, en)[0].plain != first[0].plain
    assert ana._card(carl, 46, fr)[1].plain != first[1].plain  # `4 dés`
    line = ana._line(carl, 40, en)
    assert ben._line(carl, 40, en) is line
    alone = ana._draw_line(carl, 40, en)
    assert (line.plain, line.spans) == (alone.plain, alone.spans)


def _club_game(seed: int) -> list:
    """Every state of a 3-seat club game of 2 dice each, played at random by `seed` (calzone
    declared whenever it may be, dudo half the time): many special rounds after a reveal."""
    from perudo_ssh.rules import (
        Call,
        DeclareCalzone,
        PlaceBid,
        Roll,
        apply,
        legal_actions,
        new_game,
        options_for,
    )

    rng = random_module.Random(seed)
    state = new_game(options_for("club", dice_per_player=2), 3, 0)
    states = []
    while state.phase != "over":
        if state.phase == "rolling":
            dice = tuple(tuple(rng.randint(1, 6) for _ in range(c)) for c in state.counts)
            state = apply(state, Roll(dice=dice))
        else:
            moves = legal_actions(state, state.turn)
            calzone = [m for m in moves if isinstance(m, DeclareCalzone)]
            dudo = [m for m in moves if isinstance(m, Call) and m.call == "dudo"]
            bids = [m for m in moves if isinstance(m, PlaceBid)]
            if calzone:
                state = apply(state, calzone[0])
            elif dudo and (rng.random() < 0.5 or not bids):
                state = apply(state, dudo[0])
            else:
                state = apply(state, bids[0])
        states.append(state)
    return states


@pytest.mark.parametrize("seed", [70, 3, 11])
async def test_a_spectator_s_every_frame_shows_a_reveal_whole(seed) -> None:
    """`install_marked_full_map`: a spectator keeps a reveal open while the next round is
    declared a calzone; the banner shown again made Textual work its map out lazily, and the
    next layout then found nothing moved: a frame drew the reveal a row lower but not the
    banner's row, which kept the reveal's old title (two titles, or hands with none: the dice
    audit's failure, 1 run in 5). Every frame the terminal shows has exactly one title over
    a reveal's hands, and it ends as a whole repaint. (Seed 70 failed without the mend.)"""
    install_drawing_savers()
    hand = re.compile(r"^ (.{17})((?:\[[1-6]\] | [1-6]  )+)")
    title = re.compile(r"^ Round (\d+): ", re.MULTILINE)
    rng = random_module.Random(seed)
    session = FakeSession("cyd")
    session.feed(P.Welcome(name="cyd"), lobby_state())
    app = make_app(session)
    shown = Shown(app, SIZE)
    faults: list[str] = []
    feed = shown.stream.feed

    def audited(data: bytes) -> None:
        feed(data)
        frame = "\n".join(shown.screen.display)
        if any(map(hand.match, frame.splitlines())) and len(title.findall(frame)) != 1:
            faults.append(frame)

    shown.stream.feed = audited  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        for text in ("You are a guest", "ben lost their connection", "ben is back"):
            app.notify(text, timeout=600)
        for state in _club_game(seed):
            waiting = ("ana", "ben") if state.phase == "rolling" else ()
            session.feed(table_state(observe(state, None), me=None, waiting_for=waiting))
            for _ in range(rng.choice([0, 0, 0, 1, 2])):
                await pilot.pause()
        await settled(pilot, shown)
    assert faults == [], faults[0]
