"""Drawing shared between the apps of one process: what many screens show alike is drawn once.

Every session is its own Textual app, and in the lobby they all show the same table list, the
same names online and the same chat lines, at the same size in the same theme. Two helpers
draw such a widget once for the process and hand every other screen the same `Strip`s:

* `SharedLines`, a mixin for a widget whose `render()` is its whole content (a `Static`, the
  chat lines): its rendered lines are kept by content, size and style (`SHARED_RENDERS`), and
  as a Strip keeps its own cuts and terminal sequences, those too are made once;
* `SharedGrid`, a DataTable whose lines are kept by row (`SHARED_LINES`), and styled as its
  screens send them (`SHARED_GRID_LINES`), and whose cell updates repaint one row.

What is drawn from shared content is shared further up: a chat pane's rows are worked out once
(`screens.chat.CHAT_VIEWS`), the online column once (`screens.lobby.ONLINE_COLUMNS`), so every
screen gets the same content object and `SharedLines` reads its text once (`DRAWN_FROM`).
Every such cache is bounded and listed in `SHARED_CACHES`.

A Strip is immutable, so sharing one is safe; each key holds everything its lines are drawn
from, so a screen that differs in any of it (its language, its theme, its terminal's colours,
focus, the mouse over it) draws its own.

Textual's `DataTable` forgets every drawn cell and line on any `update_cell` (its caches are
keyed on one update counter) and repaints the whole widget: in the lobby, each seat taken at
any table cost every lobby screen a redraw of every visible cell (about 14 ms at 80×24 for a
list of 30 tables; the largest item of the issue-10 profile at 100 sessions). `SharedGrid`
keeps DataTable's look, keys, events and API, and changes two things:

* `update_cell` repaints the one row it changed (a full repaint only when a column may widen);
* a drawn line is kept in a process-wide cache keyed by everything it is drawn from (the
  cells of its row, the row's index, whether the cursor or the mouse is on it, the column
  widths, the scroll, the base style, focus, the theme and the colour system), so the same
  row in every lobby of the process is drawn once and every other screen reuses it; and the
  line as the screen sends it (styled by Textual's `StylesCache`, cropped) is kept beside it,
  by the same key, the crop's columns and the widget's look (`SHARED_GRID_LINES`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple, Self, cast

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._compositor import ChopsUpdate
from textual._context import visible_screen_stack
from textual.cache import LRUCache
from textual.color import Color
from textual.content import Content
from textual.geometry import Region, Size, Spacing
from textual.reactive import Reactive
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget, _RenderCache
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import CellDoesNotExist, CellKey, ColumnKey, RowKey

NO_GUTTER = Spacing(0, 0, 0, 0)

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


class _Drawing(NamedTuple):
    """What every line of one drawing of a `SharedGrid` is drawn from alike: its columns,
    the rows of its cursor and of the mouse, its Rich style, and the rest of its look."""

    columns: list[Any]
    column_keys: tuple[object, ...]
    cursor_row: int
    hover_row: int
    base_style: Style
    rest: int
    """The rest of its look, as a `token`."""


class SharedGrid(DataTable[Any]):
    """`DataTable` (row cursor) with one-row repaints and lines shared between apps.

    Same constructor, methods and messages as `DataTable`. Lines are shared only for the
    one-line rows and `cursor_type="row"` it is used with; any other kind of line is drawn by
    DataTable itself, uncached here."""

    _base_style: Style | None = None
    _drawing: _Drawing | None = None
    """What every line of the drawing under way is drawn from (`_drawn_with`), or None."""
    _quiet_layout = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._row_cells: dict[RowKey, tuple[dict[Any, Any], tuple[object, ...], tuple[object, ...]]]
        self._row_cells = {}
        """Each row's cells as `cell_key`s: (the row's data, the column keys, the keys), kept
        until the row's data or the columns change (`_cells`)."""

    virtual_size = Reactive(Size(0, 0), layout=False)
    """As Widget's, but a change lays out the screen only when it shows or hides a scrollbar
    (`watch_virtual_size`): a row added or removed anywhere in the lobby laid out every lobby
    screen (~3 ms each at 80×24), though only the list's scroll range had changed."""

    def watch_virtual_size(self, size: Size) -> None:
        # the scrollbars follow the new range; showing or hiding one asks for the layout
        # itself (`show_vertical_scrollbar` is a layout reactive): only then is one needed
        if self.is_mounted:
            self._scroll_update(size)
        self.refresh()

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        """As Widget's; a layout asked for while a row is removed is dropped (the new
        virtual size decides, see `virtual_size`)."""
        return super().refresh(
            *regions,
            repaint=repaint,
            layout=layout and not self._quiet_layout,
            recompose=recompose,
        )

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: Any,
        *,
        update_width: bool = False,
    ) -> None:
        """As `DataTable.update_cell`, but repaint only that row (unless `update_width`).

        Raises `CellDoesNotExist` for an unknown row or column key."""
        row_key = RowKey(row_key) if isinstance(row_key, str) else row_key
        column_key = ColumnKey(column_key) if isinstance(column_key, str) else column_key
        row_index = self._row_locations.get(row_key)
        if row_index is None or column_key not in self._column_locations:
            raise CellDoesNotExist(
                f"No cell exists for row_key={row_key!r}, column_key={column_key!r}."
            )
        self._data[row_key][column_key] = value
        self._row_cells.pop(row_key, None)
        self._update_count += 1  # DataTable's own caches: a miss below draws afresh
        if update_width:
            self._updated_cells.add(CellKey(row_key, column_key))
            self._require_update_dimensions = True
            self.refresh()
        else:
            self.refresh_row(row_index)

    def render_lines(self, crop: Region) -> list[Strip]:
        """As DataTable's, with the widget's Rich style, and what every line's key holds
        alike (`_drawn_with`), worked out once for all the lines (DataTable asks for the style
        again on every line: a walk up the DOM each time; the key's ~15 reactive attributes
        read per line were a third of a lobby screen's frame when a table came or went)."""
        # as DataTable.render_lines does, and before the keys are made of it (they were made
        # of the state of the drawing before, and a focused list's lines kept as unfocused)
        self._pseudo_class_state = self.get_pseudo_class_state()
        self._base_style = self.rich_style
        self._drawing = self._drawn_with(self._base_style)
        try:
            keys = self._crop_keys(crop)
            if keys is None:
                return super().render_lines(crop)
            look = token((crop.x, crop.width, self.region.size, *widget_look(self)))
            found = [SHARED_GRID_LINES.get((key, look)) for key in keys]
            missing = [i for i, strip in enumerate(found) if strip is None]
            if missing:  # drawn at once from the first line missing to the last
                first, last = missing[0], missing[-1]
                drawn = super().render_lines(
                    Region(crop.x, crop.y + first, crop.width, last - first + 1)
                )
                for i, strip in enumerate(drawn, first):
                    found[i] = SHARED_GRID_LINES[keys[i], look] = strip
            return cast("list[Strip]", found)
        finally:
            self._base_style = None
            self._drawing = None

    def _crop_keys(self, crop: Region) -> tuple[object, ...] | None:
        """The keys (`_line_key`) of the lines within `crop` as `render_line` draws them, or
        None where one is not shared or the widget has a border, padding or outline (its
        lines would not be its rows alone)."""
        base_style = self._base_style
        if base_style is None or self._drawing is None or self.fixed_rows:
            return None
        styles = self.styles
        if styles.gutter != NO_GUTTER or any(edge for edge, _ in styles.outline):
            return None
        first_row, scroll_y, x1, x2 = self._view()
        keys = []
        for y in range(crop.y, crop.bottom):
            key = self._line_key(y + scroll_y if y >= first_row else y, x1, x2, base_style)
            if key is None:
                return None
            keys.append(key)
        return tuple(keys)

    def _view(self) -> tuple[int, int, int, int]:
        """Where DataTable draws from (read once for all the lines of a drawing): the first
        widget line below the header (lines from it on are scrolled), the scroll's rows, and
        the columns x1, x2 in view."""
        scroll_x, scroll_y = self.scroll_offset
        first_row = self.header_height if self.show_header else 0
        return first_row, scroll_y, scroll_x, scroll_x + self.size.width

    def render_line(self, y: int) -> Strip:
        """Line `y` of the widget (header, then rows below the scroll), as DataTable draws it."""
        base_style = self._base_style
        if base_style is None or self.fixed_rows:
            return super().render_line(y)
        first_row, scroll_y, x1, x2 = self._view()
        return self._render_line(y + scroll_y if y >= first_row else y, x1, x2, base_style)

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        key = self._line_key(y, x1, x2, base_style)
        if key is None:
            return super()._render_line(y, x1, x2, base_style)
        strip = SHARED_LINES.get(key)
        if strip is None:
            strip = super()._render_line(y, x1, x2, base_style)
            SHARED_LINES[key] = strip
            self._forget_drawn_cells()
        return strip

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """As DataTable's, which formats each new row to measure it and keeps the result by
        its update counter: dropped here, as after drawing (`_forget_drawn_cells`)."""
        super()._update_dimensions(new_rows)
        self._row_renderable_cache.clear()

    def _forget_drawn_cells(self) -> None:
        """Drop what DataTable kept of the line just drawn (its line, row, cells and
        formatted row). `SHARED_LINES` now holds the line by a key at least as exact, so
        those entries would only ever be read again once it has dropped the line; meanwhile
        each update of the list (which moves DataTable's counter in their keys) left them
        dead but kept, up to 10,000 cells a screen: ~85 objects an update for every lobby
        screen that drew a line, walked by each collection of the garbage collector (issue 10)."""
        self._line_cache.clear()
        self._row_render_cache.clear()
        self._cell_render_cache.clear()
        self._row_renderable_cache.clear()

    def _drawn_with(self, base_style: Style) -> _Drawing | None:
        """What every line of a drawing in `base_style` is drawn from alike, or None where
        lines are not shared (see the class)."""
        if self.cursor_type != "row" or self.fixed_columns or self._labelled_row_exists:
            return None
        app = self.app
        columns = self.ordered_columns
        rest = (
            self.show_cursor,
            self._show_hover_cursor,
            self.zebra_stripes,
            self.show_header,
            self.header_height,
            tuple(column.get_render_width(self) for column in columns),
            self.size.width,
            base_style,
            self._pseudo_class_state,
            self.cursor_foreground_priority,
            self.cursor_background_priority,
            app.theme,
            app.console.color_system,
        )
        return _Drawing(
            columns,
            tuple(column.key for column in columns),
            self.cursor_coordinate.row,
            self.hover_coordinate.row,
            base_style,
            token(rest),
        )

    def _cells(
        self, row_key: RowKey, column_keys: tuple[object, ...], columns: list[Any]
    ) -> tuple[object, ...]:
        """Row `row_key`'s cells as `cell_key`s, in `columns` order: kept while the row's
        data is the same dict (a row removed and added again is a new one) and the columns
        the same; `update_cell` forgets its row's."""
        data = self._data[row_key]
        kept = self._row_cells.get(row_key)
        if kept is not None and kept[0] is data and kept[1] == column_keys:
            return kept[2]
        cells = tuple(cell_key(data.get(column.key)) for column in columns)
        self._row_cells[row_key] = (data, column_keys, cells)
        return cells

    def remove_row(self, row_key: RowKey | str) -> None:
        """As DataTable's, without its layout of the whole screen (see `virtual_size`)."""
        self._quiet_layout = True
        try:
            super().remove_row(row_key)
        finally:
            self._quiet_layout = False
        self._row_cells.pop(RowKey(row_key) if isinstance(row_key, str) else row_key, None)

    def clear(self, columns: bool = False) -> Self:
        """As DataTable's; the kept cells go too."""
        self._row_cells.clear()
        return super().clear(columns)

    def _line_key(self, y: int, x1: int, x2: int, base_style: Style) -> tuple[object, ...] | None:
        """Everything line `y` is drawn from, or None where it is not shared."""
        drawing = self._drawing
        if drawing is None or drawing.base_style is not base_style:  # a line on its own
            drawing = self._drawn_with(base_style)
            if drawing is None:
                return None
        columns, _, cursor_row, hover_row, _, rest = drawing
        try:
            row_key, line = self._get_offsets(y)
        except LookupError:  # below the rows: DataTable draws a blank line
            return ("blank", rest)
        if row_key is self._header_row_key:
            index = -1
            cells = tuple(cell_key(column.label) for column in columns)
        else:
            found = self._row_locations.get(row_key)
            if found is None or self.rows[row_key].height != 1:
                return None
            index = found
            cells = self._cells(row_key, drawing.column_keys, columns)
        return (cells, line, index, cursor_row == index, hover_row == index, x1, x2, rest)


