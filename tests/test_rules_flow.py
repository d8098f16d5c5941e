"""Round flow: next opener (RULES.md §2.7), no gain above the maximum (§2.9), counting (§2.4),
palifico and calzone rounds (§3–§4), exact calls (§5) and club tokens (§6)."""

from __future__ import annotations

from perudo_ssh.rules import (
    Bid,
    DeclareCalzone,
    Tokens,
    apply,
    count_bid,
    legal_actions,
    legal_bids,
    new_game,
    opening_leaders,
    options_for,
)
from tests.test_rules_support import (
    bid,
    calza,
    code_of,
    dudo,
    game_with_counts,
    jonti,
    lose_die,
    play,
    roll,
)

# ---- §2.2 and §2.4 -------------------------------------------------------------------------


def test_opening_leaders_highest_total_and_ties():
    assert opening_leaders([7, 11, 3]) == (1,)
    assert opening_leaders([6, 6, 2, 6]) == (0, 1, 3)
    assert opening_leaders([None, 4, None, 5]) == (3,)  # re-roll among tied seats only


def test_count_bid_pacos_wild_only_when_asked_and_not_for_pacos():
    faces = [1, 1, 5, 5, 3, 6]
    assert count_bid(Bid(count=1, face=5), faces, wild=True) == 4
    assert count_bid(Bid(count=1, face=5), faces, wild=False) == 2
    assert count_bid(Bid(count=1, face=1), faces, wild=True) == 2
    assert count_bid(Bid(count=1, face=4), faces, wild=True) == 2


def test_new_game_counts_tokens_and_refusals():
    state = new_game(options_for("club"), 4, 2)
    assert state.counts == (5, 5, 5, 5)
    assert (state.phase, state.opener, state.turn) == ("rolling", 2, 2)
    assert state.tokens == Tokens(bank=40, balances=(-10, -10, -10, -10))
    assert new_game(options_for("classic"), 2, 0).tokens is None
    for seats, opener in ((1, 0), (7, 0), (3, 3), (3, -1)):
        try:
            new_game(options_for("classic"), seats, opener)
        except ValueError:
            continue
        raise AssertionError((seats, opener))


# ---- §2.5 and §2.7: who loses, who opens next ----------------------------------------------


def test_dudo_on_short_bid_bidder_loses_and_opens():
    state = roll(new_game(options_for("classic"), 3, 1), {1: [4, 4, 1, 2, 2]})
    state = play(state, bid(1, 4, 4))  # three 4s with the paco
    end = apply(state, dudo(2))
    r = end.results[-1]
    assert (r.counted, r.bidder, r.caller, r.loser) == (3, 1, 2, 1)
    assert end.counts == (5, 4, 5) and end.opener == 1 and end.turn == 1
    assert roll(end).turn == 1


def test_dudo_on_true_bid_caller_loses_and_opens_the_next_round():
    state = roll(new_game(options_for("classic"), 3, 1), {1: [4, 4, 1, 2, 2]})
    end = play(state, bid(1, 2, 4), bid(2, 3, 4), dudo(0))
    r = end.results[-1]
    assert (r.counted, r.bidder, r.caller, r.loser, r.opener) == (3, 2, 0, 0, 1)
    assert end.counts == (4, 5, 5)
    nxt = roll(end)
    assert nxt.turn == 0 and nxt.opener == 0 and nxt.bids == ()


def test_failed_calza_caller_loses_and_opens():
    state = roll(new_game(options_for("classic", calza="on-turn"), 3, 0), {0: [3, 3, 2, 2, 2]})
    end = play(state, bid(0, 3, 3), calza(1))
    r = end.results[-1]
    assert (r.counted, r.loser, r.gainer) == (2, 1, None)
    assert end.counts == (5, 4, 5) and end.opener == 1


