"""Random legal play: invariants of RULES.md checked after every action, for every preset.

For each preset, `GAMES` seeded games of 2–6 seats are played to the end by picking a random
action among every active seat's `legal_actions` (plus random show-and-reroll when allowed).
After every step: dice counts stay in 0..dice_per_player, tokens balance with the bank, the
player to act has a legal action, `legal_bids` agrees with `bid_fault`, and no observation
holds another seat's hidden dice. After every round: at most one die changed, a rise in dice
comes only from a correct calza/jonti, the result's tally is recomputed from the hands. At
the end: exactly one winner.
"""

from __future__ import annotations

import multiprocessing
import os
import random
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest

from perudo_ssh.rules import (
    PRESET_NAMES,
    Bid,
    Call,
    DeclareCalzone,
    PlaceBid,
    Reroll,
    Roll,
    RuleError,
    State,
    apply,
    bid_fault,
    count_bid,
    legal_actions,
    new_game,
    observe,
    options_for,
)
from perudo_ssh.rules.legality import _beats, _raise_counts

# with pytest-xdist (the test command), every test of this module runs in one worker, so that
# its module fixture (the 4000 games) is played once
pytestmark = [pytest.mark.xdist_group("rules-random"), pytest.mark.slow]  # quick: -m "not slow"

GAMES = 1000  # per preset
CHUNK = 250  # games per worker task
FACES = range(1, 7)


def _all_legal(state: State) -> tuple[list[PlaceBid], list[Call], list[DeclareCalzone]]:
    """Every active seat's legal actions, by kind. `legal_actions` lists a declaration first,
    then bids, then calls; only the ends of the (long) run of bids are type-checked."""
    bids: list[PlaceBid] = []
    calls: list[Call] = []
    declares: list[DeclareCalzone] = []
    for seat in state.active:
        actions = legal_actions(state, seat)
        first, stop = 0, len(actions)
        while first < stop and type(actions[first]) is DeclareCalzone:
            declares.append(actions[first])
            first += 1
        while stop > first and type(actions[stop - 1]) is Call:
            calls.append(actions[stop - 1])
            stop -= 1
        if first < stop:
            assert seat == state.turn
            assert type(actions[first]) is PlaceBid and type(actions[stop - 1]) is PlaceBid
            assert actions[first].seat == seat == actions[stop - 1].seat
            bids.extend(actions[first:stop])
    return bids, calls, declares


def _choose(
    rng: random.Random,
    state: State,
    legal: tuple[list[PlaceBid], list[Call], list[DeclareCalzone]],
) -> PlaceBid | Call | DeclareCalzone | Reroll:
    """A random legal action, weighted so that rounds see several bids, calls of every kind,
    declarations and re-rolls."""
    bids, calls, declares = legal
    seat = state.last_action_seat
    if (
        state.options.show_and_reroll
        and state.last_was_bid
        and seat is not None
        and len(state.hidden[seat]) > 1
        and rng.random() < 0.3
    ):
        hidden = state.hidden[seat]
        reveal = tuple(rng.sample(hidden, rng.randint(1, len(hidden) - 1)))
        new_faces = tuple(rng.choices(FACES, k=len(hidden) - len(reveal)))
        return Reroll(seat=seat, reveal=reveal, new_faces=new_faces)
    if declares and rng.random() < 0.5:
        return rng.choice(declares)
    if calls and (not bids or rng.random() < 0.5):
        return rng.choice(calls)
    if rng.random() < 0.7:
        # a modest raise: the lowest legal count for a random face
        face = rng.choice(bids).bid.face
        return min((b for b in bids if b.bid.face == face), key=lambda b: b.bid.count)
    return rng.choice(bids)


