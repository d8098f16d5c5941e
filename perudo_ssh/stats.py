"""A player's statistics from stored game records (issue 4: the profile screen).

Everything here is a pure function of `perudo-record/1` records (RECORD.md), replayed by the
referee: games, wins, finishing places, how many dudos, calzas and jontis a player called and
how many were right, and their rating after each rated game for a sparkline.

A record names seats, not accounts, so the caller says which seat was the player's
(`PlayerGame.name`: at a table a second "ana" sits as "ana-2") and, for someone who left
mid-game, from which round a bot played that seat (`left_round`): what the seat did from
then on is not theirs. Records that the referee finds illegal or unfinished are not counted
(the server stores only finished games; a damaged one must not break a profile).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from perudo_ssh.ratings import Rating, finishing_order, ordinal
from perudo_ssh.record import Record
from perudo_ssh.referee import RoundOutcome, Verdict, verdict_of


class CallTally(msgspec.Struct, frozen=True):
    """Calls of one kind: `called` how many, `right` how many of them were right — a dudo
    when the bid was short (counted < count, RULES.md §2.5), a calza or jonti when the bid was
    exact (counted == count, §5)."""

    called: int = 0
    right: int = 0

    @property
    def right_share(self) -> float | None:
        """`right / called` (0.0–1.0), or None before any call."""
        return self.right / self.called if self.called else None

    def __add__(self, other: CallTally) -> CallTally:
        return CallTally(self.called + other.called, self.right + other.right)


class GameTally(msgspec.Struct, frozen=True, kw_only=True):
    """One player's part in one finished game: `place` 1 (won) to the number of players
    (`players`), by `ratings.finishing_order`; `won` is `place == 1`; the calls they made."""

    players: int
    place: int
    dudo: CallTally = CallTally()
    calza: CallTally = CallTally()
    jonti: CallTally = CallTally()

    @property
    def won(self) -> bool:
        """Whether the player won the game."""
        return self.place == 1


class PlayerGame(msgspec.Struct, frozen=True, kw_only=True):
    """One game of a player, as stored: the `record`, the player's seat `name` in it, the
    index of the round they left in (`left_round`, None if they stayed to the end) and their
    `rating` after the game (None when the game was not rated for them)."""

    record: Record
    name: str
    left_round: int | None = None
    rating: Rating | None = None


class PlayerStats(msgspec.Struct, frozen=True, kw_only=True):
    """A player's totals over their games: `games` finished games counted, `wins`, `places`
    (how many times they finished 1st, 2nd, …: `places[0]` is wins), the calls they made and
    how many were right, and `rating_history`: the displayed rating (`ratings.ordinal`, points)
    after each rated game, oldest first, for a sparkline."""

    games: int = 0
    wins: int = 0
    places: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    dudo: CallTally = CallTally()
    calza: CallTally = CallTally()
    jonti: CallTally = CallTally()
    rating_history: tuple[float, ...] = ()


def call_was_right(outcome: RoundOutcome) -> bool:
    """Whether the round's closing call was right: a dudo when the bid was short
    (RULES.md §2.5), a calza or jonti when it was exact (§5)."""
    if outcome.call == "dudo":
        return outcome.counted < outcome.bid.count
    return outcome.counted == outcome.bid.count


def tally_verdict(verdict: Verdict, name: str, left_round: int | None = None) -> GameTally | None:
    """`name`'s `GameTally` from a finished game's verdict (RECORD.md), or None when the
    verdict is illegal, the game unfinished, or `name` not one of its players. Calls made in
    round `left_round` or later are not counted (a bot played the seat)."""
    if not verdict.legal or verdict.winner is None:
        return None
    if name != verdict.winner and name not in verdict.eliminated:
        return None
    order = finishing_order(verdict, None if left_round is None else {name: left_round})
    calls = {"dudo": CallTally(), "calza": CallTally(), "jonti": CallTally()}
    for i, outcome in enumerate(verdict.rounds):
        if outcome.caller != name or (left_round is not None and i >= left_round):
            continue
        calls[outcome.call] += CallTally(1, int(call_was_right(outcome)))
    return GameTally(players=len(order), place=order.index(name) + 1, **calls)


def tally_game(record: Record, name: str, left_round: int | None = None) -> GameTally | None:
    """`tally_verdict` of the referee's verdict on `record` (replays the whole game)."""
    return tally_verdict(verdict_of(record), name, left_round)


def player_stats(games: Iterable[PlayerGame]) -> PlayerStats:
    """A player's `PlayerStats` over `games`, oldest first. Games whose record is illegal or
    unfinished, or that do not seat `name`, count for nothing, their rating included."""
    return stats_of_tallies(
        (tally_game(game.record, game.name, game.left_round), game.rating) for game in games
    )


def stats_of_tallies(
    tallies: Iterable[tuple[GameTally | None, Rating | None]],
) -> PlayerStats:
    """`PlayerStats` from already computed tallies, each with the player's rating after that
    game (None: unrated), oldest first; a None tally counts for nothing. For a store that
    keeps each game's tally instead of replaying records."""
    games = wins = 0
    places = [0] * 6
    totals = {"dudo": CallTally(), "calza": CallTally(), "jonti": CallTally()}
    history: list[float] = []
    for tally, rating in tallies:
        if tally is None:
            continue
        games += 1
        wins += tally.won
        places[tally.place - 1] += 1
        totals["dudo"] += tally.dudo
        totals["calza"] += tally.calza
        totals["jonti"] += tally.jonti
        if rating is not None:
            history.append(ordinal(rating))
    return PlayerStats(
        games=games,
        wins=wins,
        places=tuple(places),
        rating_history=tuple(history),
        **totals,
    )
