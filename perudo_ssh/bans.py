"""Bans and mutes as every part of the server reads them (issue 4, item 6; issue 12): the
text helpers (a reason cleaned, a duration parsed, a ban's banner), addresses, and the bans
in force looked up among rows (`active_ban_among`, `banned_keys_among`; `BanList`, a front
process's copy of the lobby's). The lobby's moderation state, which changes them and keeps
them in the store, is `perudo_ssh.lobby.moderation`.

Times are unix seconds. Imports neither textual nor asyncssh, nothing of the lobby or the
store.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import time
import unicodedata
from collections.abc import Callable, Collection, Iterable
from datetime import UTC, datetime

from perudo_ssh import protocol

log = logging.getLogger(__name__)

MAX_REASON = 200
"""Longest reason kept, in characters (what the banned, kicked or muted are shown)."""
MAX_ANNOUNCEMENT = 500
"""Longest announcement, in characters."""
MAX_SECONDS = 10 * 365 * 24 * 3600
"""Longest timed ban or mute (ten years); longer is "for ever" (`None`)."""

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+)\s*([smhdw])")
FOREVER_WORDS = ("forever", "for ever", "permanent", "∞")


# ---- text ------------------------------------------------------------------------------------


def clean_text(text: str, limit: int = MAX_REASON) -> str:
    """`text` as one plain line of at most `limit` characters: every control and format
    character (C0, C1, escape sequences' ESC, bidi overrides, zero-width marks) dropped,
    whitespace runs made one space, ends stripped. What is left is shown as it is."""
    kept = []
    for char in unicodedata.normalize("NFC", text):
        category = unicodedata.category(char)
        if char.isspace():
            kept.append(" ")
        elif category[0] != "C":  # Cc, Cf, Cs, Co, Cn
            kept.append(char)
    return " ".join("".join(kept).split())[:limit]


def parse_duration(text: str, forever: Iterable[str] = ()) -> int | None:
    """Seconds in a duration such as `10m`, `1h`, `1d`, `2w`, `1h30m` (units s, m, h, d,
    w); None for "forever" (or one of the words in `forever`, e.g. its translation).

    Raises ValueError for anything else, for zero, and for more than `MAX_SECONDS`."""
    words = {w.casefold() for w in (*FOREVER_WORDS, *forever)}
    wanted = " ".join(text.split()).casefold()
    if wanted in words:
        return None
    compact = wanted.replace(" ", "")
    parts = _DURATION.findall(compact)
    if not parts or "".join(n + unit for n, unit in parts) != compact:
        raise ValueError(f"not a duration: {text!r}")
    seconds = sum(int(n) * _UNITS[unit] for n, unit in parts)
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"a duration is from 1 second to 10 years: {text!r}")
    return seconds


def until_text(until: float | None) -> str:
    """`until` (unix seconds; None: for ever) as `2025-06-01 12:00 UTC`, or "for ever"."""
    if until is None:
        return "for ever"
    return datetime.fromtimestamp(until, UTC).strftime("%Y-%m-%d %H:%M UTC")


def banner_text(ban: protocol.BanRow, fingerprint: str | None = None) -> str:
    """The SSH authentication banner a banned client is shown before it is refused: until
    when and why. English: it is sent before the client's language is known. A key ban on
    another key than the client's `fingerprint` (one linked to the same account) is said
    to be the account's."""
    when = "for ever" if ban.until is None else f"until {until_text(ban.until)}"
    if ban.kind == "address":
        what = "Your address"
    elif fingerprint is None or ban.value == fingerprint:
        what = "This key"
    else:
        what = "This key's account"
    return f"perudo-ssh: {what} is banned from this server {when}.\nReason: {ban.reason}\n"


def host_of(peer: str | None) -> str | None:
    """The IP address in a `Login.peer` (`1.2.3.4:5678`, `[::1]:5678`), normalised; None
    when there is none ("unknown")."""
    if not peer:
        return None
    host = peer.rsplit(":", 1)[0] if ":" in peer else peer
    return normal_address(host.strip("[]"))


def normal_address(text: str) -> str | None:
    """`text` as an IP address in its normal form (`::ffff:1.2.3.4` is `1.2.3.4`), or None
    when it is not one."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address)


# ---- bans, wherever they are read ------------------------------------------------------------


def holds(until: float | None, now: float) -> bool:
    """Whether a ban or mute `until` (unix seconds; None: for ever) holds at `now`."""
    return until is None or until > now


def in_force(row: protocol.BanRow, now: float) -> bool:
    """Whether ban `row` holds at `now` (unix seconds)."""
    return holds(row.until, now)


def active_ban_among(
    rows: Iterable[protocol.BanRow],
    fingerprint: str | None,
    address: str | None,
    linked: Collection[str],
    now: float,
) -> protocol.BanRow | None:
    """Of `rows`, the ban in force at `now` on key `fingerprint`, on one of the `linked` keys
    or on IP `address` (the longest), or None."""
    keys = {fingerprint, *linked} - {None}
    found = [
        row
        for row in rows
        if in_force(row, now)
        and (
            (row.kind == "key" and row.value in keys)
            or (row.kind == "address" and row.value == address)
        )
    ]
    if not found:
        return None
    return max(found, key=lambda row: float("inf") if row.until is None else row.until)


def banned_keys_among(rows: Iterable[protocol.BanRow], now: float) -> frozenset[str]:
    """The key fingerprints of `rows` under a ban in force at `now`."""
    return frozenset(row.value for row in rows if row.kind == "key" and in_force(row, now))


class BanList:
    """The bans in force as a front process reads them (issue 12): a copy of the lobby's
    `Moderation.bans()`, replaced whenever the lobby says they changed
    (`perudo_ssh.front.remote.RemoteLobby`). Read as `Moderation` is: `active_ban`,
    `banned_keys`. `clock` gives unix seconds."""

    def __init__(
        self, rows: Iterable[protocol.BanRow] = (), *, clock: Callable[[], float] = time.time
    ) -> None:
        self.rows: tuple[protocol.BanRow, ...] = tuple(rows)
        self.clock = clock

    def replace(self, rows: Iterable[protocol.BanRow]) -> None:
        """The lobby's bans in force now."""
        self.rows = tuple(rows)

    def active_ban(
        self, fingerprint: str | None, address: str | None, linked: Collection[str] = ()
    ) -> protocol.BanRow | None:
        """As `Moderation.active_ban`."""
        return active_ban_among(self.rows, fingerprint, address, linked, self.clock())

    def banned_keys(self) -> frozenset[str]:
        """As `Moderation.banned_keys`."""
        return banned_keys_among(self.rows, self.clock())
