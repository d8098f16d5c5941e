"""Notifications drawn over the screen's lines, not mounted as widgets (issue 10).

Textual shows each `App.notify` as a `Toast` widget mounted in the screen's `ToastRack`, and
removes it when it expires: two widgets made, styled and mounted, two whole layouts of the
screen (one as it comes, one as it goes), a timer per toast. At 200 sessions, 377 of the
server's ~680 layouts a minute were the toast rack's: table chat lines shown to the players
whose chat is closed, and the notice each newcomer gets.

Here the app's notifications are drawn by the compositor of the current screen, over its
lines (`install_notice_overlay`), in Textual's look and place (`NOTICE_CSS` is what that look
was): full-width boxes stacked just above the footer line, the newest at the bottom, each a
coloured bar on the left (green, amber, red by severity), the title in bold over the message,
wrapped to the width. Nothing is mounted and nothing is laid out: a notice arriving or
expiring repaints its rows only (`NoticeBoard.show`), and one timer per app removes the
expired ones. The boxes' lines are drawn once per process for every app showing the same
notice at the same width (`NOTICE_LINES`: a table chat line reaches every player there).

A click on a notice dismisses it, as on a toast (`DrawnNotices.on_event`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from rich.segment import Segment
from textual import events
from textual._compositor import Compositor
from textual.app import ScreenStackError
from textual.cache import LRUCache
from textual.color import Color
from textual.content import Content
from textual.geometry import Region
from textual.markup import MarkupError
from textual.notifications import Notification
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions

from screens.shared import SHARED_CACHES

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen
    from textual.timer import Timer

NOTICE_CSS = """
ToastRack { margin-bottom: 1; overflow-y: scroll; }
Toast { width: 100%; max-width: 100%; margin-top: 0; padding: 0 1; }
"""
"""The look drawn here, as Textual's toast CSS with ours (issue 13, item 5: one line across
the screen just above the footer, over the line of key hints, a second line for a longer
message, no block of four lines over the chat or a dialog's buttons): the rack's scrollbar
gutter leaves the two right-hand columns to what is beneath (`GUTTER`), and a scrollbar of the
screen itself two more."""

GUTTER = 2
"""Columns on the right left uncovered: the toast rack's (hidden) vertical scrollbar."""
BELOW = 1
"""Lines below the last notice (the rack's bottom margin: the footer's line)."""

NOTICE_LINES: LRUCache[tuple[object, ...], tuple[Strip, ...]] = LRUCache(512)
"""The lines of one notice drawn at one width in one theme, for every app of the process."""
SHARED_CACHES.append(NOTICE_LINES)


class Palette:
    """The colours of notices in one theme: `background` (the box), `text` (the message),
    `bars` and `titles` by severity. Made from the app's CSS variables (`$panel-lighten-1`,
    `$foreground`, `$success`/`$warning`/`$error`, `$text-success`/…), as Textual's toast
    CSS takes them (not its `:ansi` background: our apps never set `ansi_color`)."""

    def __init__(self, variables: dict[str, str]) -> None:
        self.background = Color.parse(variables["panel-lighten-1"])
        self.text = Color.parse(variables["foreground"])
        kinds = {"information": "success", "warning": "warning", "error": "error"}
        self.bars = {level: Color.parse(variables[kind]) for level, kind in kinds.items()}
        self.titles = {
            level: Color.parse(variables[f"text-{kind}"]) for level, kind in kinds.items()
        }


_PALETTES: dict[str, Palette] = {}


def palette_of(app: App[Any]) -> Palette:
    """The notices' `Palette` in `app`'s theme (made once per theme and process)."""
    palette = _PALETTES.get(app.theme)
    if palette is None:
        palette = _PALETTES[app.theme] = Palette(app.get_css_variables())
    return palette


def notice_lines(notification: Notification, width: int, palette: Palette) -> tuple[Strip, ...]:
    """The lines of `notification` as a box `width` cells wide (≥ 4), drawn as Textual's
    `Toast` draws them under `NOTICE_CSS`: a bar, a space, the title (bold, in the severity's
    colour; none if empty) over the message (content markup if `notification.markup`),
    wrapped and folded to `width - 3`, a space. Shared (`NOTICE_LINES`)."""
    key = (
        notification.message,
        notification.title,
        notification.severity,
        notification.markup,
        width,
        id(palette),
    )
    lines = NOTICE_LINES.get(key)
    if lines is not None:
        return lines
    severity = notification.severity
    message = Content(notification.message)
    if notification.markup:
        try:
            message = Content.from_markup(notification.message)
        except MarkupError:  # shown as it is written (a Toast would have failed to draw)
            pass
    if notification.title:
        title = Style(foreground=palette.titles[severity], bold=True)
        message = Content.assemble((notification.title, title), "\n", message)
    base = Style(background=palette.background, foreground=palette.text)
    fill = Style(background=palette.background).rich_style
    inner = max(width - 3, 1)
    options = RenderOptions(_style_of, {})
    bar = Segment(
        "▌", Style(foreground=palette.bars[severity], background=palette.background).rich_style
    )
    pad = Segment(" ", fill)
    lines = tuple(
        Strip.join((Strip((bar, pad)), strip.extend_cell_length(inner, fill), Strip((pad,))))
        for strip in message.render_strips(inner, None, base, options)
    )
    NOTICE_LINES[key] = lines
    return lines