class ChangedRows(Widget):
    """Mixin (before the widget class): a widget drawn as one `Content` a row, whose changes
    draw again only the rows that changed (issue 10).

    Textual draws a widget's whole content again on any refresh, and sends every row of it:
    at a table, each bid redrew every seat of the cups panel and every line of the bid list
    (26 rows of the 28 a table screen drew per bid) though one seat's turn marker and one
    new bid were all that changed. A subclass gives its rows (`rows()`, each a single line,
    for the widget's current size) and calls `redraw()` when its data changes: the rows whose
    text or styles differ from those drawn are refreshed, and only they are drawn again,
    each on its own (`Visual.to_strips` of that row, as Textual draws each line of the
    whole). A whole draw happens as Textual's when the number of rows changes, a row is
    wider than the widget (it would wrap), the content is aligned other than left and top,
    text is selected, or the widget was refreshed whole (a new size, a new style, a new
    language). A row drawn one by one is kept for every app of the process (`SHARED_ROWS`,
    keyed by its text and styles, its place, the width and `style_key`), so the players of a
    table draw each row they all see once between them. `rendered_rows` counts the rows drawn
    one by one (not those found drawn)."""

    _drawn_keys: list[tuple[str, tuple[object, ...]]] | None = None
    _next_rows: tuple[Size, list[Content]] | None = None  # worked out by `redraw`, to draw
    rendered_rows = 0

    def rows(self) -> list[Content]:
        """The widget's rows as drawn now, one `Content` each (a subclass gives them)."""
        raise NotImplementedError

    def render(self) -> Content:
        return Content("\n").join(self.rows())

    @staticmethod
    def _keys(rows: list[Content]) -> list[tuple[str, tuple[object, ...]]]:
        # a Content compares by its text alone: the styles count too
        return [(row.plain, tuple(row.spans)) for row in rows]

    def redraw(self) -> None:
        """Refresh the rows that differ from those drawn, the rows added and the rows gone
        (all of them when what is drawn is not known)."""
        drawn = self._drawn_keys
        if drawn is None or not self.is_mounted or self.size != self._render_cache.size:
            self.refresh()
            return
        rows = self.rows()
        self._next_rows = (self.size, rows)  # the draw that follows need not work them out
        keys = self._keys(rows)
        width = self.size.width
        changed = [
            y
            for y in range(max(len(keys), len(drawn)))
            if y >= len(keys) or y >= len(drawn) or keys[y] != drawn[y]
        ]
        if changed:
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        """As Widget's; a whole refresh (a new style, a new language) forgets the rows
        `redraw` worked out: they are worked out again when drawn."""
        if not regions:
            self._next_rows = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _render_content(self) -> None:
        width, height = self.size
        kept_rows, self._next_rows = self._next_rows, None
        rows = kept_rows[1] if kept_rows is not None and kept_rows[0] == self.size else self.rows()
        dirty = self._dirty_regions
        top = self.content_offset.y
        wanted = {
            y - top
            for region in dirty
            for y in range(max(top, region.y), min(top + height, region.bottom))
        }
        cache = self._render_cache
        drawn = self._drawn_keys
        kept = len(cache.lines)
        if (
            drawn is None
            or not wanted
            or len(wanted) >= len(rows)
            or len(drawn) != kept
            or cache.size != self.size
            or len(rows) > height
            or not wanted.issuperset(range(kept, len(rows)))
            or self.styles.content_align != ("left", "top")
            or self.text_selection is not None
            or any(row.cell_length > width or "\n" in row.plain for row in rows)
        ):
            super()._render_content()
            lines = self._render_cache.lines
            self._drawn_keys = self._keys(rows) if len(lines) == len(rows) else None
            return
        count = len(rows)
        lines = [*cache.lines[:count], *[Strip.blank(width)] * (count - kept)]
        keys = [*drawn[:count], *[("", ())] * (count - kept)]
        style = self.visual_style
        looks = (width, style, *widget_look(self))
        for y in sorted(wanted):
            if y < count:
                row_key = (rows[y].plain, tuple(rows[y].spans))
                shared_key = (row_key, y, looks)
                strip = SHARED_ROWS.get(shared_key)
                if strip is None:
                    (strip,) = Visual.to_strips(self, rows[y], width, 1, style)
                    strip = SHARED_ROWS[shared_key] = _at_row(strip, y)
                    self.rendered_rows += 1
                lines[y] = strip
                keys[y] = row_key
        self._render_cache = _RenderCache(self.size, lines)
        self._drawn_keys = keys
        dirty.clear()


