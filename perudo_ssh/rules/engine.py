"""The rules engine: `new_game`, `apply`, `legal_actions` (RULES.md §2–§6).

Pure functions over the immutable `State`: no I/O, no clock, no randomness — every die is
passed in (`Roll`, `Reroll`). `apply` returns a new state or raises `RuleError` with a code of
RECORD.md, checked in RECORD.md's precedence order.

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

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from msgspec.structs import replace

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

FACES = range(1, 7)


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


def previous_active(state: State, seat: int) -> int:
    """The seat before `seat` in seat order that still has dice: the one whose bid would
    make it `seat`'s turn (RULES.md §5, jonti)."""
    for step in range(1, state.seats + 1):
        s = (seat - step) % state.seats
        if state.counts[s] > 0:
            return s
    return seat


def pacos_wild(state: State) -> bool:
    """Pacos are wild in a normal round, not in a special one (RULES.md §3, §4)."""
    return state.special is None


def may_change_face(state: State, seat: int) -> bool:
    """In a special round, whether `seat` may bid another face (RULES.md §3–§4)."""
    return state.options.special_face_change == "one-die-players" and state.counts[seat] == 1


def count_bid(bid: Bid, faces: Sequence[int], wild: bool) -> int:
    """How many of `faces` count for `bid` (RULES.md §2.4): its face, plus pacos when `wild`
    and the bid is not on pacos."""
    n = sum(1 for f in faces if f == bid.face)
    if wild and bid.face != 1:
        n += sum(1 for f in faces if f == 1)
    return n


def _beats(rule: str, n: int, f: int, n2: int, f2: int, wild: bool) -> bool:
    if wild and (f == 1 or f2 == 1):
        if f != 1:
            return n2 >= (n + 1) // 2
        if f2 == 1:
            return n2 > n
        return n2 >= 2 * n + 1
    if rule == "count-or-face":
        return n2 > n or (n2 == n and f2 > f)
    if rule == "one-at-a-time":
        return (n2 > n and f2 == f) or (n2 == n and f2 > f)
    return n2 >= n and f2 >= f and (n2, f2) != (n, f)  # monotone


def _raise_counts(rule: str, n: int, f: int, f2: int, wild: bool, top: int) -> range:
    """The counts `n2` (within 1..`top`) for which `n2 × f2` beats `n × f`: the same answer as
    `_beats`, as one range, so `legal_bids` need not test every count (random-play hot path)."""
    if wild and (f == 1 or f2 == 1):
        if f != 1:
            low = (n + 1) // 2
        elif f2 == 1:
            low = n + 1
        else:
            low = 2 * n + 1
        return range(max(low, 1), top + 1)
    if f2 == f:
        return range(n + 1, top + 1)
    if rule == "count-or-face":
        return range(n + 1 if f2 < f else n, top + 1)
    if f2 < f:
        return range(0)
    if rule == "one-at-a-time":
        return range(n, min(n, top) + 1)
    return range(n, top + 1)  # monotone


def beats(options: Options, last: Bid, new: Bid, wild: bool) -> bool:
    """Whether `new` is higher than `last` (RULES.md §3). `wild`: a normal round, where the
    paco conversions apply; otherwise face 1 ranks lowest and `raise_rule` compares."""
    return _beats(options.raise_rule, last.count, last.face, new.count, new.face, wild)


def _fault(code: str, message: str) -> RuleError:
    return RuleError(code, message)


def _check_running(state: State, seat: int) -> None:
    if state.phase == "over":
        raise _fault("game_over", "the game is over")
    # RECORD.md precedence: unknown_player comes before action_after_call. A player who lost
    # their last die to the round's call is still at the table until the next roll (as the
    # referee reads "still in the game"), so only they get action_after_call.
    if not 0 <= seat < state.seats:
        raise _fault("unknown_player", "that player has no dice in this game")
    if state.phase == "rolling":
        if state.counts[seat] == 0 and not (state.results and state.results[-1].loser == seat):
            raise _fault("unknown_player", "that player has no dice in this game")
        raise _fault("action_after_call", "the round is over; wait for the next roll")
    if state.counts[seat] == 0:
        raise _fault("unknown_player", "that player has no dice in this game")


