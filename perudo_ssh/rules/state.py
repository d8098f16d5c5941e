"""Values of the rules engine: bids, actions, the game state, round results, rule errors.

All are immutable msgspec Structs. Players are named by **seat**: an index 0–5 into the
table's seat order (clockwise, RULES.md §1). Dice are tuples of faces 1–6.
"""

from __future__ import annotations

from itertools import compress
from typing import Literal

import msgspec

from perudo_ssh.rules.options import Options

Phase = Literal["rolling", "bidding", "over"]
Special = Literal["palifico", "calzone"]
CallName = Literal["dudo", "calza", "jonti"]

#: Error codes of RECORD.md, in precedence order (the first that fits wins).
ERROR_CODES: tuple[str, ...] = (
    "game_over",
    "unknown_player",
    "dice_mismatch",
    "action_after_call",
    "not_your_turn",
    "face_out_of_range",
    "count_out_of_range",
    "opening_on_pacos",
    "face_locked",
    "bid_not_higher",
    "nothing_to_call",
    "calza_not_allowed",
    "jonti_not_allowed",
    "calzone_not_allowed",
    "reroll_not_allowed",
    "round_unfinished",
)


class RuleError(Exception):
    """An action the rules refuse. `code` is one of `ERROR_CODES` (RECORD.md "Error codes");
    `message` says why in plain words. The state it was applied to is unchanged."""

    def __init__(self, code: str, message: str) -> None:
        assert code in ERROR_CODES, code
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Base(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shared settings of engine values: immutable, keyword-only, strict."""


class Bid(Base, frozen=True):
    """A claim that at least `count` dice in play show `face` (RULES.md §1). face 1 = paco."""

    count: int
    face: int


# ---- actions (RECORD.md "actions"); each names the seat that makes it --------------------


class Roll(Base, frozen=True, tag="roll"):
    """The dice rolled at the start of a round: `dice[seat]` for every seat, `()` for a seat
    without dice. Made by the server, never by a player (RULES.md §1 "round")."""

    dice: tuple[tuple[int, ...], ...]


class PlaceBid(Base, frozen=True, tag="bid"):
    """`seat` raises to `bid` (RULES.md §3), or opens the round with it."""

    seat: int
    bid: Bid


class Call(Base, frozen=True, tag="call"):
    """`seat` calls dudo, calza or jonti on the last bid (RULES.md §2.5, §5)."""

    seat: int
    call: CallName


class DeclareCalzone(Base, frozen=True, tag="declare"):
    """`seat`, just dropped to one die, declares a calzone round (RULES.md §4)."""

    seat: int


class Reroll(Base, frozen=True, tag="reroll"):
    """Show and reroll (RULES.md §6): `seat` sets `reveal` (faces of its hidden dice) aside
    face up; its other hidden dice become `new_faces` (as many as stay hidden)."""

    seat: int
    reveal: tuple[int, ...]
    new_faces: tuple[int, ...]


class Resign(Base, frozen=True, tag="resign"):
    """`seat` left the table during the round just ended (RULES.md §6 "Leaving"): made by the
    server once the round's call is made, never mid-round (the cup stays on the table until
    the round ends; its dice count). The seat is eliminated; its payments stay in the bank."""

    seat: int


Action = Roll | PlaceBid | Call | DeclareCalzone | Reroll | Resign


class Tokens(Base, frozen=True):
    """Club tokens (RULES.md §6): the bank, and each seat's net balance (may be negative)."""

    bank: int
    balances: tuple[int, ...]


class RoundResult(Base, frozen=True):
    """How a round ended (RECORD.md verdict `rounds[i]`), by seat.

    `counted` is the tally of `bid` under that round's rules; `loser`/`gainer` is the seat
    that lost or gained a die (or None); `dice` the dice counts after the round; `hands` every
    seat's faces at the call (hidden and shown), for the reveal; `payments` the tokens each
    seat paid this round (negative = received), the bank won by the winner included;
    `bank_won` the tokens the winner took from the bank at the game's end (0 before);
    `left` the seats that left during the round and were eliminated at its end (`Resign`,
    RULES.md §6): `dice` already counts them out."""

    opener: int
    special: Special | None
    call: CallName
    caller: int
    bid: Bid
    bidder: int
    counted: int
    loser: int | None
    gainer: int | None
    dice: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]
    tokens: Tokens | None
    payments: tuple[int, ...] = ()
    bank_won: int = 0
    left: tuple[int, ...] = ()


class BidEntry(Base, frozen=True):
    """One bid of the round's history: who bid what."""

    seat: int
    bid: Bid


class State(Base, frozen=True):
    """A whole game at one moment (RULES.md §1–§6). Never mutated: `apply` returns a new one.

    - `phase`: "rolling" (waiting for the round's `Roll`), "bidding", or "over".
    - `counts[seat]`: dice the seat holds (0 = eliminated).
    - `hidden[seat]`, `shown[seat]`: faces under the cup / set aside face up this round.
    - `opener`: the seat that opens (or opened) the round; `turn`: the seat to act.
    - `bids`: this round's bids, oldest first; `last_action_seat`/`last_was_bid` support
      show-and-reroll ("right after the player's own bid").
    - `special`: this round's special kind; `one_die_seat`: the seat that dropped to one die
      in the previous round (it may declare a calzone, RULES.md §4).
    - `eliminated`: seats in the order they went out; `winner`: set when one seat is left.
    - `results`: every finished round; `tokens`: None without stakes.
    """

    options: Options
    seats: int
    phase: Phase
    counts: tuple[int, ...]
    hidden: tuple[tuple[int, ...], ...]
    shown: tuple[tuple[int, ...], ...]
    opener: int
    turn: int
    round_index: int = 0
    bids: tuple[BidEntry, ...] = ()
    last_action_seat: int | None = None
    last_was_bid: bool = False
    special: Special | None = None
    one_die_seat: int | None = None
    eliminated: tuple[int, ...] = ()
    winner: int | None = None
    results: tuple[RoundResult, ...] = ()
    tokens: Tokens | None = None

    @property
    def last_bid(self) -> BidEntry | None:
        """The round's current bid and its bidder, or None before the opening bid."""
        return self.bids[-1] if self.bids else None

    @property
    def active(self) -> tuple[int, ...]:
        """Seats that still have dice, in seat order."""
        return tuple(compress(range(self.seats), self.counts))  # counts are never negative

    @property
    def dice_in_play(self) -> int:
        """Sum of all active players' dice this round (RULES.md §1)."""
        return sum(self.counts)
