"""What one seat may see of a game: the per-player observation (RULES.md §1, DEVELOPERS.md
rule 3). Everything the server sends about a game goes through `observe`.

A seat sees its own hidden dice; nobody sees another seat's hidden dice until the reveal
(`RoundResult.hands`, once the round has ended). Set-aside dice (show and reroll) are public.
"""

from __future__ import annotations

import msgspec

from perudo_ssh.rules.legality import (
    calza_fault,
    calzone_fault,
    dudo_fault,
    jonti_fault,
    legal_bids,
    may_change_face,
    pacos_wild,
)
from perudo_ssh.rules.options import Options
from perudo_ssh.rules.state import Base, Bid, BidEntry, RoundResult, State, Tokens


class SeatView(Base, frozen=True):
    """One seat as seen by the viewer: `dice` its dice count, `hidden` its hidden faces (only
    for the viewer's own seat, else None), `shown` its set-aside faces (public)."""

    seat: int
    dice: int
    hidden: tuple[int, ...] | None
    shown: tuple[int, ...]


class Choices(Base, frozen=True):
    """What the viewer may do now; each `*_why` is the reason a call is refused (or None)."""

    bids: tuple[Bid, ...] = ()
    dudo: bool = False
    calza: bool = False
    jonti: bool = False
    calzone: bool = False
    reroll: bool = False
    calza_why: str | None = None
    jonti_why: str | None = None


class GameView(Base, frozen=True):
    """A game as seen from `me` (a seat, or None for a spectator).

    `seats` in seat order; `bids` the round's bids so far; `wild` whether pacos are wild this
    round; `may_change_face` whether `me` may change face in this special round; `last` the
    previous round's result (with every hand revealed), or None; `rounds` every finished
    round's result, oldest first, without the hands (the round log, issue 13: who called
    what on whom, what was counted, who lost or gained a die - public once revealed)."""

    options: Options
    me: int | None
    phase: str
    round_index: int
    seats: tuple[SeatView, ...]
    opener: int
    turn: int
    bids: tuple[BidEntry, ...]
    special: str | None
    wild: bool
    one_die_seat: int | None
    dice_in_play: int
    eliminated: tuple[int, ...]
    winner: int | None
    tokens: Tokens | None
    last: RoundResult | None
    choices: Choices
    may_change_face: bool = False
    rounds: tuple[RoundResult, ...] = ()


def _choices(state: State, me: int) -> Choices:
    if state.phase != "bidding" or state.counts[me] == 0:
        return Choices()
    calza = calza_fault(state, me)
    jonti = jonti_fault(state, me)
    return Choices(
        bids=tuple(legal_bids(state, me)),
        dudo=me == state.turn and dudo_fault(state, me) is None,
        calza=calza is None,
        jonti=jonti is None,
        calzone=me == state.one_die_seat and calzone_fault(state, me) is None,
        reroll=(
            state.options.show_and_reroll
            and state.last_action_seat == me
            and state.last_was_bid
            and len(state.hidden[me]) > 1
        ),
        calza_why=None if calza is None else calza.message,
        jonti_why=None if jonti is None else jonti.message,
    )


def observe(state: State, me: int | None) -> GameView:
    """The view of `state` for seat `me`, or for a spectator when `me` is None."""
    seats = tuple(
        SeatView(
            seat=s,
            dice=state.counts[s],
            hidden=state.hidden[s] if s == me else None,
            shown=state.shown[s],
        )
        for s in range(state.seats)
    )
    return GameView(
        options=state.options,
        me=me,
        phase=state.phase,
        round_index=state.round_index,
        seats=seats,
        opener=state.opener,
        turn=state.turn,
        bids=state.bids,
        special=state.special,
        wild=pacos_wild(state),
        one_die_seat=state.one_die_seat,
        dice_in_play=state.dice_in_play,
        eliminated=state.eliminated,
        winner=state.winner,
        tokens=state.tokens,
        last=state.results[-1] if state.results else None,
        rounds=_without_hands(state.results),
        choices=Choices() if me is None else _choices(state, me),
        may_change_face=me is not None and state.special is not None and may_change_face(state, me),
    )


def _without_hands(results: tuple[RoundResult, ...]) -> tuple[RoundResult, ...]:
    """`results` with no hands: the round log (`GameView.rounds`)."""
    return tuple(msgspec.structs.replace(result, hands=()) for result in results)
