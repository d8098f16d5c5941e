"""Ratings: a known finishing order moves ratings exactly the way OpenSkill's Plackett–Luce
model says (issue 4), bots and guests are left out, and the finishing order of a verdict."""

from __future__ import annotations

import pytest
from openskill.models import PlackettLuce

from perudo_ssh.ratings import (
    DEFAULT,
    Rating,
    finishing_order,
    is_rated,
    leaderboard,
    ordinal,
    rate,
    rounds_out,
)
from perudo_ssh.referee import Verdict, verdict_of
from tests.test_stats import RECORD, bid, call, record, verdict

EXACT = 1e-9


def library_rate(order: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """What the library itself gives for players (mu, sigma) finishing in this order."""
    model = PlackettLuce()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in order]
    return [
        (team[0].mu, team[0].sigma)
        for team in model.rate(teams, ranks=list(range(1, len(order) + 1)))
    ]


def assert_ratings(got: list[Rating | None], expected: list[tuple[float, float]]) -> None:
    assert len(got) == len(expected)
    for rating, (mu, sigma) in zip(got, expected, strict=True):
        assert rating is not None
        assert rating.mu == pytest.approx(mu, abs=EXACT, rel=0)
        assert rating.sigma == pytest.approx(sigma, abs=EXACT, rel=0)


def test_three_newcomers_move_as_the_library_says() -> None:
    new = rate([DEFAULT, DEFAULT, DEFAULT])
    assert_ratings(new, library_rate([(25.0, 25 / 3)] * 3))
    # the numbers themselves, so a library change that moves them is noticed
    assert_ratings(
        new,
        [
            (27.869048680749426, 8.205243377397993),
            (25.717262170187357, 8.058224222802378),
            (21.413689149063217, 8.058224222802378),
        ],
    )
    winner, second, last = new
    assert winner is not None and second is not None and last is not None
    assert winner.mu > DEFAULT.mu > last.mu
    assert ordinal(winner) > ordinal(DEFAULT) > ordinal(last)


def test_four_players_of_known_ratings_move_as_the_library_says() -> None:
    before = [(22.0, 6.5), (30.5, 4.25), (25.0, 25 / 3), (28.0, 3.0)]
    new = rate([Rating(mu, sigma) for mu, sigma in before])
    assert_ratings(new, library_rate(before))
    assert new[0] is not None and new[0].mu > 22.0  # the underdog won: up
    assert new[3] is not None and new[3].mu < 28.0  # the favourite came last: down


def test_bots_and_guests_are_left_out_of_the_ranking() -> None:
    ana, ben, cyd = Rating(26.0, 7.0), Rating(24.0, 8.0), Rating(25.0, 5.0)
    new = rate([None, ana, None, ben, cyd, None])
    assert new[0] is None and new[2] is None and new[5] is None
    # ranked among themselves, as a three-player game: ana, ben, cyd
    assert_ratings([new[1], new[3], new[4]], library_rate([(26.0, 7.0), (24.0, 8.0), (25.0, 5.0)]))


def test_fewer_than_two_rated_players_change_nothing() -> None:
    ana = Rating(26.0, 7.0)
    assert rate([None, ana, None]) == [None, ana, None]
    assert rate([]) == []
    assert is_rated(True, [None, ana, None]) is False
    assert is_rated(True, [ana, None, DEFAULT]) is True
    assert is_rated(False, [ana, DEFAULT]) is False


def test_ordinal_is_the_library_ordinal_in_points() -> None:
    assert ordinal(DEFAULT) == pytest.approx(1000.0, abs=EXACT)
    model = PlackettLuce()
    for mu, sigma in [(30.0, 2.0), (18.5, 7.25)]:
        expected = model.rating(mu=mu, sigma=sigma).ordinal(z=3.0, alpha=20, target=1000)
        assert ordinal(Rating(mu, sigma)) == pytest.approx(expected, abs=EXACT)
    assert ordinal(Rating(30.0, 2.0)) == pytest.approx(1000 + 20 * 24, abs=EXACT)


def test_the_leaderboard_is_best_first_then_by_name() -> None:
    top, mid = Rating(30.0, 2.0), Rating(26.0, 4.0)
    board = leaderboard([("cyd", DEFAULT), ("Ben", mid), ("ana", top), ("bea", mid)])
    assert board == [
        ("ana", pytest.approx(1480.0)),
        ("bea", pytest.approx(1280.0)),
        ("Ben", pytest.approx(1280.0)),
        ("cyd", pytest.approx(1000.0)),
    ]


def test_finishing_order_is_the_winner_then_the_eliminated_in_reverse() -> None:
    assert finishing_order(verdict()) == ["cyd", "ben", "ana"]


def test_a_player_who_left_finishes_when_they_left() -> None:
    # cyd left in round 2; the bot in cyd's seat went on to win: cyd finishes last,
    # ben (out at the end of round 5) first, ana (out at the end of round 3) second
    assert finishing_order(verdict(), {"cyd": 2}) == ["ben", "ana", "cyd"]
    # ana left in round 3, the very round she was out in: leaving comes first
    assert finishing_order(verdict(), {"ana": 3}) == ["cyd", "ben", "ana"]
    # two leavers in one round: the later one finishes higher
    assert finishing_order(verdict(), {"ben": 1, "ana": 1}) == ["cyd", "ana", "ben"]


def test_finishing_order_refuses_an_unfinished_game_and_strangers() -> None:
    unfinished = Verdict(
        legal=True, error=None, rounds=(), eliminated=(), winner=None, next_opener="ana"
    )
    with pytest.raises(ValueError, match="unfinished"):
        finishing_order(unfinished)
    with pytest.raises(ValueError, match="not a player"):
        finishing_order(verdict(), {"zoe": 1})


def test_rounds_out_reads_the_verdicts_dice() -> None:
    dice = [outcome.dice for outcome in verdict().rounds]
    assert rounds_out(RECORD["players"], dice) == {"ana": 3, "ben": 5}


def test_a_club_leaver_goes_out_after_the_rounds_loser() -> None:
    # RULES.md §6: ana drops to one die in round 0; in round 1 cyd leaves, and ana loses her
    # last die to ben's dudo; cyd is eliminated once the round ends, after ana, so ben wins
    # and cyd finishes second
    club = {
        "format": "perudo-record/1",
        "rules": {"preset": "club", "dice_per_player": 2},
        "players": ["ana", "ben", "cyd"],
        "first_opener": "ana",
        "rounds": [
            {
                "dice": {"ana": [2, 3], "ben": [3, 4], "cyd": [4, 5]},
                "actions": [bid("ana", 6, 6), call("ben", "dudo")],
            },
            {
                "dice": {"ana": [2], "ben": [3, 4], "cyd": [4, 5]},
                "actions": [bid("ana", 5, 6), call("ben", "dudo")],
                "left": ["cyd"],
            },
        ],
    }
    judged = verdict_of(record(club))
    assert judged.legal and judged.eliminated == ("ana", "cyd") and judged.winner == "ben"
    assert finishing_order(judged) == ["ben", "cyd", "ana"]
    assert rounds_out(club["players"], [r.dice for r in judged.rounds]) == {"ana": 1, "cyd": 1}
    # with a leaver of another kind in the same game, the call's loser still goes out first
    assert finishing_order(judged, {"ben": 0}) == ["cyd", "ana", "ben"]
