"""Who connected, and with what terminal: the input to the app factory."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

    from perudo_ssh.records import Account


@dataclass(frozen=True)
class Login:
    """One SSH session's identity and terminal, as given to the app factory."""

    username: str
    """Raw SSH user name (any Unicode; untrusted)."""
    name: str
    """The player name asked of the lobby (not yet unique there). With a store: the key's
    account name, or `guest-N` for a guest; without one, `clean_name(username)`."""
    fingerprint: str | None
    """`SHA256:...` of the public key the client proved it holds; None for guests."""
    peer: str
    """Client address, `ip:port` (`[ip]:port` for IPv6)."""
    term: str
    """TERM from the PTY request."""
    colorterm: str | None
    """COLORTERM, if the client sent it."""
    lang: str | None
    """The first of LC_ALL, LC_MESSAGES, LANG the client sent (non-empty), else None."""
    size: tuple[int, int]
    """Initial terminal (width, height) in cells."""
    account: Account | None = None
    """The account the key signs in as (`perudo_ssh.store`); None for a guest, or when the
    server runs without a store."""
    notice: str | None = None
    """Something to tell the player on arrival (their name was taken, they are a guest): an
    English message id (`N_`) with `notice_args`, translated by the app."""
    notice_args: Mapping[str, str] = field(default_factory=dict)
    """The named fields of `notice`."""


AppFactory = Callable[[Login], "App[Any]"]
"""Builds the Textual app for one session. Called once per PTY session."""
