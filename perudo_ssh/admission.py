"""How many app sessions the server holds, in total, per client address and per key (issue 5,
item 4): one `SessionCounts` is shared by every connection of a server. And how many SSH
connections it holds per client address: one `Connections` is shared by them too, and keeps
them so that a stopping server can close those still open.

A session asks to be admitted when it is about to start its app; past a limit it is refused
with a `SessionRefusal` (an `N_` message the SSH layer translates for that client, and a
reason for the log), otherwise it holds an `Admission` until it ends, however it ends, and
then releases it. An IPv6 address is counted by its /64, which one client usually holds
whole. Guests (no key) are counted by address only.

With several front processes (issue 12) each front counts its own sessions and, once they
pass its own count, asks the lobby, which counts the sessions of every front
(`SessionCounts.shared`, `perudo_ssh.lobby.host.LobbyHost`): the limits hold over all fronts.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import time
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from perudo_ssh.i18n import N_
from perudo_ssh.limits import Limits, startups

__all__ = [
    "Admission",
    "Connection",
    "ConnectionRefusal",
    "Connections",
    "SessionCounts",
    "SessionRefusal",
    "SharedCheck",
    "address_group",
]

SERVER_FULL = N_("perudo-ssh: the server is full (limit: {limit}); try again later.")
ADDRESS_FULL = N_(
    "perudo-ssh: too many sessions from your address (limit: {limit}); close one and try again."
)
KEY_FULL = N_(
    "perudo-ssh: too many sessions with this key (limit: {limit}); close one and try again."
)


def address_group(address: str | None) -> str | None:
    """What sessions from IP `address` are counted against: the address itself, an IPv6
    address's /64 network; None for an unknown address (not counted per address)."""
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


@dataclass(frozen=True)
class SessionRefusal:
    """Why a session is not admitted: `message` (an `N_` id) with `args` for the client,
    and `reason` for the log: "server_full", "address_full" or "key_full"."""

    reason: str
    message: str
    args: Mapping[str, object] = field(default_factory=dict)


class Admission:
    """One admitted session's place in the counts; `release()` gives it back (once: later
    calls do nothing)."""

    def __init__(self, counts: SessionCounts, address: str | None, key: str | None) -> None:
        self._counts: SessionCounts | None = counts
        self._address = address
        self._key = key

    def release(self) -> None:
        """Give the place back (when the session has ended)."""
        counts, self._counts = self._counts, None
        if counts is not None:
            counts._release(self._address, self._key)


SharedCheck = Callable[[str | None, str | None], Awaitable["SessionRefusal | None"]]
"""`check(address, fingerprint)`: the limits over every front of a server (issue 12), asked
once a session passed its own front's count: None (admitted there too) or the refusal."""


class SessionCounts:
    """The live app sessions of one server, against the session limits of `limits`
    (`max_sessions`, `max_sessions_per_address`, `max_sessions_per_key`; 0: no limit).

    `shared`, in a front process, is asked after `admit` (by the SSH layer, before the app
    starts) whether the server as a whole admits the session too."""

    def __init__(self, limits: Limits, shared: SharedCheck | None = None) -> None:
        self.limits = limits
        self.shared = shared
        self.total = 0
        self._by_address: Counter[str] = Counter()
        self._by_key: Counter[str] = Counter()

    def of_address(self, address: str | None) -> int:
        """Live sessions counted against `address` (its /64 for IPv6)."""
        group = address_group(address)
        return self._by_address[group] if group is not None else 0

    def of_key(self, fingerprint: str | None) -> int:
        """Live sessions with key `fingerprint` (0 for a guest)."""
        return self._by_key[fingerprint] if fingerprint is not None else 0

    @property
    def tracked(self) -> int:
        """Addresses and keys with live sessions: what the counts hold in memory."""
        return len(self._by_address) + len(self._by_key)

    def admit(self, address: str | None, fingerprint: str | None) -> Admission | SessionRefusal:
        """Count one more session from IP `address` with key `fingerprint` (None: a guest),
        or say which limit it would pass (the total first, then the address, then the key)."""
        limits = self.limits
        group = address_group(address)
        if limits.max_sessions and self.total >= limits.max_sessions:
            return SessionRefusal("server_full", SERVER_FULL, {"limit": limits.max_sessions})
        most = limits.max_sessions_per_address
        if most and group is not None and self._by_address[group] >= most:
            return SessionRefusal("address_full", ADDRESS_FULL, {"limit": most})
        most = limits.max_sessions_per_key
        if most and fingerprint is not None and self._by_key[fingerprint] >= most:
            return SessionRefusal("key_full", KEY_FULL, {"limit": most})
        return self._counted(group, fingerprint)

    def count(self, address: str | None, fingerprint: str | None) -> Admission:
        """Count one more session whatever the limits (one admitted before, attached again to
        a restarted lobby)."""
        return self._counted(address_group(address), fingerprint)

    def _counted(self, group: str | None, fingerprint: str | None) -> Admission:
        self.total += 1
        if group is not None:
            self._by_address[group] += 1
        if fingerprint is not None:
            self._by_key[fingerprint] += 1
        return Admission(self, group, fingerprint)

    def _release(self, group: str | None, fingerprint: str | None) -> None:
        self.total -= 1
        for counter, name in ((self._by_address, group), (self._by_key, fingerprint)):
            if name is not None:
                counter[name] -= 1
                if counter[name] <= 0:
                    del counter[name]  # no growth with the number of addresses ever seen