def bid_fault(state: State, seat: int, bid: Bid) -> RuleError | None:
    """Why `seat` may not bid `bid` now (RULES.md §2.8, §3, §4), or None if it may."""
    try:
        _check_running(state, seat)
    except RuleError as err:
        return err
    if seat != state.turn:
        return _fault("not_your_turn", "it is not your turn to bid")
    if bid.face not in FACES:
        return _fault("face_out_of_range", "a face is between 1 and 6")
    if not 1 <= bid.count <= state.dice_in_play:
        return _fault(
            "count_out_of_range", f"a count is between 1 and the {state.dice_in_play} dice in play"
        )
    last = state.last_bid
    wild = pacos_wild(state)
    if last is None:
        if wild and bid.face == 1:
            return _fault("opening_on_pacos", "a normal round may not be opened on pacos")
        return None
    if not wild and bid.face != last.bid.face and not may_change_face(state, seat):
        return _fault("face_locked", f"in this round the face stays {last.bid.face}")
    if not beats(state.options, last.bid, bid, wild):
        return _fault("bid_not_higher", "the bid must be higher than the last one")
    return None


def calza_fault(state: State, seat: int) -> RuleError | None:
    """Why `seat` may not call calza now (RULES.md §5), or None if it may."""
    opts = state.options
    try:
        _check_running(state, seat)
    except RuleError as err:
        return err
    if opts.calza == "on-turn" and seat != state.turn:
        return _fault("not_your_turn", "calza is called on your turn, instead of bidding")
    if state.last_bid is None:
        return _fault("nothing_to_call", "there is no bid to call yet")
    if opts.calza == "off":
        return _fault("calza_not_allowed", "calza is not played at this table")
    if seat == state.last_bid.seat:
        return _fault("calza_not_allowed", "you cannot call calza on your own bid")
    if state.special is not None and not opts.calza_in_special_round:
        return _fault("calza_not_allowed", "calza is not allowed in a palifico round")
    if len(state.active) < opts.calza_min_players:
        return _fault(
            "calza_not_allowed", f"calza needs at least {opts.calza_min_players} players left"
        )
    return None


def jonti_fault(state: State, seat: int) -> RuleError | None:
    """Why `seat` may not call jonti now (RULES.md §5), or None if it may."""
    opts = state.options
    try:
        _check_running(state, seat)
    except RuleError as err:
        return err
    if state.last_bid is None:
        return _fault("nothing_to_call", "there is no bid to call yet")
    if not opts.jonti:
        return _fault("jonti_not_allowed", "jonti is not played at this table")
    if len(state.active) < 3:
        return _fault("jonti_not_allowed", "jonti needs at least three players with dice")
    if state.counts[seat] >= opts.dice_per_player:
        return _fault("jonti_not_allowed", "jonti needs fewer dice than you started with")
    bidder = state.last_bid.seat
    if bidder == seat:
        return _fault("jonti_not_allowed", "you cannot call jonti on your own bid")
    if bidder == previous_active(state, seat):
        return _fault("jonti_not_allowed", "it is your turn: jonti is called out of turn")
    return None


def dudo_fault(state: State, seat: int) -> RuleError | None:
    """Why `seat` may not call dudo now (RULES.md §2.5), or None if it may."""
    try:
        _check_running(state, seat)
    except RuleError as err:
        return err
    if seat != state.turn:
        return _fault("not_your_turn", "it is not your turn")
    if state.last_bid is None:
        return _fault("nothing_to_call", "there is no bid to call yet")
    return None


def calzone_fault(state: State, seat: int) -> RuleError | None:
    """Why `seat` may not declare a calzone round now (RULES.md §4), or None if it may."""
    try:
        _check_running(state, seat)
    except RuleError as err:
        return err
    if state.options.special_round != "calzone":
        return _fault("calzone_not_allowed", "calzone is not played at this table")
    if state.bids or state.special is not None:
        return _fault("calzone_not_allowed", "calzone is declared before the round's first bid")
    if seat != state.one_die_seat:
        return _fault(
            "calzone_not_allowed", "only the player who just dropped to one die may declare it"
        )
    return None


def reroll_fault(state: State, seat: int, reveal: Sequence[int], new_faces: Sequence[int]):
    """Why `seat` may not show `reveal` and re-roll into `new_faces` now (RULES.md §6)."""
    try:
        _check_running(state, seat)
    except RuleError as err:
        return err
    if not state.options.show_and_reroll:
        return _fault("reroll_not_allowed", "show and reroll is not played at this table")
    if state.last_action_seat != seat or not state.last_was_bid:
        return _fault("reroll_not_allowed", "you may show and reroll right after your own bid")
    hidden = Counter(state.hidden[seat])
    if not reveal or Counter(reveal) - hidden:
        return _fault("reroll_not_allowed", "show one or more of your hidden dice")
    left = len(state.hidden[seat]) - len(reveal)
    if left < 1:
        return _fault("reroll_not_allowed", "keep at least one die hidden to re-roll")
    if len(new_faces) != left or any(f not in FACES for f in new_faces):
        return _fault("reroll_not_allowed", "the re-rolled dice do not match")
    return None


