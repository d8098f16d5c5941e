"""`ChangedRows`: a widget drawn as one `Content` a row, whose changes draw again only the rows
that changed, each row drawn once for every app of the process (`screens.shared.SHARED_ROWS`).

Its own module because it replaces how Textual renders a widget's content (issue 10); the
cups panel and the bid list of a table (`screens.widgets`) are built on it.
"""

from __future__ import annotations

from typing import Self

from rich.segment import Segment
from rich.style import Style
from textual.content import Content
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget, _RenderCache

from screens.shared import SHARED_ROWS, widget_look


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