def _style_of(style: str | Style) -> Style:
    """A span's style as `Content` asks a widget for it (markup such as `[b]`)."""
    return style if isinstance(style, Style) else Style.parse(style)


class Overlay:
    """What one compositor draws over its lines: the lines of the notices (top first) and
    where, for a screen of the compositor's size; `screen` (held weakly: the overlay is its
    compositor's) gives the width inside its own scrollbar, if it has one."""

    def __init__(
        self,
        notifications: Sequence[Notification],
        palette: Palette,
        screen: Screen[Any] | None = None,
    ) -> None:
        self.notifications = tuple(notifications)
        self.palette = palette
        self._screen = None if screen is None else weakref.ref(screen)

    def placed(self, width: int, height: int) -> tuple[int, tuple[Strip, ...]]:
        """(first row, lines) for a `width` × `height` screen: the notices stacked so the
        last ends `BELOW` lines above the bottom, the oldest lines cut off if they do not fit
        (as the toast rack scrolled to its end); (0, ()) when there is no room."""
        box = self.right(width) - GUTTER
        room = height - BELOW
        if box < 4 or room < 1:
            return 0, ()
        lines: list[Strip] = []
        for notification in self.notifications:
            lines.extend(notice_lines(notification, box, self.palette))
        shown = tuple(lines[-room:])
        return room - len(shown), shown

    def at(self, width: int, height: int, x: int, y: int) -> Notification | None:
        """The notice drawn over cell (`x`, `y`) of a `width` × `height` screen, if any."""
        box = self.right(width) - GUTTER
        bottom = height - BELOW
        if box < 4 or bottom < 1 or not 0 <= x < box:
            return None
        for notification in reversed(self.notifications):
            top = bottom - len(notice_lines(notification, box, self.palette))
            if top <= y < bottom:
                return notification
            bottom = top
        return None

    def rows(self, width: int, height: int) -> range:
        """The rows of a `width` × `height` screen with a notice line drawn over them (a
        widget drawing straight to the terminal must not draw there)."""
        top, lines = self.placed(width, height)
        return range(top, top + len(lines))

    def right(self, width: int) -> int:
        """The column where the toast rack ended, on a screen `width` wide: its width less
        the screen's own vertical scrollbar, if it shows one."""
        screen = None if self._screen is None else self._screen()
        if screen is None:
            return width
        return min(width, width - screen.scrollbar_size_vertical)


def _overlaid(render_chops: Callable[..., Any]) -> Callable[..., Any]:
    """`Compositor._render_chops`, then the compositor's `Overlay` (if any) put over the
    rows it covers that this render draws: each chop under a notice line is that line's part
    of the same columns, joined with what is beneath past the box's right edge."""

    def rendered_chops(
        self: Compositor, crop: Region, is_rendered_line: Callable[[int], bool]
    ) -> Any:
        chops = render_chops(self, crop, is_rendered_line)
        overlay: Overlay | None = getattr(self, "_perudo_overlay", None)
        if overlay is None:
            return chops
        width, height = self.size
        top, lines = overlay.placed(width, height)
        right = overlay.right(width) - GUTTER
        cuts = self.cuts
        for y, line in enumerate(lines, top):
            if not (crop.y <= y < crop.bottom and is_rendered_line(y)):
                continue
            chops_line = chops[y]
            line_cuts = cuts[y]
            for start, end in zip(line_cuts, line_cuts[1:], strict=False):
                if start >= right:
                    continue
                beneath = chops_line.get(start)
                if end <= right or beneath is None:
                    chops_line[start] = line.crop(start, min(end, right))
                else:
                    chops_line[start] = Strip.join(
                        (line.crop(start, right), beneath.crop(right - start, end - start))
                    )
        return chops

    rendered_chops.perudo_overlay = True  # type: ignore[attr-defined]
    rendered_chops.perudo_original = render_chops  # type: ignore[attr-defined]
    return rendered_chops


