"""Who connected, and with what terminal: the input to the app factory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App


@dataclass(frozen=True)
class Login:
    """One SSH session's identity and terminal, as given to the app factory."""

    username: str
    """Raw SSH user name (any Unicode; untrusted)."""
    name: str
    """`clean_name(username)`: display name, not yet unique."""
    fingerprint: str | None
    """`SHA256:...` of the public key the client proved it holds; None for guests."""
    peer: str
    """Client address, `ip:port` (`[ip]:port` for IPv6)."""
    term: str
    """TERM from the PTY request."""
    colorterm: str | None
    """COLORTERM, if the client sent it."""
    lang: str | None
    """LC_ALL, else LANG, if the client sent either."""
    size: tuple[int, int]
    """Initial terminal (width, height) in cells."""


AppFactory = Callable[[Login], "App[Any]"]
"""Builds the Textual app for one session. Called once per PTY session."""