def test_correct_calza_at_the_maximum_gains_nothing_and_caller_opens():
    state = roll(new_game(options_for("classic", calza="on-turn"), 3, 0), {0: [3, 3, 2, 2, 2]})
    end = play(state, bid(0, 2, 3), calza(1))
    r = end.results[-1]
    assert (r.counted, r.loser, r.gainer) == (2, None, None)
    assert end.counts == (5, 5, 5) and end.opener == 1 and end.one_die_seat is None


def test_lost_die_comes_back_by_calza_but_never_above_the_maximum():
    state = game_with_counts(options_for("calza-anytime"), (4, 5, 5))
    state = roll(state, {0: [3, 2, 2, 2]})
    end = play(state, bid(0, 1, 3), calza(2))
    assert end.counts == (4, 5, 5)  # caller 2 at the maximum: nothing
    state = roll(end, {0: [3, 2, 2, 2]})
    end = play(state, bid(2, 1, 3), calza(0))
    assert end.counts == (5, 5, 5) and end.results[-1].gainer == 0
    state = roll(end, {0: [3, 2, 2, 2, 2]})
    end = play(state, bid(0, 1, 3), calza(1))
    assert end.counts == (5, 5, 5) and end.results[-1].gainer is None
    assert max(end.counts) == 5


def test_caller_eliminated_by_failed_calza_next_seat_opens():
    state = game_with_counts(options_for("calza-anytime"), (5, 5, 1))
    state = roll(state, {2: [2]}, fill=4)
    assert state.turn == 2 and state.special == "palifico"
    end = play(state, bid(2, 3, 4), bid(0, 4, 4), calza(2))  # nine 4s: calza fails
    assert end.counts == (5, 5, 0) and end.eliminated == (2,)
    assert end.opener == 0


def test_jonti_gainer_opens_and_failed_jonti_loser_opens():
    state = roll(game_with_counts(options_for("club"), (4, 4, 4, 4)), fill=3)
    state = apply(state, bid(3, 16, 3))
    end = apply(state, jonti(2))
    r = end.results[-1]
    assert (r.call, r.counted, r.gainer, r.loser) == ("jonti", 16, 2, None)
    assert end.counts == (4, 4, 5, 4) and end.opener == 2
    end = apply(apply(state, bid(0, 16, 4)), jonti(2))  # no 4s, no pacos
    r = end.results[-1]
    assert (r.counted, r.gainer, r.loser) == (0, None, 2)
    assert end.counts == (4, 4, 3, 4) and end.opener == 2


def test_last_player_with_dice_wins():
    state = game_with_counts(options_for("classic"), (0, 1, 1))
    state = lose_die(state, 1)
    assert state.phase == "over" and state.winner == 2
    assert state.eliminated == (0, 1)
    assert [legal_actions(state, s) for s in range(3)] == [[], [], []]


# ---- §4: palifico ----------------------------------------------------------------------------


def test_palifico_every_time_a_player_drops_from_two_to_one():
    state = game_with_counts(options_for("classic", calza="on-turn"), (2, 5, 5))
    assert roll(state).special is None
    state = lose_die(state, 0)
    assert state.one_die_seat == 0
    palifico = roll(state)
    assert palifico.special == "palifico" and palifico.turn == 0
    # the round after the palifico round is normal again, even though seat 0 has one die
    state = lose_die(state, 1)
    assert state.counts == (1, 4, 5) and state.one_die_seat is None
    assert roll(state).special is None
    # seat 0 gains back a die by calza, then drops from 2 to 1 again: palifico again
    state = roll(state, {0: [3]})
    state = play(state, bid(1, 1, 3), calza(2))
    state = roll(state, {0: [3]})
    state = play(state, bid(2, 1, 3), calza(0))
    assert state.counts == (2, 4, 5)
    state = lose_die(state, 0)
    assert roll(state).special == "palifico"
    # a different player dropping to one die: palifico too
    state = game_with_counts(options_for("classic"), (1, 2, 5))
    state = lose_die(state, 1)
    assert state.counts == (1, 1, 5)
    assert roll(state).special == "palifico" and roll(state).turn == 1


