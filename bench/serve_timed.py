"""`perudo-ssh` with a stopwatch: where a loaded server's time goes, by screen and by cause.

    .venv/bin/python -m bench.bench_load 200 --seconds 40 --server bench/serve_timed.py --keep

(`bench_load` runs a `.py` server with this interpreter.) It serves as `perudo-ssh` does, and
times, from `PERUDO_TIMED_FROM` seconds after start (default 50: after a 200-session ramp)
for `PERUDO_TIMED_FOR` seconds (default 40):

* every frame (`Screen._on_timer_update`) by screen class and what asked for it: a table
  screen's turn-clock `tick`, a table state `show`n, neither (keys, focus, toasts); a lobby
  screen's `tables`, `online`, `chat`, `key`;
* every message dispatched, by kind and receiver (from dispatch to done: it includes what the
  handler awaited, so it is an upper bound);
* every widget's drawing of its lines, by class and id;
* every layout asked for, by widget class and the first caller of ours (count only); every
  layout pass, by screen class and the widgets (and their callers) that asked for it;
* the collector's passes by generation, and whether a frame was being drawn; and the
  objects they found unreachable;
* the loop's callbacks by CPU each, and those over 10 ms by what they ran (a long one holds
  up every session);
* the hit rates of Textual's and Rich's `lru_cache`s at the end of the window.

`PERUDO_TIMED_GC=5000,5,100` serves with other collector thresholds than
`perudo_ssh.front.server.COLLECTOR_THRESHOLDS`, to compare.
`PERUDO_TIMED_YOUNG=freeze` serves with no young collections (what-if): each young step of
`perudo_ssh.collector.PacedCollector` moves the young generation aside unwalked
(`gc.freeze()`) instead. Stop 35, 300 sessions, a minute from 190 s, one run each: the young
collections took 1.35 s of 39.4 s of CPU and found 14 objects; without them the minute took
39.1 s (run-to-run spread is larger), the same RSS, and Python collected nothing by itself.

The figures go to `serve-timed.txt` in the server's working directory (`--keep` keeps it:
the run's temp dir), with the process CPU of the window. Figures, not assertions.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import inspect
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from textual.message_pump import MessagePump
from textual.screen import Screen

import screens.app
import screens.boundary
import screens.chat
import screens.lobby
import screens.table

TIMES: collections.defaultdict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
clock = time.thread_time  # CPU of the thread: what the GIL or another thread took is not counted
drawing = [False]


def count(key: str, start: float) -> None:
    entry = TIMES[key]
    entry[0] += 1
    entry[1] += clock() - start


@contextlib.contextmanager
def stopwatch(key: str) -> Iterator[None]:
    """Count the time of the `with` block under `key`."""
    start = clock()
    try:
        yield
    finally:
        count(key, start)


def causes(screen: Any) -> set[str]:
    found = screen.__dict__.get("_timed_causes")
    if found is None:
        found = screen._timed_causes = set()
    return found


def wrap_frames() -> None:
    original = Screen._on_timer_update

    def timed(self: Screen[Any]) -> None:
        drawing[0], start = True, clock()
        try:
            original(self)
        finally:
            drawing[0] = False
            why = "+".join(sorted(causes(self)))
            causes(self).clear()
            count(f"frame {type(self).__name__} {why}", start)

    Screen._on_timer_update = timed  # type: ignore[method-assign]


def wrap_causes() -> None:
    table, lobby = screens.table.TableScreen, screens.lobby.LobbyScreen
    tick, show, show_lobby = table.tick, table.show, lobby.show_lobby
    chat_arrived = screens.chat.chat_arrived

    def timed_tick(self: Any) -> None:
        causes(self).add("tick")
        start = clock()
        tick(self)
        count("call TableScreen.tick", start)

    def timed_show(self: Any, state: Any) -> None:
        causes(self).add("show")
        start = clock()
        show(self, state)
        count("call TableScreen.show", start)

    def timed_show_lobby(self: Any, state: Any) -> None:
        if state.online != getattr(self, "_online", None):
            causes(self).add("online")
        if self.__dict__.get("_timed_tables") != state.tables:
            causes(self).add("tables")
        self._timed_tables = state.tables
        show_lobby(self, state)

    def timed_chat_arrived(app: Any, chat: Any) -> None:
        if app.screen_stack:
            causes(app.screen_stack[0]).add("chat")
        chat_arrived(app, chat)

    table.tick, table.show, lobby.show_lobby = timed_tick, timed_show, timed_show_lobby
    screens.boundary.chat_arrived = timed_chat_arrived  # type: ignore[attr-defined]


def wrap_messages() -> None:
    original = MessagePump._dispatch_message

    async def timed(self: MessagePump, message: Any) -> None:
        if type(message).__name__ == "Key" and isinstance(self, screens.app.PerudoApp):
            if isinstance(self.screen, screens.lobby.LobbyScreen):
                causes(self.screen).add("key")
        with stopwatch(f"msg {type(message).__qualname__} -> {type(self).__name__}"):
            await original(self, message)

    MessagePump._dispatch_message = timed  # type: ignore[method-assign]


def wrap_renders() -> None:
    """Time every widget's own drawing (`Widget.render_lines`: a shared widget's only when it
    is drawn, not when its lines are reused) by widget class and id."""
    from textual.widget import Widget

    original = Widget.render_lines

    def timed(self: Widget, crop: Any) -> Any:
        with stopwatch(f"draw {type(self).__name__}#{self.id or ''}"):
            return original(self, crop)

    Widget.render_lines = timed  # type: ignore[method-assign]


def count_layouts() -> None:
    """Count the layouts asked for (`refresh(layout=True)`), by widget class and the caller
    outside Textual that asked (the first frame of perudo_ssh or screens on the stack)."""
    from textual.widget import Widget

    original = Widget.refresh

    def refresh(self: Widget, *regions: Any, **options: Any) -> Any:
        if options.get("layout"):
            frame, where = sys._getframe(1), "textual"
            while frame is not None:
                name = frame.f_code.co_filename
                ours = "/screens/" in name or "/perudo_ssh/" in name
                if ours and not name.endswith(
                    ("speedups.py", "isolation.py", "repaints.py", "garbage.py")
                ):
                    where = f"{name.rsplit('/', 1)[-1]}:{frame.f_code.co_name}"
                    break
                frame = frame.f_back
            count(f"layout {type(self).__name__} by {where}", clock())
        return original(self, *regions, **options)

    Widget.refresh = refresh  # type: ignore[method-assign]

    from textual import messages

    made = messages.Layout.__init__

    def layout_made(self: Any, widget: Any) -> None:
        made(self, widget)
        frame, names = sys._getframe(1), []
        while frame is not None and len(names) < 3:
            name = frame.f_code.co_name
            if name not in ("refresh_directly", "refresh", "_check_refresh", "post_message"):
                names.append(name)
            frame = frame.f_back
        self._timed_asker = "<".join(names)

    messages.Layout.__init__ = layout_made  # type: ignore[method-assign]
    on_layout = Screen._on_layout

    async def timed_on_layout(self: Screen[Any], message: Any) -> None:
        asker = getattr(message, "_timed_asker", "?")
        pending = self.__dict__.setdefault("_timed_layouts", set())
        pending.add(f"{type(message.widget).__name__}.{asker}")
        await on_layout(self, message)

    Screen._on_layout = timed_on_layout  # type: ignore[method-assign]
    passes = Screen._refresh_layout

    def timed_pass(self: Screen[Any], *args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return passes(self, *args, **kwargs)
        finally:
            asked = self.__dict__.pop("_timed_layouts", set())
            why = " + ".join(sorted(asked)[:4]) + (" + …" if len(asked) > 4 else "")
            count(f"pass {type(self).__name__} {why or 'size/resume'}", start)

    Screen._refresh_layout = timed_pass  # type: ignore[method-assign]


def watch_collector() -> None:
    started = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = clock()
        else:
            where = " in a frame" if drawing[0] else ""
            count(f"gc generation {info['generation']}{where}", started[0])
            found = TIMES[f"gc found by generation {info['generation']}"]
            found[0] += 1
            found[1] += info["collected"]  # objects, not seconds: written apart

    gc.callbacks.append(callback)


LONG_CALLBACK = 0.010
"""A callback of the loop that takes longer than this (s of CPU) is counted by what it ran:
every other session waits that long."""
SLICES = ((0.001, "<1"), (0.010, "1-10"), (0.050, "10-50"), (float("inf"), ">50"))
"""How the loop's callbacks are counted by their CPU: (under this many s, the name)."""


