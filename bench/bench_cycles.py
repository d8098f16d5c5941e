"""Benchmark of SSH connect/disconnect cycles (run by hand from the repo root:
`.venv/bin/python -m bench.bench_cycles [CYCLES] [--kind KIND ...] [--workers N] [--no-store]
[--share-css] [--forget]`).

Starts the real server in-process (with a store in a temporary directory, as `perudo-ssh
serve` runs, unless `--no-store`), and for each KIND runs CYCLES cycles against it from a
child process, exactly as `tests/test_resources.py` does (`WORKERS` clients at once, half
with a key, half guests). A KIND is a rotation as that test writes it: "paint:q" (wait for
the lobby's welcome, quit with q), "paint:close", "paint:abort", "open:close", "open:abort",
"auth:close", "auth:abort", several joined by commas, or "mix" (the test's `ROTATION`).

Prints per KIND: cycles a second (wall), the server's CPU per cycle (this process) and the
clients' (the child), and after the server has settled: growth of resident memory and of
live Python memory blocks per cycle (Textual's and Rich's memos emptied first, as the test
does). Figures, not assertions.

Seen on the 2-core dev machine (store, 8 clients, 160 cycles a kind; other sessions kept
about one core busy, which moves these by ±30%): server CPU a cycle, paint:q 185–258 ms,
paint:close 123–152, paint:abort 129–164, open:close 62–76, open:abort 43–50, auth:abort 3.5;
the test's mix 48–65 ms (15–21 cycles a second). `--share-css` (a proposal:
`share_parsed_css`) takes 25–30% off a session drawn, ~45% off one left as it opened.
Memory: live blocks flat (under ±2 a cycle, noise); resident memory +20–27 MB over the first
few hundred cycles (Textual's memo of Textualize/textual#6665 filling), then flat; ~9 MB
with `--forget`.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import weakref
from pathlib import Path

from perudo_ssh.limits import Limits
from tests.conftest import StoredServer
from tests.test_resources import (
    ROTATION,
    WARMUP,
    WORKERS,
    Footprint,
    Tracked,
    cycle_in_child,
    parse_rotation,
    settle,
    track,
)


def share_parsed_css() -> None:
    """Prototype of a proposed change (not in the server): every app's stylesheet shares
    one process-wide cache of parsed CSS, keyed as Textual's own per-stylesheet cache plus
    the CSS variables (the theme), instead of parsing the same CSS again for each app."""
    from textual.css.stylesheet import Stylesheet

    parse_rules = Stylesheet._parse_rules
    shared: dict[tuple, list] = {}

    def shared_parse_rules(self, css, read_from, is_default_rules=False, tie_breaker=0, scope=""):
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(self._variables.items()))
        if key not in shared:
            shared[key] = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
        return shared[key]

    Stylesheet._parse_rules = shared_parse_rules  # type: ignore[method-assign]


def forget_finished_widgets(tracked: Tracked) -> None:
    """Prototype of a proposed workaround (not in the server) of Textualize/textual#6665:
    empty `StylesCache.get_inner_outer`'s memo (keyed by widgets' render caches) whenever an
    app has been freed, so that it does not keep finished widgets' rendered lines."""
    from textual._styles_cache import StylesCache

    add = tracked.apps.add

    def add_and_forget_when_freed(app: object) -> None:
        add(app)
        weakref.finalize(app, StylesCache.get_inner_outer.cache_clear)

    tracked.apps.add = add_and_forget_when_freed  # type: ignore[method-assign]


async def main(
    cycles: int, kinds: list[str], workers: int, store: bool, css: bool, forget: bool
) -> None:
    if css:
        share_parsed_css()
    tracked = track(setattr)
    if forget:
        forget_finished_widgets(tracked)
    tmp = Path(tempfile.mkdtemp())
    limits = Limits(max_sessions_per_address=0, connection_rate_per_address=0, max_startups="0")
    stored = StoredServer(db=tmp / "perudo.db", host_keys=tmp / "keys", limits=limits)
    if store:
        await stored.start()
        lobby, port = stored.lobby, stored.port
    else:
        import random

        from perudo_ssh.lobby import Lobby
        from perudo_ssh.serve import start_game_server

        bare = Lobby(bot_delay=(0, 0), rng=random.Random(7))
        acceptor, _ = await start_game_server("127.0.0.1", 0, tmp / "keys", bare, limits=limits)
        lobby, port = bare, acceptor.get_port()
    assert lobby is not None
    first = 0
    warm = await cycle_in_child(port, first, WARMUP, workers)
    first += WARMUP
    await settle(lobby, tracked)
    print(f"server: {'store' if store else 'no store'}; {workers} clients at once", end="")
    print("; CSS parsed once" * css + "; finished widgets forgotten" * forget)
    print(f"warm-up {WARMUP} cycles of the mix: {warm['errors'] or 'no errors'}")
    print(
        f"{'kind':44} {'cycles/s':>8} {'server ms':>9} {'client ms':>9} "
        f"{'RSS kB/cyc':>10} {'blocks/cyc':>10}"
    )
    for kind in kinds:
        rotation = ROTATION if kind == "mix" else parse_rotation(kind)
        before = Footprint.now()
        cpu, wall = time.process_time(), time.perf_counter()
        run = await cycle_in_child(port, first, cycles, workers, rotation)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        first += cycles
        await settle(lobby, tracked)
        after = Footprint.now()
        done = max(run["done"], 1)
        print(
            f"{kind[:44]:44} {done / wall:8.1f} {cpu / done * 1000:9.1f} "
            f"{run['cpu'] / done * 1000:9.1f} {(after.rss - before.rss) / 1024 / done:10.1f} "
            f"{(after.blocks - before.blocks) / done:10.2f}"
        )
        if after.blocks - before.blocks > done:  # more than a block a cycle: say what grew
            print("   grew:", after.grown(before, 8))
        if run["errors"]:
            print("   errors:", *run["errors"][:5], sep="\n   ")
    if store:
        await stored.stop()
    else:
        acceptor.close()
        await lobby.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cycles", nargs="?", type=int, default=200)
    parser.add_argument("--kind", action="append", dest="kinds")
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--no-store", action="store_true")
    parser.add_argument("--share-css", action="store_true", help=share_parsed_css.__doc__)
    parser.add_argument("--forget", action="store_true", help=forget_finished_widgets.__doc__)
    args = parser.parse_args()
    kinds = args.kinds or [
        "mix",
        "paint:q",
        "paint:close",
        "paint:abort",
        "open:close",
        "open:abort",
        "auth:abort",
    ]
    asyncio.run(
        main(args.cycles, kinds, args.workers, not args.no_store, args.share_css, args.forget)
    )
