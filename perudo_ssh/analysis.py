"""A finished game explained (issue 14, item 4): every moment of a record replayed by the
rules engine, and the odds of every move.

`replay_frames` folds a record's rolls and actions through `perudo_ssh.rules.apply`, as the
referee does (the replay screen steps through its frames). `analyse` gives each bid how
likely it was to be true, from the bidder's own dice and the dice set aside face up (what
the bidder knew), and from the table's view (only the dice set aside); each call the odds it
was right, from the caller's view and the table's; and marks the moves that cost a die: a
bid called by a right dudo, a wrong call (lichess's analysis board, for liar's dice).
`analysis_text` is `perudo-ssh analyse RECORD.json`.

Odds are exact under the usual model: each unknown die shows each face with chance 1/6,
independently (a paco counts for any other face while pacos are wild: RULES.md §2.4), so the
count of unknown dice that match is binomial. Nobody's bids are read for what they reveal:
the odds say what the dice alone said. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from perudo_ssh.record import MalformedRecord, Record, engine_action, engine_roll
from perudo_ssh.rules import (
    Action,
    Bid,
    Call,
    PlaceBid,
    Reroll,
    Resign,
    Roll,
    RuleError,
    State,
    apply,
    new_game,
)
from perudo_ssh.rules.engine import count_bid
from perudo_ssh.rules.legality import pacos_wild


@dataclass(frozen=True, slots=True)
class Frame:
    """One moment of a replayed game: round `round` (0-based) after its first `step` actions
    (0: its dice just rolled); `state` the engine's state then; `action` the last action
    applied (None at step 0). After a round's call `state.results[-1]` is its reveal, and the
    players who left during the round (RULES.md §6) are already eliminated."""

    round: int
    step: int
    state: State
    action: Action | None


@dataclass(frozen=True, slots=True)
class Replay:
    """A game ready to step through: its `record`, its `frames` in order, and `fault_round`:
    the round in which the engine refused the record (the frames stop before it), or None
    when it replayed to the end."""

    record: Record
    frames: tuple[Frame, ...]
    fault_round: int | None = None

    @property
    def starts(self) -> tuple[int, ...]:
        """The index of each round's first frame (its roll), in order."""
        return tuple(i for i, frame in enumerate(self.frames) if frame.step == 0)

    def moves_in(self, round_: int) -> int:
        """How many actions round `round_` has in the record."""
        return len(self.record.rounds[round_].actions)


def replay_frames(record: Record) -> Replay:
    """Every moment of `record` from the engine (RECORD.md, RULES.md): the state after each
    round's roll and after each of its actions; the players a round's `left` lists are
    eliminated with its last action (the call). Stops at the first roll or action the engine
    refuses (a damaged record; the server stores only legal ones)."""
    frames: list[Frame] = []
    try:
        state = new_game(record.options, len(record.players), record.seat_of[record.first_opener])
    except (RuleError, MalformedRecord, KeyError):
        return Replay(record, (), 0)
    for i, round_ in enumerate(record.rounds):
        try:
            state = apply(state, engine_roll(record, round_))
            frames.append(Frame(i, 0, state, None))
            for j, recorded in enumerate(round_.actions):
                action = engine_action(record, recorded)
                state = apply(state, action)
                if j == len(round_.actions) - 1:
                    for name in round_.left:
                        state = apply(state, Resign(seat=record.seat_of[name]))
                frames.append(Frame(i, j + 1, state, action))
        except (RuleError, KeyError):
            return Replay(record, tuple(frames), i)
    return Replay(record, tuple(frames))


def at_least(needed: int, unknown: int, chance: float) -> float:
    """The chance that at least `needed` of `unknown` dice match, each with `chance`."""
    if needed <= 0:
        return 1.0
    if needed > unknown:
        return 0.0
    return sum(
        comb(unknown, k) * chance**k * (1.0 - chance) ** (unknown - k)
        for k in range(needed, unknown + 1)
    )


def exactly(needed: int, unknown: int, chance: float) -> float:
    """The chance that exactly `needed` of `unknown` dice match, each with `chance`."""
    if needed < 0 or needed > unknown:
        return 0.0
    return comb(unknown, needed) * chance**needed * (1.0 - chance) ** (unknown - needed)


def _known(state: State, seat: int | None) -> list[int]:
    """The faces `seat` sees at `state` (its hidden dice, and every die set aside face up);
    None: the table's view, the dice set aside alone."""
    shown = [face for faces in state.shown for face in faces]
    return shown if seat is None else [*state.hidden[seat], *shown]


def bid_odds(state: State, bid: Bid, seat: int | None) -> float:
    """How likely `bid` is true at `state` (the moment it is made or called), from what
    `seat` sees (None: the table's view): at least `bid.count` dice in play match it."""
    wild = pacos_wild(state)
    known = _known(state, seat)
    unknown = sum(state.counts) - len(known)
    chance = 2 / 6 if wild and bid.face != 1 else 1 / 6
    return at_least(bid.count - count_bid(bid, known, wild), unknown, chance)


def exact_odds(state: State, bid: Bid, seat: int | None) -> float:
    """How likely exactly `bid.count` dice in play match `bid` (a calza or jonti is right),
    from what `seat` sees (None: the table's view)."""
    wild = pacos_wild(state)
    known = _known(state, seat)
    unknown = sum(state.counts) - len(known)
    chance = 2 / 6 if wild and bid.face != 1 else 1 / 6
    return exactly(bid.count - count_bid(bid, known, wild), unknown, chance)


