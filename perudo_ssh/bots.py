"""Probability-based bots: a pure choice from one seat's view (RULES.md §2–§5).

`choose(view, rng)` looks only at what its seat may see (`observe(state, seat)`): its own
dice, the dice counts, the dice set aside, the bids. The dice it cannot see are modelled as
independent fair dice, so the number of them that count for a bid is binomial: p = 1/3 per
unknown die for a non-paco face when pacos are wild, 1/6 for pacos or in a special round.
It only ever returns something offered in `view.choices`, so it is always legal.

At a club table (RULES.md §4–§6): a bot declares the calzone round it is offered half the
time (`CALZONE_CHANCE`); right after its own bid it shows the hidden dice that count for that
bid and re-rolls the others (`show_after_bid`), now and then, when it holds both kinds. It
never calls jonti: jonti is called out of turn, and a bot acts only on its turn (the lobby
asks it then, never in between).
"""

from __future__ import annotations

import random
from math import comb

from perudo_ssh import protocol
from perudo_ssh.rules import Bid, GameView, count_bid

DUDO_BELOW = (0.33, 0.40)
"""Call dudo when the current bid is true with a probability below a threshold drawn here."""

BID_AT_LEAST = (0.45, 0.60)
"""A raise is reasonable when true with at least this probability (drawn per decision)."""

OPEN_AT_LEAST = (0.55, 0.75)
"""An opening bid is pushed as high as stays true with at least this probability."""

CALZA_AT_LEAST = 0.45
"""Call calza when the current bid is exactly right with at least this probability."""

CALZONE_CHANCE = 0.5
"""How often a bot declares the calzone round it is offered (RULES.md §4)."""

REROLL_CHANCE = 0.5
"""How often a bot shows and rerolls after its bid, when it may (RULES.md §6)."""


