"""`perudo_ssh.ssh.speedups` finds the handlers Textual finds and converts the colours Textual
converts (issue 10): compared with Textual's own code on the same receivers and messages."""

from __future__ import annotations

import functools
import inspect

import pytest
from rich.color import Color as RichColor
from rich.style import Style
from rich.terminal_theme import MONOKAI
from textual import events, on
from textual.app import App, ComposeResult
from textual.filter import ANSIToTruecolor
from textual.message import Message
from textual.message_pump import MessagePump
from textual.widgets import Button, Input

from perudo_ssh.ssh import speedups
from screens.table import TableScreen

speedups.install_speedups()  # as the server does (idempotent): handlers set later are seen


class Base(Input):
    def on_key(self, event: events.Key) -> None:
        pass

    @on(Button.Pressed, "#ok")
    def pressed_ok(self, event: Button.Pressed) -> None:
        pass


class Child(Base):
    def _on_key(self, event: events.Key) -> None:
        event.prevent_default()

    @on(Button.Pressed)
    def pressed_any(self, event: Button.Pressed) -> None:
        pass


def textual_handlers(receiver: MessagePump, name: str, message) -> list[tuple[type, object]]:
    """What Textual's own lookup (kept by the module before it installs its own) yields."""
    return [
        (cls, method.__func__)
        for cls, method in speedups._textual_get_dispatch_methods(receiver, name, message)
    ]


def planned_handlers(receiver: MessagePump, name: str, message) -> list[tuple[type, object]]:
    return [
        (cls, method.__func__)
        for cls, method in speedups._get_dispatch_methods(receiver, name, message)
    ]


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Child(id="child")
        yield Button("ok", id="ok")
        yield Button("no", id="no")


async def test_the_planned_dispatch_finds_the_handlers_textual_finds() -> None:
    """Keys, a button's press matched by a selector or not, a `prevent_default` that stops
    the walk, and a table screen's own handlers: the same handlers in the same order."""
    app = Host()
    async with app.run_test():
        child = app.query_one(Child)
        ok, no = app.query_one("#ok", Button), app.query_one("#no", Button)
        cases = [
            (child, "on_key", events.Key("a", "a")),
            (child, "on_button_pressed", Button.Pressed(ok)),
            (child, "on_button_pressed", Button.Pressed(no)),
            (app, "on_key", events.Key("b", "b")),
        ]
        screen = TableScreen.__new__(TableScreen)
        cases.append((screen, "on_key", events.Key("c", "c")))
        for receiver, name, message in cases:
            expected = textual_handlers(receiver, name, message)
            message._no_default_action = False
            assert planned_handlers(receiver, name, message) == expected
            message._no_default_action = False
        # a handler that prevents the default stops the walk up the classes: Base.on_key is
        # not called after Child._on_key
        key = events.Key("d", "d")
        names = []
        for cls, method in speedups._get_dispatch_methods(child, "on_key", key):
            names.append(cls.__name__)
            method(key)
        assert names == ["Child"]


async def test_a_handler_set_at_run_time_is_found() -> None:
    """A handler put on a class after messages were dispatched to it (as a test's monkeypatch
    does) is the one called from then on."""
    app = Host()
    async with app.run_test():
        child = app.query_one(Child)
        key = events.Key("a", "a")
        before = planned_handlers(child, "on_key", key)
        assert (Child, Child.__dict__["_on_key"]) in before

        def replacement(self, event) -> None:
            pass

        original = Child.__dict__["_on_key"]
        Child._on_key = replacement  # type: ignore[method-assign]
        try:
            assert (Child, replacement) in planned_handlers(child, "on_key", events.Key("a", "a"))
        finally:
            Child._on_key = original  # type: ignore[method-assign]
        assert planned_handlers(child, "on_key", events.Key("a", "a")) == before


def test_colours_convert_as_textual_converts_them() -> None:
    """A truecolour style comes back as it is; a system colour, a default colour and dim text
    are converted by Textual's own code, as without the speedup."""
    line_filter = ANSIToTruecolor(MONOKAI)
    background = RichColor.from_rgb(10, 20, 30)
    styles = [
        Style(color="#ff0000", bgcolor="#000010", bold=True),
        Style.from_meta({"offset": (3, 4)}) + Style(color="#102030"),
        Style(),
        Style(color="red"),
        Style(color="default", bgcolor="blue"),
        Style(color="#123456", dim=True),
    ]
    for style in styles:
        expected = speedups._original_truecolor_style(line_filter, style, background)
        assert speedups._truecolor_style(line_filter, style, background) == expected
    assert speedups._truecolor_style(line_filter, styles[0], background) is styles[0]
    converted = speedups._truecolor_style(line_filter, styles[3], background)
    assert converted.color is not None and converted.color.triplet is not None


