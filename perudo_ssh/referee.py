"""The referee: replay a game record through the rules engine and give a `perudo-verdict/1`
(RECORD.md "The referee"), and the `perudo-ssh referee RECORD.json|-` command.

The engine judges every rule by seat; this module adds what only names can get wrong
(`unknown_player`), what spans rounds (`game_over`, `round_unfinished`) and
`action_after_call`, in RECORD.md's precedence order, and turns seats back into names.

It also honours our record extension `rounds[i].left` (see `perudo_ssh.record`): the players
who left during round i (RULES.md §6 "Leaving") are eliminated right after its call, in the
order listed, before round i+1's roll; if that leaves one player, the game is over and that
player takes the bank. Faults in `left` are reported with `action` null: `round_unfinished`
when the round has no call, `unknown_player` for a name that has no dice after the call,
`game_over` for a name listed after the game already has a winner. Records without the field
are judged exactly as RECORD.md says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec
from msgspec import UNSET

from perudo_ssh.record import Record, engine_action, engine_roll
from perudo_ssh.rules import Bid, Resign, RoundResult, RuleError, State, apply, new_game

FORMAT: Final = "perudo-verdict/1"
USAGE = "usage: perudo-ssh referee RECORD.json|-   (- reads the record from standard input)"


class _Base(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shared settings of verdict values: immutable, keyword-only, strict."""


class TokenBalances(_Base, frozen=True, kw_only=True):
    """Club tokens after a round (RULES.md §6): the `bank` and every player's net balance by
    name (stake paid, payments, the bank paid to the winner at the end; may be negative)."""

    bank: int
    balances: dict[str, int]


class RoundOutcome(_Base, frozen=True, kw_only=True):
    """How one finished round ended (RECORD.md verdict `rounds[i]`), by player name.

    `special` is None, "palifico" or "calzone"; `counted` the tally of `bid` under that
    round's rules; `loser`/`gainer` who lost or gained a die (or None); `dice` the dice count
    of every player still in the game after the round (eliminated players are left out);
    `tokens` None without stakes."""

    opener: str
    special: Literal["palifico", "calzone"] | None
    call: Literal["dudo", "calza", "jonti"]
    caller: str
    bid: Bid
    bidder: str
    counted: int
    loser: str | None
    gainer: str | None
    dice: dict[str, int]
    tokens: TokenBalances | None


class Fault(_Base, frozen=True, kw_only=True):
    """The first rule a record breaks (RECORD.md verdict `error`): `round` and `action` are
    indices into the record (`action` None for a fault in the round's dice or the round as a
    whole); `code` one of `perudo_ssh.rules.ERROR_CODES`; `message` in plain words."""

    round: int
    action: int | None
    code: str
    message: str


class Verdict(_Base, frozen=True, kw_only=True):
    """The referee's answer, `perudo-verdict/1` (RECORD.md "The verdict").

    `rounds` the finished rounds (before the fault, if any); `eliminated` names in the order
    they went out; `winner` once one player is left; `next_opener` who opens the first round
    not yet finished (None once the game is over)."""

    format: Literal["perudo-verdict/1"] = FORMAT
    legal: bool
    error: Fault | None
    rounds: tuple[RoundOutcome, ...]
    eliminated: tuple[str, ...]
    winner: str | None
    next_opener: str | None


def _outcome(players: Sequence[str], result: RoundResult) -> RoundOutcome:
    def name(seat: int | None) -> str | None:
        return None if seat is None else players[seat]

    tokens = None
    if result.tokens is not None:
        balances = dict(zip(players, result.tokens.balances, strict=True))
        tokens = TokenBalances(bank=result.tokens.bank, balances=balances)
    return RoundOutcome(
        opener=players[result.opener],
        special=result.special,
        call=result.call,
        caller=players[result.caller],
        bid=result.bid,
        bidder=players[result.bidder],
        counted=result.counted,
        loser=name(result.loser),
        gainer=name(result.gainer),
        dice={players[s]: n for s, n in enumerate(result.dice) if n > 0},
        tokens=tokens,
    )


