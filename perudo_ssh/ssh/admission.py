"""How many app sessions the server holds, in total, per client address and per key (issue 5,
item 4): one `SessionCounts` is shared by every connection of a server.

A session asks to be admitted when it is about to start its app; past a limit it is refused
with a `SessionRefusal` (an `N_` message the SSH layer translates for that client, and a
reason for the log), otherwise it holds an `Admission` until it ends, however it ends, and
then releases it. An IPv6 address is counted by its /64, which one client usually holds
whole. Guests (no key) are counted by address only.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from perudo_ssh.i18n import N_
from perudo_ssh.limits import Limits

__all__ = ["Admission", "SessionCounts", "SessionRefusal", "address_group"]

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


class SessionCounts:
    """The live app sessions of one server, against the session limits of `limits`
    (`max_sessions`, `max_sessions_per_address`, `max_sessions_per_key`; 0: no limit)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
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
