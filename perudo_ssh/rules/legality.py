"""What a seat may do now (RULES.md §2–§6): every action's check and the list of legal ones.

`bid_fault`, `dudo_fault`, `calza_fault`, `jonti_fault`, `calzone_fault`, `reroll_fault`,
`resign_fault` and `roll_fault` say why an action is refused (a `RuleError` with a code of
RECORD.md, found in RECORD.md's precedence order) or None; `legal_bids` and `legal_actions`
list what is allowed without building the refusals. The engine (`engine.apply`) checks every
action here before it changes anything; the per-player observation (`view`) offers the
choices listed here. Separate from the engine because checking an action reads a state and
never builds one: pure functions, no I/O, no randomness. The decisions taken where RULES.md
is silent are listed in `engine`'s docstring.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from perudo_ssh.rules.options import Options
from perudo_ssh.rules.state import (
    Action,
    Bid,
    Call,
    DeclareCalzone,
    PlaceBid,
    RuleError,
    State,
)

FACES = range(1, 7)


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


def roll_fault(state: State, dice: Sequence[Sequence[int]]) -> RuleError | None:
    """Why `dice` (one tuple of faces per seat) may not be the next round's roll, or None if
    it may: only after a round ended with a call, every seat rolling exactly its dice, faces
    1 to 6 (RULES.md §1)."""
    if state.phase == "over":
        return _fault("game_over", "the game is over")
    if state.phase == "bidding":
        return _fault("round_unfinished", "the round has not ended with a call")
    if len(dice) != state.seats or any(
        len(d) != c or any(f not in FACES for f in d)
        for d, c in zip(dice, state.counts, strict=True)
    ):
        return _fault("dice_mismatch", "each player rolls exactly their dice, faces 1 to 6")
    return None


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
