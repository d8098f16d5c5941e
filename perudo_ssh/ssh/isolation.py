"""Make a Textual app safe to run as one of many sessions inside the server process.

Textual assumes one app owns the process: it detects colours from the server's
environment, swaps the process-wide `sys.stdout`/`sys.stderr` while it runs and
prints crash reports to the server's stderr. These helpers undo each assumption
for one app instance, leaving apps run any other way (tests, `textual run`) as
Textual made them.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
import textwrap
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager
from typing import Any, TextIO

import textual.app
from rich.color import ColorSystem
from rich.console import Console
from textual import events
from textual._compositor import Compositor
from textual.cache import FIFOCache
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.geometry import Region, Size
from textual.screen import Screen
from textual.strip import Strip

from perudo_ssh.ssh.release import install_released_widgets
from perudo_ssh.ssh.restyles import install_shared_restyles
from perudo_ssh.ssh.slim import install_slim_pumps
from perudo_ssh.ssh.speedups import install_speedups

_TRUECOLOR_TERMS = ("-direct", "truecolor", "24bit")


def color_system_for(term: str, colorterm: str | None) -> ColorSystem:
    """Colour depth for a client, from the `TERM` and `COLORTERM` it sent.

    `COLORTERM=truecolor|24bit` or a `*-direct` TERM give 24-bit colour, a TERM
    naming 256 colours gives 256, anything else the 16 standard colours.
    """
    term = term.lower()
    if (colorterm or "").lower() in ("truecolor", "24bit") or term.endswith(_TRUECOLOR_TERMS):
        return ColorSystem.TRUECOLOR
    if "256" in term:
        return ColorSystem.EIGHT_BIT
    return ColorSystem.STANDARD


class _LeaveStreamsAlone(io.TextIOBase):
    """Stands in for an app's print capture to mark it as not to be redirected.

    Anything written to it (nothing should be) is discarded.
    """

    def write(self, text: str) -> int:
        return len(text)


_LEAVE_STREAMS_ALONE = _LeaveStreamsAlone()


def _guarded(redirect: Callable[[Any], ContextManager[Any]]) -> Callable[[Any], Any]:
    def redirect_unless_session(target: TextIO) -> ContextManager[Any]:
        if target is _LEAVE_STREAMS_ALONE:
            return contextlib.nullcontext(target)
        return redirect(target)

    redirect_unless_session.perudo_guarded = True  # type: ignore[attr-defined]
    return redirect_unless_session


def install_redirect_guard() -> None:
    """Let session apps run without swapping the process-wide stdout/stderr.

    `App._process_messages` wraps the whole run in `redirect_stdout(self._capture_stdout)`
    (and stderr). With many apps ending out of order, `sys.stdout` is left pointing
    at a dead app: server output vanishes and the app is never freed. Textual looks
    the two context managers up in `textual.app` at call time, so this wraps them
    with versions that do nothing for apps prepared by `isolate_app` and behave as
    before for every other app. Idempotent.
    """
    for name in ("redirect_stdout", "redirect_stderr"):
        current = getattr(textual.app, name)
        if not getattr(current, "perudo_guarded", False):
            setattr(textual.app, name, _guarded(current))


SHARED_CSS_ENTRIES = 256
"""Parsed stylesheets kept by `install_shared_css`: one for each widget class's DEFAULT_CSS
and the app's file, per theme (about 60 in all with one theme)."""


def install_shared_css() -> None:
    """Parse each piece of CSS once per process, not once per app (issue 10).

    Every app parses the same `perudo.tcss` and the DEFAULT_CSS of every widget class it uses
    into its own `Stylesheet` (Textual caches parsed rules per stylesheet, and each app has
    its own): ~30 % of a session's first screen. This keeps one process-wide cache of
    `Stylesheet._parse_rules`, keyed as Textual's own per-stylesheet cache plus the CSS
    variables the rules were parsed with (the theme), so apps of one theme share the same
    parsed `RuleSet`s; Textual only reads them once parsed. At most `SHARED_CSS_ENTRIES`
    kept, oldest dropped. Idempotent."""
    current = Stylesheet._parse_rules
    if getattr(current, "perudo_shared", False):
        return
    shared: OrderedDict[tuple[object, ...], list[Any]] = OrderedDict()

    def shared_parse_rules(
        self: Stylesheet,
        css: str,
        read_from: Any,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[Any]:
        key = (css, read_from, is_default_rules, tie_breaker, scope, *self._variables.items())
        rules = shared.get(key)
        if rules is None:
            rules = current(self, css, read_from, is_default_rules, tie_breaker, scope)
            shared[key] = rules
            if len(shared) > SHARED_CSS_ENTRIES:
                shared.popitem(last=False)
        return rules

    shared_parse_rules.perudo_shared = True  # type: ignore[attr-defined]
    Stylesheet._parse_rules = shared_parse_rules  # type: ignore[method-assign]


STRIP_CACHES = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}
"""The memo caches of a Textual `Strip` (one line of a screen) and their sizes, as Textual
makes them (textual/strip.py)."""


