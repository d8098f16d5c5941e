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

__all__ = ["DEFAULT_LIMITS", "MINIMUM", "Limits", "limit_error", "startups"]


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
    max_startups: str = "10:30:100"
    """SSH connections not logged in yet, in all, as OpenSSH's `MaxStartups start:rate:full`
    (issue 11): past `start` of them a new one is refused with a probability of `rate` %,
    rising linearly to 100 % at `full` (random early drop). Our difference: a connection from
    an address with none not logged in yet is never refused before `full`, and at `full` it
    takes the place of the oldest one of the addresses holding the most (a few addresses
    cannot keep every other out). "0": no limit."""
    connection_rate_per_address: float = 2.0
    """New SSH connections per second one client IP address (an IPv6 address's /64) may
    open, sustained, after a burst of `connection_burst_per_address`; one more is closed as
    soon as it opens, before the key exchange (which costs the server CPU); 0: no limit."""
    connection_burst_per_address: int = 20
    """New SSH connections one address may open at once before `connection_rate_per_address`
    holds it back; at least 1."""
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
    input_events_per_second: int = 20
    """Input events (keys, mouse clicks, wheel and drag reports, pastes: what costs the app a
    screen change) given to one session's app per second, sustained, after a burst of
    `input_events_burst` (issue 11: a session's CPU budget). Past it its input waits, held
    back (typing, key repeat and a fast mouse are well within it); at least 1."""
    input_events_burst: int = 60
    """Input events given to an app at once above `input_events_per_second`; at least 1."""
    input_screens_per_second: float = 1.0
    """The rest of a session's CPU budget, counted in what its screen costs to draw: while
    its app has drawn, in answer to its input (within a second of it), more than this many
    whole screens a second (its terminal's cells; after a burst of 8, a debt of 2 at most),
    its input waits. Opening the help draws a whole screen (~75 ms of CPU here, with its
    text), closing it 0.4; a bid and the table's answer about 0.3; at least 0.1."""
    input_flood_seconds: float = 30.0
    """Seconds a session's input may stay held back by `input_events_per_second` without a
    break before the session is ended as a flood, saying why; 0: never."""
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


_FLOATS: Final = frozenset(
    {
        "login_timeout",
        "keepalive_interval",
        "lobby_idle_timeout",
        "connection_rate_per_address",
        "input_flood_seconds",
        "input_screens_per_second",
    }
)
_UNITS: Final = {
    "connection_rate_per_address": "connections a second",
    "input_screens_per_second": "screens a second",
}
MINIMUM: Final[dict[str, float]] = {"input_screens_per_second": 0.1} | {
    name: 1
    for name in (
        "keepalive_count_max",
        "connection_burst_per_address",
        "input_bytes_per_second",
        "input_events_per_second",
        "input_events_burst",
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
    if name == "max_startups":
        if not isinstance(value, str) or startups(value) is None:
            return (
                f'max_startups must be "start:rate:full" (whole numbers, start <= full,'
                f' rate at most 100) or "0", not {value!r}'
            )
        return None
    if name in _FLOATS:
        unit = _UNITS.get(name, "seconds")
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= least:
            if unit != "seconds":
                return f"{name} must be a number ({unit}) of at least {least}, not {value!r}"
            return f"{name} must be a number of seconds of at least {least}, not {value!r}"
        if value == float("inf"):
            return f"{name} must be a finite number of {unit} (0: no limit), not {value!r}"
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        return f"{name} must be a whole number of at least {least}, not {value!r}"
    return None


def startups(value: str) -> tuple[int, int, int] | None:
    """`max_startups` as (start, rate %, full): "10:30:100" is (10, 30, 100), a single
    number N is (N, 100, N) as in OpenSSH, "0" is (0, 0, 0), no limit; None when `value` is
    not such a setting."""
    parts = value.split(":")
    if len(parts) not in (1, 3) or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    if len(parts) == 1:
        n = int(parts[0])
        return (0, 0, 0) if n == 0 else (n, 100, n)
    start, rate, full = (int(p) for p in parts)
    if not (1 <= start <= full and rate <= 100):
        return None
    return start, rate, full


DEFAULT_LIMITS: Final = Limits()
"""Every limit at its default (what a server gets when given none)."""