def time_callbacks() -> None:
    """Count the loop's callbacks over `LONG_CALLBACK` by what they ran (a task's coroutine,
    else the function), and every callback by how long it took (`SLICES`)."""
    original = asyncio.events.Handle._run

    def timed(self: asyncio.events.Handle) -> None:
        start = clock()
        original(self)
        spent = clock() - start
        bucket = next(name for limit, name in SLICES if spent < limit)
        entry = TIMES[f"slice {bucket} ms"]
        entry[0] += 1
        entry[1] += spent
        if spent >= LONG_CALLBACK:
            callback = self._callback
            owner = getattr(callback, "__self__", None)
            if isinstance(owner, asyncio.Task):
                coro = owner.get_coro()
                what = getattr(coro, "__qualname__", repr(coro))
            else:
                what = getattr(callback, "__qualname__", repr(callback))
            entry = TIMES[f"long {what}"]
            entry[0] += 1
            entry[1] += spent

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]


def cache_rates() -> list[str]:
    rows = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith(("rich", "textual")):
            continue
        for value in list(vars(module).values()):
            found = [value]
            if inspect.isclass(value) and value.__module__ == name:
                found = [getattr(v, "__func__", v) for v in vars(value).values()]
            for function in found:
                info = getattr(function, "cache_info", None)
                if callable(info):
                    i = info()
                    where = f"{function.__module__}.{function.__qualname__}"
                    rows.add((i.misses, f"{where}: {i.hits} hits {i.misses} misses of {i.maxsize}"))
    return [row for _, row in sorted(rows, reverse=True)[:20]]