def test_a_region_is_covered_as_textual_contains_it() -> None:
    """The frames' cover test (`repaints._covered`) agrees with `Region.contains_region`
    on every placement of a region against two fronts on a small grid."""
    import itertools

    from textual.geometry import Region

    from perudo_ssh.ssh.repaints import _covered

    fronts = [Region(1, 1, 3, 2), Region(2, 0, 1, 4)]
    checked = 0
    for x, y, width, height in itertools.product(
        range(0, 5), range(0, 5), range(1, 4), range(1, 4)
    ):
        region = Region(x, y, width, height)
        expected = any(front.contains_region(region) for front in fronts)
        assert _covered(region, fronts) == expected, region
        checked += expected
    assert checked == 24  # 18 inside the first, 9 inside the second, 3 inside both
    assert not _covered(Region(1, 1, 1, 1), [])


async def test_a_partial_callback_is_called_with_its_arguments_and_counted_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import textual._callback

    calls: list[object] = []
    signatures: list[object] = []
    real_signature = textual._callback.signature

    def counted_signature(func: object) -> inspect.Signature:
        signatures.append(func)
        return real_signature(func)  # type: ignore[arg-type]

    monkeypatch.setattr(textual._callback, "signature", counted_signature)

    def three(a: int, b: int, c: int = 0) -> None:
        calls.append((a, b, c))

    class Holder:
        def two(self, a: int, b: int = 5) -> None:
            calls.append((a, b))

    holder = Holder()
    for round_ in range(3):  # a new partial each time, as `call_after_refresh(f, x)` makes
        await textual._callback.invoke(functools.partial(three, round_), 7, 8, 9)
        await textual._callback.invoke(functools.partial(holder.two, round_), 7, 8)
        assert speedups.count_parameters(functools.partial(three, 1, c=2)) == 1
    await textual._callback.invoke(functools.partial(len, "abc"))  # a builtin: Textual's way
    assert calls == [(0, 7, 8), (0, 7), (1, 7, 8), (1, 7), (2, 7, 8), (2, 7)]
    assert signatures.count(three) <= 1 and len(signatures) <= 3  # three, two, len: once each


async def test_a_refresh_reaches_the_screen_without_prompting_the_widget() -> None:
    """`refresh_directly`: a Static's update is drawn, and a layout asked for with it (its
    height changed) is made, with the widget's task never woken by a prompt of its own."""
    from textual import messages
    from textual.app import App as TextualApp
    from textual.widgets import Static

    from tests.test_screens_fakes import screen_text

    prompts: list[object] = []

    class Watched(Static):
        def post_message(self, message: Message) -> bool:
            if isinstance(message, messages.Prompt):
                prompts.append(message)
            return super().post_message(message)

    class Two(TextualApp[None]):
        def compose(self) -> ComposeResult:
            yield Watched("one", id="watched")
            yield Static("below", id="below")

    app = Two()
    async with app.run_test(size=(20, 6)) as pilot:
        await pilot.pause()
        watched = app.query_one(Watched)
        prompts.clear()
        watched.update("two")
        await pilot.pause()
        assert "two" in screen_text(app)
        watched.update("three\nlines\nnow")  # taller: a layout
        await pilot.pause()
        await pilot.pause()
        below = app.query_one("#below")
        assert below.region.y == 3  # moved down by the layout
        assert prompts == []


async def test_a_frame_s_bytes_are_textual_s() -> None:
    """`render_segments`: the bytes of partial updates (whole widgets, regions cutting
    through them, several lines) are those Textual's own writes."""
    from textual.app import App as TextualApp
    from textual.geometry import Region
    from textual.widgets import Static

    class Three(TextualApp[None]):
        CSS = "#left { width: 12; } Horizontal { height: 3; }"

        def compose(self) -> ComposeResult:
            from textual.containers import Horizontal

            with Horizontal():
                yield Static("left [b]bold[/b]\nsecond", id="left")
                yield Static("[reverse]right side[/reverse] of it\nmore", id="right")
            yield Button("press")

    app = Three()
    async with app.run_test(size=(40, 8)) as pilot:
        await pilot.pause()
        compositor = app.screen._compositor
        console = app.console
        regions = [
            [Region(0, 0, 40, 8)],
            [Region(3, 1, 20, 1)],
            [Region(10, 0, 6, 3), Region(0, 4, 40, 2)],
            [Region(39, 7, 1, 1)],
        ]
        for dirty in regions:
            compositor._dirty_regions.update(dirty)
            update = compositor.render_partial_update()
            assert update is not None
            ours = speedups.render_segments(update, console)
            assert ours == speedups._textual_render_segments(update, console)
            assert "\x1b[" in ours
