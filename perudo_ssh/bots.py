"""Probability-based bots: a pure choice from one seat's view (RULES.md §2–§5).

`choose(view, rng)` looks only at what its seat may see (`observe(state, seat)`): its own
dice, the dice counts, the dice set aside, the bids. The dice it cannot see are modelled as
independent fair dice, so the number of them that count for a bid is binomial: p = 1/3 per
unknown die for a non-paco face when pacos are wild, 1/6 for pacos or in a special round.
It only ever returns something offered in `view.choices`, so it is always legal.

Three levels (issue 14), `LEVELS`: `medium` as above; `easy` makes a beginner's mistakes on
purpose (it bids its own face too high, calls dudo late, never calza); `hard` weighs every
option by the chance it wins — dudo by the chance the bid is false, a calza by the chance it
is exact, a raise by the chance it is true — and takes the best, with a little noise between
near-equal options so that its bids cannot be read; it reads every bid of every opponent
this round as telling which faces they hold (`Belief`: a posterior over each opponent's hand,
computed exactly). The two models of the unseen dice, `Odds` and `Belief`, are in
`perudo_ssh.odds`; this module decides moves from them.

At a club table (RULES.md §4–§6): a bot declares the calzone round it is offered half the
time (`CALZONE_CHANCE`; `hard`: when 8 dice or fewer are in play, a rough rule); right after
its own bid it may show the hidden dice that count for that bid and re-roll the others
(`show_after_bid`) when it holds both kinds: now and then, or (`hard`) when that makes the
bid likelier true by `HARD_REROLL_GAIN` (arena, club: hard vs medium 70.1 % heads-up and
40.3 % at six seats, against 62.1 % and 33.1 % with the coin). Out of turn (`off_turn`),
medium and hard call calza or jonti when its odds say it is worth it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from math import comb

from perudo_ssh import protocol
from perudo_ssh.odds import Belief, Odds, p_die
from perudo_ssh.rules import Bid, Call, GameView, State, count_bid, observe

DUDO_BELOW = (0.33, 0.40)
"""Call dudo when the current bid is true with a probability below a threshold drawn here."""

BID_AT_LEAST = (0.45, 0.60)
"""A raise is reasonable when true with at least this probability (drawn per decision)."""

OPEN_AT_LEAST = (0.55, 0.75)
"""An opening bid is pushed as high as stays true with at least this probability."""

CALZA_AT_LEAST = 0.45
"""Call calza when the current bid is exactly right with at least this probability."""

LEVELS = ("easy", "medium", "hard")
"""The bots' strengths, weakest first (issue 14); `medium` is the bot of the first releases."""

EASY_DUDO_BELOW = (0.10, 0.20)
"""`easy` calls dudo late: only when the bid is true with a probability below this."""

EASY_BID_AT_LEAST = (0.15, 0.30)
"""`easy` raises on its own face while the raise is true with at least this probability."""

HARD_STEP = (-0.002, 0.01)
"""What each die of a raise's count adds to its score for the hard bot: heads-up, and with
more players (tuned in the arena: at six seats +0.01 won 23.7 % against five mediums, 3,000
games, where −0.002 won 21.6 %)."""

HARD_NOISE = 0.03
"""`hard` picks at random among options whose chances are within this of the best."""

HARD_REROLL_GAIN = 0.03
"""The hard bot shows and rerolls after its bid when that makes the bid likelier true by at
least this (`show_after_bid`)."""

CALZONE_CHANCE = 0.5
"""How often a bot declares the calzone round it is offered (RULES.md §4)."""

REROLL_CHANCE = 0.5
"""How often a bot shows and rerolls after its bid, when it may (RULES.md §6)."""


def choose(view: GameView, rng: random.Random, level: str = "medium") -> protocol.Command | None:
    """The move of a bot of `level` (`LEVELS`) for seat `view.me`: a `MakeBid`, `MakeCall` or
    `DeclareCalzone`, taken from `view.choices`; None when it has nothing to do (no game, or
    not its turn and no out-of-turn call worth making: `off_turn`). Raises ValueError for an
    unknown level."""
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}")
    if view.me is None or view.phase != "bidding":
        return None
    if view.turn != view.me:
        return off_turn(view, level)
    if level == "easy":
        return _easy(view, rng)
    if level == "hard":
        return _hard(view, rng)
    return _medium(view, rng)