def _lazy_strip_init(self: Strip, segments: Any, cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


class _StripCache(FIFOCache[Any, Any]):
    """A strip's memo cache that does not keep the strip itself: Textual's strips memoise a
    result that is the strip (`divide` with no cut inside it gives `[self]`, a length or a
    crop it already has gives `self`), and each such strip then referred to itself, a cycle
    only the garbage collector could free - with the strip's segments and styles (most of
    the cyclic garbage a probe of the server found, issue 10). Those results are the
    strip's fast paths, so they are not kept."""

    __slots__ = ["_owner"]

    def __init__(self, maxsize: int, owner: Strip) -> None:
        super().__init__(maxsize)
        self._owner = id(owner)

    def set(self, key: Any, value: Any) -> None:
        owner = self._owner
        if id(value) == owner or (
            isinstance(value, list) and any(id(item) == owner for item in value)
        ):
            return
        super().set(key, value)

    __setitem__ = set


def _strip_cache(self: Strip, name: str) -> Any:
    size = STRIP_CACHES.get(name)
    if size is None:
        raise AttributeError(name)
    cache = _StripCache(size, self)
    setattr(self, name, cache)
    return cache


def install_lazy_strip_caches() -> None:
    """Make each `Strip`'s memo caches when first used, not when the strip is made (issue 10).

    Textual makes seven `FIFOCache`s (fourteen objects) for every `Strip`, and a frame makes a
    new strip for every line of every widget it crops or styles, nearly all of them never
    asked twice: a profile of the server at 100 sessions put ~15 % of its CPU in making them
    and in collecting them. The caches are `__slots__`, so an unset one falls through to
    `__getattr__`, which makes it then, of the size Textual gives it (`STRIP_CACHES`); what a
    strip does is unchanged. Idempotent."""
    if getattr(Strip.__init__, "perudo_lazy", False):
        return
    _lazy_strip_init.perudo_lazy = True  # type: ignore[attr-defined]
    Strip.__init__ = _lazy_strip_init  # type: ignore[method-assign]
    Strip.__getattr__ = _strip_cache  # type: ignore[attr-defined]


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


def install_reused_component_nodes() -> None:
    """Style a widget's component classes on virtual nodes made when first asked for, and
    restyle the same nodes each time (issue 10).

    To style a widget's component classes (an Input's cursor and placeholder, a table's
    cursor and rows), Textual's stylesheet makes a new `DOMNode` for each component on every
    restyle of the widget - a change of focus, a class toggled - applies the stylesheet to
    it and drops the previous ones: each made of a dozen objects (styles, node list,
    bindings, weak sets) in reference cycles, a quarter of the cyclic garbage a probe of the
    server found at 100 sessions. Here each widget keeps its component nodes and the
    stylesheet is applied to them again; the widget is refreshed when a component's rules
    changed, as Textual does.

    And a node is made only for a component the widget's drawing asks for
    (`get_component_styles`): a virtual node is ~6 KB, a session at a table held 27 of
    them (~0.17 MB of its ~2.1), and Textual styled all of every widget's components on
    every restyle, though a table list draws with 4 of its 10 and an input 2 of its 5. A
    component never asked for is never drawn, so it needs no refresh when its rules change;
    one asked for is styled then, from the widget's styles as they are. Idempotent."""
    current = Stylesheet._process_component_classes
    if getattr(current, "perudo_reuse", False):
        return
    textual_component_styles = DOMNode.get_component_styles

    def process_component_classes(self: Stylesheet, node: DOMNode) -> None:
        # only the nodes made (a class's components are fixed, so each is still one)
        kept: dict[str, DOMNode] = node.__dict__.get("_perudo_components", {})
        changed = False
        for component in sorted(kept):
            virtual = kept[component]
            rules = virtual.styles.get_rules()
            self.apply(virtual, animate=False)
            changed = changed or rules != virtual.styles.get_rules()
        if changed:
            node.refresh()

    def get_component_styles(self: DOMNode, *names: str) -> Any:
        styles = self._component_styles
        missing = [name for name in names if name not in styles]
        if missing:
            component_classes = self._get_component_classes()
            kept = self.__dict__.setdefault("_perudo_components", {})
            stylesheet = self.app.stylesheet
            for name in missing:
                if name in component_classes:  # else Textual's KeyError below
                    virtual = DOMNode(classes=name)
                    virtual._attach(self)
                    stylesheet.apply(virtual, animate=False)
                    kept[name] = virtual
                    styles[name] = virtual.styles
        return textual_component_styles(self, *names)

    process_component_classes.perudo_reuse = True  # type: ignore[attr-defined]
    Stylesheet._process_component_classes = process_component_classes  # type: ignore[method-assign]
    DOMNode.get_component_styles = get_component_styles  # type: ignore[method-assign]


LAYOUT_END = "    widgets -= invisible_widgets\n    return map, widgets\n"
"""How Textual's `Compositor._arrange_root` ends (textual 8.2, its source dedented) - what
`install_acyclic_layout` looks for."""


def install_acyclic_layout() -> bool:
    """Let a layout's map be freed by reference counting (issue 10). Returns whether it
    could be installed (False, changing nothing, if Textual's layout is not the one known).

    Textual's `Compositor._arrange_root` places widgets with a nested function that calls
    itself (`add_widget`), so the function refers to itself through its closure cell: a
    cycle holding everything it closed over - the map of every widget's region, order and
    clip - that only the collector frees, one for every layout of every screen (after the
    strips, most of the cyclic garbage a probe of the server found at 100 sessions). This
    makes the same function with one statement more before its return, `del add_widget`,
    which empties the cell and so breaks the cycle; it is compiled from Textual's own source,
    and only if that source ends as `LAYOUT_END`. Idempotent."""
    current = Compositor._arrange_root
    if getattr(current, "perudo_acyclic", False):
        return True
    try:
        lines, first = inspect.getsourcelines(current)
    except (OSError, TypeError):
        return False
    source = textwrap.dedent("".join(lines))
    end = LAYOUT_END
    if (
        not source.endswith(end)
        or source.count("return map, widgets") != 1
        or "super(" in source
        or "__class__" in source
    ):
        return False
    source = source[: -len(end)] + end.replace("return map", "del add_widget\n    return map")
    source = "\n" * (first - 1) + source  # tracebacks give the lines of Textual's file
    namespace: dict[str, Any] = {}
    module = sys.modules[Compositor.__module__]
    exec(compile(source, inspect.getfile(current), "exec"), vars(module), namespace)
    arrange = namespace[current.__name__]
    arrange.__qualname__ = current.__qualname__
    arrange.perudo_acyclic = True
    arrange.perudo_original = current
    Compositor._arrange_root = arrange  # type: ignore[method-assign]
    return True


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


def install_drawing_savers() -> None:
    """Everything above that makes many apps in one process draw for less (issue 10): CSS
    parsed once and each node's rules worked out once for all apps (`restyles`), strips'
    caches made on use, no whole-screen repaint on a change of focus or under a dialog,
    frames drawn from the widgets seen, component nodes made on demand;
    handlers looked up from plans (`speedups`), pumps' queues, events and timers made on use
    (`slim`), scrollbars drawn once for the process (`screens.shared`), ended widgets and
    emptied caches freed at once rather than by the collector (`release`). What the screens
    show is unchanged (tests/frames.py compares every frame with a whole repaint).
    Idempotent."""
    install_shared_css()
    install_lazy_strip_caches()
    install_quiet_focus()
    install_quiet_resume()
    install_quiet_background()
    install_kept_dirty_widgets()
    install_front_renders()
    install_reused_component_nodes()
    install_shared_restyles()
    install_acyclic_layout()
    install_marked_full_map()
    install_speedups()
    install_slim_pumps()
    install_released_widgets()
    from screens.shared import install_shared_scrollbars  # the screens' own sharing

    install_shared_scrollbars()


def isolate_app(app: textual.app.App[Any], color_system: ColorSystem) -> None:
    """Prepare `app` (not yet running) to run as one session among many.

    Sets its colour depth, keeps it from redirecting the process's stdout/stderr
    (requires `install_redirect_guard`), and sends its crash report to a private
    buffer instead of the server's stderr (the session logs the exception itself).
    """
    # Rich has no public setter; Textual reads `console._color_system` when it paints.
    app.console._color_system = color_system
    app._capture_stdout = _LEAVE_STREAMS_ALONE  # type: ignore[assignment]
    app._capture_stderr = _LEAVE_STREAMS_ALONE  # type: ignore[assignment]
    app.error_console = Console(file=io.StringIO(), markup=False, highlight=False)
