"""Drawing shared between the apps of one process: what many screens show alike is drawn once.

Every session is its own Textual app, and in the lobby they all show the same table list, the
same names online and the same chat lines, at the same size in the same theme. Two helpers
draw such a widget once for the process and hand every other screen the same `Strip`s:

* `SharedLines`, a mixin for a widget whose `render()` is its whole content (a `Static`, the
  chat lines): its rendered lines are kept by content, size and style (`SHARED_RENDERS`), and
  as a Strip keeps its own cuts and terminal sequences, those too are made once;
* `SharedGrid` (`screens.sharedgrid`), a DataTable whose lines are kept by row
  (`SHARED_LINES`), and styled as its screens send them (`SHARED_GRID_LINES`), and whose cell
  updates repaint one row.

What is drawn from shared content is shared further up: a chat pane's rows are worked out once
(`screens.chat.CHAT_VIEWS`), the online column once (`screens.lobby.ONLINE_COLUMNS`), so every
screen gets the same content object and `SharedLines` reads its text once (`DRAWN_FROM`).
Every such cache is bounded and listed in `SHARED_CACHES`.

A Strip is immutable, so sharing one is safe; each key holds everything its lines are drawn
from, so a screen that differs in any of it (its language, its theme, its terminal's colours,
focus, the mouse over it) draws its own.

This module holds the caches and the keys they are drawn under (`token`, `cell_key`,
`style_key`, `widget_look`), `SharedLines` and the scrollbars; the widgets built on them each
have their own module: `screens.sharedgrid` (the grid), `screens.changedrows` (a widget that
draws again only its rows that changed), `screens.ticking` (the turn clock drawn in place).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Self

from rich.text import Text
from textual.cache import LRUCache
from textual.color import Color
from textual.content import Content
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

SHARED_RENDERS: LRUCache[tuple[object, ...], list[Strip]] = LRUCache(256)
"""Whole renders of `SharedLines` widgets, by what they are drawn from. A render is worth
keeping only while other screens still have to draw the same state (a few frames), so a
few hundred cover every kind of screen, size and language shown at once; oldest dropped
first."""
SHARED_ROWS: LRUCache[tuple[object, ...], Strip] = LRUCache(4096)
"""Rows drawn one by one by any `ChangedRows` widget of the process, by what they are drawn
from: at a table, the players see the same bid list and the same cups but for their own
seat's marks, so of the six drawing a bid's rows one draws each and the others reuse it."""
SHARED_LINES: LRUCache[tuple[object, ...], Strip] = LRUCache(2048)
"""Lines drawn by any `SharedGrid` of the process, by what they are drawn from (a screen
of lines for each lobby state, size and language shown; oldest dropped first)."""
SHARED_GRID_LINES: LRUCache[tuple[object, ...], Strip] = LRUCache(2048)
"""Lines of a `SharedGrid` as its screens send them (its style and background applied and
cropped, by Textual's `StylesCache`), by the line's key, the crop's columns, the widget's
size and look: a table made or closed moves every row below it, and every lobby screen
styled those lines one by one, though only the line of its own cursor differs (issue 10)."""

_TOKENS: LRUCache[object, int] = LRUCache(1024)
_next_token = itertools.count()


def token(value: object) -> int:
    """A small number standing for the hashable `value` in keys, the same while kept (the
    last 1,024 values): a key holding it hashes an int, not `value`'s nested tuples again."""
    number = _TOKENS.get(value)
    if number is None:
        number = _TOKENS[value] = next(_next_token)
    return number


def cell_key(value: object) -> object:
    """What a cell draws as, hashable: a `str` as it is, a Rich `Text` by its text, style and
    spans (a Text is mutable, so never a key itself); anything else by its `repr`."""
    if isinstance(value, str):
        return value
    if isinstance(value, Text):
        spans = tuple((span.start, span.end, str(span.style)) for span in value.spans)
        return (value.plain, str(value.style), spans, value.justify, value.overflow)
    return ("repr", type(value).__name__, repr(value))


def style_key(widget: Widget) -> tuple[object, ...]:
    """What a widget's look is computed from besides its content: its type, id and classes,
    its ancestors' classes (the CSS may select on them), focus, hover and disabled, the app's
    theme, colour system and line filters (the ANSI-to-truecolour filter and its palette)."""
    app = widget.app
    filters = tuple(
        (type(line_filter), id(getattr(line_filter, "_terminal_theme", line_filter)))
        for line_filter in app.get_line_filters()
    )
    return (
        type(widget),
        widget.id,
        tuple(frozenset(node.classes) for node in widget.ancestors_with_self),
        widget.get_pseudo_class_state(),
        app.theme,
        app.console.color_system,
        app.native_ansi_color,
        filters,
    )


def widget_look(widget: Widget) -> tuple[tuple[Color, Color], tuple[object, ...]]:
    """`widget.background_colors` and `style_key(widget)`, kept on the widget while nothing
    they are worked out from changes: the styles of the widget and of each ancestor (their
    `_cache_key`, which Textual moves on any change of a rule, by CSS or inline) and the
    widget's pseudo-classes. Both walk up the DOM (15.8 µs a frame for each shared widget,
    4.5 µs when kept; issue 10).

    A class toggled with no rule changing keeps the key worked out before it; lines drawn
    under that key look the same either way (the key is what the look is drawn from)."""
    nodes = widget.ancestors_with_self
    check = (
        tuple([node.styles._cache_key for node in nodes]),
        widget.get_pseudo_class_state(),
    )
    kept: tuple[object, tuple[tuple[Color, Color], tuple[object, ...]]] | None
    kept = widget.__dict__.get("_perudo_look")
    if kept is not None and kept[0] == check:
        return kept[1]
    look = (widget.background_colors, style_key(widget))
    widget._perudo_look = (check, look)  # type: ignore[attr-defined]
    return look


class _DrawnFrom(tuple[object, ...]):
    """What a content is drawn from (its text and spans), hashed once: the key of its lines
    is looked up by every screen that draws it, and a tuple hashes its spans each time."""

    _hash: int

    def __new__(cls, plain: str, spans: tuple[object, ...]) -> Self:
        drawn = super().__new__(cls, (plain, spans))
        drawn._hash = tuple.__hash__(drawn)
        return drawn

    def __hash__(self) -> int:
        return self._hash


DRAWN_FROM: LRUCache[int, tuple[object, _DrawnFrom]] = LRUCache(256)
"""The text and spans of contents drawn by `SharedLines` widgets, by the content's `id` (kept
beside it, so the `id` is not reused while kept): a content shown by many screens at once (a
chat pane's rows, `screens.chat.CHAT_VIEWS`) is read once, not once per screen."""


SHARED_CACHES: list[LRUCache[Any, Any]] = [
    SHARED_RENDERS,
    SHARED_ROWS,
    SHARED_LINES,
    SHARED_GRID_LINES,
    DRAWN_FROM,
    _TOKENS,
]
"""Every process-wide cache of what screens draw alike (other modules add theirs): each is
bounded; `forget_shared` empties them all."""


def forget_shared() -> None:
    """Empty every cache of `SHARED_CACHES` (a measure of what the server holds besides
    them; what was drawn is drawn again when next asked)."""
    for cache in SHARED_CACHES:
        cache.clear()


class SharedLines(Widget):
    """Mixin (before the widget class): the widget's rendered lines are shared by every app
    of the process that draws the same content at the same size in the same style.

    For widgets whose `render()` returns their whole content as a `Content` or a `str` (no
    border title, no links to hover): the key is the content's text and spans, the widget's
    size and the crop, its background colours and `style_key`. Anything else renders as
    usual."""

    _perudo_drawn_from: tuple[object, tuple[object, ...]] | None = None
    """The last content rendered and its text and spans (most frames render the same
    content object as the one before: a Static's until its next update)."""

    def render_lines(self, crop: Region) -> list[Strip]:
        """The widget's lines within `crop`, from `SHARED_RENDERS` when drawn already."""
        if self._border_title or self._border_subtitle:
            return super().render_lines(crop)
        rendered = self.render()
        kept = self._perudo_drawn_from
        if kept is None or kept[0] is not rendered:
            kept = DRAWN_FROM.get(id(rendered))
            if kept is None or kept[0] is not rendered:
                content = Content(rendered) if isinstance(rendered, str) else rendered
                if not isinstance(content, Content):
                    return super().render_lines(crop)
                kept = (rendered, _DrawnFrom(content.plain, tuple(content.spans)))
                DRAWN_FROM[id(rendered)] = kept
            self._perudo_drawn_from = kept
        return shared_lines(self, kept[1], crop, super().render_lines)


def shared_lines(
    widget: Widget,
    drawn_from: tuple[object, ...],
    crop: Region,
    draw: Callable[[Region], list[Strip]],
) -> list[Strip]:
    """`widget`'s lines within `crop`, kept in `SHARED_RENDERS` for every app of the process:
    keyed by `drawn_from` (all its content is drawn from: a content's text and spans, a
    footer's keys), its size, the crop, its background colours and `style_key`; `draw(crop)`
    draws them when they are not kept yet."""
    key = (drawn_from, widget.region.size, crop, *widget_look(widget))
    strips = SHARED_RENDERS.get(key)
    if strips is None:
        strips = draw(crop)
        SHARED_RENDERS[key] = strips
    return strips


def install_shared_scrollbars() -> None:
    """Draw each scrollbar once for every app of the process that shows it alike (issue 10).

    A scrollbar draws its whole height as one Rich renderable whenever a frame touches a row
    of it: the lobby's table list has one, and every lobby screen drew it again on every
    change of the list (~0.5 ms a draw under load, ~3 % of a loaded server's CPU at 200
    sessions, `bench/serve_timed.py`). Its lines are now kept in `SHARED_RENDERS` like a
    `SharedLines` widget's, keyed by what Textual draws them from: the direction, the
    scroll range, window and position, whether it is grabbed or under the mouse, its size,
    the crop and `widget_look` (its parent's scrollbar colours come from the styles that
    key covers). Idempotent."""
    if getattr(ScrollBar.render_lines, "perudo_shared", False):
        return
    textual_render_lines = ScrollBar.render_lines

    def render_lines(self: ScrollBar, crop: Region) -> list[Strip]:
        drawn_from = (
            "scrollbar",
            self.vertical,
            self.window_virtual_size,
            self.window_size,
            self.position,
            self.grabbed is not None,
            self.mouse_over,
        )
        return shared_lines(self, drawn_from, crop, lambda crop: textual_render_lines(self, crop))

    render_lines.perudo_shared = True  # type: ignore[attr-defined]
    ScrollBar.render_lines = render_lines  # type: ignore[method-assign,assignment]


class SharedStatic(SharedLines, Static):
    """A `Static` drawn once for every app of the process showing the same text alike."""
