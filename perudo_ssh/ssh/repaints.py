"""Frames that draw only what changed: fewer whole-screen repaints, fewer widgets asked.

Textual repaints a whole screen on a change of focus, three times as a dialog opens, and
under a dialog on every change of the screen below; and it asks every widget overlapping a
changed region for all its rows, those hidden behind others too. One app can afford that;
hundreds in one process cannot (issue 10). Each patch here, for every app of the process,
keeps what the screens show unchanged (tests/frames.py compares every frame with a whole
repaint) and two of them fix frames Textual left stale (`install_kept_dirty_widgets`,
`install_marked_full_map`). Separate from `garbage` (what drawing allocates);
`isolation.install_drawing_savers` installs both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from textual import events
from textual._compositor import Compositor
from textual.geometry import Region, Size
from textual.screen import Screen
from textual.strip import Strip


def install_quiet_focus() -> None:
    """Let a change of focus repaint what it changes, not the whole screen (issue 10).

    `Screen.focused` is a Textual reactive that repaints its screen on every change, so each
    Tab, each list opened or closed and each field focused redrew every line of the screen,
    and under a dialog every line of the screen below it too (~20 ms a frame at 80×24 with
    the create dialog). What focus changes is already redrawn by the widgets themselves: the
    widget that gains or loses focus refreshes itself (`Widget._on_focus` / `_on_blur`), the
    `:focus` / `:focus-within` styles are re-applied to the nodes they match (restyled nodes
    are refreshed), and the keys of the footer follow `refresh_bindings`. This turns off only
    the descriptor's own repaint; the watcher and the focus chain are unchanged. Idempotent."""
    focused = Screen.__dict__["focused"]
    focused._repaint = False


def install_quiet_resume() -> None:
    """Show a screen once when it opens, not three times (issue 10).

    Opening a dialog (create, help, a profile) made Textual lay it out and draw it whole,
    then draw it whole again, then lay out both it and the screen under it once more - three
    whole-screen passes of the same picture (~60 ms of the create dialog's ~300 ms here):
    - a screen's first `ScreenResume` restyles every node of it, though each was styled as
      it was mounted a moment before (later changes of class or pseudo-class restyle their
      nodes themselves); only a screen shown again is restyled;
    - the resume lays the screen out when its size changed (the first time, from nothing),
      which draws it whole, and then asks for a whole repaint anyway: not after a layout;
    - that first layout sends the screen a `Resize` (it was "shown"), and the screen lays
      itself and the screens under it out again at the size they already have: a screen
      already laid out at a size, with no layout pending, is not laid out again at it.
    What the screens show is unchanged (tests compare every frame and every node's styles
    with a whole repaint and a whole restyle). Idempotent."""
    resume = Screen._on_screen_resume
    if getattr(resume, "perudo_quiet", False):
        return
    resized = Screen._screen_resized

    def screen_resume(self: Screen[Any], event: events.ScreenResume) -> None:
        if self.stack_updates == 0:  # first shown: every node was styled as it was mounted
            event.refresh_styles = False
        laid_out = self._compositor.size
        resume(self, event)
        if self._compositor.size != laid_out and self.is_current and not self.app._batch_count:
            self._repaint_required = False  # the layout has just drawn the whole screen

    def screen_resized(self: Screen[Any], size: Size) -> None:
        if self._compositor.size == size and not self._layout_required:
            return
        resized(self, size)

    screen_resume.perudo_quiet = True  # type: ignore[attr-defined]
    Screen._on_screen_resume = screen_resume  # type: ignore[method-assign]
    Screen._screen_resized = screen_resized  # type: ignore[method-assign]


def install_quiet_background() -> None:
    """Let a screen under a modal one send up only what changed on it (issue 10).

    When a screen under a dialog changes (the lobby under the create dialog: a chat line, a
    name online), Textual refreshes the dialog over the changed regions, and then marks the
    screen under for a whole repaint (`_repaint_required`), so its next change, however
    small, refreshed the dialog over the whole screen: every row of the dimmed lobby drawn
    again each time. The whole repaint is not needed: a screen shown again after its dialog
    closes is repainted whole anyway (`Screen._on_screen_resume`). This keeps the flag as it
    was before the refresh; the regions that changed still go up. Idempotent."""
    current = Screen._compositor_refresh
    if getattr(current, "perudo_quiet", False):
        return

    def compositor_refresh(self: Screen[Any]) -> None:
        pending = self._repaint_required
        current(self)
        if self.is_attached and self.app.screen is not self:
            self._repaint_required = pending

    compositor_refresh.perudo_quiet = True  # type: ignore[attr-defined]
    Screen._compositor_refresh = compositor_refresh  # type: ignore[method-assign]


def install_kept_dirty_widgets() -> None:
    """Let a screen's repaint of some regions keep its widgets' own repaints (issue 10).

    A screen refreshed with regions is marked `_repaint_required`, and its next frame
    replaced its list of dirty widgets with itself and drew those regions only: the widgets
    changed in the meantime were not drawn until they changed again. Textual refreshes the
    top screen so whenever the screen right under it draws a change (its
    `_background_screens` always lists that one, even under an opaque table screen): the
    create dialog over a busy lobby lost its focus mark on Tab, and a table screen over the
    lobby its footer's new keys (the load bench's rare "stuck waiting for bid input"). Here,
    in a frame with no layout or scroll to do, those widgets' repaints are handed to the
    compositor first, so the frame draws both. Idempotent."""
    current = Screen._on_timer_update
    if getattr(current, "perudo_kept", False):
        return

    def on_timer_update(self: Screen[Any]) -> None:
        if (
            self._repaint_required
            and self._dirty_widgets
            and not self._layout_required
            and not self._scroll_required
            and self.is_current
            and not self.app._batch_count
        ):
            self._compositor.update_widgets(self._dirty_widgets)
        current(self)

    on_timer_update.perudo_kept = True  # type: ignore[attr-defined]
    Screen._on_timer_update = on_timer_update  # type: ignore[method-assign]


