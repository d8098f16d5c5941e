"""The server's limits (issue 5, item 4): every one a setting with a documented default.

`Limits()` holds the defaults; `perudo.toml`'s `[limits]` table overrides any of them
(`perudo_ssh.config`), and the server hands one `Limits` to the SSH layer
(`perudo_ssh.ssh.server.start_server`), the lobby (`Lobby(outbox_size=...)`) and every app
(`screens.app.make_app`). A session or connection count of 0 means no limit, a timeout of 0
never; the other settings must be at least 1 (`MINIMUM`).

Pure data: no I/O, nothing imported beyond msgspec.
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = ["DEFAULT_LIMITS", "MINIMUM", "Limits", "limit_error"]


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """How much one server takes, and from whom. Units are in each field's name or doc.

    Raises `ValueError` (the message names the setting) for a value of the wrong type or
    below its minimum (`limit_error`)."""

    max_sessions: int = 200
    """App sessions (players on a screen) on the server at once; 0: no limit."""
    max_sessions_per_address: int = 10
    """App sessions from one client IP address (an IPv6 address's /64) at once; 0: no limit."""
    max_sessions_per_key: int = 4
    """App sessions with one SSH key at once (guests: by address only); 0: no limit."""
    max_connections_per_address: int = 20
    """SSH connections from one client IP address (an IPv6 address's /64) open at once,
    logged in or not, with sessions or not; one more is closed as soon as it opens, before
    it logs in; 0: no limit."""
    login_timeout: float = 30.0
    """Seconds a client has to finish logging in before it is disconnected, and that a
    logged-in connection may stay without a session (a game or a command) open, after it
    logged in or after its last session closed, before it is closed; 0: never."""
    keepalive_interval: float = 30.0
    """Seconds of silence from a client before the server sends it an SSH keepalive; 0: none."""
    keepalive_count_max: int = 3
    """Keepalives left unanswered before a vanished client is disconnected (at least 1)."""
    lobby_idle_timeout: float = 1800.0
    """Seconds a session may stay in the lobby with no key or mouse input before it is ended
    (with a farewell saying why); 0: never. At a table, as a player or a spectator, it is
    never ended for being idle."""
    input_bytes_per_second: int = 16384
    """Characters of input parsed per second and session, sustained (a paste arrives at once
    up to `max(131072, this)`); at least 1."""
    max_paste: int = 65536
    """Longest bracketed paste passed to the app, in characters; the rest is dropped unread."""
    output_queue_events: int = 256
    """Lobby events waiting in one session's outbox before the session is dropped as too
    slow (its seat then follows the table's disconnect rules); at least 1."""
    output_buffer_bytes: int = 1048576
    """Bytes of SSH output a client has not read before it is dropped; at least 1 (a full
    screen of a big terminal is about 250 kB)."""

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            error = limit_error(name, getattr(self, name))
            if error is not None:
                raise ValueError(error)


_FLOATS: Final = frozenset({"login_timeout", "keepalive_interval", "lobby_idle_timeout"})
MINIMUM: Final[dict[str, int]] = {
    name: 1
    for name in (
        "keepalive_count_max",
        "input_bytes_per_second",
        "output_queue_events",
        "output_buffer_bytes",
    )
}
"""The settings that must be at least 1; every other one at least 0."""


def limit_error(name: str, value: object) -> str | None:
    """What is wrong with `value` for the setting `name` of `Limits`, as one line naming it
    (`max_paste must be a whole number of at least 0, not -1`); None when it is fine. A
    whole number is fine for a number of seconds; a bool never is."""
    if name not in Limits.__struct_fields__:
        known = ", ".join(Limits.__struct_fields__)
        return f"unknown setting {name!r} (known: {known})"
    least = MINIMUM.get(name, 0)
    if name in _FLOATS:
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= least:
            return f"{name} must be a number of seconds of at least {least}, not {value!r}"
        if value == float("inf"):
            return f"{name} must be a finite number of seconds (0: never), not {value!r}"
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        return f"{name} must be a whole number of at least {least}, not {value!r}"
    return None


DEFAULT_LIMITS: Final = Limits()
"""Every limit at its default (what a server gets when given none)."""
