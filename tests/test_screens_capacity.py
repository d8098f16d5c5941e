"""The cheaper widgets of issue 10 behave as the ones they replace (80×24, a fake lobby
session): the one-widget footer, the chat lines drawn a screen at a time, the online column
drawn as far as it has rows; and the process-wide tuning (shared parsed CSS, the collector)."""

from __future__ import annotations

import gc

from textual import events
from textual.app import App

from perudo_ssh import protocol as P
from perudo_ssh.serve import COLLECTOR_THRESHOLDS, tune_collector
from perudo_ssh.ssh.isolation import install_shared_css
from screens.app import make_app
from screens.chat import ChatLines
from screens.create import CreateTableDialog
from screens.footer import Footer
from screens.lobby import LobbyScreen
from tests.test_screens_fakes import FakeSession, lobby_state, screen_text, summary, wait_until

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
            ("j", "j/⏎", "Join"),
            ("s", "s", "Watch"),
        ]
        bottom = screen_text(app).splitlines()[-1]
        assert bottom.startswith(" c Create table  j/⏎ Join  s Watch  h History ")
        assert footer.key_at(0) == "c" and footer.key_at(16) == "j"
        assert footer.key_at(79) is None  # past the last key
        await pilot.click(Footer, offset=(5, 0))  # on "Create table"
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))


async def test_footer_follows_the_language() -> None:
    app = lobby_app(P.Welcome(name="ana"), lobby_state(summary(1)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        await pilot.press("f2")
        await wait_until(pilot, lambda: "c Créer une table" in screen_text(app))


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

    from perudo_ssh.ssh.isolation import STRIP_CACHES, install_lazy_strip_caches

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
