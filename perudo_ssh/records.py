"""Stored data as the fronts see it (issue 12): the rows, and how to reach them.

The store (`perudo_ssh.store`) lives in the lobby process with the database; the fronts (the
SSH layer and the screens) never import it. They reach stored data through a `Records`:

- in one process (`perudo-ssh serve`), the `Store` itself, which is one;
- in a front process, `RemoteRecords`: each call a request on the bus (`<prefix>.records`),
  answered in the lobby process by `serve_records` from its store.

Only the calls in `CALLS` cross, each with its arguments checked against their types; the
rows are plain dataclasses, encoded by msgspec. A link refused (`LinkRefused`,
`UnknownLinkCode`) comes back as itself; anything else that fails, or no answer within
`TIMEOUT`, raises `RecordsError` — the front treats it as a store that fails (a key's holder
plays as a guest for that connection; a screen says it cannot read the records). Imports
neither textual nor asyncssh.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import msgspec

from perudo_ssh.bus import Bus, BusError, Subscription

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
    names (see them for what each does), and `RemoteRecords`'s."""

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


CALLS: dict[str, tuple[Any, Any]] = {
    "claim_key": (tuple[str, str], Claim),
    "account_for_key": (tuple[str], Account | None),
    "account": (tuple[int], Account | None),
    "keys_of": (tuple[int], list[KeyInfo]),
    "new_link_code": (tuple[int], str),
    "link_key": (tuple[str, str, str | None], Account),
    "set_bot": (tuple[int, bool], bool),
    "turn_bell": (tuple[int], bool),
    "set_turn_bell": (tuple[int, bool], None),
    "game": (tuple[int], StoredGame | None),
    "games_of": (tuple[int, int, int | None], list[GameSummary]),
    "game_counts": (tuple[list[int]], dict[int, tuple[int, int]]),
    "rated_games": (tuple[list[int]], dict[int, int]),
    "rating_history": (tuple[int], list[RatingRow]),
    "current_ratings": (tuple[()], list[tuple[Account, RatingRow]]),
}
"""Every call that crosses the bus: its name, the type of its arguments (positional) and of
its answer."""

TIMEOUT = 10.0
"""Seconds a front waits for the answer to a call."""


class RecordsError(Exception):
    """A call to the records failed: no answer in time, the bus down, or the store's error."""


class _Call(msgspec.Struct, frozen=True):
    name: str
    args: tuple[Any, ...] = ()


class _Answer(msgspec.Struct, frozen=True):
    value: Any = None
    error: Literal["link_refused", "unknown_link_code", "link_throttled", "failed"] | None = None
    message: str = ""
    args: dict[str, str] = msgspec.field(default_factory=dict)


_encoder = msgspec.msgpack.Encoder()
_call_decoder = msgspec.msgpack.Decoder(_Call)
_answer_decoder = msgspec.msgpack.Decoder(_Answer)


def records_subject(prefix: str) -> str:
    """Where the calls go."""
    return f"{prefix}.records"


