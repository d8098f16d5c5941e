"""Whether a screen's widgets are there to be drawn on when its `on_mount` runs."""

from __future__ import annotations

from textual.screen import Screen


def composed(screen: Screen) -> bool:
    """True when `screen`'s widgets were mounted; False when it was closed before they were.

    Textual still sends `Mount` to a screen that is closed while it opens (the app exits
    because the client left, or the screen is popped right after it was pushed), but then
    mounts none of its widgets: an `on_mount` that queries them raises `NoMatches`. Such a
    screen is no longer attached (the app is exiting) or no longer displayed (popped)."""
    return screen.is_attached and screen.display
