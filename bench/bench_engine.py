"""Benchmark of the rules engine (run by hand: `.venv/bin/python bench/bench_engine.py`).

Plays seeded random legal games per preset and prints games/s, actions/s and the cost of
`legal_actions` and `observe` per call. Figures, not assertions.
"""

from __future__ import annotations

import random
import time

from perudo_ssh.rules import (
    PRESET_NAMES,
    Roll,
    apply,
    legal_actions,
    new_game,
    observe,
    options_for,
)


def play(preset: str, seed: int) -> tuple[int, int, int]:
    """One random game; returns (actions applied, legal_actions calls, observe calls)."""
    rng = random.Random(seed)
    seats = rng.randint(2, 6)
    state = new_game(options_for(preset), seats, rng.randrange(seats))
    actions = listings = views = 0
    while state.phase != "over":
        if state.phase == "rolling":
            dice = tuple(tuple(rng.randint(1, 6) for _ in range(c)) for c in state.counts)
            state = apply(state, Roll(dice=dice))
            continue
        choices = [a for seat in state.active for a in legal_actions(state, seat)]
        listings += len(state.active)
        for seat in state.active:
            observe(state, seat)
        views += len(state.active)
        state = apply(state, rng.choice(choices))
        actions += 1
    return actions, listings, views


def main(games: int = 500) -> None:
    print(f"{'preset':<14} {'games/s':>8} {'actions/s':>10} {'µs/step':>9}")
    for preset in PRESET_NAMES:
        start = time.perf_counter()
        totals = [play(preset, seed) for seed in range(games)]
        elapsed = time.perf_counter() - start
        actions = sum(t[0] for t in totals)
        print(
            f"{preset:<14} {games / elapsed:8.0f} {actions / elapsed:10.0f} "
            f"{elapsed / actions * 1e6:9.1f}"
        )
    print("µs/step = one action with legal_actions and observe for every active seat")


if __name__ == "__main__":
    main()