def off_turn(view: GameView, level: str = "medium") -> protocol.MakeCall | None:
    """An out-of-turn call (RULES.md §3 calza any time, §5 jonti) when it is worth it by the
    odds the bot uses on its turn: the last bid exact with at least `CALZA_AT_LEAST` and
    more likely exact than false, and a right call gives a die back (`_may_gain`); else
    None. `easy` never calls out of turn."""
    choices = view.choices
    if level == "easy" or not view.bids or not (choices.calza or choices.jonti):
        return None
    if not _may_gain(view):
        return None
    odds: Odds | Belief = Belief(view) if level == "hard" else Odds(view)
    last = view.bids[-1].bid
    exact = odds.exactly(last)
    if exact >= max(CALZA_AT_LEAST, 1 - odds.at_least(last)):
        return protocol.MakeCall(call="calza" if choices.calza else "jonti")
    return None


def out_of_turn_calls(
    state: State,
    levels: Sequence[str | None],
    turn: int,
    decide: Callable[[GameView, str], protocol.MakeCall | None] = off_turn,
) -> Iterator[Call]:
    """The calls out of turn on the last bid (RULES.md §3 calza any time, §5 jonti) the bots
    would make before the bot at seat `turn` moves: each seat after `turn`, in seat order,
    that is a bot (`levels[seat]` its level; None for a person) with dice left, asked from
    its own view by `decide` (`off_turn`; the arena passes a timed one). The caller applies
    the first it can (`lobby.bot_turns.bot_move`, the arena); nothing when no bid is on the
    table."""
    if not state.bids:
        return
    n = len(levels)
    for step in range(1, n):
        seat = (turn + step) % n
        level = levels[seat]
        if level is None or not state.counts[seat]:
            continue
        call = decide(observe(state, seat), level)
        if call is not None:
            yield Call(seat=seat, call=call.call)


def _medium(view: GameView, rng: random.Random) -> protocol.Command | None:
    """The medium bot on its turn (the module docstring)."""
    choices = view.choices
    if choices.calzone and rng.random() < CALZONE_CHANCE:
        return protocol.DeclareCalzone()
    odds = Odds(view)
    last = view.bids[-1].bid if view.bids else None
    if last is not None:
        p_true = odds.at_least(last)
        if (
            choices.calza
            and _may_gain(view)
            and odds.exactly(last) >= max(CALZA_AT_LEAST, 1 - p_true)
        ):
            return protocol.MakeCall(call="calza")
        if choices.dudo and p_true < rng.uniform(*DUDO_BELOW):
            return protocol.MakeCall(call="dudo")
    if choices.bids:
        bid, p_bid = _pick_bid(view, odds, rng, opening=last is None)
        # When no raise is likely, doubting the last bid may still be the better bet.
        if last is None or not choices.dudo or p_bid >= 1 - odds.at_least(last):
            return protocol.MakeBid(count=bid.count, face=bid.face)
    if choices.dudo:
        return protocol.MakeCall(call="dudo")
    if choices.calza:
        return protocol.MakeCall(call="calza")
    return None


