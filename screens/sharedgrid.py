"""`SharedGrid`: the lobby's table list, a DataTable that repaints one row and shares its lines.

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

Its own module because it reimplements a good part of DataTable's drawing; the caches and
keys it shares its lines by are `screens.shared`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple, Self, cast

from rich.style import Style
from textual.geometry import Region, Size, Spacing
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, CellKey, ColumnKey, RowKey

from screens.shared import SHARED_GRID_LINES, SHARED_LINES, cell_key, token, widget_look

NO_GUTTER = Spacing(0, 0, 0, 0)


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