def _at_row(strip: Strip, y: int) -> Strip:
    """`strip`, drawn as row 0 of a content, as row `y` of it: Textual marks each piece of a
    content's text with its place in it (the style's `offset` meta, for text selection)."""
    if not y:
        return strip
    segments = []
    for text, style, control in strip:
        if style is not None and style._meta is not None:
            offset = style.meta.get("offset")
            if offset is not None:
                style = style + Style.from_meta({"offset": (offset[0], y)})
        segments.append(Segment(text, style, control))
    return Strip(segments, strip.cell_length)


class SharedStatic(SharedLines, Static):
    """A `Static` drawn once for every app of the process showing the same text alike."""


CLOCK_FRAMES: LRUCache[tuple[object, ...], tuple[list[Strip], str]] = LRUCache(256)
"""Lines of `TickingStatic` widgets by all they are drawn from but their clock's characters,
with the clock's text they were drawn with."""


class _Shown(NamedTuple):
    """What a `TickingStatic` shows: its content's text and spans, its clock's characters
    [start, end) (None: no clock), the cells of the text and the clock's first cell."""

    plain: str
    spans: tuple[object, ...]
    clock: tuple[int, int] | None
    cells: int
    clock_x: int


def send_at_once(widget: Widget, cells: Region) -> bool:
    """Send the terminal `cells` of `widget` (a region in its own coordinates, border and
    padding included) drawn as they are now, as a frame of those cells alone, when nothing is
    pending for its screen (no message in its queue: no resume, update or layout on its way;
    no repaint, layout or scroll asked for; no resize on its way to the app) and every cell
    is in view, in front, with no notice drawn over its row (`screens.notices`); False
    (nothing sent) otherwise, for a refresh the usual way.

    A frame's usual way costs the screen a message, a wait for its update timer and the
    compositor's search for what the changed cells show (~0.4 ms a turn-clock tick under
    load, in each second of each player at a table; a lobby chat line in every lobby screen:
    issue 10); here the cells' widget is known and in front, so the frame is Textual's own
    `ChopsUpdate` of them, through the same `App._display` (synchronised output, the cursor
    put back). What Textual kept of the widget's drawing is forgotten as a refresh forgets
    it, but no repaint is asked of the screen."""
    app = widget.app
    if not app._running or app._closed or app.is_inline or app._batch_count:
        return False
    screen = widget.screen
    if (
        app.screen is not screen
        or app._resize_event is not None
        or not screen._message_queue.empty()
        or screen._layout_required
        or screen._repaint_required
        or screen._scroll_required
        or screen._dirty_widgets
        or widget._repaint_regions
    ):
        return False
    compositor = screen._compositor
    placed = compositor.visible_widgets.get(widget)
    if placed is None or not cells:
        return False
    region, clip = placed
    shown = cells.translate(region.offset)  # on the screen
    if (
        not clip.contains_region(shown)
        or shown.y < 0
        or shown.bottom > len(compositor.layers_visible)
    ):
        return False
    rows = range(shown.y, shown.bottom)
    overlay = getattr(compositor, "_perudo_overlay", None)  # notices over the screen
    if overlay is not None:
        covered = overlay.rows(*compositor.size)
        if covered and covered.start < rows.stop and rows.start < covered.stop:
            return False
    left, right = shown.x, shown.right
    for y in rows:
        # the front-most widget shown over any of the row's cells (as `get_widget_at`
        # finds it for one cell) must be this one, over all of them
        row = Region(left, y, shown.width, 1)
        for front, cropped, _region in compositor.layers_visible[y]:
            if cropped.overlaps(row) and front.visible:
                if front is not widget or not cropped.contains_region(row):
                    return False
                break
        else:
            return False
    widget._layout_cache.clear()
    widget._dirty_regions.add(widget.size.region)
    widget._styles_cache.clear()
    widget.clear_cached_dimensions()
    widget._rich_style_cache.clear()
    lines = widget.render_lines(Region(0, cells.y, region.width, cells.height))
    if len(lines) != cells.height:
        return False  # drawn afresh by the usual way (nothing was sent)
    chops: list[dict[int, Strip | None]] = [{}] * shown.y
    chops += [{left: line.crop(cells.x, cells.right)} for line in lines]
    ends: list[list[int]] = [[]] * shown.y + [[right]] * cells.height
    app._display(screen, ChopsUpdate(chops, [(y, left, right) for y in rows], ends))
    return True


