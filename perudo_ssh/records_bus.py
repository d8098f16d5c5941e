"""Stored data over the bus (issue 12, item 3): a front process's `RemoteRecords`, and
`serve_records` answering it in the lobby process from its store.

Each call is a request on the bus (`<prefix>.records`); only the calls in `CALLS` cross,
each with its arguments checked against their types; the rows (`perudo_ssh.records`) are
plain dataclasses, encoded by msgspec. A link refused (`LinkRefused`, `UnknownLinkCode`,
`LinkThrottled`) comes back as itself; anything else that fails, or no answer within
`TIMEOUT`, raises `RecordsError` — the front treats it as a store that fails (a key's holder
plays as a guest for that connection; a screen says it cannot read the records). Separate
from `records` because that module is what every front and the store share (the rows and
the `Records` interface), while this one is only the transport between processes. Imports
neither textual nor asyncssh.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any, Literal

import msgspec

from perudo_ssh.bus import Bus, BusError, Subscription
from perudo_ssh.records import (
    Account,
    Claim,
    GameSummary,
    KeyInfo,
    LinkRefused,
    LinkThrottle,
    LinkThrottled,
    RatingRow,
    Records,
    StoredGame,
    UnknownLinkCode,
    throttled_link,
)

log = logging.getLogger(__name__)


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
