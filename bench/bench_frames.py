"""What one change costs the screens that show it: in-process, no SSH, run by hand.

    .venv/bin/python -m bench.bench_frames                  # every scenario, 10 apps alike
    .venv/bin/python -m bench.bench_frames row chat --apps 1 --profile

`--apps` lobby apps (each a `PerudoApp` on a fake lobby session, 80×24, `run_test`) get the
same events, as the lobby actor sends every lobby screen the same state; each scenario makes
`--changes` changes, one at a time, and lets every screen draw it. Printed per scenario: the
frames drawn, their mean cost, and the screens' CPU (frames only) per change per app — the
figure that multiplies by the number of lobby screens in a server; for the scenarios of
lobby events also the app's handling of the event (`on_lobby_event_arrived`, `_show_lobby`:
a chat line's rows and the online column go to the terminal at once where they can,
`send_at_once`, no frame of the screen then); for the dialogs, the help, typing and notices
the whole process's CPU per change per app. Scenarios:

* `online` — one name arrives and another leaves (`LobbyState.online`);
* `chat` — one lobby chat line;
* `row` — one table's seat count changes (a cell of the table list);
* `table` — a table is made, or the newest closes (a row of the list added or removed);
* `cursor` — each app moves its cursor in the table list;
* `tick` — the turn clock of a table screen counts down a second (one table state each app);
* `bid` — a bid at a 3-seat table (one table state each app, the app's seat 0): the count
  goes up by one, the turn passes round, so every third change is the app's own turn;
* `notice` — a table chat line said by another player while the app's chat is closed, shown
  as a notice above the footer until it goes (0.2 s here; CPU per notice, whole process, as
  it comes and as it goes);
* `type` — a bid typed at a table on the app's own turn and taken back: Tab, `5x4`, three
  Backspaces, Tab (keys per change: 8; frames are per key, each echoing one character);
* `dialog` — the create dialog opened, two choices made in its lists, closed (CPU per dialog,
  whole process, not only frames).

`--profile` prints the top of a cProfile of the changes (cumulative; `SORT=tottime` in the
environment sorts otherwise, `CALLERS=regex` adds who called the functions it matches). The
server's own figures come from `bench/bench_load.py` (real SSH, its own process); this one
isolates the screens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import time
from typing import Any

from textual.screen import Screen

import screens.chat
from perudo_ssh import protocol as P
from perudo_ssh.rules import observe
from perudo_ssh.ssh.isolation import (
    install_drawing_savers,
)
from screens.app import PerudoApp
from screens.boundary import LobbyBoundary
from tests.test_screens_fakes import FakeSession, bid, rolled, summary, table_state

SCENARIOS = (
    "online",
    "chat",
    "row",
    "table",
    "cursor",
    "tick",
    "bid",
    "notice",
    "type",
    "dialog",
    "help",
)


class Frames:
    """Counts and times `Screen._on_timer_update` (one frame of one screen), and times the
    app's handling of each lobby event apart (`arrived`: `on_lobby_event_arrived`, with what
    it sends to the terminal at once)."""

    def __init__(self) -> None:
        self.count, self.seconds, self.arrived = 0, 0.0, 0.0
        # on the class that defines them: Textual calls each class's handler in the MRO
        for name in ("on_lobby_event_arrived", "_show_lobby"):  # a lobby state: both
            setattr(LobbyBoundary, name, self._timed(getattr(LobbyBoundary, name)))
        original = Screen._on_timer_update

        def timed(screen: Screen[Any]) -> None:
            start = time.perf_counter()
            original(screen)
            self.count += 1
            self.seconds += time.perf_counter() - start

        Screen._on_timer_update = timed  # type: ignore[method-assign,assignment]

    def _timed(self, handler: Any) -> Any:
        def timed(app: PerudoApp, *args: Any) -> Any:
            start = time.perf_counter()
            try:
                return handler(app, *args)
            finally:
                self.arrived += time.perf_counter() - start

        return timed

    def reset(self) -> None:
        self.count, self.seconds, self.arrived = 0, 0.0, 0.0


async def run(kind: str, apps: int, changes: int, profile: bool, frames: Frames) -> str:
    now = [1000.0]
    sessions = [FakeSession() for _ in range(apps)]
    made = [PerudoApp(session, "en", clock=lambda: now[0]) for session in sessions]  # type: ignore[arg-type]
    tables = tuple(
        summary(i, name=f"p{i}'s table", status="playing" if i % 2 else "waiting")
        for i in range(1, 30)
    )
    online = tuple(f"p{i:03d}" for i in range(100))
    view = observe(bid(rolled(opener=0), 0, 2, 4), 0)
    clock = P.TurnClock(seat=1, seconds=60, left=59.6)
    for session in sessions:
        session.feed(P.Welcome(name="ana"), P.LobbyState(tables=tables, online=online))
        if kind in ("tick", "bid", "notice"):
            session.feed(table_state(view, clock=clock, turn_seconds=60))
        elif kind == "type":  # the app's own turn: seat 0 opens
            mine = P.TurnClock(seat=0, seconds=60, left=59.6)
            session.feed(table_state(observe(rolled(opener=0), 0), clock=mine, turn_seconds=60))
    if kind == "notice":
        screens.chat.NOTIFY_SECONDS = 0.2
    bids = []
    for i in range(changes):
        if i % 10 == 0:  # a new round now and then: 15 dice hold ten raises
            game = rolled(opener=1)
        game = bid(game, (1 + i % 10) % 3, 1 + i % 10 // 5, 2 + i % 5)
        bids.append(game)

    def feed(*events: P.Event) -> None:
        for session in sessions:
            session.feed(*events)

    async with contextlib.AsyncExitStack() as stack:
        shown = kind == "notice"  # notifications drawn (the server draws them; off elsewhere
        # in this bench, as its earlier figures were taken)
        pilots = [
            await stack.enter_async_context(app.run_test(size=(80, 24), notifications=shown))
            for app in made
        ]
        for _ in range(20):
            await pilots[0].pause(0.02)

        def change(i: int) -> None:
            if kind == "online":
                feed(P.LobbyState(tables=tables, online=(*online[i % 7 :], f"x{i}")))
            elif kind == "chat":
                feed(P.ChatLine(id=1000 + i, scope="lobby", name="ben", text=f"hi {i}"))
            elif kind == "row":
                row = summary(6, name="p6's table", free=i % 4)
                feed(P.LobbyState(tables=(*tables[:5], row, *tables[6:]), online=online))
            elif kind == "table":
                more = (summary(99, name="new table"),) if i % 2 == 0 else ()
                feed(P.LobbyState(tables=(*tables, *more), online=online))
            elif kind == "bid":
                turn = P.TurnClock(seat=(2 + i % 10) % 3, seconds=60, left=60.0)
                feed(table_state(observe(bids[i], 0), clock=turn, turn_seconds=60))
            elif kind == "notice":  # a table chat line, shown as a notice until it goes
                feed(P.ChatLine(id=1000 + i, scope="table", table=1, name="ben", text=f"hi {i}"))
            elif kind == "tick":
                now[0] += 1.0
                for app in made:
                    app.screen.tick()  # type: ignore[attr-defined]

        profiler = cProfile.Profile() if profile else None
        frames.reset()
        cpu = time.process_time()
        for i in range(changes):
            if profiler:
                profiler.enable()
            if kind == "cursor":
                for pilot in pilots:
                    await pilot.press("down" if (i // 10) % 2 == 0 else "up")
            elif kind == "dialog":
                for pilot in pilots:
                    for keys in (("c",), ("tab", "enter"), ("down", "enter"), ("tab", "enter")):
                        await pilot.press(*keys)
                        await pilot.pause(0.02)
                    await pilot.press("down", "enter", "escape")
            elif kind == "type":
                for pilot in pilots:
                    await pilot.press("tab", "5", "x", "4", "backspace", "backspace")
                    await pilot.press("backspace", "tab")
            elif kind == "help":
                for pilot in pilots:
                    await pilot.press("question_mark")
                    await pilot.pause(0.02)
                    await pilot.press("question_mark")
            else:
                change(i)
            await pilots[0].pause(0.02)
            if kind == "notice":  # until it has gone from every screen
                while any(app._notifications for app in made):
                    await pilots[0].pause(0.02)
            if profiler:
                profiler.disable()
        cpu = time.process_time() - cpu
        if profiler:
            stats = pstats.Stats(profiler).sort_stats(os.environ.get("SORT", "cumulative"))
            stats.print_stats(40)
            if os.environ.get("CALLERS"):
                stats.print_callers(os.environ["CALLERS"])
    each = 1000 * frames.seconds / max(frames.count, 1)
    per = 1000 * frames.seconds / changes / apps
    line = f"{kind:7} {frames.count:6d} frames {each:6.2f} ms each  {per:6.2f} ms/change/app"
    if kind in ("online", "chat", "row", "table", "bid", "notice"):
        line += f"  {1000 * frames.arrived / changes / apps:6.2f} ms/change/app handling it"
    if kind in ("dialog", "help", "type", "notice"):
        line += f"  {1000 * cpu / changes / apps:6.1f} ms CPU per {kind}"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help=f"any of {', '.join(SCENARIOS)} (all)")
    parser.add_argument("--apps", type=int, default=10, help="screens alike (default 10)")
    parser.add_argument("--changes", type=int, default=100, help="changes made (default 100)")
    parser.add_argument("--profile", action="store_true", help="cProfile the changes")
    args = parser.parse_args()
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    install_drawing_savers()
    frames = Frames()
    print(f"{args.apps} apps alike at 80×24, {args.changes} changes each")
    for kind in args.scenarios or SCENARIOS:
        changes = max(1, args.changes // 10) if kind in ("dialog", "help", "type") else args.changes
        if kind == "notice":
            changes = max(1, args.changes // 4)
        print(asyncio.run(run(kind, args.apps, changes, args.profile, frames)), flush=True)


if __name__ == "__main__":
    main()
