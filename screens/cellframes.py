"""A few cells of a widget sent to the terminal at once, as a frame of those cells alone
(`send_at_once`), instead of a refresh that waits for the screen's next update (issue 10).

Its own module because it reaches into Textual's compositor and display: the turn clock's
ticks (`screens.ticking`) and a lobby chat line (`screens.chat`) use it.
"""

from __future__ import annotations

from textual._compositor import ChopsUpdate
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


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