CONNECTIONS_FULL = "too many connections from your address (limit: {limit})"
"""Why a connection past `Limits.max_connections_per_address` is closed (English: the
client's language is not known before it logs in; OpenSSH prints it)."""
CONNECTIONS_TOO_FAST = "too many new connections from your address; wait a moment"
"""Why a connection past `Limits.connection_rate_per_address` is closed."""
STARTUPS_FULL = "the server is busy with logins; try again in a moment"
"""Why a connection is refused past `Limits.max_startups`, or closed to make room."""


@dataclass(frozen=True)
class ConnectionRefusal:
    """Why a connection is not admitted: `reason` for the log ("address_full",
    "address_rate", "startups"), `message` for the client's SSH disconnect, `limit` the
    setting's value."""

    reason: str
    message: str
    limit: int | float | str


_BUCKETS_KEPT = 4096
"""Addresses whose new-connection rate is tracked before the full buckets are forgotten."""


def _close(conn: Connection) -> None:
    conn.close()


class Connection(Protocol):
    """What `Connections` needs of a connection (an `asyncssh.SSHServerConnection`)."""

    def close(self) -> None:
        """Close it cleanly (asyncssh: a disconnect message, then the socket)."""

    async def wait_closed(self) -> None:
        """Return once it is closed."""


