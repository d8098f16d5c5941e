"""Stored data as the fronts see it (issue 12): the rows, and how to reach them.

The store (`perudo_ssh.store`) lives in the lobby process with the database; the fronts (the
SSH layer and the screens) never import it. They reach stored data through a `Records`:

- in one process (`perudo-ssh serve`), the `Store` itself, which is one;
- in a front process, `RemoteRecords` (`perudo_ssh.records_bus`): each call a request on the
  bus, answered in the lobby process by `serve_records` from its store.

Here: the rows (plain dataclasses), the `Records` interface, and the key-linking codes with
the count of wrong ones (`LinkThrottle`, `throttled_link`) that every way of reaching the
store shares; the transport over the bus is in `records_bus`. Imports neither textual nor
asyncssh, nor the bus.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

log = logging.getLogger(__name__)

LINK_CODE_SECONDS = 600.0
"""How long a key-linking code stays valid: 10 minutes."""
LINK_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""Letters and digits of a link code: no 0/O or 1/I to misread."""
LINK_CODE_LENGTH = 8
"""Characters of a link code (32**8 ≈ 10**12 codes)."""
LINK_CODES_PER_ACCOUNT = 3
"""Live link codes one account may hold: a new one retires the oldest beyond this (every
live code is one more for a guesser to hit; two sessions of an account may each show one)."""


class LinkRefused(Exception):
    """`Store.link_key` refused: `message` is an English message id (`N_`) with `args`."""

    def __init__(self, message: str, **args: str) -> None:
        super().__init__(message.format(**args))
        self.message = message
        self.message_args = args


class UnknownLinkCode(LinkRefused):
    """`Store.link_key` refused a code that is unknown, used up or expired (a wrong guess,
    as far as anyone can tell: `perudo_ssh.ssh.commands` counts them per address)."""