class TickingStatic(SharedStatic):
    """A one-line `SharedStatic` whose content holds a clock (the bid line's turn clock,
    issue 5): each second only the clock's characters change, and only they are drawn again.

    `show(content, clock)` shows `content`, whose characters `clock = (start, end)` are the
    clock's time (ASCII, one cell each: `0:42`), or no clock (None). When the content is the
    one shown but for those characters, only their cells are drawn and sent: the line is
    drawn from the line drawn before (by any app of the process: `CLOCK_FRAMES`) with the new
    characters put in the same cells, in the same styles, and the cells go to the terminal at
    once when nothing else waits to be drawn (`_send_at_once`), else as a repaint of those
    cells. A tick cost a whole line's drawing and a whole frame (issue 10: the turn clock was
    a third of a loaded server's frames). The quick way is taken only where the clock's cells
    are where its characters are: the line fits its width (no wrapping) and is aligned left
    (text and content), inside the widget's border and padding; anything else is drawn
    whole."""

    _perudo_shown: _Shown | None = None
    """The content shown."""
    ticked = 0
    """Lines drawn by putting a new clock into a line drawn before (for tests)."""
    sent_at_once = 0
    """Ticks sent to the terminal at once, as frames of the clock's cells (for tests)."""

    def show(self, content: Content, clock: tuple[int, int] | None = None) -> None:
        """Show `content` with its clock's characters [start, end) (None: no clock)."""
        spans = tuple(content.spans)
        plain = content.plain
        shown = self._perudo_shown
        if shown is not None and shown.plain == plain and shown.spans == spans:
            return
        if (
            clock is not None
            and shown is not None
            and shown.clock == clock
            and shown.spans == spans
            and self._ticks_in_place(shown, plain)
        ):
            # the same cells as before: the clock's characters are ASCII, one cell each
            self._perudo_shown = shown._replace(plain=plain)
            self._Static__content = content  # type: ignore[attr-defined]
            self._Static__visual = visualize(self, content, markup=False)  # type: ignore[attr-defined]
            width = clock[1] - clock[0]
            if not self._send_at_once(shown.clock_x, width):
                self.refresh(Region(shown.clock_x, 0, width, 1))
            return
        clock_x = 0 if clock is None else cell_len(plain[: clock[0]])
        self._perudo_shown = _Shown(plain, spans, clock, cell_len(plain), clock_x)
        self.update(content, layout=False)

    def _ticks_in_place(self, shown: _Shown, after: str) -> bool:
        """Whether `after` is the text shown but for the clock's characters, ASCII either
        side, on one line from the left edge of the content: its clock's cells are its
        characters."""
        before = shown.plain
        start, end = shown.clock or (0, 0)
        return (
            len(before) == len(after)
            and before[:start] == after[:start]
            and before[end:] == after[end:]
            and after[start:end].isascii()
            and before[start:end].isascii()
            and after[start:end].isprintable()
            and self.styles.text_align in ("left", "start")
            and self.styles.content_align_horizontal == "left"
            and shown.cells <= self.size.width
            and self.size.height == 1
        )

    def _send_at_once(self, x: int, width: int) -> bool:
        """Send the terminal the `width` cells of the clock at `x` of the content now, as a
        frame of those cells alone (`send_at_once`); False (nothing sent) where that cannot
        be, for a refresh the usual way."""
        offset_x, offset_y = self.content_offset  # border and padding
        if not send_at_once(self, Region(offset_x + x, offset_y, width, 1)):
            return False
        self.sent_at_once += 1
        return True

    def render_lines(self, crop: Region) -> list[Strip]:
        """The widget's lines within `crop`: the ones drawn before for the same content but
        its clock's characters, with this content's clock put in, when its cells are found
        holding the clock drawn; else drawn as a `SharedStatic`."""
        shown = self._perudo_shown
        if shown is None or self._border_title or self._border_subtitle:
            return super().render_lines(crop)
        plain, spans, clock, _cells, clock_x = shown
        if clock is None:
            return super().render_lines(crop)
        start, end = clock
        time = plain[start:end]
        masked = plain[:start] + "\0" * (end - start) + plain[end:]
        key = (masked, spans, (start, end), self.region.size, crop, *widget_look(self))
        kept = CLOCK_FRAMES.get(key)
        if kept is None:
            lines = super().render_lines(crop)
            CLOCK_FRAMES[key] = (lines, time)
            return lines
        lines, drawn = kept
        if drawn == time:
            return lines
        offset_x, offset_y = self.content_offset  # border and padding
        x = offset_x + clock_x - crop.x
        row = offset_y - crop.y  # the content's one line, among the lines of the crop
        ticked = _put_text(lines[row], x, drawn, time) if 0 <= row < len(lines) else None
        if ticked is None:  # not where it was looked for: draw it whole
            return super().render_lines(crop)
        self.ticked += 1
        return [*lines[:row], ticked, *lines[row + 1 :]]


def _put_text(strip: Strip, x: int, drawn: str, text: str) -> Strip | None:
    """`strip` with its cells [x, x + len(text)) showing `text` instead of `drawn` (one cell
    a character, either), in their styles; None if they do not show `drawn`."""
    width = len(text)
    if x < 0 or len(drawn) != width or x + width > strip.cell_length:
        return None
    middle = strip.crop(x, x + width)
    if middle.text != drawn:
        return None
    characters = iter(text)
    segments = [
        Segment("".join(next(characters) for _ in segment.text), segment.style, segment.control)
        for segment in middle
    ]
    return Strip.join([strip.crop(0, x), Strip(segments, width), strip.crop(x + width)])


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
