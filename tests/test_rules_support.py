"""Helpers for the rules tests: build states with fixed dice through `apply` only.

Every state the rules tests use is reached from `new_game` by real actions, so the helpers
double as a check that the engine's ordinary paths work (a few tests below pin them down).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from perudo_ssh.rules import (
    Bid,
    Call,
    Options,
    PlaceBid,
    Roll,
    RuleError,
    State,
    apply,
    new_game,
    next_active,
    options_for,
)


def bid(seat: int, count: int, face: int) -> PlaceBid:
    """`seat` bids `count` × `face`."""
    return PlaceBid(seat=seat, bid=Bid(count=count, face=face))


def dudo(seat: int) -> Call:
    return Call(seat=seat, call="dudo")


def calza(seat: int) -> Call:
    return Call(seat=seat, call="calza")


def jonti(seat: int) -> Call:
    return Call(seat=seat, call="jonti")


def roll(state: State, dice: Mapping[int, Sequence[int]] | None = None, fill: int = 2) -> State:
    """Apply the round's `Roll`: `dice[seat]` for the seats given, every other active die
    showing `fill`."""
    dice = dice or {}
    faces = tuple(
        tuple(dice[s]) if s in dice else (fill,) * state.counts[s] for s in range(state.seats)
    )
    return apply(state, Roll(dice=faces))


def play(state: State, *actions) -> State:
    """Apply `actions` in order."""
    for action in actions:
        state = apply(state, action)
    return state


def lose_die(state: State, loser: int) -> State:
    """Play one whole round (all dice showing 2, no pacos) in which `loser` loses one die.

    If `loser` opens, they bid 1×3 (counted 0) and the next player calls dudo. Otherwise the
    players bid 1×2, 2×2, … (always true) until it is `loser`'s turn, who calls dudo.
    Works in normal and special rounds, under every raise rule."""
    assert state.phase == "rolling"
    state = roll(state, fill=2)
    if state.turn == loser:
        return play(state, bid(loser, 1, 3), dudo(next_active(state, loser)))
    count = 1
    while state.turn != loser:
        state = apply(state, bid(state.turn, count, 2))
        count += 1
    return apply(state, dudo(loser))


def game_with_counts(options: Options, counts: Sequence[int], first_opener: int = 0) -> State:
    """A game (rolling phase) where seat s holds `counts[s]` dice, reached by whole rounds of
    `lose_die`, seat by seat in seat order. The last round's loser opens next, and a palifico
    (or calzone) may follow if that loser just dropped from 2 to 1."""
    state = new_game(options, len(counts), first_opener)
    for seat, target in enumerate(counts):
        while state.counts[seat] > target:
            state = lose_die(state, seat)
    assert state.counts == tuple(counts)
    return state


def code_of(state: State, action) -> str:
    """The `RuleError` code `apply(state, action)` raises (fails the test if it does not)."""
    with pytest.raises(RuleError) as info:
        apply(state, action)
    return info.value.code


# ---- the helpers themselves -----------------------------------------------------------------


def test_lose_die_takes_exactly_one_die_from_the_loser_who_then_opens():
    state = new_game(options_for("classic"), 3, 1)
    for loser in (1, 0, 2, 2):
        before = state.counts
        state = lose_die(state, loser)
        assert state.counts[loser] == before[loser] - 1
        assert sum(before) - sum(state.counts) == 1
        assert state.opener == loser and state.turn == loser
        assert state.results[-1].loser == loser


def test_game_with_counts_reaches_the_counts():
    state = game_with_counts(options_for("club"), (5, 3, 2, 4))
    assert state.counts == (5, 3, 2, 4)
    assert state.phase == "rolling"
    assert state.opener == 3
    assert len(state.results) == 2 + 3 + 1
