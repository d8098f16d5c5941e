"""Make a Textual app safe to run as one of many sessions inside the server process.

Textual assumes one app owns the process: it detects colours from the server's
environment, swaps the process-wide `sys.stdout`/`sys.stderr` while it runs and
prints crash reports to the server's stderr. These helpers undo each assumption
for one app instance, leaving apps run any other way (tests, `textual run`) as
Textual made them.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from typing import Any, TextIO

import textual.app
from rich.color import ColorSystem
from rich.console import Console

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
