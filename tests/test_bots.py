"""The probability bot: always legal, sensible on clear cases, decides from its view only."""

from __future__ import annotations

import math
import random

import pytest

from perudo_ssh import bots
from perudo_ssh import protocol as P
from perudo_ssh.lobby.table import engine_action
from perudo_ssh.odds import Belief, Odds
from perudo_ssh.rules import (
    PRESET_NAMES,
    Bid,
    Call,
    PlaceBid,
    Roll,
    State,
    apply,
    new_game,
    observe,
    options_for,
)


def _roll(state: State, rng: random.Random) -> State:
    dice = tuple(tuple(rng.randint(1, 6) for _ in range(n)) for n in state.counts)
    return apply(state, Roll(dice=dice))


def _action(command: P.Command | None, seat: int):
    assert isinstance(command, P.MakeBid | P.MakeCall | P.DeclareCalzone), command
    return engine_action(command, seat)


@pytest.mark.parametrize("level", bots.LEVELS)
@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.slow
def test_bot_moves_are_always_legal(preset, level):
    """Thousands of states from games where bots of a level (and now and then a random move)
    play: every bot move is offered by the view, accepted by the engine, within the dice in
    play (issue 14: every level legal in every preset)."""
    rng = random.Random(f"{preset} {level}")
    decisions = 0
    calls = {"dudo": 0, "calza": 0, "declare": 0}
    while decisions < 2500:
        options = (
            options_for(preset)
            if preset != "classic"
            else options_for(preset, calza=rng.choice(["off", "on-turn", "anytime"]))
        )
        seats = rng.randint(2, 6)
        state = _roll(new_game(options, seats, rng.randrange(seats)), rng)
        while state.phase != "over":
            if state.phase == "rolling":
                state = _roll(state, rng)
                continue
            view = observe(state, state.turn)
            command = bots.choose(view, rng, level=level)
            assert command is not None
            if isinstance(command, P.MakeBid):
                assert Bid(count=command.count, face=command.face) in view.choices.bids
                assert command.count <= view.dice_in_play
            elif isinstance(command, P.MakeCall):
                assert getattr(view.choices, command.call)
                calls[command.call] += 1
            else:
                assert view.choices.calzone
                calls["declare"] += 1
            decisions += 1
            if rng.random() < 0.1 and view.choices.bids:  # shake the game up now and then
                action = PlaceBid(seat=state.turn, bid=rng.choice(view.choices.bids))
            else:
                action = _action(command, state.turn)
            state = apply(state, action)
    assert calls["dudo"] > 0
    if preset == "club":
        assert calls["declare"] > 0


def test_an_unknown_level_is_refused():
    state = _roll(new_game(options_for("classic"), 2, 0), random.Random(1))
    with pytest.raises(ValueError, match="unknown bot level 'expert'"):
        bots.choose(observe(state, 0), random.Random(1), level="expert")


def _calza_anytime_after(bids: list[tuple[int, int, int]], dice) -> State:
    """Three players, 2 dice each, calza any time; seats 1 and 2 each lost a die in the first
    two rounds; then `dice` are rolled (seat 0 two, the others one) and `bids` (seat, count,
    face) made, seat 2 opening."""
    options = options_for("classic", calza="anytime", dice_per_player=2, special_round="off")
    state = new_game(options, 3, 0)
    state = apply(state, Roll(dice=((2, 2), (5, 6), (4, 4))))
    state = apply(state, PlaceBid(seat=0, bid=Bid(count=2, face=2)))
    state = apply(state, PlaceBid(seat=1, bid=Bid(count=2, face=3)))
    state = apply(state, Call(seat=2, call="dudo"))  # no 3 at all: seat 1 loses a die
    state = apply(state, Roll(dice=((2, 2), (5,), (4, 4))))
    state = apply(state, PlaceBid(seat=1, bid=Bid(count=1, face=6)))
    state = apply(state, PlaceBid(seat=2, bid=Bid(count=3, face=6)))
    state = apply(state, Call(seat=0, call="dudo"))  # one 6 (pacos none): seat 2 loses one
    state = apply(state, Roll(dice=dice))
    for seat, count, face in bids:
        state = apply(state, PlaceBid(seat=seat, bid=Bid(count=count, face=face)))
    return state