def _easy(view: GameView, rng: random.Random) -> protocol.Command | None:
    """The easy bot on its turn: dudo only on a very unlikely bid (`EASY_DUDO_BELOW`), else a
    raise on the face it holds most while that stays at all plausible (`EASY_BID_AT_LEAST`),
    else the likeliest raise; calzone half the time; never calza."""
    choices = view.choices
    if choices.calzone and rng.random() < CALZONE_CHANCE:
        return protocol.DeclareCalzone()
    odds = Odds(view)
    last = view.bids[-1].bid if view.bids else None
    if last is not None and choices.dudo and odds.at_least(last) < rng.uniform(*EASY_DUDO_BELOW):
        return protocol.MakeCall(call="dudo")
    if choices.bids:
        faces = {b.face for b in choices.bids}
        favourite = max(faces, key=lambda f: (odds.held(Bid(count=1, face=f)), f != 1, f))
        floor = rng.uniform(*EASY_BID_AT_LEAST)
        mine = [b for b in choices.bids if b.face == favourite and odds.at_least(b) >= floor]
        if mine:  # the highest it dares when opening, the smallest raise after
            bid = max(mine, key=lambda b: b.count) if last is None else mine[0]
        else:
            bid = max(choices.bids, key=lambda b: (odds.at_least(b), -b.count))
        return protocol.MakeBid(count=bid.count, face=bid.face)
    if choices.dudo:
        return protocol.MakeCall(call="dudo")
    return None


def _hard(view: GameView, rng: random.Random) -> protocol.Command | None:
    """The hard bot on its turn: every option scored by the chance it wins, the best taken
    (among those within `HARD_NOISE` of it, at random). A raise scores its chance of being
    true; among raises about as likely, `HARD_STEP` prefers a count. A calzone round
    (RULES.md §4) is declared when 8 dice or fewer are in play: a rough rule, not tuned."""
    choices = view.choices
    if choices.calzone and view.dice_in_play <= 8:
        return protocol.DeclareCalzone()
    odds = Belief(view)
    last = view.bids[-1].bid if view.bids else None
    options: list[tuple[float, protocol.Command]] = []
    if last is not None:
        p_true = odds.at_least(last)
        if choices.dudo:
            options.append((1 - p_true, protocol.MakeCall(call="dudo")))
        if choices.calza and _may_gain(view):
            options.append((odds.exactly(last), protocol.MakeCall(call="calza")))
    # among raises about as likely: heads-up the smallest step, with more players a higher
    # count (the risk passes on to the next players; `HARD_STEP`)
    step = HARD_STEP[0] if sum(1 for s in view.seats if s.dice) <= 2 else HARD_STEP[1]
    for bid in choices.bids:
        held = min(odds.held(bid), 3)
        # a raise that is true loses nothing; the faces held are preferred (they also
        # mislead least about the bot's hand)
        score = odds.at_least(bid) + 0.01 * held + step * bid.count
        options.append((score, protocol.MakeBid(count=bid.count, face=bid.face)))
    if not options:
        return None
    best = max(score for score, _ in options)
    near = [command for score, command in options if score >= best - HARD_NOISE]
    return rng.choice(near)


def _may_gain(view: GameView) -> bool:
    """Whether a right calza would give the bot a die back (RULES.md §2.9, §5): at full dice it
    only risks one, and bots calling it again and again could make a game never end."""
    assert view.me is not None
    return view.seats[view.me].dice < view.options.dice_per_player


def show_after_bid(
    view: GameView, rng: random.Random, level: str = "medium"
) -> protocol.ShowAndReroll | None:
    """Show and reroll right after the bot's own bid (RULES.md §6), or None.

    Offered only when `view.choices.reroll`. The bot sets aside the hidden dice that count
    for its bid (its face, and pacos when wild) — they back the bid in everyone's eyes — and
    re-rolls the rest, each of which may count too. Only when it holds at least one of each
    (so one die stays hidden), and then: `hard` when it makes the bid likelier true by at
    least `HARD_REROLL_GAIN` (the dice re-rolled can only add to its count: `_reroll_gain`),
    the others with chance `REROLL_CHANCE`."""
    if view.me is None or not view.choices.reroll or not view.bids:
        return None
    hidden = view.seats[view.me].hidden or ()
    bid = view.bids[-1].bid
    backing = tuple(f for f in hidden if count_bid(bid, (f,), view.wild))
    if not backing or len(backing) == len(hidden):
        return None
    if level == "hard":
        gain = _reroll_gain(view, bid, len(hidden) - len(backing))
        return protocol.ShowAndReroll(reveal=backing) if gain >= HARD_REROLL_GAIN else None
    if rng.random() >= REROLL_CHANCE:
        return None
    return protocol.ShowAndReroll(reveal=backing)


