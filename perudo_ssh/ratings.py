"""Player ratings from a game's finishing order (issue 4): OpenSkill's Plackett–Luce model.

A rating is a belief about a player's skill: `mu` (the mean) and `sigma` (how unsure it is),
in OpenSkill's units (a newcomer is mu 25, sigma 25/3). Plackett–Luce rates one finishing
order of any number of players, which is what a Perudo game of 2–6 players ends with: the
winner first, then the players in the reverse of the order they went out (RULES.md §2.6,
RECORD.md verdict `winner` and `eliminated`).

Who is rated (decisions; RULES.md says nothing about ratings):

- Only people with an account (a key) have a rating. A bot or a guest is `None` in the
  finishing order and is **left out of the ranking**: the rated players are ranked among
  themselves in the order they finished. Bots are not fixed-rating opponents, because their
  strength has no measured value to give them, and beating bots must not farm a rating;
  finishing above a person still counts with bots at the table.
- A game is rated only when its table was created as rated *and* at least two rated people
  took part (`is_rated`): a ranking of one player says nothing.
- A player who leaves mid-game (a bot plays on in their seat) finishes when they left: below
  everyone still in the game then (`finishing_order`).

Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import msgspec
from openskill.models import PlackettLuce

if TYPE_CHECKING:
    from perudo_ssh.referee import Verdict

_MODEL: Final = PlackettLuce()
"""The library's default model (mu 25, sigma 25/3, beta 25/6, tau 25/300); keep it default so
ratings are exactly what `PlackettLuce().rate(...)` gives."""

DISPLAY_BASE: Final = 1000.0
"""The displayed rating (`ordinal`) of a newcomer, in points."""
DISPLAY_SCALE: Final = 20.0
"""Points per unit of OpenSkill's conservative skill estimate `mu - 3 sigma`."""


class Rating(msgspec.Struct, frozen=True):
    """One player's rating in OpenSkill's units: `mu` the estimated skill, `sigma` its
    uncertainty (both floats; a newcomer is `DEFAULT`)."""

    mu: float
    sigma: float


DEFAULT: Final = Rating(mu=_MODEL.mu, sigma=_MODEL.sigma)
"""A newcomer's rating: mu 25, sigma 25/3."""


def ordinal(rating: Rating) -> float:
    """The rating shown to players, in points: OpenSkill's usual ordinal `mu - 3 sigma` (a
    skill the player very likely has, 99.7 %), scaled to `DISPLAY_BASE + DISPLAY_SCALE *
    (mu - 3 sigma)`, which is `rating.ordinal(z=3, alpha=20, target=1000)` in the library.

    A newcomer shows 1000. It rises as games lower sigma, so steady play climbs slowly even at
    an even record; that is the point of a conservative estimate. Screens round it to an int.
    """
    return DISPLAY_BASE + DISPLAY_SCALE * (rating.mu - 3.0 * rating.sigma)


def leaderboard(ratings: Iterable[tuple[str, Rating]]) -> list[tuple[str, float]]:
    """`(name, ordinal)` for each player, best first; equal ratings by name (any case)."""
    shown = [(name, ordinal(rating)) for name, rating in ratings]
    return sorted(shown, key=lambda entry: (-entry[1], entry[0].casefold(), entry[0]))


def is_rated(rated_table: bool, order: Sequence[Rating | None]) -> bool:
    """Whether a game updates ratings: its table is rated (`rated_table`, the table option)
    and at least two entries of `order` are rated people (not None)."""
    return rated_table and sum(r is not None for r in order) >= 2


def rate(order: Sequence[Rating | None]) -> list[Rating | None]:
    """The ratings after one game, given everyone's rating before it in finishing order
    (winner first; `None` for a bot or a guest).

    Returns a list of the same length and order: `None` stays `None`, each rated player gets
    their new rating from Plackett–Luce over the rated players alone, ranked in the order they
    appear. With fewer than two rated players nothing changes (see `is_rated`).
    """
    rated = [r for r in order if r is not None]
    if len(rated) < 2:
        return list(order)
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in rated]
    new = iter(Rating(mu=team[0].mu, sigma=team[0].sigma) for team in _MODEL.rate(teams))
    return [None if r is None else next(new) for r in order]


def finishing_order(verdict: Verdict, left: Mapping[str, int] | None = None) -> list[str]:
    """Every player's name in finishing order, winner first, for a finished game's verdict
    (RECORD.md: `winner`, `eliminated` in the order they went out, each round's `dice`).

    `left` maps a person who left mid-game to the index of the round they left in: a bot then
    played their seat under their name, so what that seat did afterwards is not theirs. They
    finish below everyone still in the game in that round and above everyone out before it
    (a player eliminated at the end of that very round is out after them); of two who left in
    one round, the one listed later in `left` finishes higher. Without `left` the order is
    the winner then `eliminated` reversed.

    Raises `ValueError` for a game with no winner, or a `left` name that is not a player.
    """
    if verdict.winner is None:
        raise ValueError("an unfinished game has no finishing order")
    if not left:
        return [verdict.winner, *reversed(verdict.eliminated)]
    players = [verdict.winner, *verdict.eliminated]
    if not set(left) <= set(players):
        raise ValueError("a player who left is not a player of the game")
    out_in = rounds_out(players, [outcome.dice for outcome in verdict.rounds])
    # Exit times: (round, 0, i) for the i-th of `left`; (round, 1, j) for the j-th player
    # eliminated, at the end of that round (a club leaver's Resign comes after the call's
    # loser: RULES.md §6); a winner who stayed never exits.
    exits: dict[str, tuple[float, int, int]] = {}
    for i, (name, round_index) in enumerate(left.items()):
        exits[name] = (round_index, 0, i)
    for j, name in enumerate(verdict.eliminated):
        exits.setdefault(name, (out_in.get(name, len(verdict.rounds)), 1, j))
    exits.setdefault(verdict.winner, (math.inf, 0, 0))
    return sorted(players, key=lambda name: exits[name], reverse=True)


def rounds_out(players: Sequence[str], dice_after: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """The index of the round each player went out in, for those who did: `dice_after[i]` is
    round i's dice counts of the players still in after it (RECORD.md verdict `rounds[i].dice`),
    so a player goes out in the first round whose `dice` no longer lists them."""
    out: dict[str, int] = {}
    for i, dice in enumerate(dice_after):
        for name in players:
            if name not in dice and name not in out:
                out[name] = i
    return out