@dataclass(frozen=True, slots=True)
class MoveAnalysis:
    """One move of a replay, explained: frame `index` of the replay, its `seat`; `mover` the
    odds from the mover's view and `table` from the table's (a bid: that it is true; a call:
    that it is right; None for a move with no odds, a calzone or a show and reroll);
    `cost`: this move cost its mover a die (a bid a dudo rightly called, a wrong call)."""

    index: int
    seat: int
    mover: float | None
    table: float | None
    cost: bool


def analyse(replay: Replay) -> tuple[MoveAnalysis, ...]:
    """Every move of `replay` explained (`MoveAnalysis`), in order. A call is judged on the
    round's last bid, with the dice as they were when it was called."""
    moves: list[MoveAnalysis] = []
    frames = replay.frames
    for index, frame in enumerate(frames):
        action = frame.action
        if action is None or isinstance(action, Roll) or index == 0:
            continue
        before = frames[index - 1].state
        mover: float | None = None
        table: float | None = None
        cost = False
        match action:
            case PlaceBid(seat=seat, bid=bid):
                mover, table = bid_odds(before, bid, seat), bid_odds(before, bid, None)
                cost = _called_rightly(frames, index, seat)
            case Call(seat=seat, call=call) if before.bids:
                last = before.bids[-1].bid
                if call == "dudo":
                    mover = 1.0 - bid_odds(before, last, seat)
                    table = 1.0 - bid_odds(before, last, None)
                else:
                    mover, table = exact_odds(before, last, seat), exact_odds(before, last, None)
                result = frame.state.results[-1] if frame.state.results else None
                cost = result is not None and result.loser == seat
        moves.append(MoveAnalysis(index, action.seat, mover, table, cost))
    return tuple(moves)


def _called_rightly(frames: Sequence[Frame], index: int, seat: int) -> bool:
    """Whether the bid of frame `index` by `seat` was the one a dudo rightly called: the
    round's last bid, and its bidder lost the die."""
    frame = frames[index]
    for later in frames[index + 1 :]:
        if later.round != frame.round:
            return False
        action = later.action
        if isinstance(action, PlaceBid):
            return False  # another bid came after it
        if isinstance(action, Call):
            result = later.state.results[-1] if later.state.results else None
            return result is not None and result.bidder == seat and result.loser == seat
    return False


def bid_words(bid: Bid) -> str:
    """`3 × 4`; `2 × paco` (face 1, RECORD.md)."""
    return f"{bid.count} × {'paco' if bid.face == 1 else bid.face}"


def percent(odds: float) -> str:
    """`62 %`; `<1 %` and `>99 %` rather than a 0 or 100 that the dice did not make sure."""
    shown = round(100 * odds)
    if shown == 0 and odds > 0:
        return "<1 %"
    if shown == 100 and odds < 1:
        return ">99 %"
    return f"{shown} %"


def _move_words(action: Action) -> str:
    match action:
        case PlaceBid(bid=bid):
            return f"bids {bid_words(bid)}"
        case Call(call=call):
            return call
        case Reroll(reveal=reveal):
            return "shows " + " ".join(map(str, reveal)) + " and rerolls"
    return "calzone"


def analysis_text(record: Record) -> str:
    """`record` explained as text (English, as the referee speaks), one move a line: who, what,
    the mover's odds and the table's (`analyse`), `✗` on a move that cost its mover a die;
    each round headed by its hands and closed by its count; the winner last. A record the
    engine refuses is explained up to the refused round, which is named."""
    replay = replay_frames(record)
    names = record.players
    width = max(len(name) for name in names)
    lines = [
        f"Game of {', '.join(names)} ({record.options.preset})",
        "Odds: a bid's chance to be true, a call's to be right, from the mover's own dice and",
        "the dice set aside face up; then from the table's view, the dice set aside alone.",
        "✗: the move cost its mover a die.",
    ]
    moves = {move.index: move for move in analyse(replay)}
    for index, frame in enumerate(replay.frames):
        state = frame.state
        action = frame.action
        if action is None:
            hands = " | ".join(
                f"{names[seat]} {' '.join(map(str, state.hidden[seat]))}"
                for seat in range(len(names))
                if state.counts[seat]
            )
            special = f" · {state.special}" if state.special else ""
            lines += ["", f"Round {frame.round + 1}{special} · {names[state.opener]} opens"]
            lines.append(f"  dice: {hands}")
            continue
        if isinstance(action, Roll | Resign):
            continue
        move = moves.get(index)
        text = f"  {names[action.seat]:<{width}}  {_move_words(action):<18}"
        if move is not None and move.mover is not None and move.table is not None:
            label = "true" if isinstance(action, PlaceBid) else "right"
            text += f"  {label} {percent(move.mover):>5}  table {percent(move.table):>5}"
        if move is not None and move.cost:
            text += "  ✗"
        lines.append(text.rstrip())
        if isinstance(action, Call) and state.results:
            result = state.results[-1]
            outcome = (
                f"{names[result.loser]} loses a die"
                if result.loser is not None
                else f"{names[result.gainer]} gains a die"
                if result.gainer is not None
                else "no die changes hands"
            )
            lines.append(f"  counted {result.counted} for {bid_words(result.bid)}: {outcome}")
    if replay.fault_round is not None:
        lines += ["", f"Round {replay.fault_round + 1}: the rules refuse this record from here."]
    elif replay.frames and replay.frames[-1].state.winner is not None:
        lines += ["", f"Winner: {names[replay.frames[-1].state.winner]}"]
    return "\n".join(lines) + "\n"