@pytest.mark.parametrize("level", bots.LEVELS)
def test_off_turn_a_bot_calls_calza_only_when_it_is_worth_it(level):
    """Issue 14: asked off turn at a calza-anytime table, `choose` used to call calza
    whatever the odds. Seat 1 (one die, a 3) sees seat 2 bid 4×5 with 4 dice in play: by its
    odds it cannot be exact: None. After 2 pacos from seat 2, which thereby says it holds
    one, with its own paco the bid is likely exact (no paco in seat 0's cup, which bid 4s):
    calza for medium and hard (a right calza gives its die back), never for easy."""
    unlikely = _calza_anytime_after(
        [(2, 1, 3), (0, 1, 4), (1, 1, 5), (2, 4, 5)], ((2, 6), (3,), (4,))
    )
    view = observe(unlikely, 1)
    assert view.turn != 1 and view.choices.calza
    for seed in range(20):
        assert bots.choose(view, random.Random(seed), level=level) is None
    likely = _calza_anytime_after(
        [(2, 1, 3), (0, 1, 4), (1, 1, 5), (2, 2, 1)], ((2, 6), (1,), (4,))
    )
    view = observe(likely, 1)
    assert view.turn != 1 and view.choices.calza
    want = None if level == "easy" else P.MakeCall(call="calza")
    if level == "hard":
        # at three players the hard bot reads 2 pacos as the face most likely true from seat
        # 2's hand at that count (HARD_READING): less sure it holds a paco, it calls
        # calza only if that still makes the bid exact by the rule above
        belief = Belief(view)
        last = view.bids[-1].bid
        worth = belief.exactly(last) >= max(bots.CALZA_AT_LEAST, 1 - belief.at_least(last))
        want = P.MakeCall(call="calza") if worth else None
    for seed in range(20):
        assert bots.choose(view, random.Random(seed), level=level) == want


def test_bot_has_nothing_to_do_off_turn_or_as_spectator():
    rng = random.Random(1)
    state = _roll(new_game(options_for("classic"), 3, 0), rng)
    assert bots.choose(observe(state, 1), rng) is None
    assert bots.choose(observe(state, None), rng) is None


def test_dudo_on_an_impossible_bid():
    # Seat 1 holds no 4 and no paco; seat 0 has 5 dice: 10×4 needs all ten, impossible for
    # seat 1, which knows its own five do not count.
    state = new_game(options_for("classic"), 2, 0)
    state = apply(state, Roll(dice=((4, 4, 4, 4, 4), (2, 2, 3, 5, 6))))
    state = apply(state, PlaceBid(seat=0, bid=Bid(count=7, face=4)))
    for seed in range(50):
        assert bots.choose(observe(state, 1), random.Random(seed)) == P.MakeCall(call="dudo")


def _one_die_down() -> State:
    """Two players, 2 dice each, calza on turn; seat 1 has lost a die (RULES.md §2.5) and the
    second round is rolled: seat 1 holds (3,), seat 0 (3, 3); seat 1 opens."""
    options = options_for("classic", calza="on-turn", dice_per_player=2, special_round="off")
    state = new_game(options, 2, 0)
    state = apply(state, Roll(dice=((2, 2), (5, 6))))
    state = apply(state, PlaceBid(seat=0, bid=Bid(count=2, face=2)))
    state = apply(state, Call(seat=1, call="dudo"))  # two 2s: seat 1 was wrong
    return apply(state, Roll(dice=((3, 3), (3,))))


def test_calza_when_exactly_right_is_likely():
    state = _one_die_down()
    state = apply(state, PlaceBid(seat=1, bid=Bid(count=1, face=3)))
    state = apply(state, PlaceBid(seat=0, bid=Bid(count=2, face=3)))
    # Seat 1 sees its own 3 and reads seat 0's bid as holding one: 2×3 is exactly right.
    for seed in range(20):
        assert bots.choose(observe(state, 1), random.Random(seed)) == P.MakeCall(call="calza")


def test_no_calza_at_full_dice_where_it_can_only_cost_a_die():
    """A right calza gives nothing back to a player at full dice (RULES.md §2.9): bots calling
    it round after round could make a game never end."""
    options = options_for("classic", calza="on-turn", dice_per_player=1)
    state = new_game(options, 2, 0)
    state = apply(state, Roll(dice=((3,), (3,))))
    state = apply(state, PlaceBid(seat=0, bid=Bid(count=2, face=3)))
    for seed in range(20):
        assert bots.choose(observe(state, 1), random.Random(seed)) != P.MakeCall(call="calza")