def test_palifico_round_pacos_not_wild_opener_may_open_on_pacos_face_1_lowest():
    state = game_with_counts(options_for("classic"), (1, 5, 5))
    state = roll(state, {0: [1], 1: [1, 1, 6, 6, 2], 2: [2, 3, 3, 4, 4]})
    assert state.special == "palifico"
    assert Bid(count=1, face=1) in legal_bids(state, 0)
    state = apply(state, bid(0, 2, 1))
    assert code_of(state, bid(1, 2, 2)) == "face_locked"
    assert {b.face for b in legal_bids(state, 1)} == {1}
    assert min(b.count for b in legal_bids(state, 1)) == 3
    end = apply(apply(state, bid(1, 4, 1)), dudo(2))  # three pacos only
    assert (end.results[-1].counted, end.results[-1].loser) == (3, 1)


def test_palifico_never_when_special_round_off():
    state = game_with_counts(options_for("classic", special_round="off"), (1, 5, 5))
    assert state.one_die_seat == 0
    state = roll(state)
    assert state.special is None
    assert code_of(state, bid(0, 1, 1)) == "opening_on_pacos"


def test_palifico_one_die_players_may_change_face_with_that_option():
    options = options_for("classic", special_face_change="one-die-players")
    state = game_with_counts(options, (1, 5, 1))  # seat 2 dropped last: palifico
    state = roll(state)
    assert state.special == "palifico" and state.turn == 2
    state = play(state, bid(2, 2, 3), bid(0, 2, 4))  # seat 0 holds one die: may change
    assert code_of(state, bid(1, 3, 5)) == "face_locked"
    state = apply(state, bid(1, 3, 4))
    apply(state, bid(2, 3, 6))
    assert code_of(state, bid(2, 2, 6)) == "bid_not_higher"


def test_special_round_face_1_ranks_lowest_for_a_player_who_may_change_face():
    options = options_for("classic", special_face_change="one-die-players")
    state = roll(game_with_counts(options, (1, 5, 1)))
    state = play(state, bid(2, 3, 2))
    assert state.turn == 0 and state.counts[0] == 1
    assert code_of(state, bid(0, 3, 1)) == "bid_not_higher"  # pacos rank below 2s
    assert Bid(count=3, face=3) in legal_bids(state, 0)
    assert [b for b in legal_bids(state, 0) if b.face == 1][0] == Bid(count=4, face=1)
    assert code_of(state, bid(0, 12, 1)) == "count_out_of_range"  # 11 dice in play
    state = apply(state, bid(0, 4, 1))
    assert code_of(state, bid(1, 12, 2)) == "count_out_of_range"  # before face_locked
    assert code_of(state, bid(1, 5, 2)) == "face_locked"


# ---- §4: calzone ---------------------------------------------------------------------------


def _club_one_die():
    state = roll(
        game_with_counts(options_for("club"), (5, 1, 5)),
        {0: [1, 1, 2, 2, 2], 1: [1], 2: [2, 3, 3, 3, 4]},
    )
    assert state.one_die_seat == 1 and state.turn == 1
    return state


def test_calzone_only_when_declared():
    undeclared = _club_one_die()
    assert undeclared.special is None
    end = play(undeclared, bid(1, 5, 2), dudo(2))  # pacos wild: 4 twos + 3 pacos
    assert (end.results[-1].special, end.results[-1].counted) == (None, 7)
    assert DeclareCalzone(seat=1) in legal_actions(undeclared, 1)
    declared = apply(undeclared, DeclareCalzone(seat=1))
    assert declared.special == "calzone"
    end = play(declared, bid(1, 5, 2), dudo(2))
    assert (end.results[-1].special, end.results[-1].counted) == ("calzone", 4)
    assert end.results[-1].loser == 1
    assert end.counts == (5, 0, 5) and end.opener == 2


