"""What a bot believes of the dice it cannot see (RULES.md §2.4): the chance a bid is true
or exact, from one seat's view only (`observe(state, seat)`).

Two models, one interface (`at_least`, `exactly`, `held`, `wild`): `Odds`, for the easy and
medium bots, takes the unseen dice as independent fair dice (the number that count for a bid
is binomial: p = 1/3 per unknown die for a non-paco face when pacos are wild, 1/6 for pacos
or in a special round), reading each opponent's latest bid as one die of its face; `Belief`,
for the hard bot (issue 14), weighs every hand each opponent may hold by how likely it made
that opponent's bids this round, and computes the chances exactly under that. Separate from
`bots` because these are probability models, not choices: `bots` decides a move from them.
Pure: no randomness, no I/O.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations_with_replacement
from math import comb, exp, factorial

from perudo_ssh.rules import Bid, GameView, count_bid


def p_die(face: int, wild: bool) -> float:
    """The chance that one unseen fair die counts for a bid on `face`: 1/3 for a face while
    pacos are wild (RULES.md §2), else 1/6."""
    return 1 / 3 if wild and face != 1 else 1 / 6


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
        return p_die(face, self.wild)

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


HARD_SHARPNESS = 5.0
"""How strongly the hard bot believes a bid's face is one its bidder holds: the weight of a
face is exp(HARD_SHARPNESS × the dice that count for it) (`Belief`)."""

HARD_READING = 14.0
"""At tables of more than two, how strongly the hard bot believes a bidder chose the face
most likely true from its own hand (`Belief`). Tuned in the arena, six seats against five
mediums: 4 won 14.4 %, 8 24.6 %, 14 27.2 %, 20 24.9 %, 30 26.0 % (2,000-2,500 games each);
14 then won 26.4 % [25.6, 27.3] over 10,000."""

HARD_BLUFF = 0.02
"""The share of bids the hard bot reads as saying nothing of the bidder's hand (`Belief`)."""