class Connections:
    """The open SSH connections of one server, counted by client address (an IPv6 address's
    /64, `address_group`) against `limits.max_connections_per_address` (0: no limit).

    A connection is `admit`ted when it opens and `release`d when it closes (both on the
    event loop). The connections are held weakly: one the SSH library dropped without a
    `release` is not kept alive here, and its place is given back when it is freed. A
    stopping server closes those still open with `close_all` and waits for them with
    `wait_closed`."""

    def __init__(
        self,
        limits: Limits,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.limits = limits
        # id(connection) -> (a weak reference to it, the address group it is counted in)
        self._open: dict[int, tuple[weakref.ref[Connection], str | None]] = {}
        self._by_address: Counter[str] = Counter()
        # those not logged in yet (`max_startups`), oldest first: id -> address group
        self._startups: dict[int, str | None] = {}
        self._startups_by_address: Counter[str | None] = Counter()
        # address group -> (tokens, when counted), `connection_rate_per_address`
        self._buckets: dict[str, tuple[float, float]] = {}
        self._clock = clock
        self._rng = rng or random.Random()
        self._startup_limits = startups(limits.max_startups) or (0, 0, 0)

    @property
    def starting(self) -> int:
        """Connections admitted and not logged in yet (`logged_in`, `release`)."""
        return len(self._startups)

    def __len__(self) -> int:
        """Connections open (admitted, not released yet)."""
        return len(self._open)

    def of_address(self, address: str | None) -> int:
        """Open connections counted against `address` (its /64 for IPv6)."""
        group = address_group(address)
        return self._by_address[group] if group is not None else 0

    @property
    def tracked(self) -> int:
        """Addresses with open connections: what the counts hold in memory."""
        return len(self._by_address)

    def admit(
        self,
        conn: Connection,
        address: str | None,
        evict: Callable[[Connection], None] | None = None,
    ) -> ConnectionRefusal | None:
        """Count `conn`, just opened from IP `address` (None: unknown, not counted per
        address), as not logged in yet; None when admitted. Refused, counting nothing: past
        `max_connections_per_address` from its address ("address_full"), past its address's
        `connection_rate_per_address` ("address_rate": the refusal uses up no token), or by
        `max_startups` ("startups"). To make room at `full` for the first waiting connection
        of an address, the oldest waiting connection of the addresses holding the most is
        given to `evict` (default: closed) and stops being counted as starting. Admitting one
        already open does nothing."""
        key = id(conn)
        if key in self._open:
            return None
        group = address_group(address)
        limits = self.limits
        most = limits.max_connections_per_address
        if most and group is not None and self._by_address[group] >= most:
            return ConnectionRefusal("address_full", CONNECTIONS_FULL.format(limit=most), most)
        if group is not None and not self._take_token(group):
            rate = limits.connection_rate_per_address
            return ConnectionRefusal("address_rate", CONNECTIONS_TOO_FAST, rate)
        if not self._make_startup_room(group, evict):
            return ConnectionRefusal("startups", STARTUPS_FULL, limits.max_startups)
        forget = self._forget

        def freed(_: weakref.ref[Connection]) -> None:
            forget(key)

        self._open[key] = (weakref.ref(conn, freed), group)
        if group is not None:
            self._by_address[group] += 1
        if self._startup_limits[2]:
            self._startups[key] = group
            self._startups_by_address[group] += 1
        return None

    def logged_in(self, conn: Connection) -> None:
        """`conn` has logged in: no longer counted against `max_startups`."""
        self._end_startup(id(conn))

    def _end_startup(self, key: int) -> None:
        if key in self._startups:
            group = self._startups.pop(key)
            self._startups_by_address[group] -= 1
            if self._startups_by_address[group] <= 0:
                del self._startups_by_address[group]

    def _take_token(self, group: str) -> bool:
        """A token of `group`'s bucket (`connection_rate_per_address` a second, up to
        `connection_burst_per_address`); False, taking none, when it has none left. Full
        buckets are forgotten when the table grows, so it holds about the addresses of the
        last few seconds only."""
        rate = self.limits.connection_rate_per_address
        if not rate:
            return True
        burst = float(self.limits.connection_burst_per_address)
        now = self._clock()
        tokens, then = self._buckets.get(group, (burst, now))
        tokens = min(burst, tokens + (now - then) * rate)
        if tokens < 1.0:
            self._buckets[group] = (tokens, now)
            return False
        self._buckets[group] = (tokens - 1.0, now)
        if len(self._buckets) > _BUCKETS_KEPT:
            self._buckets = {
                g: (t, w)
                for g, (t, w) in self._buckets.items()
                if min(burst, t + (now - w) * rate) < burst
            }
        return True

    def _make_startup_room(
        self, group: str | None, evict: Callable[[Connection], None] | None
    ) -> bool:
        """Whether a new connection from `group` may start (`Limits.max_startups`), after
        evicting one to make room if that is what it takes."""
        start, rate, full = self._startup_limits
        starting = len(self._startups)
        if not full or starting < start:
            return True
        first_of_address = self._startups_by_address[group] == 0
        if starting < full:
            if first_of_address:
                return True
            # OpenSSH's random early drop: rate % at start, rising linearly to 100 % at full
            chance = (rate + (100 - rate) * (starting - start) / max(1, full - start)) / 100
            return self._rng.random() >= chance
        if not first_of_address:
            return False
        # make room: the oldest waiting connection of the addresses holding the most (with
        # one each, the oldest of all: a real login takes a fraction of a second)
        most = max(self._startups_by_address.values())
        for key, held_by in self._startups.items():
            if self._startups_by_address[held_by] == most:
                entry = self._open.get(key)
                self._end_startup(key)
                victim = entry[0]() if entry is not None else None
                if victim is not None:
                    (evict or _close)(victim)
                return True
        return False

    def release(self, conn: Connection) -> None:
        """Stop counting `conn` (once it has closed); nothing for one not counted."""
        entry = self._open.get(id(conn))
        if entry is not None and entry[0]() is conn:
            self._forget(id(conn))

    def _forget(self, key: int) -> None:
        self._end_startup(key)
        entry = self._open.pop(key, None)
        if entry is None:
            return
        group = entry[1]
        if group is not None:
            self._by_address[group] -= 1
            if self._by_address[group] <= 0:
                del self._by_address[group]  # no growth with the number of addresses ever seen

    def _live(self) -> list[Connection]:
        return [conn for ref, _ in list(self._open.values()) if (conn := ref()) is not None]

    def close_all(self) -> int:
        """Close every connection still open (a stopping server); how many there were."""
        conns = self._live()
        for conn in conns:
            conn.close()
        return len(conns)

    async def wait_closed(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for every connection open now to close; whether
        they all did."""
        waits = [asyncio.ensure_future(conn.wait_closed()) for conn in self._live()]
        if not waits:
            return True
        _, pending = await asyncio.wait(waits, timeout=timeout)
        for wait in pending:
            wait.cancel()
        return not pending
