"""A player's statistics from literal game records: games, wins, places, right and wrong
dudos, calzas and jontis, the rating history (issue 4, the profile screen)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from perudo_ssh.ratings import DEFAULT, Rating, ordinal
from perudo_ssh.record import Record, decode_record
from perudo_ssh.referee import Verdict, verdict_of
from perudo_ssh.stats import (
    CallTally,
    GameTally,
    PlayerGame,
    PlayerStats,
    player_stats,
    stats_of_tallies,
    tally_game,
)


def bid(by: str, count: int, face: int) -> dict[str, Any]:
    return {"by": by, "bid": {"count": count, "face": face}}


def call(by: str, name: str) -> dict[str, Any]:
    return {"by": by, "call": name}


# Classic, calza on turn, two dice each. Round by round (checked by the referee):
# 0 cyd calza on 3x3, three 3s (one paco): right, cyd already at 2 dice, nobody changes
# 1 ben dudo on 3x6, three 6s: wrong, ben drops to 1   2 (palifico) ana dudo on 2x4, three 4s:
# wrong, ana drops to 1   3 (palifico) ben dudo on 2x2, one 2: right, ana is out
# 4 cyd calza on 2x5, three 5s: wrong, cyd drops to 1   5 (palifico) ben dudo on 1x2: wrong,
# ben is out; cyd wins
RECORD: dict[str, Any] = {
    "format": "perudo-record/1",
    "rules": {"preset": "classic", "calza": "on-turn", "dice_per_player": 2},
    "players": ["ana", "ben", "cyd"],
    "first_opener": "ana",
    "rounds": [
        {
            "dice": {"ana": [2, 3], "ben": [3, 5], "cyd": [1, 4]},
            "actions": [bid("ana", 2, 3), bid("ben", 3, 3), call("cyd", "calza")],
        },
        {
            "dice": {"ana": [6, 6], "ben": [2, 2], "cyd": [5, 1]},
            "actions": [bid("cyd", 2, 6), bid("ana", 3, 6), call("ben", "dudo")],
        },
        {
            "dice": {"ana": [4, 4], "ben": [4], "cyd": [1, 3]},
            "actions": [bid("ben", 1, 4), bid("cyd", 2, 4), call("ana", "dudo")],
        },
        {
            "dice": {"ana": [2], "ben": [6], "cyd": [3, 3]},
            "actions": [bid("ana", 2, 2), call("ben", "dudo")],
        },
        {
            "dice": {"ben": [5], "cyd": [1, 5]},
            "actions": [bid("ben", 2, 5), call("cyd", "calza")],
        },
        {
            "dice": {"ben": [3], "cyd": [2]},
            "actions": [bid("cyd", 1, 2), call("ben", "dudo")],
        },
    ],
}

# Club, two dice each, four players. 0: dan calls dudo on 4x5, four 5s (a paco): wrong, dan
# drops to 1. 1: dan opens (no calzone declared), ana raises to 3x4, and dan, out of turn,
# calls jonti: three 4s (a paco), right, dan is back to 2 dice. 2-7: each opener bids every
# die in play on 6 (none shows a 6 or a paco), the next calls dudo and is right; dan, ana
# and ben go out in turn; cyd wins.
CLUB: dict[str, Any] = {
    "format": "perudo-record/1",
    "rules": {"preset": "club", "dice_per_player": 2},
    "players": ["ana", "ben", "cyd", "dan"],
    "first_opener": "ana",
    "rounds": [
        {
            "dice": {"ana": [5, 5], "ben": [1, 2], "cyd": [5, 3], "dan": [2, 3]},
            "actions": [bid("ana", 2, 5), bid("ben", 3, 5), bid("cyd", 4, 5), call("dan", "dudo")],
        },
        {
            "dice": {"ana": [5, 2], "ben": [4, 4], "cyd": [3, 5], "dan": [1]},
            "actions": [bid("dan", 2, 4), bid("ana", 3, 4), call("dan", "jonti")],
        },
        {
            "dice": {"ana": [2, 3], "ben": [4, 5], "cyd": [2, 2], "dan": [3, 4]},
            "actions": [bid("dan", 8, 6), call("ana", "dudo")],
        },
        {
            "dice": {"ana": [2, 3], "ben": [4, 5], "cyd": [2, 2], "dan": [3]},
            "actions": [bid("dan", 7, 6), call("ana", "dudo")],
        },
        {
            "dice": {"ana": [2, 3], "ben": [4, 5], "cyd": [2, 2]},
            "actions": [bid("ana", 6, 6), call("ben", "dudo")],
        },
        {
            "dice": {"ana": [2], "ben": [4, 5], "cyd": [2, 2]},
            "actions": [bid("ana", 5, 6), call("ben", "dudo")],
        },
        {
            "dice": {"ben": [4, 5], "cyd": [2, 2]},
            "actions": [bid("ben", 4, 6), call("cyd", "dudo")],
        },
        {
            "dice": {"ben": [4], "cyd": [2, 2]},
            "actions": [bid("ben", 3, 6), call("cyd", "dudo")],
        },
    ],
}


def record(data: dict[str, Any] = RECORD) -> Record:
    return decode_record(json.dumps(data))


def verdict() -> Verdict:
    return verdict_of(record())


def test_the_literal_record_is_legal_and_ends_as_described() -> None:
    judged = verdict()
    assert judged.legal and judged.winner == "cyd" and judged.eliminated == ("ana", "ben")
    assert [(r.call, r.caller, r.counted, r.loser) for r in judged.rounds] == [
        ("calza", "cyd", 3, None),
        ("dudo", "ben", 3, "ben"),
        ("dudo", "ana", 3, "ana"),
        ("dudo", "ben", 1, "ana"),
        ("calza", "cyd", 3, "cyd"),
        ("dudo", "ben", 1, "ben"),
    ]


def test_one_game_per_player() -> None:
    game = record()
    assert tally_game(game, "cyd") == GameTally(
        players=3, place=1, calza=CallTally(called=2, right=1)
    )
    assert tally_game(game, "ben") == GameTally(
        players=3, place=2, dudo=CallTally(called=3, right=1)
    )
    assert tally_game(game, "ana") == GameTally(
        players=3, place=3, dudo=CallTally(called=1, right=0)
    )
    assert tally_game(game, "cyd").won is True  # type: ignore[union-attr]
    assert tally_game(game, "zoe") is None


def test_calls_after_leaving_are_the_bots() -> None:
    # ben left in round 4: his dudo of round 5 was the bot's; he still finishes second
    assert tally_game(record(), "ben", left_round=4) == GameTally(
        players=3, place=2, dudo=CallTally(called=2, right=1)
    )
    # cyd left in round 2: the bot in cyd's seat won, cyd finishes last with one calza
    assert tally_game(record(), "cyd", left_round=2) == GameTally(
        players=3, place=3, calza=CallTally(called=1, right=1)
    )


def test_totals_over_several_games_with_a_rating_history() -> None:
    after_one, after_three = Rating(27.0, 8.0), Rating(28.5, 7.5)
    games = [
        PlayerGame(record=record(), name="ben", rating=after_one),
        PlayerGame(record=record(), name="ben", left_round=4),  # an unrated game
        PlayerGame(record=record(), name="cyd", rating=after_three),  # seated as "cyd" then
    ]
    stats = player_stats(games)
    assert stats == PlayerStats(
        games=3,
        wins=1,
        places=(1, 2, 0, 0, 0, 0),
        dudo=CallTally(called=5, right=2),
        calza=CallTally(called=2, right=1),
        jonti=CallTally(),
        rating_history=(ordinal(after_one), ordinal(after_three)),
    )
    assert stats.dudo.right_share == pytest.approx(0.4)
    assert stats.jonti.right_share is None


def test_illegal_unfinished_and_strangers_records_count_for_nothing() -> None:
    broken = copy.deepcopy(RECORD)
    broken["rounds"][1]["actions"][0]["by"] = "ana"  # not ana's turn
    assert verdict_of(record(broken)).legal is False
    unfinished = copy.deepcopy(CLUB)
    del unfinished["rounds"][2:]
    judged = verdict_of(record(unfinished))
    assert judged.legal and judged.winner is None
    games = [
        PlayerGame(record=record(broken), name="ana", rating=DEFAULT),
        PlayerGame(record=record(unfinished), name="dan", rating=DEFAULT),
        PlayerGame(record=record(), name="zoe", rating=DEFAULT),
    ]
    assert player_stats(games) == PlayerStats()


def test_jontis_are_counted_apart_from_calzas() -> None:
    judged = verdict_of(record(CLUB))
    assert judged.legal, judged.error
    assert judged.rounds[1].call == "jonti" and judged.rounds[1].gainer == "dan"
    assert judged.eliminated == ("dan", "ana", "ben") and judged.winner == "cyd"
    tallies = {name: tally_game(record(CLUB), name) for name in CLUB["players"]}
    assert tallies == {
        "ana": GameTally(players=4, place=3, dudo=CallTally(2, 2)),
        "ben": GameTally(players=4, place=2, dudo=CallTally(2, 2)),
        "cyd": GameTally(players=4, place=1, dudo=CallTally(2, 2)),
        "dan": GameTally(players=4, place=4, dudo=CallTally(1, 0), jonti=CallTally(1, 1)),
    }


def test_stats_of_stored_tallies() -> None:
    won = GameTally(players=2, place=1, dudo=CallTally(1, 1))
    lost = GameTally(players=6, place=6, calza=CallTally(2, 0))
    assert stats_of_tallies([(won, Rating(26.0, 8.0)), (None, DEFAULT), (lost, None)]) == (
        PlayerStats(
            games=2,
            wins=1,
            places=(1, 0, 0, 0, 0, 1),
            dudo=CallTally(1, 1),
            calza=CallTally(2, 0),
            rating_history=(ordinal(Rating(26.0, 8.0)),),
        )
    )