def resign_fault(state: State, seat: int) -> RuleError | None:
    """Why `seat` may not be resigned now (RULES.md §6 "Leaving"), or None if it may: only
    between rounds (a leaver's cup stays on the table until the round ends), and only a seat
    that still has dice."""
    if state.phase == "over":
        return _fault("game_over", "the game is over")
    if not 0 <= seat < state.seats or state.counts[seat] == 0:
        return _fault("unknown_player", "that player has no dice in this game")
    if state.phase == "bidding":
        return _fault("round_unfinished", "a player's cup stays on the table until the round ends")
    return None


def _raise(err: RuleError | None) -> None:
    if err is not None:
        raise err


def apply(state: State, action: Action) -> State:
    """The state after `action` (RULES.md §2–§6). Raises `RuleError` (RECORD.md codes)."""
    match action:
        case Roll(dice=dice):
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
    if state.phase == "over":
        raise _fault("game_over", "the game is over")
    if state.phase == "bidding":
        raise _fault("round_unfinished", "the round has not ended with a call")
    if len(dice) != state.seats or any(
        len(d) != c or any(f not in FACES for f in d)
        for d, c in zip(dice, state.counts, strict=True)
    ):
        raise _fault("dice_mismatch", "each player rolls exactly their dice, faces 1 to 6")
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


def legal_bids(state: State, seat: int) -> list[Bid]:
    """Every bid `seat` may make now, by face then count (RULES.md §2.8, §3, §4).

    The same answer as `bid_fault(state, seat, bid) is None` over every bid, computed
    without building the refused ones."""
    key = _bids_key(state, seat)
    return [] if key is None else list(_bids_after(*key))


def _bids_key(state: State, seat: int) -> tuple[str, Bid | None, bool, bool, int] | None:
    """What the legal bids of `seat` depend on, or None when it may not bid."""
    if state.phase != "bidding" or seat != state.turn or state.counts[seat] == 0:
        return None
    wild = pacos_wild(state)
    last = state.last_bid
    free_face = last is not None and not wild and may_change_face(state, seat)
    return (
        state.options.raise_rule,
        None if last is None else last.bid,
        wild,
        free_face,
        state.dice_in_play,
    )


# Cached because states are immutable values and many share these inputs: listing the bids
# is the hot path of `legal_actions` and `observe` (random play, the UI on every update).
@lru_cache(maxsize=1024)
def _bids_after(
    rule: str, last: Bid | None, wild: bool, free_face: bool, top: int
) -> tuple[Bid, ...]:
    if last is None:
        return tuple(
            Bid(count=n, face=f) for f in FACES if not (wild and f == 1) for n in range(1, top + 1)
        )
    n, f = last.count, last.face
    faces = FACES if wild or free_face else (f,)
    return tuple(
        Bid(count=n2, face=f2) for f2 in faces for n2 in _raise_counts(rule, n, f, f2, wild, top)
    )


@lru_cache(maxsize=1024)
def _bid_actions(seat: int, key: tuple[str, Bid | None, bool, bool, int]) -> tuple[PlaceBid, ...]:
    return tuple(PlaceBid(seat=seat, bid=b) for b in _bids_after(*key))


def legal_actions(state: State, seat: int) -> list[Action]:
    """Every action `seat` may take now, except the re-roll's dice (RULES.md §2–§6).

    Bids, calls and a calzone declaration; for show and reroll, one `Reroll` with empty
    `new_faces` per distinct multiset is not listed — use `reroll_fault` to check one.
    """
    actions: list[Action] = []
    if state.phase != "bidding" or not 0 <= seat < state.seats or state.counts[seat] == 0:
        return actions
    # The guards skip faults that surely refuse, so random play does not build their errors.
    if seat == state.one_die_seat and not state.bids and calzone_fault(state, seat) is None:
        actions.append(DeclareCalzone(seat=seat))
    key = _bids_key(state, seat)
    if key is not None:
        actions.extend(_bid_actions(seat, key))
    if not state.bids:
        return actions
    opts = state.options
    if seat == state.turn and dudo_fault(state, seat) is None:
        actions.append(Call(seat=seat, call="dudo"))
    if opts.calza != "off" and calza_fault(state, seat) is None:
        actions.append(Call(seat=seat, call="calza"))
    if opts.jonti and jonti_fault(state, seat) is None:
        actions.append(Call(seat=seat, call="jonti"))
    return actions