def test_calzone_round_open_on_pacos_and_face_change_for_one_die_players_only():
    state = apply(_club_one_die(), DeclareCalzone(seat=1))
    state = apply(state, bid(1, 2, 1))  # opens on pacos: ordinary lowest face
    assert code_of(state, bid(2, 3, 2)) == "face_locked"  # seat 2 holds 5 dice
    state = apply(state, bid(2, 3, 1))
    state = apply(state, bid(0, 4, 1))
    # seat 1 (one die) may change face; monotone over ranks 1 < 2 < … < 6
    assert Bid(count=4, face=2) in legal_bids(state, 1)
    assert code_of(state, bid(1, 3, 6)) == "bid_not_higher"
    state = apply(state, bid(1, 4, 2))
    assert code_of(state, bid(2, 4, 3)) == "face_locked"
    end = apply(apply(state, bid(2, 5, 2)), dudo(0))
    assert (end.results[-1].counted, end.results[-1].loser) == (4, 2)


def test_jonti_allowed_in_calzone_round():
    state = roll(game_with_counts(options_for("club"), (4, 4, 4, 1)), fill=2)
    assert state.one_die_seat == 3
    state = play(state, DeclareCalzone(seat=3), bid(3, 2, 2))
    assert code_of(state, jonti(0)) == "jonti_not_allowed"  # seat 0 is to act
    end = apply(state, jonti(1))
    r = end.results[-1]
    assert (r.special, r.counted, r.loser) == ("calzone", 13, 1)
    assert r.payments == (0, 11, 0, 0)


# ---- §6: tokens ----------------------------------------------------------------------------


def _club(seats=3, dice=None, fill=6):
    return roll(new_game(options_for("club"), seats, 0), dice or {}, fill=fill)


def _check_bank(state):
    assert state.tokens.bank + sum(state.tokens.balances) == 0


def test_tokens_dudo_bid_short_bidder_pays_the_difference():
    state = play(_club(dice={0: [4, 4, 1, 2, 2]}), bid(0, 8, 4))
    end = apply(state, dudo(1))
    r = end.results[-1]
    assert (r.counted, r.loser, r.payments) == (3, 0, (5, 0, 0))
    assert end.tokens == Tokens(bank=35, balances=(-15, -10, -10))
    _check_bank(end)


def test_tokens_dudo_bid_over_caller_pays_the_difference():
    state = play(_club(), bid(0, 4, 6))  # fifteen 6s
    end = apply(state, dudo(1))
    r = end.results[-1]
    assert (r.counted, r.loser, r.payments) == (15, 1, (0, 11, 0))
    assert end.tokens == Tokens(bank=41, balances=(-10, -21, -10))
    _check_bank(end)


def test_tokens_dudo_perfect_bid_caller_pays_one():
    state = play(_club(dice={0: [1, 2, 3, 4, 5]}), bid(0, 11, 6))
    end = apply(state, dudo(1))
    r = end.results[-1]
    assert (r.counted, r.loser, r.payments) == (11, 1, (0, 1, 0))
    assert end.tokens == Tokens(bank=31, balances=(-10, -11, -10))


def test_tokens_failed_jonti_pays_the_difference_either_way():
    base = roll(game_with_counts(options_for("club"), (4, 4, 4, 4)), {0: [3, 3, 3, 3]}, fill=2)
    before = base.tokens
    over = apply(apply(base, bid(3, 2, 3)), jonti(1))  # counted 4, bid 2
    assert over.results[-1].payments == (0, 2, 0, 0)
    assert over.tokens.bank == before.bank + 2
    under = apply(apply(base, bid(3, 7, 3)), jonti(2))  # counted 4, bid 7
    assert under.results[-1].payments == (0, 0, 3, 0)
    assert under.tokens.balances[2] == before.balances[2] - 3
    _check_bank(over)
    _check_bank(under)