def _check_step(rng: random.Random, state: State) -> tuple | None:
    """Check `state`; in the bidding phase return every active seat's legal actions."""
    opts = state.options
    seats = state.seats
    assert all(0 <= c <= opts.dice_per_player for c in state.counts)
    assert sorted(state.eliminated) == [s for s in range(seats) if state.counts[s] == 0]
    if opts.stake:
        assert state.tokens.bank + sum(state.tokens.balances) == 0
        assert state.tokens.bank >= 0
    else:
        assert state.tokens is None
    for me in range(seats):
        view = observe(state, me)
        assert [s.hidden for s in view.seats] == [
            state.hidden[me] if s == me else None for s in range(seats)
        ]
    spectator = observe(state, None)
    assert [s.hidden for s in spectator.seats] == [None] * seats
    assert [s.shown for s in spectator.seats] == list(state.shown)
    assert spectator.choices.bids == ()
    if state.phase != "bidding":
        return None
    assert state.counts[state.turn] > 0
    for seat in state.active:
        assert len(state.hidden[seat]) + len(state.shown[seat]) == state.counts[seat]
    legal = _all_legal(state)
    bids, calls, _ = legal
    assert bids or any(c.seat == state.turn for c in calls), "the player to act has no action"
    # legal_bids is exactly the set of bids bid_fault accepts (sampled probes)
    for _ in range(2):
        probe = Bid(count=rng.randint(0, state.dice_in_play + 1), face=rng.randint(0, 7))
        accepted = bid_fault(state, state.turn, probe) is None
        assert accepted == (PlaceBid(seat=state.turn, bid=probe) in bids), probe
    if rng.random() < 0.005:  # now and then, every bid
        for count in range(0, state.dice_in_play + 2):
            for face in range(0, 8):
                probe = Bid(count=count, face=face)
                accepted = bid_fault(state, state.turn, probe) is None
                assert accepted == (PlaceBid(seat=state.turn, bid=probe) in bids), probe
    other = rng.choice(state.active)
    if other != state.turn:
        assert bid_fault(state, other, Bid(count=1, face=2)).code == "not_your_turn"
    return legal


def _check_round(start: State, end: State) -> None:
    """`start`: the state right after the round's roll; `end`: right after its call."""
    result = end.results[-1]
    diffs = [b - a for a, b in zip(start.counts, end.counts, strict=True)]
    assert sum(abs(d) for d in diffs) <= 1, diffs
    assert result.dice == end.counts
    if sum(diffs) > 0:
        assert result.call in ("calza", "jonti") and result.gainer is not None
        assert diffs[result.gainer] == 1 and result.counted == result.bid.count
    if sum(diffs) < 0:
        assert diffs[result.loser] == -1
    if result.gainer is None and result.loser is None:
        assert (
            result.call == "calza" and start.counts[result.caller] == start.options.dice_per_player
        )
    faces = [f for hand in result.hands for f in hand]
    assert result.counted == count_bid(result.bid, faces, wild=result.special is None)
    if end.phase != "over":
        assert end.counts[end.opener] > 0
        moved = next((s for s in (result.loser, result.gainer) if s is not None), result.caller)
        if end.counts[moved] > 0:
            assert end.opener == moved
        else:  # the next seat after `moved` that still has dice
            after = [(moved + step) % end.seats for step in range(1, end.seats)]
            assert end.opener == next(s for s in after if end.counts[s] > 0)
    if start.options.stake:
        assert sum(result.payments) == end.tokens.bank - start.tokens.bank
        assert all(
            b1 == b0 - paid
            for b0, b1, paid in zip(
                start.tokens.balances, end.tokens.balances, result.payments, strict=True
            )
        )


def play_game(rng: random.Random, preset: str, stats: Counter[str]) -> None:
    """Play one random game of `preset` to the end, checking every step; tally into `stats`."""
    seats = rng.randint(2, 6)
    options = options_for(preset)
    state = new_game(options, seats, rng.randrange(seats))
    legal = _check_step(rng, state)
    round_start = state
    stats["games"] += 1
    stats[f"seats:{seats}"] += 1
    while state.phase != "over":
        if state.phase == "rolling":
            dice = tuple(tuple(rng.choices(FACES, k=c)) for c in state.counts)
            state = apply(state, Roll(dice=dice))
            assert state.turn == state.opener
            round_start = state
        else:
            action = _choose(rng, state, legal)
            after = apply(state, action)
            _tally(stats, state, action)
            if after.phase != "bidding":
                _check_round(round_start, after)
                _tally_round(stats, round_start, after)
            else:
                assert after.counts == state.counts
            state = after
        stats["steps"] += 1
        legal = _check_step(rng, state)
    assert state.winner is not None
    assert state.active == (state.winner,)
    assert len(state.eliminated) == seats - 1 and state.winner not in state.eliminated
    assert all(legal_actions(state, s) == [] for s in range(seats))
    if options.stake:
        assert state.tokens.bank == 0
        assert state.tokens.balances[state.winner] > 0
    try:
        apply(state, Roll(dice=((),) * seats))
    except RuleError as err:
        assert err.code == "game_over"
    else:
        raise AssertionError("a roll after the game was accepted")


def _tally(stats: Counter[str], state: State, action) -> None:
    if isinstance(action, Call):
        stats[f"call:{action.call}"] += 1
        if action.seat != state.turn:
            stats[f"out-of-turn:{action.call}"] += 1
        if state.special is not None:
            stats[f"special-call:{action.call}"] += 1
        if len(state.active) == 2:
            stats[f"two-left-call:{action.call}"] += 1
    elif isinstance(action, PlaceBid):
        if action.bid.face == 1:
            stats["paco-bid" if state.special is None else "special-paco-bid"] += 1
        if state.bids and action.bid.face != state.bids[-1].bid.face and state.special:
            stats["special-face-change"] += 1
    elif isinstance(action, Reroll):
        stats["reroll"] += 1
    else:
        stats["declare"] += 1