def install_notice_overlay() -> None:
    """Let each compositor draw an `Overlay` over its lines (`_overlaid`). Idempotent; the
    other drawing savers may wrap it or be wrapped by it."""
    current = Compositor._render_chops
    probe: Any = current
    while probe is not None:
        if getattr(probe, "perudo_overlay", False):
            return
        probe = getattr(probe, "perudo_original", None)
    Compositor._render_chops = _overlaid(current)  # type: ignore[method-assign]


class NoticeBoard:
    """An app's notifications, drawn over its current screen (`Overlay`) instead of mounted
    as toasts. `show()` draws the app's notifications as they are now (call it where Textual
    calls `App._refresh_notifications`): it repaints the rows that change, moves the overlay
    when the screen changes, and sets one timer for the next notice to expire."""

    def __init__(self, app: App[Any]) -> None:
        install_notice_overlay()
        self._app = weakref.ref(app)  # the app holds its board: no cycle through it
        self._screen: weakref.ref[Screen[Any]] | None = None  # where they were drawn
        self._timer: Timer | None = None

    def show(self) -> None:
        """Draw `app._notifications` (Textual's, expired ones dropped) over `app.screen`."""
        app = self._app()
        if app is None:
            return
        notifications = list(app._notifications)
        try:
            screen = app.screen
        except ScreenStackError:  # no screen yet: the first one shows them as it resumes
            return
        before = None if self._screen is None else self._screen()
        if before is not None and before is not screen:
            self._set(before, None)
        self._screen = weakref.ref(screen)
        overlay = Overlay(notifications, palette_of(app), screen) if notifications else None
        self._set(screen, overlay)
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if notifications:
            soonest = min(n.time_left for n in notifications)
            self._timer = app.set_timer(max(soonest, 0.0) + 0.01, self.show, name="notices")

    @staticmethod
    def _set(screen: Screen[Any], overlay: Overlay | None) -> None:
        """Give `screen`'s compositor `overlay` and repaint the rows of the old and new."""
        compositor = screen._compositor
        before: Overlay | None = getattr(compositor, "_perudo_overlay", None)
        if before is None and overlay is None:
            return
        compositor._perudo_overlay = overlay  # type: ignore[attr-defined]
        width, height = compositor.size
        for drawn in (before, overlay):
            if drawn is not None and (rows := drawn.rows(width, height)):
                compositor._dirty_regions.add(Region(0, rows.start, width, len(rows)))
        if screen.is_attached:
            screen._dirty_widgets.add(screen)
            screen.check_idle()


class DrawnNotices:
    """Mix into an `App` (before it) to draw its notifications over the screen (a
    `NoticeBoard`) instead of as Textual's toasts: no screen composes a toast rack; whether
    notices are shown at all is `notices_shown` (`App.run_test(notifications=...)` sets it,
    as it set Textual's `_disable_notifications`)."""

    notices_shown = True

    @property
    def _disable_notifications(self) -> bool:
        """True for Textual, always: no toast rack, no toast layer."""
        return True

    @_disable_notifications.setter
    def _disable_notifications(self, disabled: bool) -> None:
        self.notices_shown = not disabled

    @property
    def notice_board(self) -> NoticeBoard:
        """The app's `NoticeBoard`, made on first use."""
        board: NoticeBoard | None = self.__dict__.get("_notice_board")
        if board is None:
            board = self.__dict__["_notice_board"] = NoticeBoard(self)  # type: ignore[arg-type]
        return board

    async def on_event(self, event: events.Event) -> None:
        """A click on a notice dismisses it, as a click on a toast did; what is beneath
        gets neither the press nor a click."""
        if (
            isinstance(event, events.MouseDown)
            and not event.is_forwarded
            and self._dismiss_notice_at(int(event.x), int(event.y))
        ):
            cast("App[Any]", self)._mouse_down_widget = None  # the release: no click
            return
        await super().on_event(event)  # type: ignore[misc]

    def _dismiss_notice_at(self, x: int, y: int) -> bool:
        """Dismiss the notice drawn over cell (`x`, `y`) of the current screen, if any."""
        app = cast("App[Any]", self)
        try:
            compositor = app.screen._compositor
        except ScreenStackError:  # no screen
            return False
        overlay: Overlay | None = getattr(compositor, "_perudo_overlay", None)
        notification = None if overlay is None else overlay.at(*compositor.size, x, y)
        if notification is None:
            return False
        app._unnotify(notification)
        return True

    def _refresh_notifications(self) -> None:
        """Textual's own, but the notifications are drawn over the current screen's lines,
        not mounted as toasts: no widget made and no layout as a table chat line comes and
        goes; the rows it covers are repainted in the next frame."""
        if self.notices_shown:
            self.notice_board.show()
