"""The bots' arena (issue 14), run by hand:

    .venv/bin/python -m bench.bench_bots                       # every pairing, 2,000 games a row
    .venv/bin/python -m bench.bench_bots --games 10000 hard:medium hard:textbook
    .venv/bin/python -m bench.bench_bots --six hard:medium     # one of six against five

Each row plays `--games` games of a preset (classic by default) through the rules engine: the
first player named against the second, heads-up, or (`--six`) one of the first against five
of the second, the seats rotated game after game so that nobody always opens. Printed: the
first's win rate with its 95 % Wilson interval, and the decision time of each (median, p99,
in ms). Illegal moves are counted (a bot only ever picks from `view.choices`, so it should be
0). Figures, not assertions.

`auto` is the move made for a player whose turn timer ran out (`bots.automatic_move`).
`textbook` is an independent bot written from the usual description: binomial odds over the
dice it cannot see (its own dice known, the rest fair), dudo when the bid is true with
probability below 50 %, else the legal raise most likely true (the highest count among equals).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable
from math import comb

from perudo_ssh import bots, protocol
from perudo_ssh.lobby.table import engine_action
from perudo_ssh.rules import (
    Bid,
    GameView,
    Reroll,
    Roll,
    RuleError,
    apply,
    count_bid,
    new_game,
    observe,
    options_for,
)

PLAYS = (protocol.MakeBid, protocol.MakeCall, protocol.DeclareCalzone)
"""What a bot may answer on its turn."""

Player = Callable[[GameView, random.Random], protocol.Command | None]


def textbook(view: GameView, rng: random.Random) -> protocol.Command | None:
    """The textbook binomial bot (see the module docstring)."""
    choices = view.choices
    if view.me is None or not (choices.bids or choices.dudo):
        return None
    mine = view.seats[view.me]
    own = tuple(mine.hidden or ()) + tuple(f for s in view.seats for f in s.shown)
    unknown = sum(s.dice - len(s.shown) for s in view.seats if s.seat != view.me)

    def p_true(bid: Bid) -> float:
        need = bid.count - count_bid(bid, own, view.wild)
        if need <= 0:
            return 1.0
        if need > unknown:
            return 0.0
        p = 1 / 3 if view.wild and bid.face != 1 else 1 / 6
        return sum(
            comb(unknown, k) * p**k * (1 - p) ** (unknown - k) for k in range(need, unknown + 1)
        )

    last = view.bids[-1].bid if view.bids else None
    if last is not None and choices.dudo and p_true(last) < 0.5:
        return protocol.MakeCall(call="dudo")
    if choices.bids:
        bid = max(choices.bids, key=lambda b: (p_true(b), b.count))
        return protocol.MakeBid(count=bid.count, face=bid.face)
    return protocol.MakeCall(call="dudo")


def level(name: str) -> Player:
    """A bot of `bots.LEVELS` as an arena player."""
    return lambda view, rng: bots.choose(view, rng, level=name)


PLAYERS: dict[str, Player] = {name: level(name) for name in bots.LEVELS}
PLAYERS["textbook"] = textbook
PLAYERS["auto"] = lambda view, rng: bots.automatic_move(view)  # the turn-timeout move


def play(
    preset: str, players: list[str], seed: int, times: dict[str, list[float]]
) -> tuple[int, int]:
    """One game, seat i played by `players[i]`; returns (the winner's seat, illegal moves)."""
    rng = random.Random(seed)
    state = new_game(options_for(preset), len(players), seed % len(players))
    illegal = 0
    while state.phase != "over":
        if state.phase == "rolling":
            dice = tuple(tuple(rng.randint(1, 6) for _ in range(c)) for c in state.counts)
            state = apply(state, Roll(dice=dice))
            continue
        seat = state.turn
        called = out_of_turn(state, players, seat, times)
        if called is not None:  # as a table lets bots: before the bot to move, the others
            state = called
            continue
        view = observe(state, seat)
        start = time.perf_counter()
        command = PLAYERS[players[seat]](view, rng)
        times[players[seat]].append(time.perf_counter() - start)
        try:
            assert isinstance(
                command, protocol.MakeBid | protocol.MakeCall | protocol.DeclareCalzone
            )
            state = apply(state, engine_action(command, seat))
        except (RuleError, AssertionError, TypeError):
            illegal += 1
            fallback = bots.automatic_move(view)
            state = apply(state, engine_action(fallback, seat))
        name = players[seat]
        if name in bots.LEVELS and state.phase == "bidding" and state.last_action_seat == seat:
            # show and reroll right after the bid (RULES.md §6), as the table lets bots
            shown = bots.show_after_bid(observe(state, seat), rng, level=name)
            if shown is not None:
                left = len(state.hidden[seat]) - len(shown.reveal)
                faces = tuple(rng.randint(1, 6) for _ in range(left))
                state = apply(state, Reroll(seat=seat, reveal=shown.reveal, new_faces=faces))
    assert state.winner is not None
    return state.winner, illegal


def out_of_turn(state, players: list[str], turn: int, times: dict[str, list[float]]):
    """The state after another bot's call out of turn on the last bid (calza any time,
    jonti), asked as `bot_turns.bot_move` asks them (`bots.out_of_turn_calls`), each decision
    timed; None if none calls."""

    def timed(view: GameView, level: str) -> protocol.MakeCall | None:
        start = time.perf_counter()
        call = bots.off_turn(view, level)
        times[level].append(time.perf_counter() - start)
        return call

    levels = [name if name in bots.LEVELS else None for name in players]
    for call in bots.out_of_turn_calls(state, levels, turn, decide=timed):
        try:
            return apply(state, call)
        except RuleError:
            continue
    return None


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a win rate."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def row(preset: str, first: str, second: str, games: int, six: bool) -> None:
    times: dict[str, list[float]] = {first: [], second: []}
    wins = illegal = 0
    size = 6 if six else 2
    for game in range(games):
        seat = game % size  # the first player's seat, rotated
        players = [second] * size
        players[seat] = first
        winner, bad = play(preset, players, game, times)
        wins += winner == seat
        illegal += bad
    low, high = wilson(wins, games)

    def ms(name: str) -> str:
        t = sorted(times[name])
        if not t:
            return "—"
        return f"{statistics.median(t) * 1e3:.2f}/{t[int(0.99 * (len(t) - 1))] * 1e3:.2f}"

    table = "six" if six else "heads-up"
    print(
        f"{preset:<13} {table:<8} {first:>8} vs {second:<8} {wins / games:6.1%} "
        f"[{low:5.1%}, {high:5.1%}]  {games:6}  ms {first} {ms(first)}  {second} {ms(second)}"
        f"  illegal {illegal}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="*", help="first:second (all levels and the textbook)")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--preset", default="classic")
    parser.add_argument("--six", action="store_true", help="one of the first, five of the second")
    args = parser.parse_args()
    pairs = [tuple(p.split(":")) for p in args.pairs] or [
        ("medium", "textbook"),
        ("easy", "medium"),
        ("hard", "medium"),
        ("hard", "textbook"),
    ]
    print(f"{'preset':<13} {'table':<8} {'':>8}    {'':<8} {'wins':>6}  95 % interval  games")
    for first, second in pairs:
        row(args.preset, first, second, args.games, args.six)


if __name__ == "__main__":
    main()