def _covered(region: Region, fronts: list[Region]) -> bool:
    """Whether one of `fronts` contains all of the non-empty `region` (as
    `Region.contains_region`, whose cache of 1,024 pairs missed one call in two in a loaded
    server: each frame asks with its own regions)."""
    x, y, width, height = region
    right, bottom = x + width, y + height
    for fx, fy, fwidth, fheight in fronts:
        if fx <= x and fy <= y and right <= fx + fwidth and bottom <= fy + fheight:
            return True
    return False


def install_front_renders() -> None:
    """Draw for a frame only the widgets seen in it, and only their rows in it (issue 10).

    Textual's compositor draws a frame of changed regions from every widget overlapping
    them, front to back, and keeps for each cell the front one's: yet it asks each of those
    widgets for all of its rows, and it asks the widgets behind too (the containers, the
    screen) though the widget in front covers them. A chat line arriving drew the chat's
    lines plus eight containers and the screen, each whole (~a third of a lobby frame in
    bench_frames' profile). Here a widget is asked only for its rows that the frame sends
    (Textual's `is_rendered_line`, one run of rows at a time: a bid changing the cups at the
    top and the composer at the bottom of a table screen no longer draws the dice between),
    and not at all when one widget already drawn in front covers all it shows there (every
    widget's lines fill its whole region, so the cells are the same). Whole-screen draws (no
    crop) are Textual's. Idempotent."""
    current = Compositor._get_renders
    if getattr(current, "perudo_front", False):
        return
    render_chops = Compositor._render_chops

    def rendered_chops(
        self: Compositor, crop: Region, is_rendered_line: Callable[[int], bool]
    ) -> Any:
        self._perudo_rendered = is_rendered_line  # type: ignore[attr-defined]
        try:
            return render_chops(self, crop, is_rendered_line)
        finally:
            self._perudo_rendered = None  # type: ignore[attr-defined]

    def get_renders(
        self: Compositor, crop: Region | None = None
    ) -> Iterator[tuple[Region, Region, list[Strip]]]:
        if not crop:
            yield from current(self, crop)
            return
        rendered: Callable[[int], bool] | None = getattr(self, "_perudo_rendered", None)
        top, bottom = crop.y, crop.bottom
        rows = [y for y in range(top, bottom) if rendered is None or rendered(y)]
        overlaps = crop.overlaps
        fronts: list[Region] = []
        for widget, (region, clip) in self.visible_widgets.items():
            if not overlaps(clip):
                continue
            shown = region.intersection(clip)
            seen = shown.intersection(crop)
            if not seen or _covered(seen, fronts):
                continue
            first, last = max(shown.y, top), min(shown.bottom, bottom)
            for start, end in _runs(rows, first, last):
                lines = widget.render_lines(
                    Region(shown.x - region.x, start - region.y, shown.width, end - start)
                )
                yield Region(region.x, start, region.width, end - start), clip, lines
            fronts.append(shown)

    get_renders.perudo_front = True  # type: ignore[attr-defined]
    get_renders.perudo_original = current  # type: ignore[attr-defined]
    rendered_chops.perudo_original = render_chops  # type: ignore[attr-defined]
    Compositor._get_renders = get_renders  # type: ignore[method-assign]
    Compositor._render_chops = rendered_chops  # type: ignore[method-assign]


def _runs(rows: list[int], first: int, last: int) -> Iterator[tuple[int, int]]:
    """The runs of consecutive rows of `rows` (ascending) within [first, last), as (start,
    end) pairs, end excluded."""
    start = end = -1
    for y in rows:
        if y < first:
            continue
        if y >= last:
            break
        if y != end:
            if start >= 0:
                yield start, end
            start = y
        end = y + 1
    if start >= 0:
        yield start, end


def install_marked_full_map() -> None:
    """When the compositor's map is worked out again between two layouts, mark what moved
    as to be drawn, as a layout does (issue 10: a frame left stale rows on the screen).

    Textual works the full map out lazily (`Compositor.full_map`) once a widget it does not
    show yet asks to be drawn (`update_widgets` marks the map out of date): the special-round
    banner shown again over a reveal. That map then became the one the next layout compares
    its own with, so the layout found nothing moved and marked nothing to draw: the frame
    drew the reveal at its new rows but not the banner's row, which kept the reveal's old
    title (a spectator's screen: the hands of a reveal with no title, caught by the dice
    audit of tests/test_dice_leaks.py, ~1 run in 5). Here the lazy map, like a layout,
    marks the regions of every widget whose place changed. Idempotent."""
    current = Compositor.__dict__["full_map"]
    if getattr(current.fget, "perudo_marked", False):
        return

    def full_map(self: Compositor) -> Any:
        worked_out, old_map = self._full_map_invalidated, self._full_map
        map = current.fget(self)  # Textual's own, lazy
        if worked_out and self.root is not None and self.size.region not in self._dirty_regions:
            for _, geometry in map.items() ^ old_map.items():  # what moved, as `reflow` marks
                region = geometry.clip.intersection(geometry.region)
                if region:
                    self._dirty_regions.add(region)
        return map

    full_map.perudo_marked = True  # type: ignore[attr-defined]
    Compositor.full_map = property(full_map)  # type: ignore[method-assign,assignment]
