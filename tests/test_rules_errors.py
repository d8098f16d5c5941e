"""Every RECORD.md error code the engine raises, and the precedence between them."""

from __future__ import annotations

from perudo_ssh.rules import (
    ERROR_CODES,
    Bid,
    DeclareCalzone,
    Reroll,
    Roll,
    RuleError,
    apply,
    legal_actions,
    new_game,
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


def test_error_codes_are_record_md_table_in_order():
    assert ERROR_CODES == (
        "game_over",
        "unknown_player",
        "dice_mismatch",
        "action_after_call",
        "not_your_turn",
        "face_out_of_range",
        "count_out_of_range",
        "opening_on_pacos",
        "face_locked",
        "bid_not_higher",
        "nothing_to_call",
        "calza_not_allowed",
        "jonti_not_allowed",
        "calzone_not_allowed",
        "reroll_not_allowed",
        "round_unfinished",
    )
    err = RuleError("bid_not_higher", "too low")
    assert (err.code, err.message, str(err)) == (
        "bid_not_higher",
        "too low",
        "bid_not_higher: too low",
    )


# ---- game_over, unknown_player, dice_mismatch, action_after_call, round_unfinished ----------


def _finished_game():
    state = new_game(options_for("club", dice_per_player=1), 2, 0)
    state = roll(state, {0: [2], 1: [3]})
    return play(state, bid(0, 1, 4), dudo(1))


def test_game_over_for_every_action_after_the_winner():
    state = _finished_game()
    assert (state.phase, state.winner, state.counts) == ("over", 1, (0, 1))
    for action in (
        Roll(dice=((), (2,))),
        bid(1, 1, 2),
        dudo(1),
        calza(1),
        jonti(1),
        DeclareCalzone(seat=1),
        Reroll(seat=1, reveal=(2,), new_faces=()),
    ):
        assert code_of(state, action) == "game_over"
    # game_over wins over unknown_player (seat 0 is out, seat 9 never existed)
    assert code_of(state, bid(0, 1, 2)) == "game_over"
    assert code_of(state, dudo(9)) == "game_over"
    assert legal_actions(state, 1) == []


def test_unknown_player_seat_outside_the_table_or_eliminated():
    state = roll(new_game(options_for("classic"), 3, 0))
    for seat in (-1, 3, 6):
        assert code_of(state, bid(seat, 1, 2)) == "unknown_player"
        assert code_of(state, dudo(seat)) == "unknown_player"
    out = game_with_counts(options_for("club"), (0, 4, 4))
    out = roll(out)
    assert out.opener == 2
    out = apply(out, bid(2, 1, 2))
    for action in (
        bid(0, 2, 2),
        dudo(0),
        calza(0),
        jonti(0),
        DeclareCalzone(seat=0),
        Reroll(seat=0, reveal=(2,), new_faces=(3,)),
    ):
        assert code_of(out, action) == "unknown_player"


def test_unknown_player_wins_over_action_after_call():
    """After a call: a seat that was already out, or no seat at all, is unknown_player (first in
    RECORD.md's table); the player who just lost their last die to this call is still at the
    table until the round ends (as the referee reads it), so they get action_after_call."""
    state = new_game(options_for("classic", dice_per_player=1), 4, 0)
    state = roll(state, {0: [2], 1: [3], 2: [4], 3: [5]})
    state = play(state, bid(0, 1, 6), dudo(1))  # seat 0 out
    state = roll(state, {1: [2], 2: [3], 3: [4]})
    state = play(state, bid(1, 1, 6), dudo(2))  # seat 1 out
    assert state.phase == "rolling" and state.counts == (0, 0, 1, 1)
    assert code_of(state, bid(0, 2, 2)) == "unknown_player"
    assert code_of(state, dudo(0)) == "unknown_player"
    assert code_of(state, dudo(7)) == "unknown_player"
    assert code_of(state, bid(1, 2, 2)) == "action_after_call"
    assert code_of(state, bid(2, 2, 2)) == "action_after_call"
    # once the next round is rolled, seat 1 is out for good
    state = roll(state, {2: [2], 3: [3]})
    assert code_of(state, bid(1, 1, 2)) == "unknown_player"


def test_dice_mismatch():
    state = game_with_counts(options_for("classic"), (5, 3, 0))
    good = ((2, 2, 2, 2, 2), (3, 3, 3), ())
    assert apply(state, Roll(dice=good)).hidden == good
    for dice in (
        good[:2],  # a player missing
        good + ((),),  # a seat too many
        ((2, 2, 2, 2), (3, 3, 3), ()),  # too few dice
        ((2, 2, 2, 2, 2, 2), (3, 3, 3), ()),  # too many dice
        ((2, 2, 2, 2, 2), (3, 3, 3), (4,)),  # dice for an eliminated player
        ((2, 2, 2, 2, 7), (3, 3, 3), ()),  # face above 6
        ((2, 2, 2, 2, 0), (3, 3, 3), ()),  # face below 1
    ):
        assert code_of(state, Roll(dice=dice)) == "dice_mismatch"


def test_action_after_call():
    state = roll(new_game(options_for("club"), 3, 0))
    state = play(state, bid(0, 4, 2), dudo(1))
    assert state.phase == "rolling"
    for action in (
        bid(1, 5, 2),
        bid(2, 5, 2),  # not the player to act either: action_after_call comes first
        dudo(2),
        calza(2),
        jonti(2),
        DeclareCalzone(seat=1),
        Reroll(seat=0, reveal=(2,), new_faces=(2, 2, 2, 2)),
    ):
        assert code_of(state, action) == "action_after_call"


def test_round_unfinished_roll_while_bidding():
    state = roll(new_game(options_for("classic"), 2, 0))
    assert code_of(state, Roll(dice=((2,) * 5, (2,) * 5))) == "round_unfinished"
    state = apply(state, bid(0, 1, 2))
    assert code_of(state, Roll(dice=((2,) * 5, (2,) * 5))) == "round_unfinished"


# ---- bids --------------------------------------------------------------------------------


def test_not_your_turn_for_bids_including_the_first_action_of_the_round():
    state = roll(new_game(options_for("classic"), 3, 1))
    assert state.turn == 1
    assert code_of(state, bid(0, 1, 2)) == "not_your_turn"
    assert code_of(state, bid(2, 1, 2)) == "not_your_turn"
    state = apply(state, bid(1, 1, 2))
    assert state.turn == 2
    assert code_of(state, bid(1, 2, 2)) == "not_your_turn"  # twice in a row
    assert code_of(state, bid(0, 2, 2)) == "not_your_turn"
    # not_your_turn comes before every bid fault
    assert code_of(state, bid(0, 0, 9)) == "not_your_turn"


def test_dudo_out_of_turn_before_any_bid_is_not_your_turn():
    state = roll(new_game(options_for("classic"), 3, 1))
    assert code_of(state, dudo(0)) == "not_your_turn"
    assert code_of(state, dudo(1)) == "nothing_to_call"
    state = apply(state, bid(1, 1, 2))
    assert code_of(state, dudo(1)) == "not_your_turn"  # on one's own bid
    assert code_of(state, dudo(0)) == "not_your_turn"


def test_face_and_count_out_of_range_and_their_order():
    state = roll(new_game(options_for("classic"), 2, 0))  # 10 dice in play
    assert code_of(state, bid(0, 3, 0)) == "face_out_of_range"
    assert code_of(state, bid(0, 3, 7)) == "face_out_of_range"
    assert code_of(state, bid(0, 0, 7)) == "face_out_of_range"
    assert code_of(state, bid(0, 0, 3)) == "count_out_of_range"
    assert code_of(state, bid(0, -1, 3)) == "count_out_of_range"
    assert code_of(state, bid(0, 11, 3)) == "count_out_of_range"
    assert apply(state, bid(0, 10, 3)).bids[-1].bid == Bid(count=10, face=3)
    # count_out_of_range before opening_on_pacos, bid_not_higher
    assert code_of(state, bid(0, 11, 1)) == "count_out_of_range"
    state = apply(state, bid(0, 9, 6))
    assert code_of(state, bid(1, 11, 6)) == "count_out_of_range"
    assert code_of(state, bid(1, 21, 4)) == "count_out_of_range"


def test_count_out_of_range_follows_the_dice_in_play():
    state = game_with_counts(options_for("classic"), (2, 3, 0, 4))
    state = roll(state)
    assert state.dice_in_play == 9
    assert code_of(state, bid(state.turn, 10, 2)) == "count_out_of_range"
    apply(state, bid(state.turn, 9, 2))


def test_opening_on_pacos():
    state = roll(new_game(options_for("classic"), 2, 0))
    assert code_of(state, bid(0, 1, 1)) == "opening_on_pacos"
    assert code_of(state, bid(0, 5, 1)) == "opening_on_pacos"
    # club, a player just dropped to one die but did not declare: a normal round
    club = game_with_counts(options_for("club"), (5, 1))
    club = roll(club)
    assert club.special is None and club.turn == 1
    assert code_of(club, bid(1, 1, 1)) == "opening_on_pacos"


def test_face_locked_before_bid_not_higher():
    state = game_with_counts(options_for("classic"), (1, 5, 5))
    state = play(roll(state), bid(0, 5, 3))
    assert code_of(state, bid(1, 4, 4)) == "face_locked"  # lower too: face_locked first
    assert code_of(state, bid(1, 6, 1)) == "face_locked"
    assert code_of(state, bid(1, 5, 3)) == "bid_not_higher"
    assert code_of(state, bid(1, 4, 3)) == "bid_not_higher"


def test_bid_not_higher_same_bid_and_lower_bids():
    state = roll(new_game(options_for("classic"), 3, 0))
    state = apply(state, bid(0, 4, 4))
    for count, face in ((4, 4), (4, 3), (3, 6), (1, 2), (1, 1)):
        assert code_of(state, bid(1, count, face)) == "bid_not_higher"


# ---- calls -------------------------------------------------------------------------------


def test_nothing_to_call_before_any_bid():
    opener_state = roll(new_game(options_for("classic"), 3, 0))
    assert code_of(opener_state, dudo(0)) == "nothing_to_call"
    # calza off: not an on-turn calza, so nothing_to_call wins over calza_not_allowed
    assert code_of(opener_state, calza(1)) == "nothing_to_call"
    assert code_of(opener_state, jonti(1)) == "nothing_to_call"
    anytime = roll(new_game(options_for("calza-anytime"), 3, 0))
    assert code_of(anytime, calza(2)) == "nothing_to_call"
    club = roll(game_with_counts(options_for("club"), (5, 4, 4)))
    assert code_of(club, jonti(1)) == "nothing_to_call"


def test_on_turn_calza_by_a_non_turn_player_is_not_your_turn():
    state = roll(new_game(options_for("gamerules"), 3, 0))
    assert code_of(state, calza(1)) == "not_your_turn"  # before any bid too
    assert code_of(state, calza(0)) == "nothing_to_call"
    state = apply(state, bid(0, 3, 4))
    assert code_of(state, calza(2)) == "not_your_turn"
    assert code_of(state, calza(0)) == "not_your_turn"  # the bidder is not to act
    apply(state, calza(1))


def test_calza_not_allowed_when_off():
    state = roll(new_game(options_for("classic"), 3, 0))
    state = apply(state, bid(0, 3, 4))
    assert code_of(state, calza(1)) == "calza_not_allowed"
    assert code_of(state, calza(2)) == "calza_not_allowed"
    club = roll(new_game(options_for("club"), 3, 0))
    club = apply(club, bid(0, 3, 4))
    assert code_of(club, calza(1)) == "calza_not_allowed"


def test_calza_anytime_by_anyone_but_the_last_bidder():
    state = roll(new_game(options_for("calza-anytime"), 4, 0))
    state = play(state, bid(0, 3, 4), bid(1, 3, 5))
    assert code_of(state, calza(1)) == "calza_not_allowed"
    for seat in (0, 2, 3):
        end = apply(state, calza(seat))
        assert end.results[-1].caller == seat


def test_calza_not_allowed_in_special_round_under_gamerules():
    state = game_with_counts(options_for("gamerules"), (1, 5, 5))
    state = play(roll(state), bid(0, 3, 2))
    assert state.special == "palifico"
    assert code_of(state, calza(1)) == "calza_not_allowed"
    allowed = game_with_counts(options_for("gamerules", calza_in_special_round=True), (1, 5, 5))
    allowed = play(roll(allowed), bid(0, 3, 2))
    assert apply(allowed, calza(1)).results[-1].call == "calza"
    # classic with calza turned on keeps calza_in_special_round = true
    classic = game_with_counts(options_for("classic", calza="on-turn"), (1, 5, 5))
    classic = play(roll(classic), bid(0, 3, 2))
    assert apply(classic, calza(1)).results[-1].call == "calza"


def test_calza_not_allowed_with_two_players_left_under_gamerules():
    state = roll(new_game(options_for("gamerules"), 2, 0))
    state = apply(state, bid(0, 3, 2))
    assert code_of(state, calza(1)) == "calza_not_allowed"
    # three seats, one eliminated: two players left
    state = roll(game_with_counts(options_for("gamerules"), (0, 5, 5)))
    state = apply(state, bid(state.turn, 3, 2))
    assert code_of(state, calza(state.turn)) == "calza_not_allowed"
    three = roll(new_game(options_for("gamerules"), 3, 0))
    three = apply(three, bid(0, 3, 2))
    apply(three, calza(1))
    two_ok = roll(new_game(options_for("gamerules", calza_min_players=2), 2, 0))
    apply(apply(two_ok, bid(0, 3, 2)), calza(1))


def _jonti_table():
    """Club, four seats with 4 dice each; seat 3 opens with 2×2."""
    state = roll(game_with_counts(options_for("club"), (4, 4, 4, 4)))
    assert state.turn == 3
    return apply(state, bid(3, 2, 2))


def test_jonti_allowed_out_of_turn_below_the_maximum():
    state = _jonti_table()
    assert state.turn == 0
    for seat in (1, 2):
        end = apply(state, jonti(seat))
        assert end.results[-1].call == "jonti"


def test_jonti_not_on_own_bid_nor_the_previous_active_seat_bid():
    state = _jonti_table()
    assert code_of(state, jonti(3)) == "jonti_not_allowed"  # own bid
    assert code_of(state, jonti(0)) == "jonti_not_allowed"  # seat 3 is just before seat 0
    state = apply(state, bid(0, 3, 2))
    assert code_of(state, jonti(1)) == "jonti_not_allowed"
    apply(state, jonti(3))
    apply(state, jonti(2))


def test_jonti_previous_active_seat_skips_eliminated_seats():
    state = roll(game_with_counts(options_for("club"), (4, 0, 4, 4)))
    state = apply(state, bid(3, 2, 2))
    state = apply(state, bid(0, 3, 2))  # seat 1 is out: seat 0's bid makes it seat 2's turn
    assert state.turn == 2
    assert code_of(state, jonti(2)) == "jonti_not_allowed"
    apply(state, jonti(3))


def test_jonti_not_allowed_at_full_dice_or_off_or_with_two_players():
    state = roll(game_with_counts(options_for("club"), (4, 5, 4, 4)))
    state = apply(state, bid(3, 2, 2))
    assert code_of(state, jonti(1)) == "jonti_not_allowed"  # seat 1 holds 5 dice
    apply(state, jonti(2))
    state = roll(new_game(options_for("club"), 4, 0))
    state = apply(state, bid(0, 2, 2))
    assert code_of(state, jonti(2)) == "jonti_not_allowed"  # 5 dice: the maximum
    # two players with dice, even at a table of three
    two = roll(game_with_counts(options_for("club"), (0, 4, 3)))
    two = apply(two, bid(two.turn, 2, 2))
    assert code_of(two, jonti(two.turn)) == "jonti_not_allowed"
    assert code_of(two, jonti(two.results[-1].loser)) == "jonti_not_allowed"
    # off
    classic = roll(game_with_counts(options_for("classic"), (4, 4, 4, 4)))
    classic = apply(classic, bid(3, 2, 2))
    assert code_of(classic, jonti(1)) == "jonti_not_allowed"
    # turned on at a classic table
    on = roll(game_with_counts(options_for("classic", jonti=True), (4, 4, 4, 4)))
    apply(apply(on, bid(3, 2, 2)), jonti(1))


# ---- calzone -----------------------------------------------------------------------------


def _club_one_die(counts=(5, 1, 5)):
    state = roll(game_with_counts(options_for("club"), counts))
    assert state.one_die_seat == 1 and state.turn == 1 and state.special is None
    return state


def test_calzone_declared_by_the_player_who_just_dropped_to_one_die():
    state = _club_one_die()
    assert code_of(state, DeclareCalzone(seat=0)) == "calzone_not_allowed"
    assert code_of(state, DeclareCalzone(seat=2)) == "calzone_not_allowed"
    declared = apply(state, DeclareCalzone(seat=1))
    assert declared.special == "calzone" and declared.turn == 1
    assert code_of(declared, DeclareCalzone(seat=1)) == "calzone_not_allowed"  # twice


def test_calzone_only_before_the_first_bid():
    state = apply(_club_one_die(), bid(1, 2, 3))
    assert code_of(state, DeclareCalzone(seat=1)) == "calzone_not_allowed"


def test_calzone_not_allowed_when_nobody_just_dropped_to_one_die():
    state = roll(new_game(options_for("club"), 3, 0))
    assert code_of(state, DeclareCalzone(seat=0)) == "calzone_not_allowed"
    # a one-die player from an earlier round cannot declare again
    state = game_with_counts(options_for("club"), (5, 1, 5))
    state = lose_die(state, 0)  # the round after: seat 0 lost, seat 1 still at one die
    state = roll(state)
    assert state.counts[1] == 1 and state.one_die_seat is None
    assert code_of(state, DeclareCalzone(seat=1)) == "calzone_not_allowed"


def test_calzone_not_allowed_when_off():
    state = roll(game_with_counts(options_for("classic"), (5, 1, 5)))
    assert state.special == "palifico"
    assert code_of(state, DeclareCalzone(seat=1)) == "calzone_not_allowed"
    off = roll(game_with_counts(options_for("club", special_round="off"), (5, 1, 5)))
    assert off.special is None
    assert code_of(off, DeclareCalzone(seat=1)) == "calzone_not_allowed"
    assert code_of(off, bid(1, 1, 1)) == "opening_on_pacos"


# ---- show and reroll ---------------------------------------------------------------------


def _club_after_bid():
    state = roll(new_game(options_for("club"), 3, 0), {0: [1, 2, 3, 4, 4], 1: [5, 5, 5, 6, 6]})
    return apply(state, bid(0, 3, 4))


def test_reroll_right_after_own_bid():
    state = _club_after_bid()
    after = apply(state, Reroll(seat=0, reveal=(4, 1), new_faces=(6, 6, 6)))
    assert after.shown[0] == (4, 1)
    assert after.hidden[0] == (6, 6, 6)
    assert after.turn == 1 and after.bids == state.bids
    # shown dice count at the end: 4 and 1 shown, no other 4s or pacos now
    end = apply(after, dudo(1))
    assert end.results[-1].counted == 2
    assert end.results[-1].hands[0] == (6, 6, 6, 4, 1)
    assert end.results[-1].loser == 0


def test_reroll_once_per_bid_and_again_after_the_next_own_bid():
    state = _club_after_bid()
    state = apply(state, Reroll(seat=0, reveal=(4,), new_faces=(2, 2, 2, 2)))
    assert code_of(state, Reroll(seat=0, reveal=(2,), new_faces=(3, 3, 3))) == (
        "reroll_not_allowed"
    )
    state = play(state, bid(1, 4, 4), bid(2, 5, 4), bid(0, 6, 4))
    state = apply(state, Reroll(seat=0, reveal=(2, 2), new_faces=(5, 5)))
    assert state.shown[0] == (4, 2, 2)
    assert state.hidden[0] == (5, 5)


def test_reroll_not_right_after_own_bid():
    state = roll(new_game(options_for("club"), 3, 0), {0: [1, 2, 3, 4, 4], 1: [5, 5, 5, 6, 6]})
    before_bid = Reroll(seat=0, reveal=(4,), new_faces=(1, 1, 1, 1))
    assert code_of(state, before_bid) == "reroll_not_allowed"
    state = apply(state, bid(0, 3, 4))
    # another player, who has not bid
    assert code_of(state, Reroll(seat=1, reveal=(5,), new_faces=(1, 1, 1, 1))) == (
        "reroll_not_allowed"
    )
    state = apply(state, bid(1, 4, 4))
    # seat 0's bid is no longer the last action
    assert code_of(state, before_bid) == "reroll_not_allowed"
    apply(state, Reroll(seat=1, reveal=(5,), new_faces=(1, 1, 1, 1)))


def test_reroll_dice_must_be_hidden_dice_and_one_must_stay():
    state = _club_after_bid()  # seat 0 hides 1 2 3 4 4
    for reveal, new_faces in (
        ((5,), (1, 1, 1, 1)),  # not held
        ((4, 4, 4), (1, 1)),  # only two 4s
        ((), (1, 1, 1, 1, 1)),  # shows nothing
        ((1, 2, 3, 4, 4), ()),  # nothing left to re-roll
        ((4,), (1, 1, 1)),  # too few new faces
        ((4,), (1, 1, 1, 1, 1)),  # too many
        ((4,), (1, 1, 1, 7)),  # face out of range
        ((4,), (1, 1, 1, 0)),
    ):
        assert code_of(state, Reroll(seat=0, reveal=reveal, new_faces=new_faces)) == (
            "reroll_not_allowed"
        )
    apply(state, Reroll(seat=0, reveal=(1, 2, 3, 4), new_faces=(6,)))


def test_reroll_cannot_show_dice_already_set_aside():
    state = _club_after_bid()
    state = apply(state, Reroll(seat=0, reveal=(4, 4), new_faces=(2, 2, 2)))
    state = play(state, bid(1, 4, 4), bid(2, 5, 4), bid(0, 6, 4))
    assert code_of(state, Reroll(seat=0, reveal=(4,), new_faces=(3, 3))) == "reroll_not_allowed"


def test_reroll_not_allowed_when_off_or_with_one_die():
    state = roll(new_game(options_for("classic"), 2, 0))
    state = apply(state, bid(0, 3, 4))
    assert code_of(state, Reroll(seat=0, reveal=(2,), new_faces=(2, 2, 2, 2))) == (
        "reroll_not_allowed"
    )
    club = roll(game_with_counts(options_for("club"), (5, 1, 5)), {1: [3]})
    club = apply(club, bid(1, 2, 3))
    assert code_of(club, Reroll(seat=1, reveal=(3,), new_faces=())) == "reroll_not_allowed"