def test_a_bid_is_read_as_holding_its_face():
    state = new_game(options_for("classic"), 2, 0)
    state = apply(state, Roll(dice=((6, 6, 2, 3, 4), (6, 2, 2, 3, 5))))
    state = apply(state, PlaceBid(seat=0, bid=Bid(count=3, face=6)))
    odds = Odds(observe(state, 1))
    assert odds.unknown == 4 and odds.seen.count(6) == 2
    assert odds.at_least(Bid(count=2, face=6)) == 1.0


def test_bot_never_bids_above_the_dice_in_play():
    # All ten dice are pacos: from either seat, very high bids look certain.
    state = new_game(options_for("classic"), 2, 0)
    state = apply(state, Roll(dice=((1, 1, 1, 1, 1), (1, 1, 1, 1, 1))))
    raised = apply(state, PlaceBid(seat=0, bid=Bid(count=3, face=6)))
    for seed in range(100):
        for view in (observe(state, 0), observe(raised, 1)):
            command = bots.choose(view, random.Random(seed))
            assert isinstance(command, P.MakeBid)
            assert 1 <= command.count <= view.dice_in_play == 10


def test_opening_prefers_faces_the_bot_holds():
    state = new_game(options_for("classic"), 4, 0)
    state = apply(state, Roll(dice=((5, 5, 5, 2, 3), (1,) * 5, (1,) * 5, (1,) * 5)))
    faces = [bots.choose(observe(state, 0), random.Random(s)).face for s in range(30)]
    assert set(faces) == {5}


def test_bot_decides_from_its_view_only():
    """Two states that differ only in dice seat 0 cannot see give the same decision."""
    base = new_game(options_for("classic"), 3, 0)
    a = apply(base, Roll(dice=((2, 3, 3, 5, 6), (1, 1, 1, 1, 1), (4, 4, 4, 4, 4))))
    b = apply(base, Roll(dice=((2, 3, 3, 5, 6), (6, 2, 2, 5, 4), (3, 2, 6, 6, 2))))
    assert observe(a, 0) == observe(b, 0)
    for seed in range(20):
        assert bots.choose(observe(a, 0), random.Random(seed)) == bots.choose(
            observe(b, 0), random.Random(seed)
        )


def test_the_hard_bot_shows_and_rerolls_when_it_makes_its_bid_likelier():
    """Club rules, heads-up: seat 0 holds 5 5 3 3 2 and bids 5×5 against 5 unknown dice: 2
    of its own count (no paco), 3 more needed. Rerolling its 3 dice that count for nothing
    (each may show a 5 or a paco: 1/3) makes the bid likelier true by 0.32 at the prior's
    odds (the opponent has not bid): the hard bot shows 5 5 and rerolls. A bid its own dice
    make sure is left alone; a bid with nothing to show too."""
    options = options_for("club", stake=0)
    state = apply(new_game(options, 2, 0), Roll(dice=((5, 5, 3, 3, 2), (6, 6, 4, 4, 2))))
    state = apply(state, PlaceBid(seat=0, bid=Bid(count=5, face=5)))
    view = observe(state, 0)
    assert view.choices.reroll
    tail = lambda need, n: sum(  # noqa: E731
        math.comb(n, k) * (1 / 3) ** k * (2 / 3) ** (n - k) for k in range(need, n + 1)
    )
    before = tail(3, 5)
    after = sum(
        math.comb(3, k) * (1 / 3) ** k * (2 / 3) ** (3 - k) * tail(3 - k, 5) for k in range(4)
    )
    assert bots._reroll_gain(view, Bid(count=5, face=5), 3) == pytest.approx(after - before)
    assert after - before == pytest.approx(0.32, abs=0.01)
    shown = bots.show_after_bid(view, random.Random(0), level="hard")
    assert shown == P.ShowAndReroll(reveal=(5, 5))
    sure = apply(new_game(options, 2, 0), Roll(dice=((5, 5, 3, 3, 2), (6, 6, 4, 4, 2))))
    sure = apply(sure, PlaceBid(seat=0, bid=Bid(count=2, face=5)))
    assert bots.show_after_bid(observe(sure, 0), random.Random(0), level="hard") is None
    none = apply(new_game(options, 2, 0), Roll(dice=((5, 5, 3, 3, 2), (6, 6, 4, 4, 2))))
    none = apply(none, PlaceBid(seat=0, bid=Bid(count=3, face=4)))
    assert bots.show_after_bid(observe(none, 0), random.Random(0), level="hard") is None