def _reroll_gain(view: GameView, bid: Bid, rerolled: int) -> float:
    """How much likelier `bid` (the bot's own, just made) is true once its `rerolled` dice
    that do not count for it are rolled again: those count for nothing now, and each may
    after (chance 1/3 for a face while pacos are wild, else 1/6), the opponents' dice read
    as the hard bot reads them (`Belief`)."""
    belief = Belief(view)
    need = bid.count - count_bid(bid, belief.seen, belief.wild)
    if need <= 0:
        return 0.0
    others = belief._total(bid.face)  # the opponents' dice that count, k = 0..
    p = p_die(bid.face, belief.wild)
    after = sum(
        comb(rerolled, k) * p**k * (1 - p) ** (rerolled - k) * sum(others[max(0, need - k) :])
        for k in range(rerolled + 1)
    )
    return after - sum(others[need:])


def _pick_bid(view: GameView, odds: Odds, rng: random.Random, opening: bool) -> tuple[Bid, float]:
    """A reasonable bid among `view.choices.bids` and its probability of being true.

    Opening: the face the bot holds most of, pushed as high as stays likely. Raising: the
    most likely raise, faces it holds preferred, a little noise; if none is likely enough,
    the least unlikely one."""
    bids = view.choices.bids
    scored = [(odds.at_least(b), b) for b in bids]
    if opening:
        faces = sorted({b.face for b in bids})
        best_held = max(odds.held(Bid(count=1, face=f)) for f in faces)
        face = rng.choice([f for f in faces if odds.held(Bid(count=1, face=f)) == best_held])
        floor = rng.uniform(*OPEN_AT_LEAST)
        mine = [(p, b) for p, b in scored if b.face == face]
        likely = [(p, b) for p, b in mine if p >= floor]
        if likely:
            p, bid = max(likely, key=lambda pb: pb[1].count)
        else:
            p, bid = max(mine, key=lambda pb: pb[0])
        return bid, p
    floor = rng.uniform(*BID_AT_LEAST)
    likely = [(p, b) for p, b in scored if p >= floor] or scored

    def score(pb: tuple[float, Bid]) -> float:
        p, b = pb
        return p + 0.08 * min(odds.held(b), 3) / 3 + rng.uniform(0, 0.04)

    p, bid = max(likely, key=score)
    return bid, p


class _Steady:
    """Stands in for the medium bot's random draws in `automatic_move`: the middle of every
    range, never a chance move (calzone, show and reroll), the first of equal choices."""

    def uniform(self, low: float, high: float) -> float:
        return (low + high) / 2

    def random(self) -> float:
        return 1.0

    def choice(self, options: list[int]) -> int:
        return options[0]


def automatic_move(view: GameView) -> protocol.MakeBid | protocol.MakeCall:
    """The move made for a player whose turn timer ran out (issue 5): never illegal, never
    random — the medium bot's play without its noise (issue 14: "medium's safe play"): every
    threshold at the middle of its range (`DUDO_BELOW`, `BID_AT_LEAST`, `OPEN_AT_LEAST`), no
    calzone, the first of equal choices. It reads the bids as the medium bot does (each
    other bidder's latest face as one of their dice). In the arena (`bench/bench_bots.py`,
    classic, 4,000 games) it wins 68.5 % heads-up against the textbook bot, where the
    modest move it replaces (the smallest raise its own dice supported) won 41.4 %.
    Raises ValueError when the view offers neither a bid nor dudo (it is not this seat's
    turn)."""
    choices = view.choices
    if view.me is None or view.turn != view.me or not (choices.bids or choices.dudo):
        raise ValueError("no move to make: not this seat's turn")
    command = _medium(view, _Steady())  # type: ignore[arg-type]
    if isinstance(command, protocol.MakeBid | protocol.MakeCall):
        return command
    # not reached: on its turn the medium bot bids or calls; the plainest legal move
    return (
        protocol.MakeCall(call="dudo")
        if choices.dudo
        else protocol.MakeBid(count=choices.bids[0].count, face=choices.bids[0].face)
    )