def test_tokens_correct_jonti_takes_one_back():
    base = roll(game_with_counts(options_for("club"), (4, 4, 4, 4)), {0: [3, 3, 3, 3]}, fill=2)
    before = base.tokens
    end = apply(apply(base, bid(3, 4, 3)), jonti(1))
    r = end.results[-1]
    assert (r.counted, r.gainer, r.payments) == (4, 1, (0, -1, 0, 0))
    assert end.tokens.bank == before.bank - 1
    assert end.tokens.balances[1] == before.balances[1] + 1
    _check_bank(end)


def test_tokens_doubled_on_wild_pacos():
    # bid 2 pacos, counted 6 (over by 4): the caller pays 8
    state = play(_club(dice={0: [1, 1, 1, 1, 1], 1: [1, 2, 2, 2, 2]}), bid(0, 3, 5), bid(1, 2, 1))
    end = apply(state, dudo(2))
    assert (end.results[-1].counted, end.results[-1].payments) == (6, (0, 0, 8))
    # failed jonti on pacos: doubled too
    base = roll(game_with_counts(options_for("club"), (4, 4, 4, 4)), {0: [1, 2, 2, 2]}, fill=2)
    base = play(base, bid(3, 4, 2), bid(0, 3, 1))
    end = apply(base, jonti(2))
    assert (end.results[-1].counted, end.results[-1].payments) == (1, (0, 0, 4, 0))


def test_tokens_perfect_bid_on_pacos_still_pays_one():
    """RULES.md §6 doubles "those differences"; a perfect bid has none, so it stays 1."""
    state = play(_club(dice={0: [1, 1, 2, 2, 2]}), bid(0, 3, 5), bid(1, 2, 1))
    end = apply(state, dudo(2))
    assert (end.results[-1].counted, end.results[-1].payments) == (2, (0, 0, 1))


def test_tokens_not_doubled_on_pacos_in_calzone_round():
    state = apply(_club_one_die(), DeclareCalzone(seat=1))  # pacos: seat 0 two, seat 1 one
    end = play(state, bid(1, 6, 1), dudo(2))
    r = end.results[-1]
    assert (r.counted, r.loser, r.payments) == (3, 1, (0, 3, 0))


def test_winner_takes_the_bank_and_balances_sum_with_bank_to_zero():
    state = new_game(options_for("club", dice_per_player=1), 3, 0)
    state = roll(state, {0: [2], 1: [3], 2: [4]})
    state = play(state, bid(0, 3, 5), dudo(1))  # seat 0 short by 3, out
    assert state.tokens == Tokens(bank=33, balances=(-13, -10, -10))
    state = roll(state, {1: [3], 2: [4]})
    state = play(state, bid(1, 1, 4), bid(2, 2, 4), dudo(1))  # seat 2 short by 1, out
    assert state.winner == 1 and state.phase == "over"
    r = state.results[-1]
    assert r.payments == (0, -34, 1)
    assert state.tokens == Tokens(bank=0, balances=(-13, 24, -11))
    assert r.tokens == state.tokens
    _check_bank(state)


def test_no_tokens_without_stake_and_stake_as_an_override():
    end = play(roll(new_game(options_for("classic"), 2, 0)), bid(0, 3, 4), dudo(1))
    assert end.tokens is None and end.results[-1].tokens is None
    assert end.results[-1].payments == (0, 0)
    staked = new_game(options_for("classic", stake=3), 2, 0)
    end = play(roll(staked, fill=3), bid(0, 4, 4), dudo(1))
    assert end.results[-1].payments == (4, 0)
    assert end.tokens == Tokens(bank=10, balances=(-7, -3))


def test_tokens_calza_pays_like_jonti_when_stakes_and_calza_are_on():
    """Engine decision (engine.py docstring): with stakes, calza pays like jonti."""
    options = options_for("calza-anytime", stake=5)
    state = roll(new_game(options, 3, 0), {0: [3, 3, 2, 2, 2]})
    fail = play(state, bid(0, 4, 3), calza(2))
    assert fail.results[-1].payments == (0, 0, 2)
    ok = play(state, bid(0, 2, 3), calza(2))
    assert ok.results[-1].payments == (0, 0, -1)
    assert ok.tokens.bank == 14
