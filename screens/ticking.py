"""`TickingStatic`: a one-line shared `Static` holding a clock (the bid line's turn clock,
issue 5), whose ticks draw again and send only the clock's cells.

Its own module because it draws in place of Textual: a new clock is put into a line drawn
before (`CLOCK_FRAMES`), and its cells sent at once (`screens.cellframes`).
"""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len
from rich.segment import Segment
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import visualize

from screens.cellframes import send_at_once
from screens.shared import SharedStatic, widget_look

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