class RemoteRecords:
    """`Records` reached over `bus`: each call a request to `serve_records` in the lobby
    process. A link's `banned` keys are the lobby's own (it holds the bans), and so is the
    count of wrong link codes (`LinkThrottle`, over every front)."""

    def __init__(self, bus: Bus, prefix: str = "perudo", timeout: float = TIMEOUT) -> None:
        self.bus = bus
        self.subject = records_subject(prefix)
        self.timeout = timeout

    async def _call(self, name: str, *args: object) -> Any:
        data = _encoder.encode(_Call(name=name, args=args))
        try:
            reply = _answer_decoder.decode(await self.bus.request(self.subject, data, self.timeout))
        except (BusError, msgspec.DecodeError, msgspec.ValidationError) as error:
            raise RecordsError(f"{name}: {error}") from error
        if reply.error == "unknown_link_code":
            raise UnknownLinkCode(reply.message, **reply.args)
        if reply.error == "link_refused":
            raise LinkRefused(reply.message, **reply.args)
        if reply.error == "link_throttled":
            raise LinkThrottled(float(reply.args.get("seconds", "0")))
        if reply.error is not None:
            raise RecordsError(f"{name}: {reply.message}")
        try:
            return msgspec.convert(reply.value, CALLS[name][1])
        except msgspec.ValidationError as error:
            raise RecordsError(f"{name}: {error}") from error

    async def claim_key(self, fingerprint: str, wanted: str) -> Claim:
        return await self._call("claim_key", fingerprint, wanted)

    async def account_for_key(self, fingerprint: str) -> Account | None:
        return await self._call("account_for_key", fingerprint)

    async def account(self, account_id: int) -> Account | None:
        return await self._call("account", account_id)

    async def keys_of(self, account_id: int) -> list[KeyInfo]:
        return await self._call("keys_of", account_id)

    async def new_link_code(self, account_id: int) -> str:
        return await self._call("new_link_code", account_id)

    async def link_key(
        self,
        code: str,
        fingerprint: str,
        *,
        banned: Collection[str] = (),
        source: str | None = None,
    ) -> Account:
        """As `Store.link_key`, the wrong codes of `source` (`link_source`) counted by the
        lobby over every front (`serve_records`): raises `LinkThrottled` past them."""
        return await self._call("link_key", code, fingerprint, source)

    async def set_bot(self, account_id: int, bot: bool) -> bool:
        return await self._call("set_bot", account_id, bot)

    async def turn_bell(self, account_id: int) -> bool:
        return await self._call("turn_bell", account_id)

    async def set_turn_bell(self, account_id: int, on: bool) -> None:
        await self._call("set_turn_bell", account_id, on)

    async def game(self, game_id: int) -> StoredGame | None:
        return await self._call("game", game_id)

    async def games_of(
        self, account_id: int, limit: int = 100, before: int | None = None
    ) -> list[GameSummary]:
        return await self._call("games_of", account_id, limit, before)

    async def game_counts(self, account_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        return await self._call("game_counts", list(account_ids))

    async def rated_games(self, account_ids: Sequence[int]) -> dict[int, int]:
        return await self._call("rated_games", list(account_ids))

    async def rating_history(self, account_id: int) -> list[RatingRow]:
        return await self._call("rating_history", account_id)

    async def current_ratings(self) -> list[tuple[Account, RatingRow]]:
        return await self._call("current_ratings")


async def serve_records(
    records: Records,
    bus: Bus,
    prefix: str = "perudo",
    banned_keys: Callable[[], Collection[str]] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Subscription:
    """Answer the fronts' calls (`RemoteRecords`) from `records` (the lobby's store), each in
    its own task: a call not in `CALLS` or with arguments not of its types is answered
    "failed" and changes nothing. `banned_keys` (the lobby's moderation) gives the keys under
    a ban to `link_key`, whose wrong codes are counted here per source over every front
    (`throttled_link`; `clock` in seconds)."""
    throttle = LinkThrottle()

    async def answer(data: bytes) -> bytes:
        try:
            call = _call_decoder.decode(data)
            types = CALLS.get(call.name)
            if types is None:
                raise ValueError(f"no call {call.name!r}")
            args = msgspec.convert(call.args, types[0])
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as error:
            log.error("records: a call refused: %s", error)
            return _encoder.encode(_Answer(error="failed", message="not a call"))
        try:
            if call.name == "link_key":
                banned = banned_keys() if banned_keys is not None else ()
                code, fingerprint, source = args
                value = await throttled_link(
                    records, throttle, code, fingerprint, source or fingerprint, clock(), banned
                )
            else:
                value = await getattr(records, call.name)(*args)
        except LinkThrottled as throttled:
            return _encoder.encode(
                _Answer(error="link_throttled", args={"seconds": str(throttled.seconds)})
            )
        except UnknownLinkCode as refused:
            return _encoder.encode(
                _Answer(
                    error="unknown_link_code", message=refused.message, args=refused.message_args
                )
            )
        except LinkRefused as refused:
            return _encoder.encode(
                _Answer(error="link_refused", message=refused.message, args=refused.message_args)
            )
        except Exception as error:
            log.exception("records: %s failed", call.name)
            return _encoder.encode(_Answer(error="failed", message=type(error).__name__))
        return _encoder.encode(_Answer(value=value))

    return await bus.serve(records_subject(prefix), answer)
