"""The rules engine: `new_game`, `apply` (RULES.md §2–§6); `legal_actions` is in `legality`.

Pure functions over the immutable `State`: no I/O, no clock, no randomness — every die is
passed in (`Roll`, `Reroll`). `apply` returns a new state or raises `RuleError` with a code of
RECORD.md, checked in RECORD.md's precedence order by `legality` before anything changes;
what follows an accepted action (the roll, the bid, a call's resolution with its payments,
a leaver's resignation) is here.

Decisions where RULES.md is silent (follow the seeds' intent):
- Show and reroll is allowed once per bid: right after the player's own bid, before anyone
  else acts (RULES.md §6 "repeatable on each of their bids"). The reveal must name at least
  one die ("one or more").
- With stakes on and calza turned on, a calza pays like a jonti: a failed one pays
  `|n − counted|` (doubled on wild pacos), a correct one takes 1 token back (RULES.md §5–§6).
- The palifico/calzone player is the one whose count went from 2 to 1 in the previous round.
- Leaving (RULES.md §6) is the server's `Resign`, applied between rounds: after the call of
  the round during which the player left, before the next roll. It is recorded on that round's
  result (`RoundResult.left`); if it leaves one player, that player wins and takes the bank.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from perudo_ssh.rules.legality import (
    bid_fault,
    calza_fault,
    calzone_fault,
    dudo_fault,
    jonti_fault,
    pacos_wild,
    reroll_fault,
    resign_fault,
    roll_fault,
)
from perudo_ssh.rules.options import Options
from perudo_ssh.rules.state import (
    Action,
    Bid,
    BidEntry,
    Call,
    CallName,
    DeclareCalzone,
    PlaceBid,
    Reroll,
    Resign,
    Roll,
    RoundResult,
    RuleError,
    State,
    Tokens,
)


def new_game(options: Options, seats: int, first_opener: int) -> State:
    """A game of `seats` players (2–6) before its first roll; `first_opener` (a seat) won the
    opening roll (RULES.md §2.2). Each player pays the stake into the bank (RULES.md §6).

    Raises ValueError for a seat count outside 2–6 or an opener that is not a seat.
    """
    if not 2 <= seats <= 6:
        raise ValueError("a table has 2 to 6 seats")
    if not 0 <= first_opener < seats:
        raise ValueError("the first opener must be a seat")
    tokens = None
    if options.stake > 0:
        tokens = Tokens(bank=options.stake * seats, balances=(-options.stake,) * seats)
    return State(
        options=options,
        seats=seats,
        phase="rolling",
        counts=(options.dice_per_player,) * seats,
        hidden=((),) * seats,
        shown=((),) * seats,
        opener=first_opener,
        turn=first_opener,
        tokens=tokens,
    )


def opening_leaders(totals: Sequence[int | None]) -> tuple[int, ...]:
    """Seats with the highest opening-roll total (RULES.md §2.2); `None` = did not roll.

    One seat: it opens. Several: they roll again among themselves.
    """
    best = max(t for t in totals if t is not None)
    return tuple(s for s, t in enumerate(totals) if t == best)


def next_active(state: State, seat: int) -> int:
    """The next seat after `seat` in seat order that still has dice (RULES.md §1)."""
    for step in range(1, state.seats + 1):
        s = (seat + step) % state.seats
        if state.counts[s] > 0:
            return s
    return seat


def count_bid(bid: Bid, faces: Sequence[int], wild: bool) -> int:
    """How many of `faces` count for `bid` (RULES.md §2.4): its face, plus pacos when `wild`
    and the bid is not on pacos."""
    n = sum(1 for f in faces if f == bid.face)
    if wild and bid.face != 1:
        n += sum(1 for f in faces if f == 1)
    return n


def _raise(err: RuleError | None) -> None:
    if err is not None:
        raise err


def apply(state: State, action: Action) -> State:
    """The state after `action` (RULES.md §2–§6). Raises `RuleError` (RECORD.md codes)."""
    match action:
        case Roll(dice=dice):
            _raise(roll_fault(state, dice))
            return _roll(state, dice)
        case PlaceBid(seat=seat, bid=bid):
            _raise(bid_fault(state, seat, bid))
            return replace(
                state,
                bids=(*state.bids, BidEntry(seat=seat, bid=bid)),
                turn=next_active(state, seat),
                last_action_seat=seat,
                last_was_bid=True,
            )
        case Call(seat=seat, call="dudo"):
            _raise(dudo_fault(state, seat))
            return _resolve(state, seat, "dudo")
        case Call(seat=seat, call="calza"):
            _raise(calza_fault(state, seat))
            return _resolve(state, seat, "calza")
        case Call(seat=seat, call="jonti"):
            _raise(jonti_fault(state, seat))
            return _resolve(state, seat, "jonti")
        case DeclareCalzone(seat=seat):
            _raise(calzone_fault(state, seat))
            return replace(state, special="calzone", last_action_seat=seat, last_was_bid=False)
        case Reroll(seat=seat, reveal=reveal, new_faces=new_faces):
            _raise(reroll_fault(state, seat, reveal, new_faces))
            return replace(
                state,
                hidden=_set(state.hidden, seat, tuple(new_faces)),
                shown=_set(state.shown, seat, state.shown[seat] + tuple(reveal)),
                last_was_bid=False,
            )
        case Resign(seat=seat):
            _raise(resign_fault(state, seat))
            return _resign(state, seat)
    raise TypeError(f"not an action: {action!r}")


def _set(values: tuple, seat: int, value) -> tuple:
    return values[:seat] + (value,) + values[seat + 1 :]


def _pay_bank(tokens: Tokens | None, winner: int | None) -> tuple[Tokens | None, int]:
    """The tokens once `winner` (if any) takes the whole bank (RULES.md §6), and how much."""
    if winner is None or tokens is None:
        return tokens, 0
    won = tokens.bank
    balances = _set(tokens.balances, winner, tokens.balances[winner] + won)
    return Tokens(bank=0, balances=balances), won


def _resign(state: State, seat: int) -> State:
    """`seat` leaves between rounds (RULES.md §6): eliminated, its payments stay in the bank;
    the next opener moves on if it was them; the last player left wins and takes the bank.
    The round just ended records it in `left` (and its `dice`, `tokens`, `bank_won`)."""
    counts = _set(state.counts, seat, 0)
    after = replace(state, counts=counts)
    active = after.active
    winner = active[0] if len(active) == 1 else None
    tokens, won = _pay_bank(state.tokens, winner)
    opener = state.opener if counts[state.opener] > 0 else next_active(after, state.opener)
    results = state.results
    if results:
        last = results[-1]
        payments = last.payments
        if winner is not None and won and payments:
            payments = _set(payments, winner, payments[winner] - won)
        last = replace(
            last,
            dice=counts,
            tokens=tokens if last.tokens is not None else None,
            payments=payments,
            bank_won=won,
            left=(*last.left, seat),
        )
        results = (*results[:-1], last)
    return replace(
        after,
        phase="over" if winner is not None else state.phase,
        opener=opener,
        turn=opener,
        one_die_seat=None if state.one_die_seat == seat else state.one_die_seat,
        eliminated=(*state.eliminated, seat),
        winner=winner,
        results=results,
        tokens=tokens,
    )


def _roll(state: State, dice: tuple[tuple[int, ...], ...]) -> State:
    """The next round rolled with `dice` (checked by `roll_fault`): bidding opens."""
    palifico = state.options.special_round == "palifico" and state.one_die_seat is not None
    return replace(
        state,
        phase="bidding",
        hidden=tuple(tuple(d) for d in dice),
        shown=((),) * state.seats,
        turn=state.opener,
        bids=(),
        last_action_seat=None,
        last_was_bid=False,
        special="palifico" if palifico else None,
    )


def _payment(
    state: State, call: CallName, caller: int, bidder: int, bid: Bid, counted: int
) -> tuple[int, int]:
    """Who pays how many tokens into the bank for a call (RULES.md §6, and §5 for calza with
    stakes); a negative amount is taken back from the bank."""
    double = 2 if pacos_wild(state) and bid.face == 1 else 1
    if call == "dudo":
        if counted < bid.count:
            return bidder, (bid.count - counted) * double
        if counted > bid.count:
            return caller, (counted - bid.count) * double
        return caller, 1  # a perfect bid: no difference to double
    if counted == bid.count:
        return caller, -1  # a correct jonti (or calza) takes one token back
    return caller, abs(bid.count - counted) * double


def _resolve(state: State, caller: int, call: CallName) -> State:
    """End the round on `caller`'s call (RULES.md §2.5–§2.7, §5, §6)."""
    opts = state.options
    entry = state.last_bid
    assert entry is not None
    bid, bidder = entry.bid, entry.seat
    hands = tuple(h + s for h, s in zip(state.hidden, state.shown, strict=True))
    counted = count_bid(bid, [f for hand in hands for f in hand], pacos_wild(state))
    loser = gainer = None
    if call == "dudo":
        loser = bidder if counted < bid.count else caller
    elif counted == bid.count:
        gainer = caller if state.counts[caller] < opts.dice_per_player else None
    else:
        loser = caller
    counts = list(state.counts)
    if loser is not None:
        counts[loser] -= 1
    if gainer is not None:
        counts[gainer] += 1
    payments = [0] * state.seats
    tokens = state.tokens
    if tokens is not None:
        payer, amount = _payment(state, call, caller, bidder, bid, counted)
        payments[payer] += amount
        balances = tuple(b - p for b, p in zip(tokens.balances, payments, strict=True))
        tokens = Tokens(bank=tokens.bank + sum(payments), balances=balances)
    after = replace(state, counts=tuple(counts))
    moved = loser if loser is not None else (gainer if gainer is not None else caller)
    opener = moved if counts[moved] > 0 else next_active(after, moved)
    eliminated = state.eliminated + ((loser,) if loser is not None and counts[loser] == 0 else ())
    one_die = loser if loser is not None and counts[loser] == 1 else None
    active = after.active
    winner = active[0] if len(active) == 1 else None
    tokens, won = _pay_bank(tokens, winner)
    if winner is not None and won:
        payments[winner] -= won
    result = RoundResult(
        opener=state.opener,
        special=state.special,
        call=call,
        caller=caller,
        bid=bid,
        bidder=bidder,
        counted=counted,
        loser=loser,
        gainer=gainer,
        dice=tuple(counts),
        hands=hands,
        tokens=tokens,
        payments=tuple(payments),
        bank_won=won,
    )
    return replace(
        after,
        phase="over" if winner is not None else "rolling",
        hidden=((),) * state.seats,
        shown=((),) * state.seats,
        opener=opener,
        turn=opener,
        round_index=state.round_index + 1,
        bids=(),
        last_action_seat=None,
        last_was_bid=False,
        special=None,
        one_die_seat=one_die,
        eliminated=eliminated,
        winner=winner,
        results=(*state.results, result),
        tokens=tokens,
    )
