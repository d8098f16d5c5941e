"""`observe`: what one seat (or a spectator) may see of a game (STYLE.md 2, RULES.md §1, §6)."""

from __future__ import annotations

import msgspec

from perudo_ssh.rules import (
    Bid,
    DeclareCalzone,
    GameView,
    Reroll,
    apply,
    legal_bids,
    new_game,
    observe,
    options_for,
)
from tests.test_rules_support import bid, dudo, game_with_counts, play, roll

DICE = {0: [1, 2, 3, 4, 5], 1: [6, 6, 6, 6, 6], 2: [2, 2, 3, 3, 4]}


def _club_round():
    return roll(new_game(options_for("club"), 3, 0), DICE)


def test_a_seat_sees_only_its_own_hidden_dice():
    state = _club_round()
    for me in range(3):
        view = observe(state, me)
        assert view.me == me
        assert [s.hidden for s in view.seats] == [
            tuple(DICE[s]) if s == me else None for s in range(3)
        ]
        assert [s.dice for s in view.seats] == [5, 5, 5]


def test_a_spectator_sees_no_hidden_dice_and_has_no_choices():
    state = _club_round()
    view = observe(state, None)
    assert view.me is None
    assert all(s.hidden is None for s in view.seats)
    assert view.choices.bids == () and not view.choices.dudo
    encoded = msgspec.json.encode(view)
    for seat_dice in DICE.values():
        assert str(list(seat_dice)).replace(" ", "").encode() not in encoded


def test_set_aside_dice_are_public():
    state = apply(_club_round(), bid(0, 3, 4))
    state = apply(state, Reroll(seat=0, reveal=(4, 1), new_faces=(5, 5, 5)))
    for me in (None, 0, 1, 2):
        view = observe(state, me)
        assert view.seats[0].shown == (4, 1)
        assert view.seats[0].hidden == ((5, 5, 5) if me == 0 else None)


def test_view_fields_follow_the_state():
    state = apply(_club_round(), bid(0, 3, 4))
    view = observe(state, 1)
    assert isinstance(view, GameView)
    assert (view.phase, view.round_index, view.opener, view.turn) == ("bidding", 0, 0, 1)
    assert view.bids == state.bids
    assert (view.special, view.wild, view.dice_in_play) == (None, True, 15)
    assert view.tokens == state.tokens and view.options == state.options
    assert view.last is None and view.winner is None and view.eliminated == ()


def test_choices_of_the_player_to_act_and_of_the_others():
    state = apply(_club_round(), bid(0, 3, 4))
    mine = observe(state, 1).choices
    assert list(mine.bids) == legal_bids(state, 1)
    assert mine.dudo and not mine.calza and not mine.jonti and not mine.calzone
    assert mine.calza_why == "calza is not played at this table"
    bidder = observe(state, 0).choices
    assert bidder.bids == () and not bidder.dudo and bidder.reroll
    other = observe(state, 2).choices
    assert other.bids == () and not other.dudo and not other.reroll
    assert other.jonti_why is not None  # 5 dice: the maximum


def test_choices_jonti_and_calzone():
    state = roll(game_with_counts(options_for("club"), (4, 4, 4, 1)))
    assert observe(state, 3).choices.calzone
    assert not observe(state, 0).choices.calzone
    state = play(state, DeclareCalzone(seat=3), bid(3, 2, 2))
    view = observe(state, 3)
    assert view.special == "calzone" and not view.wild
    assert observe(state, 1).choices.jonti and observe(state, 1).choices.jonti_why is None
    assert not observe(state, 0).choices.jonti  # on turn
    assert observe(state, 0).may_change_face is False
    assert observe(state, 3).may_change_face is True


def test_previous_round_revealed_after_the_call_only():
    state = apply(_club_round(), bid(0, 3, 4))
    end = apply(state, dudo(1))
    for me in (None, 0, 1, 2):
        view = observe(end, me)
        assert view.last == end.results[-1]
        assert view.last.hands == tuple(tuple(DICE[s]) for s in range(3))
        assert all(s.hidden is None or s.hidden == () for s in view.seats)


def test_eliminated_seat_has_no_choices():
    state = roll(game_with_counts(options_for("classic"), (0, 3, 3)))
    view = observe(state, 0)
    assert view.seats[0].dice == 0 and view.choices.bids == ()
    assert Bid(count=1, face=2) in observe(state, state.turn).choices.bids
