"""Cheaper stand-ins for parts of Textual that did more work than a screen needs (issue 10,
issue 11), each for one app alone (nothing here is shared between apps, see `screens.shared`):

* `PartialBackground`, a modal screen that draws again only the rows of the screen under it
  that changed;
* `KeptPanel`, a panel screen (help, rules) kept a few seconds after it closes, to open it
  again without composing it;
* `QuietInput`, an input whose typing lays nothing out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from textual._context import visible_screen_stack
from textual.color import Color
from textual.geometry import Region, Size
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import Screen
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget, _RenderCache
from textual.widgets import Input


class _BackgroundRows(BackgroundScreen):
    """Some rows of the screen under a modal, tinted as `BackgroundScreen` tints all of them:
    `strips` (the rows' lines of that screen) rendered one after the other."""

    def __init__(self, screen: Screen[Any], color: Color, strips: list[Strip]) -> None:
        super().__init__(screen, color)
        self.strips = strips

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = Segment.line()

        def segments() -> Iterator[Segment]:
            for strip in self.strips:
                yield from strip
                yield line

        return self.process_segments(segments(), self.color)


class KeptPanel:
    """Mixin for a panel screen (help, rules) that the app keeps a few seconds after it
    closes, to open it again without composing it (`PerudoApp.open_panel`, issue 11): opened
    and closed over and over, by a player reading or by a key storm, it costs ~a fifth of
    the CPU a toggle. A subclass says whether it `fits` the arguments of a new panel of its
    kind (its widgets are the ones they need) and `show`s them: its texts change, read in
    the app's current language, scrolled to the top."""

    def fits(self, *args: Any) -> bool:
        """Whether this panel's widgets are the ones a new panel made with `args` has."""
        raise NotImplementedError

    def show(self, *args: Any) -> None:
        """Show what a new panel made with `args` (which this one `fits`) would."""
        raise NotImplementedError

    def on_screen_suspend(self) -> None:
        panel_closed = getattr(cast(Widget, self).app, "panel_closed", None)
        if panel_closed is not None:
            panel_closed(self)


class PartialBackground:
    """Mixin for a `ModalScreen` (before it in the bases): when the screen under it changes,
    draw again only the rows that changed, not the whole screen (issue 10).

    A modal screen's own content is the screen under it, tinted (`BackgroundScreen`), and
    Textual draws all of it again whenever any part of the screen under changes: with the
    create dialog open over the lobby, each chat line, name online or table-list row drew
    the whole lobby again (~6 ms at 80×24), about half of the dialog's frames. Here the rows
    touched are drawn through the same tint and the same `Visual.to_strips` as Textual's
    (lines are drawn each on its own, so the rows come out as Textual would draw them) and
    the other rows are kept; a new size, a whole-screen refresh (every row) or an opaque
    background take Textual's own path. `partial_draws` counts the times
    only some rows were drawn."""

    partial_draws = 0

    def _render_content(self) -> None:
        widget = cast(Widget, self)
        width, height = widget.size
        cache = widget._render_cache
        dirty = widget._dirty_regions
        rows = sorted(
            {y for region in dirty for y in range(max(0, region.y), min(height, region.bottom))}
        )
        background = widget.styles.background
        if (
            not rows
            or len(rows) == height
            or cache.size != widget.size
            or len(cache.lines) != height
            or background.a >= 1
        ):
            super()._render_content()  # type: ignore[misc]
            return
        try:
            stack = visible_screen_stack.get()
        except LookupError:
            stack = []
        base = stack[-1] if stack else None
        if base is None or base is widget:
            super()._render_content()  # type: ignore[misc]
            return
        stack.pop()  # as Screen.render does: the screens under see the rest of the stack
        wanted = set(rows)
        first = rows[0]
        chops = base._compositor._render_chops(
            Region(0, first, width, rows[-1] - first + 1), wanted.__contains__
        )
        strips = [Strip.join(chops[y].values()) for y in rows]
        visual = visualize(widget, _BackgroundRows(base, background, strips))
        drawn = Visual.to_strips(widget, visual, width, len(rows), widget.visual_style)
        lines = list(cache.lines)
        for y, strip in zip(rows, drawn, strict=True):
            lines[y] = strip
        widget._render_cache = _RenderCache(widget.size, lines)
        dirty.clear()
        self.partial_draws += 1


class QuietInput(Input):
    """`Input` whose typing lays nothing out (issue 10).

    Textual's Input sets its virtual size to the width of its text on every change of value,
    and the virtual size is a layout reactive: each key typed laid out the whole screen
    (~4 ms for a table screen at 80x24, for every key of every bid typed). The text's width
    only bounds the input's own horizontal scroll, which reads the value directly; so here it
    is set without asking for a layout. An input whose own size is `auto` keeps Textual's
    layout (its size follows its text)."""

    def _watch_value(self, value: str) -> None:
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)