def _dice_mismatch(record: Record, state: State, dice: Mapping[str, Sequence[int]]) -> str | None:
    """Which player's dice do not match (RECORD.md `dice_mismatch`), said by name; the engine
    checks the same, but can only say that some seat's do not."""
    for seat in state.active:
        name, held = record.players[seat], state.counts[seat]
        if name not in dice:
            return f"the dice of {name!r} are missing"
        if len(dice[name]) != held:
            return f"{name!r} holds {held} dice, not {len(dice[name])}"
        if any(not 1 <= face <= 6 for face in dice[name]):
            return f"the dice of {name!r} show a face outside 1-6"
    return None


def _run(record: Record, state: State) -> tuple[State, Fault | None]:
    """Fold the record's rounds over `state`; stop at the first fault (RECORD.md)."""
    players = record.players
    last = len(record.rounds) - 1
    for i, round_ in enumerate(record.rounds):
        if state.phase == "over":
            return state, Fault(
                round=i, action=None, code="game_over", message="the game already has a winner"
            )
        # "Still in the game" is fixed for the whole round: a player who loses their last die
        # to the round's call is still at the table until the round ends (RULES.md §6).
        in_game = {players[s] for s in state.active}
        stranger = next((name for name in round_.dice if name not in in_game), None)
        if stranger is not None:
            message = f"{stranger!r} in the dice is not a player still in the game"
            return state, Fault(round=i, action=None, code="unknown_player", message=message)
        mismatch = _dice_mismatch(record, state, round_.dice)
        if mismatch is not None:
            return state, Fault(round=i, action=None, code="dice_mismatch", message=mismatch)
        try:
            state = apply(state, engine_roll(record, round_))
        except RuleError as err:
            return state, Fault(round=i, action=None, code=err.code, message=err.message)
        called = False
        for j, action in enumerate(round_.actions):
            if action.by not in in_game:
                message = f"{action.by!r} is not a player still in the game"
                return state, Fault(round=i, action=j, code="unknown_player", message=message)
            if called:
                message = "the round already ended with a call"
                return state, Fault(round=i, action=j, code="action_after_call", message=message)
            try:
                state = apply(state, engine_action(record, action))
            except RuleError as err:
                return state, Fault(round=i, action=j, code=err.code, message=err.message)
            called = action.call is not UNSET
        if round_.left and not called:
            message = "players who left are eliminated once the round has ended with a call"
            return state, Fault(round=i, action=None, code="round_unfinished", message=message)
        for name in round_.left:
            seat = record.seat_of.get(name)
            if seat is None:
                message = f"{name!r} who left is not a player still in the game"
                return state, Fault(round=i, action=None, code="unknown_player", message=message)
            try:
                state = apply(state, Resign(seat=seat))
            except RuleError as err:
                return state, Fault(round=i, action=None, code=err.code, message=err.message)
        if not called and i != last:
            message = "only the last round may end without a call"
            return state, Fault(round=i, action=None, code="round_unfinished", message=message)
    return state, None


def replay(record: Record) -> tuple[State, Verdict]:
    """Replay `record` through the engine (RECORD.md "The referee").

    Returns the engine state reached — after the last action, or just before the first fault —
    and the verdict. Raises `MalformedRecord` only for bad `rules` (which `decode_record`
    already refuses); a broken rule is a verdict with `legal` false, never an exception.
    """
    players = record.players
    start = new_game(record.options, len(players), record.seat_of[record.first_opener])
    state, fault = _run(record, start)
    verdict = Verdict(
        legal=fault is None,
        error=fault,
        rounds=tuple(_outcome(players, r) for r in state.results),
        eliminated=tuple(players[s] for s in state.eliminated),
        winner=None if state.winner is None else players[state.winner],
        next_opener=None if state.phase == "over" else players[state.opener],
    )
    return state, verdict


def verdict_of(record: Record) -> Verdict:
    """The `perudo-verdict/1` verdict on `record` (see `replay`)."""
    return replay(record)[1]


def encode_verdict(verdict: Verdict) -> bytes:
    """The verdict as indented JSON bytes, without a trailing newline."""
    return msgspec.json.format(msgspec.json.encode(verdict), indent=2)
