"""Make a Textual app safe to run as one of many sessions inside the server process.

Textual assumes one app owns the process: it detects colours from the server's
environment, swaps the process-wide `sys.stdout`/`sys.stderr` while it runs and
prints crash reports to the server's stderr. These helpers undo each assumption
for one app instance, leaving apps run any other way (tests, `textual run`) as
Textual made them.

Many apps in one process must also each cost it little: `install_drawing_savers` is the one
place every drawing patch of the server is installed from (CSS parsed once per process is
here; what a frame draws is in `repaints`, what drawing allocates in `garbage`, and the
other patches in their own modules).
"""

from __future__ import annotations

import contextlib
import io
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from typing import Any, TextIO

import textual.app
from rich.color import ColorSystem
from rich.console import Console
from textual.css.stylesheet import Stylesheet

from perudo_ssh.ssh.garbage import (
    install_acyclic_layout,
    install_lazy_strip_caches,
    install_reused_component_nodes,
)
from perudo_ssh.ssh.release import install_released_widgets
from perudo_ssh.ssh.repaints import (
    install_front_renders,
    install_kept_dirty_widgets,
    install_marked_full_map,
    install_quiet_background,
    install_quiet_focus,
    install_quiet_resume,
)
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


def install_drawing_savers() -> None:
    """Every patch that makes many apps in one process draw for less (issue 10): CSS
    parsed once (above) and each node's rules worked out once for all apps (`restyles`),
    strips' caches made on use (`garbage`), no whole-screen repaint on a change of focus or
    under a dialog, frames drawn from the widgets seen (`repaints`), component nodes made on
    demand and layouts freed without the collector (`garbage`);
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
