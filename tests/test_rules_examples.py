"""RULES.md §8: the ten worked examples, each its own test, through `apply` with fixed dice."""

from __future__ import annotations

from perudo_ssh.rules import Bid, BidEntry, apply, legal_bids, new_game, options_for
from tests.test_rules_support import (
    bid,
    calza,
    code_of,
    dudo,
    game_with_counts,
    lose_die,
    play,
    roll,
)


def _legal(state, seat, count, face) -> bool:
    """Whether the bid is accepted by `apply` (and listed by `legal_bids`)."""
    listed = Bid(count=count, face=face) in legal_bids(state, seat)
    after = apply(state, bid(seat, count, face))
    assert after.bids[-1] == BidEntry(seat=seat, bid=Bid(count=count, face=face))
    assert listed
    return True


def test_example_1_after_5x4_count_or_face_and_half_the_count_in_pacos():
    state = roll(new_game(options_for("classic"), 2, 0))  # 10 dice in play
    state = apply(state, bid(0, 5, 4))
    for count, face in ((6, 4), (9, 4), (5, 6), (6, 2), (3, 1)):
        assert _legal(state, 1, count, face)
    for count, face in ((5, 3), (4, 6), (2, 1)):
        assert code_of(state, bid(1, count, face)) == "bid_not_higher"
        assert Bid(count=count, face=face) not in legal_bids(state, 1)


def test_example_2_after_11x4_six_pacos_not_five():
    state = roll(new_game(options_for("classic"), 3, 0))  # 15 dice in play
    state = apply(state, bid(0, 11, 4))
    assert _legal(state, 1, 6, 1)
    assert code_of(state, bid(1, 5, 1)) == "bid_not_higher"


def test_example_3_after_3_pacos_twice_plus_one_or_more_pacos():
    state = roll(new_game(options_for("classic"), 3, 0))
    state = play(state, bid(0, 5, 4), bid(1, 3, 1))
    assert _legal(state, 2, 7, 4)
    assert code_of(state, bid(2, 6, 6)) == "bid_not_higher"
    assert _legal(state, 2, 4, 1)
    assert code_of(state, bid(2, 3, 1)) == "bid_not_higher"
    assert min(b.count for b in legal_bids(state, 2) if b.face == 6) == 7


def test_example_4_one_at_a_time_after_5x3():
    state = roll(new_game(options_for("calza-anytime"), 2, 0))
    state = apply(state, bid(0, 5, 3))
    assert code_of(state, bid(1, 6, 4)) == "bid_not_higher"
    assert _legal(state, 1, 6, 3)
    assert _legal(state, 1, 5, 4)


def test_example_5_monotone_after_5x3():
    state = roll(new_game(options_for("club"), 2, 0))
    state = apply(state, bid(0, 5, 3))
    assert _legal(state, 1, 6, 4)
    assert code_of(state, bid(1, 6, 2)) == "bid_not_higher"


def test_example_6_palifico_round_face_locked_and_pacos_not_wild():
    state = game_with_counts(options_for("classic"), (1, 5, 5))  # seat 0 dropped 2 -> 1
    assert state.opener == 0 and state.one_die_seat == 0
    state = roll(state, {0: [3], 1: [3, 1, 1, 1, 1], 2: [3, 1, 1, 2, 2]})
    assert state.special == "palifico"
    state = apply(state, bid(0, 5, 3))
    assert _legal(state, 1, 7, 3)
    assert code_of(state, bid(1, 5, 4)) == "face_locked"
    assert code_of(state, bid(1, 6, 4)) == "face_locked"
    assert code_of(state, bid(1, 5, 3)) == "bid_not_higher"
    assert {b.face for b in legal_bids(state, 1)} == {3}
    # three 3s and seven pacos: with wild pacos 10, but in palifico only 3 count
    end = apply(state, dudo(1))
    result = end.results[-1]
    assert result.special == "palifico"
    assert result.counted == 3
    assert result.loser == 0
    assert end.counts == (0, 5, 5)


EXAMPLE_7_DICE = {0: [5, 1, 2, 3, 4], 1: [5, 1, 6], 2: [2, 3]}  # two 5s, two pacos, 10 dice


def _example_7_state(**overrides):
    state = game_with_counts(options_for("classic", **overrides), (5, 3, 2))
    assert state.opener == 2 and state.one_die_seat is None
    state = roll(state, EXAMPLE_7_DICE)
    assert state.dice_in_play == 10 and state.special is None
    return apply(state, bid(2, 4, 5))


def test_example_7_exact_bid_dudo_caller_loses():
    end = apply(_example_7_state(), dudo(0))
    result = end.results[-1]
    assert (result.counted, result.loser, result.gainer) == (4, 0, None)
    assert end.counts == (4, 3, 2)
    assert end.opener == 0


def test_example_7_exact_bid_calza_caller_gains():
    end = apply(_example_7_state(calza="on-turn"), calza(0))
    result = end.results[-1]
    assert (result.counted, result.loser, result.gainer) == (4, None, None)  # caller at 5
    state = _example_7_state(calza="anytime")
    end = apply(state, calza(1))  # seat 1 holds 3 dice
    result = end.results[-1]
    assert (result.call, result.caller, result.counted) == ("calza", 1, 4)
    assert (result.loser, result.gainer) == (None, 1)
    assert end.counts == (5, 4, 2)
    assert end.opener == 1


def test_example_8_same_dice_in_palifico_counted_2_bidder_loses():
    state = game_with_counts(options_for("classic"), (4, 5, 1))  # seat 2 dropped 2 -> 1
    state = roll(state, {0: [5, 1, 2, 3], 1: [4, 1, 6, 3, 4], 2: [5]})
    assert state.special == "palifico" and state.dice_in_play == 10
    state = play(state, bid(2, 3, 5), bid(0, 4, 5))
    end = apply(state, dudo(1))
    result = end.results[-1]
    assert (result.counted, result.bidder, result.loser) == (2, 0, 0)
    assert end.counts == (3, 5, 1)
    assert end.opener == 0


def test_example_9_last_die_lost_eliminated_next_seat_with_dice_opens():
    state = game_with_counts(options_for("classic"), (3, 1, 4, 2))
    assert state.opener == 3
    state = lose_die(state, 3)  # seat 3 now at 1 die, palifico next
    state = roll(state, fill=2)
    assert state.special == "palifico" and state.turn == 3
    end = play(state, bid(3, 2, 4), dudo(0))  # no 4s: seat 3 loses its last die
    assert end.counts == (3, 1, 4, 0)
    assert end.eliminated == (3,)
    assert end.opener == 0 and end.turn == 0  # wraps past the end of the table
    # seat 1 (1 die) goes out too; seat 2 is next with dice
    state = lose_die(end, 1)
    assert state.counts == (3, 0, 4, 0)
    assert state.eliminated == (3, 1)
    assert state.opener == 2
    assert state.winner is None and state.phase == "rolling"


def test_example_10_club_tokens_bid_on_pacos_short_by_two_pays_four():
    state = roll(new_game(options_for("club"), 3, 0), {0: [1, 2, 3, 4, 5]}, fill=6)
    state = play(state, bid(0, 5, 4), bid(1, 3, 1))
    end = apply(state, dudo(2))
    result = end.results[-1]
    assert (result.counted, result.loser) == (1, 1)
    assert result.payments == (0, 4, 0)
    assert end.tokens.bank == 30 + 4
    assert end.tokens.balances == (-10, -14, -10)