def start_window(begin: float, length: float) -> None:
    before: dict[str, list[float]] = {}
    cpu = [0.0]

    def opening() -> None:
        before.update({key: list(value) for key, value in list(TIMES.items())})
        cpu[0] = time.process_time()

    def closing() -> None:
        spent = time.process_time() - cpu[0]
        window = {
            key: (n - before.get(key, [0, 0.0])[0], s - before.get(key, [0, 0.0])[1])
            for key, (n, s) in list(TIMES.items())
        }
        with open("serve-timed.txt", "w") as out:
            out.write(f"window {length:.0f} s, process CPU {spent:.1f} s\n")
            out.write("   total s    count    each ms  what\n")
            apart = ("layout ", "long ", "slice ", "pass ", "gc found")

            def timed_rows(keys: list[str], limit: int, cut: int = 0) -> None:
                """`keys`' total, count and each, most total first, named from `cut` on."""
                keys = sorted((k for k in keys if window[k][0]), key=lambda k: -window[k][1])
                for key in keys[:limit]:
                    n, s = window[key]
                    out.write(f"{s:10.2f} {int(n):8d} {1e3 * s / n:10.2f}  {key[cut:]}\n")

            timed_rows([k for k in window if not k.startswith(apart)], 90)
            out.write("layouts asked for, most first:\n")
            layouts = [(n, key) for key, (n, _) in window.items() if key.startswith("layout ")]
            out.writelines(f"{int(n):8d}  {key[7:]}\n" for n, key in sorted(layouts)[::-1][:30])
            out.write("layout passes by screen and what asked (widget.caller), most CPU first:\n")
            timed_rows([k for k in window if k.startswith("pass ")], 40, cut=5)
            out.write("the loop's callbacks by CPU each (every other session waits):\n")
            timed_rows([k for k in window if k.startswith("slice ")], len(SLICES))
            out.write(f"callbacks over {LONG_CALLBACK * 1e3:.0f} ms, by what they ran:\n")
            timed_rows([k for k in window if k.startswith("long ")], 30, cut=5)
            for key, (n, found) in sorted(window.items()):
                if n and key.startswith("gc found"):
                    out.write(f"{key}: {int(n)} passes, {found:.0f} objects\n")
            out.write("caches (lru_cache), most misses first:\n")
            out.writelines(f"  {row}\n" for row in cache_rates())

    for delay, action in ((begin, opening), (begin + length, closing)):
        timer = threading.Timer(delay, action)
        timer.daemon = True
        timer.start()


def main() -> None:
    time_callbacks()
    wrap_frames()
    wrap_causes()
    wrap_messages()
    wrap_renders()
    count_layouts()
    watch_collector()
    start_window(
        float(os.environ.get("PERUDO_TIMED_FROM", "50")),
        float(os.environ.get("PERUDO_TIMED_FOR", "40")),
    )
    from perudo_ssh.cli import main as serve
    from perudo_ssh.front import server as serving

    thresholds = os.environ.get("PERUDO_TIMED_GC")  # e.g. "5000,5,100": try other thresholds
    if thresholds:
        serving.COLLECTOR_THRESHOLDS = tuple(int(t) for t in thresholds.split(","))
    if os.environ.get("PERUDO_TIMED_YOUNG") == "freeze":  # what-if: no young collections
        from perudo_ssh import collector

        def young_frozen(_generation: int) -> int:
            gc.freeze()  # what the young one would walk, moved aside unwalked
            return 0

        original_step = collector.PacedCollector.step

        def step(self: Any) -> int:
            if self._collect is gc.collect:
                self._collect = lambda g: gc.collect(g) if g == 2 else young_frozen(g)
            return original_step(self)

        collector.PacedCollector.step = step  # type: ignore[method-assign]

    sys.argv[0] = "perudo-ssh"
    sys.exit(serve())


if __name__ == "__main__":
    main()