def _tally_round(stats: Counter[str], start: State, end: State) -> None:
    result = end.results[-1]
    stats[f"special:{result.special}"] += 1
    if result.gainer is not None:
        stats["gain"] += 1
    if result.loser is not None and end.counts[result.loser] == 0:
        stats["elimination"] += 1
    if result.loser is None and result.gainer is None:
        stats["no-change"] += 1


def _seed(preset: str, game: int) -> str:
    return f"perudo-random/{preset}/{game}"


def _run_games(preset: str, first: int, stop: int) -> tuple[list[int], Counter[str]]:
    """Games `first`..`stop`-1 of `preset`, each with its own seed (so a failing one can be
    replayed alone); the indices of failing games, and the tallies."""
    failed: list[int] = []
    stats: Counter[str] = Counter()
    for game in range(first, stop):
        try:
            play_game(random.Random(_seed(preset, game)), preset, stats)
        except Exception:  # noqa: BLE001 - replayed in the test process for the report
            failed.append(game)
    return failed, stats


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[list[int], Counter[str]]]:
    """Every preset's games, spread over the machine's cores (at most two processes)."""
    chunks = [
        (preset, first, min(first + CHUNK, GAMES))
        for preset in PRESET_NAMES
        for first in range(0, GAMES, CHUNK)
    ]
    workers = min(2, os.cpu_count() or 1)
    if workers > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            results = list(pool.map(_run_games, *zip(*chunks, strict=True)))
    else:
        results = [_run_games(*chunk) for chunk in chunks]
    merged: dict[str, tuple[list[int], Counter[str]]] = {p: ([], Counter()) for p in PRESET_NAMES}
    for (preset, _, _), (failed, stats) in zip(chunks, results, strict=True):
        merged[preset][0].extend(failed)
        merged[preset][1].update(stats)
    return merged


# What each preset's random games must have exercised (over GAMES games).
COVERAGE = {
    "classic": {"special:palifico", "special-paco-bid", "paco-bid"},
    "calza-anytime": {
        "special:palifico",
        "call:calza",
        "out-of-turn:calza",
        "special-call:calza",
        "gain",
        "no-change",
    },
    "gamerules": {"special:palifico", "call:calza", "gain", "no-change"},
    "club": {
        "special:calzone",
        "declare",
        "special-face-change",
        "special-paco-bid",
        "call:jonti",
        "out-of-turn:jonti",
        "special-call:jonti",
        "gain",
        "reroll",
    },
}
ABSENT = {
    "classic": {
        "call:calza",
        "call:jonti",
        "reroll",
        "declare",
        "special:calzone",
        "special-face-change",
        "gain",
    },
    "calza-anytime": {"call:jonti", "reroll", "declare", "special:calzone", "special-face-change"},
    "gamerules": {
        "call:jonti",
        "special-call:calza",
        "two-left-call:calza",
        "out-of-turn:calza",
        "special:calzone",
        "special-face-change",
    },
    "club": {"call:calza", "special:palifico", "two-left-call:jonti"},
}


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_random_games_keep_the_invariants(preset, outcomes):
    failed, stats = outcomes[preset]
    if failed:
        # replay the first failing game here, for pytest's own report of the broken check
        play_game(random.Random(_seed(preset, failed[0])), preset, Counter())
        pytest.fail(f"{preset} game {failed[0]} failed in a worker but not when replayed")
    assert stats["games"] == GAMES
    assert stats["steps"] > 20 * GAMES
    assert {f"seats:{n}" for n in range(2, 7)} <= set(stats)
    assert stats["call:dudo"] > 0 and stats["elimination"] > 0
    missing = {key for key in COVERAGE[preset] if stats[key] == 0}
    assert not missing, f"random play never exercised {sorted(missing)}"
    present = {key for key in ABSENT[preset] if stats[key] > 0}
    assert not present, f"{preset} allowed {sorted(present)}"


def test_legal_bid_ranges_match_the_raise_rules():
    """`legal_bids` lists counts by range; every range equals the pairwise rule of RULES.md §3."""
    for rule in ("count-or-face", "one-at-a-time", "monotone"):
        for wild in (True, False):
            for n in range(1, 31):
                for f in range(1, 7):
                    for f2 in range(1, 7):
                        for top in (n, 30):
                            got = list(_raise_counts(rule, n, f, f2, wild, top))
                            want = [m for m in range(1, top + 1) if _beats(rule, n, f, m, f2, wild)]
                            assert got == want, (rule, wild, n, f, f2, top)