class LinkThrottled(LinkRefused):
    """`link` refused before the code is even looked at: too many wrong codes from this
    source lately (`LinkThrottle`); `seconds` until it may try again."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            "too many wrong link codes: try again in {seconds} s", seconds=str(seconds)
        )
        self.seconds = seconds


# ---- the wrong link codes, counted ------------------------------------------------------------

LINK_FAILURES = 10
"""Wrong link codes one address (an IPv6 address's /64) may try in `LINK_FAILURE_SECONDS`."""
LINK_FAILURE_SECONDS = 600.0
"""The window of `LINK_FAILURES`: ten minutes, a link code's life (`store.LINK_CODE_SECONDS`).
With 32**8 codes, an address then guesses a given live code once in about 10**11 tries; with
no limit one client tried some 500 a second (and every try is a write to the database)."""


class LinkThrottle:
    """Counts wrong link codes per source (`link_source`): at most `failures` in `seconds`.

    Times are seconds on one monotonic clock, given by the caller. Memory and time stay
    bounded whatever the number of sources: failures older than the window are forgotten,
    and while `MAX_SOURCES` sources are being counted, any other one shares the allowance
    of one more source, `CROWD`."""

    MAX_SOURCES = 4096
    CROWD = "*"

    def __init__(self, failures: int = LINK_FAILURES, seconds: float = LINK_FAILURE_SECONDS):
        self.failures = failures
        self.seconds = seconds
        self._failed: dict[str, deque[float]] = {}
        self._pruned = float("-inf")

    def _recent(self, times: deque[float], now: float) -> deque[float]:
        while times and times[0] <= now - self.seconds:
            times.popleft()
        return times

    def _counted_as(self, source: str, now: float) -> str:
        """`source`, or `CROWD` while `MAX_SOURCES` others are counted (sources with no
        failure left in the window are forgotten at most once a second)."""
        if source in self._failed or len(self._failed) < self.MAX_SOURCES:
            return source
        if now - self._pruned >= 1.0:
            self._pruned = now
            failed = self._failed.items()
            self._failed = {s: t for s, t in failed if self._recent(t, now)}
        return source if len(self._failed) < self.MAX_SOURCES else self.CROWD

    def wait(self, source: str, now: float) -> float:
        """Seconds from `now` until `source` may try a code again (0.0: now)."""
        times = self._failed.get(self._counted_as(source, now))
        if times is None or len(self._recent(times, now)) < self.failures:
            return 0.0
        return times[-self.failures] + self.seconds - now

    def failed(self, source: str, now: float) -> bool:
        """`source` tried a wrong code at `now`; True when that was its last one allowed."""
        counted = self._counted_as(source, now)  # first: it may replace `_failed`
        times = self._failed.setdefault(counted, deque())
        self._recent(times, now).append(now)
        return len(times) == self.failures


async def throttled_link(
    records: Records,
    throttle: LinkThrottle,
    code: str,
    fingerprint: str,
    source: str,
    now: float,
    banned: Collection[str] = (),
) -> Account:
    """`records.link_key(code, fingerprint, banned=banned)`, unless `source` (`link_source`)
    tried too many wrong codes lately: raises `LinkThrottled` then (the code is not looked
    at), and what `link_key` raises; a wrong code counts against `source` (logged when it
    was its last one allowed). `now` is the throttle's clock, in seconds."""
    wait = throttle.wait(source, now)
    if wait > 0:
        raise LinkThrottled(wait)
    try:
        return await records.link_key(code, fingerprint, banned=banned)
    except UnknownLinkCode:
        if throttle.failed(source, now):
            log.warning("link refused to %s for a while: too many wrong codes", source)
        raise


# ---- rows -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Account:
    """A player known by their key(s): `id` and unique `name`; `bot`: a bot account, whose
    keys are a program's (issue 14; `Store.set_bot`)."""

    id: int
    name: str
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Claim:
    """What a key login got (`Store.claim_key`): the `account`, the name it `asked` for, and
    whether the account was `created` by this login. `account.name != asked` when the name was
    taken or reserved, or the key's account has another name."""

    account: Account
    asked: str
    created: bool


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """One key of an account: its `fingerprint` and when it was `added` (unix seconds)."""

    fingerprint: str
    added: float


@dataclass(frozen=True, slots=True)
class GamePlayer:
    """One seat of a stored game: `seat` index, `name` in the record, `account_id` (None for
    a guest or a bot), finishing `place` (1 = winner), `bot` (a bot's seat from the start) and
    `left_round` (the round index in which the person left, a bot playing on; None if they
    stayed)."""

    seat: int
    name: str
    account_id: int | None
    place: int
    bot: bool = False
    left_round: int | None = None
    level: str | None = None
    """A bot seated as such: its level (`perudo_ssh.bots.LEVELS`), for the ratings hook
    (issue 14: each level is rated); not stored, None as read back."""


@dataclass(frozen=True, slots=True)
class NewGame:
    """A finished game to store: `finished` (unix seconds), the table's `preset`, whether the
    table was `rated`, the `record` (perudo-record/1 JSON bytes) and its `verdict`
    (perudo-verdict/1 JSON bytes), and its `players` in seat order."""

    finished: float
    preset: str
    rated: bool
    record: bytes
    verdict: bytes
    players: tuple[GamePlayer, ...]


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A stored game: `id`, `finished` (unix seconds), `preset`, `rated`, the `record` and
    `verdict` JSON text exactly as stored, and its `players` in seat order."""

    id: int
    finished: float
    preset: str
    rated: bool
    record: str
    verdict: str
    players: tuple[GamePlayer, ...]

    def seat_of(self, account_id: int) -> GamePlayer | None:
        """The seat `account_id` played, or None if they did not play this game."""
        return next((p for p in self.players if p.account_id == account_id), None)


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One line of a player's history: game `id`, `finished`, `preset`, `rated`, every
    player's name in seat order, and this player's seat `name` and `place` among `len(players)`.
    """

    id: int
    finished: float
    preset: str
    rated: bool
    players: tuple[str, ...]
    name: str
    place: int


@dataclass(frozen=True, slots=True)
class RatingRow:
    """An account's rating after game `game_id`: OpenSkill `mu` and `sigma` (see
    `perudo_ssh.ratings`), set `at` (unix seconds)."""

    account_id: int
    game_id: int
    mu: float
    sigma: float
    at: float


@dataclass(frozen=True, slots=True)
class Ban:
    """A ban on a `kind` "key" (`value` a fingerprint) or "address" (an IP address), with the
    `reason` shown to the banned, `until` (unix seconds; None for ever), who set it and when,
    and `lifted` (when lifted early, else None)."""

    id: int
    kind: Literal["key", "address"]
    value: str
    reason: str
    until: float | None
    by_account: int | None
    created: float
    lifted: float | None


@dataclass(frozen=True, slots=True)
class Mute:
    """A chat mute of `account_id`, with its `reason`, `until` (None: for ever), who and when."""

    id: int
    account_id: int
    reason: str
    until: float | None
    by_account: int | None
    created: float
    lifted: float | None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One admin action: `at` (unix seconds), `admin` (who), `action` (what), `target`
    (whom), `reason` (why) and free `detail`."""

    id: int
    at: float
    admin: str
    action: str
    target: str
    reason: str
    detail: str


def normal_code(code: str) -> str:
    """A link code as typed (any case, with spaces or dashes) in its stored form."""
    return "".join(ch for ch in code.upper() if ch.isalnum())


def show_code(code: str) -> str:
    """A stored link code as shown to the player: `ABCD-EFGH`."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def level_account_name(level: str) -> str:
    """`bot-hard`: the name of the account rating the built-in bots of `level`."""
    return f"bot-{level}"


def is_level_account(account: Account) -> bool:
    """Whether `account` holds a level's rating (`Store.level_account`), not a player's."""
    return account.bot and account.name.startswith("bot-")


# ---- reaching them ---------------------------------------------------------------------------


class Records(Protocol):
    """What the fronts read and write of the stored data: `Store`'s methods of the same
    names (see them for what each does), and `records_bus.RemoteRecords`'s."""

    async def claim_key(self, fingerprint: str, wanted: str) -> Claim: ...

    async def account_for_key(self, fingerprint: str) -> Account | None: ...

    async def account(self, account_id: int) -> Account | None: ...

    async def keys_of(self, account_id: int) -> list[KeyInfo]: ...

    async def new_link_code(self, account_id: int) -> str: ...

    async def link_key(
        self, code: str, fingerprint: str, *, banned: Collection[str] = ()
    ) -> Account: ...

    async def set_bot(self, account_id: int, bot: bool) -> bool: ...

    async def turn_bell(self, account_id: int) -> bool: ...

    async def set_turn_bell(self, account_id: int, on: bool) -> None: ...

    async def game(self, game_id: int) -> StoredGame | None: ...

    async def games_of(
        self, account_id: int, limit: int = 100, before: int | None = None
    ) -> list[GameSummary]: ...

    async def game_counts(self, account_ids: Sequence[int]) -> dict[int, tuple[int, int]]: ...

    async def rated_games(self, account_ids: Sequence[int]) -> dict[int, int]: ...

    async def rating_history(self, account_id: int) -> list[RatingRow]: ...

    async def current_ratings(self) -> list[tuple[Account, RatingRow]]: ...