class Odds:
    """What one seat knows about the dice in play: the faces it sees (its own hidden dice and
    every die set aside), one die per other bidder assumed to show its latest bid's face,
    and how many dice are left unknown."""

    def __init__(self, view: GameView) -> None:
        assert view.me is not None
        mine = view.seats[view.me]
        self.wild = view.wild
        self.own = tuple(mine.hidden or ()) + mine.shown
        # Read each other bidder's latest bid as holding one die of its face: bids carry
        # information, and ignoring it makes a bot doubt (or calza) a bid that says so.
        latest = {entry.seat: entry.bid.face for entry in view.bids if entry.seat != view.me}
        assumed = tuple(
            face
            for seat, face in latest.items()
            if view.seats[seat].dice > len(view.seats[seat].shown)
        )
        self.seen = (
            tuple(mine.hidden or ()) + tuple(f for s in view.seats for f in s.shown) + assumed
        )
        self.unknown = sum(s.dice - len(s.shown) for s in view.seats if s.seat != view.me) - len(
            assumed
        )
        self._pmfs: dict[float, list[float]] = {}
        self._tails: dict[float, list[float]] = {}

    def p_die(self, face: int) -> float:
        """The chance that one unseen die counts for a bid on `face`."""
        return 1 / 3 if self.wild and face != 1 else 1 / 6

    def _need(self, bid: Bid) -> int:
        return bid.count - count_bid(bid, self.seen, self.wild)

    def _binomial(self, p: float) -> tuple[list[float], list[float]]:
        """P(X = k) and P(X >= k) for k = 0..unknown, X ~ Binomial(unknown, p); cached."""
        if p not in self._pmfs:
            n = self.unknown
            pmf = [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
            tail = [0.0] * (n + 2)
            for k in range(n, -1, -1):
                tail[k] = tail[k + 1] + pmf[k]
            self._pmfs[p], self._tails[p] = pmf, tail
        return self._pmfs[p], self._tails[p]

    def at_least(self, bid: Bid) -> float:
        """P(the bid is true): at least `count` dice count for it."""
        need = self._need(bid)
        if need <= 0:
            return 1.0
        if need > self.unknown:
            return 0.0
        return min(1.0, self._binomial(self.p_die(bid.face))[1][need])

    def exactly(self, bid: Bid) -> float:
        """P(exactly `count` dice count for the bid): a calza wins."""
        need = self._need(bid)
        if not 0 <= need <= self.unknown:
            return 0.0
        return self._binomial(self.p_die(bid.face))[0][need]

    def held(self, bid: Bid) -> int:
        """How many of the seat's own dice count for the bid."""
        return count_bid(bid, self.own, self.wild)


def choose(view: GameView, rng: random.Random) -> protocol.Command | None:
    """The bot's move for seat `view.me`: a `MakeBid`, `MakeCall` or `DeclareCalzone`, taken
    from `view.choices`; None when it has nothing to do (not its turn, no game)."""
    choices = view.choices
    if view.me is None or view.phase != "bidding":
        return None
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


def _may_gain(view: GameView) -> bool:
    """Whether a right calza would give the bot a die back (RULES.md §2.9, §5): at full dice it
    only risks one, and bots calling it again and again could make a game never end."""
    assert view.me is not None
    return view.seats[view.me].dice < view.options.dice_per_player


def show_after_bid(view: GameView, rng: random.Random) -> protocol.ShowAndReroll | None:
    """Show and reroll right after the bot's own bid (RULES.md §6), or None.

    Offered only when `view.choices.reroll`. The bot sets aside the hidden dice that count
    for its bid (its face, and pacos when wild) — they back the bid in everyone's eyes — and
    re-rolls the rest, each of which may count too. Only when it holds at least one of each
    (so one die stays hidden), and then with chance `REROLL_CHANCE`."""
    if view.me is None or not view.choices.reroll or not view.bids:
        return None
    hidden = view.seats[view.me].hidden or ()
    bid = view.bids[-1].bid
    backing = tuple(f for f in hidden if count_bid(bid, (f,), view.wild))
    if not backing or len(backing) == len(hidden) or rng.random() >= REROLL_CHANCE:
        return None
    return protocol.ShowAndReroll(reveal=backing)


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


def automatic_move(view: GameView) -> protocol.MakeBid | protocol.MakeCall:
    """The move made for a player whose turn timer ran out (issue 5): never illegal, never
    random, and as modest as the player's own dice allow.

    A bid is *supported* when its count is at most what the player's own dice give it (hidden
    and set aside, pacos wild when `view.wild`) plus the expected share of the dice they cannot
    see (1/3 of them for a non-paco face when pacos are wild, else 1/6). The move is the
    supported legal bid of smallest count (ties: the best-supported, then the lowest face; a
    switch to pacos while they are wild only when no other face is supported); with none
    supported, dudo where `view.choices.dudo`; else (an opening bid, or dudo not
    allowed) the best-supported legal bid of smallest count. Raises ValueError when the
    view offers neither a bid nor dudo (it is not this seat's turn)."""
    choices = view.choices
    if view.me is None or not (choices.bids or choices.dudo):
        raise ValueError("no move to make: not this seat's turn")
    mine = view.seats[view.me]
    own = tuple(mine.hidden or ()) + mine.shown
    unknown = view.dice_in_play - len(own)

    def margin(bid: Bid) -> float:
        p = 1 / 3 if view.wild and bid.face != 1 else 1 / 6
        return count_bid(bid, own, view.wild) + unknown * p - bid.count

    # a switch to pacos while they are wild halves the count but is no smaller a raise:
    # the plain faces come first
    ranked = sorted(
        choices.bids, key=lambda b: (view.wild and b.face == 1, b.count, -margin(b), b.face)
    )
    supported = [b for b in ranked if margin(b) >= 0]
    if supported:
        bid = supported[0]
    elif choices.dudo:
        return protocol.MakeCall(call="dudo")
    else:
        bid = max(ranked, key=lambda b: (margin(b), -b.count, -b.face))
    return protocol.MakeBid(count=bid.count, face=bid.face)