@cache
def _binomial_tail(n: int, p: float) -> tuple[float, ...]:
    """P(X >= k) for k = 0..n+1, X ~ Binomial(n, p)."""
    pmf = [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    tail = [0.0] * (n + 2)
    for k in range(n, -1, -1):
        tail[k] = tail[k + 1] + pmf[k]
    return tuple(tail)


@cache
def _hands(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every hand of `n` fair dice as a sorted tuple, with its probability."""
    hands = []
    for hand in combinations_with_replacement(range(1, 7), n):
        ways = factorial(n)
        for face in set(hand):
            ways //= factorial(hand.count(face))
        hands.append((hand, ways / 6**n))
    return tuple(hands)


class Belief:
    """The hard bot's reading of the table (issue 14): each opponent's hidden dice are a
    hand of fair dice weighed by how likely it made the bids that opponent made this round,
    except for a share `HARD_BLUFF` of bids that say nothing. Heads-up, the face of each bid
    is one it holds more of (weight exp(`HARD_SHARPNESS` × the dice that count for it),
    softmax over the six faces). With more players, whose bids follow each other's, the face
    is the one most likely true from the bidder's own hand among the same count on each face
    (weight exp(`HARD_READING` × that chance), the bidder's unseen dice fair): at six seats
    against five medium bots this won 26.4 % over 10,000 games where the first reading won
    23.7 % (comparing a paco bid with twice its count on other faces won 25.7 %). The chance
    that a bid is true (or exact) is then exact under that model: the opponents' counts for
    the face, convolved, plus the dice the bot sees."""

    def __init__(self, view: GameView) -> None:
        assert view.me is not None
        self.view = view
        mine = view.seats[view.me]
        self.seen = tuple(mine.hidden or ()) + tuple(f for s in view.seats for f in s.shown)
        self.wild = view.wild
        bids: dict[int, list[Bid]] = {}
        for entry in view.bids:
            if entry.seat != view.me:
                bids.setdefault(entry.seat, []).append(entry.bid)
        self.hidden_dice = sum(s.dice - len(s.shown) for s in view.seats)
        self.reading = HARD_READING if sum(1 for s in view.seats if s.dice) > 2 else 0.0
        # each opponent with hidden dice: every hand it may hold, as (the dice that count for
        # each face, the hand's weight given its bids), worked out once per decision
        self.others = [
            (s.dice - len(s.shown), self._posterior(s.dice - len(s.shown), bids.get(s.seat, [])))
            for s in view.seats
            if s.seat != view.me and s.dice > len(s.shown)
        ]
        self._totals: dict[int, list[float]] = {}

    def _counts(self, hand: tuple[int, ...]) -> list[int]:
        """The dice of `hand` that count for each face 1..6 (index 0 unused)."""
        ones = hand.count(1)
        return [0] + [hand.count(f) + (ones if self.wild and f != 1 else 0) for f in range(1, 7)]

    def _posterior(self, n: int, bids: list[Bid]) -> list[tuple[list[int], float]]:
        """The hands of `n` dice with their weights, normalised, given `bids`."""
        weighted = []
        unknown = max(0, self.hidden_dice - n)  # what the bidder could not see
        tails = [_binomial_tail(unknown, p_die(f, self.wild)) for f in range(7)]
        for hand, prior in _hands(n):
            counts = self._counts(hand)
            weight = prior
            if bids and self.reading:
                # the bidder's choice of face at that count: faces as likely true from its
                # own hand as a softmax of `HARD_READING` x that chance
                for bid in bids:
                    chances = [0.0]
                    for f in range(1, 7):
                        need = bid.count - counts[f]  # the same count on each face
                        chances.append(
                            1.0 if need <= 0 else tails[f][need] if need <= unknown else 0.0
                        )
                    exps = [exp(self.reading * chances[f]) for f in range(1, 7)]
                    share = exps[bid.face - 1] / sum(exps)
                    weight *= HARD_BLUFF / 6 + (1 - HARD_BLUFF) * share
            elif bids:
                exps = [exp(HARD_SHARPNESS * counts[f]) for f in range(1, 7)]
                norm = sum(exps)
                for bid in bids:
                    weight *= HARD_BLUFF / 6 + (1 - HARD_BLUFF) * exps[bid.face - 1] / norm
            weighted.append((counts, weight))
        scale = sum(weight for _, weight in weighted)
        return [(counts, weight / scale) for counts, weight in weighted]

    def _total(self, face: int) -> list[float]:
        """P(the opponents' hidden dice count exactly k for `face`), k = 0.. (cached)."""
        if face in self._totals:
            return self._totals[face]
        total = [1.0]
        for n, hands in self.others:
            dist = [0.0] * (n + 1)
            for counts, weight in hands:
                dist[counts[face]] += weight
            merged = [0.0] * (len(total) + n)
            for i, a in enumerate(total):
                if a:
                    for k, b in enumerate(dist):
                        merged[i + k] += a * b
            total = merged
        self._totals[face] = total
        return total

    def at_least(self, bid: Bid) -> float:
        """P(the bid is true) under the belief."""
        need = bid.count - count_bid(bid, self.seen, self.wild)
        total = self._total(bid.face)
        return 1.0 if need <= 0 else sum(total[need:])

    def exactly(self, bid: Bid) -> float:
        """P(exactly `count` dice count for the bid) under the belief."""
        need = bid.count - count_bid(bid, self.seen, self.wild)
        total = self._total(bid.face)
        return total[need] if 0 <= need < len(total) else 0.0

    def held(self, bid: Bid) -> int:
        """How many of the bot's own dice count for the bid."""
        mine = self.view.seats[self.view.me]  # type: ignore[index]
        return count_bid(bid, tuple(mine.hidden or ()) + mine.shown, self.wild)
