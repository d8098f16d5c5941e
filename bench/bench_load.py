"""Load test of the server as an operator runs it: its own process, real SSH players at human
pace, latencies read off real screens.

Run from the repo root (one row per N; a run of 10 sessions takes about 1.5 minutes):

    .venv/bin/python -m bench.bench_load 10 30 100 300
    .venv/bin/python -m bench.bench_load 100 --seconds 30 --clients 2 --profile py-spy --keep

For each N: a fresh temp dir with a `perudo.toml` whose `[limits]` lift every session limit
and idle timeout, then `perudo-ssh serve --config --port --db --host-keys --log-file` on a
free loopback port, pinned to CPU 0 (`taskset -c 0`; `--no-pin` lets it run anywhere). The
load runs in `--clients` processes (multiprocessing, spawn; default 2) pinned to CPU 1, each
with its own asyncio loop and real asyncssh clients with PTYs (80×24, xterm-256color) whose
output is fed to pyte screens. Player pN logs in with its own new ed25519 key (so each has an
account), connections ramped at `--ramp` a second (default 5).

On this 2-core machine the load needs most of a core, so `serve --workers 2` cannot be
given both cores. `--server-cpus F` models a smaller machine instead: the server unpinned,
its processes held to F cores of CPU time in all by a cgroup quota, the load on the rest;
`--server-core C` holds each of its processes to C cores too. Issue 12's scaling figure, at
half scale (two half-speed cores against one):

    .venv/bin/python -m bench.bench_load 85 --server-cpus 0.5
    .venv/bin/python -m bench.bench_load 170 --workers 2 --server-cpus 1 --server-core 0.5

`--server PATH` serves with another checkout's `perudo-ssh` (to measure before and after a
change), or a `.py` file run with this Python (`bench/serve_timed.py`: where the server's
time goes, by screen and cause). The mix:

* about half at six-seat tables of people: six players of one load process, one creates a
  table of 6 seats and no bots, the other five join it from the lobby (cursor moved to the
  table's row); each bids on its turn after a think time (uniform 3–7 s), by typing the bid
  (`Tab`, `5x4`, `Enter`), or dudo when the bid looks high; now and then a table chat line
  (`t`, text, `Enter`, `Esc`); everyone presses Space after a reveal;
* about a quarter alone with bots (2–4 seats, the rest bots), playing the same way; a game
  over sends them back to the lobby to make another such table;
* the rest in the lobby: the cursor up or down every 3–7 s, a lobby chat line every 20–40 s
  (`m`, text, `Enter`, `Esc`; `--chat-every S` seconds on average instead of 30, for more
  chat samples). People of a six-seat table whose game ends stay idle in the lobby, or
  with `--again` make another six-seat table together and play again (the mix held; a
  six-seat game lasts more than five minutes, so it matters only in longer windows);
* `--stormers K` more sessions, not counted in N, that open and close the help by holding
  `?` (`--storm-keys` a second, default 250) from 5 s after they are in: the key storm of
  issue 11. The server slows each and ends it after `input_flood_seconds`; it logs in again
  a second later with the same key and storms on (the times it was ended are printed).

When every player is in and seated, the measuring window (`--seconds`, default 60) starts.
A row's figures:

* `srv CPU` — the server's CPU over the window, from /proc/PID/stat utime+stime sampled each
  second: mean and p90 of the 1 s samples; 100 % is one core (with the pin it cannot pass
  100 %: a mean near 100 % means the server is saturated, flagged `SAT`).
* `load CPU` — the load processes' CPU over the window, summed (they share CPU 1): near
  100 % means the clients are saturated and the latencies are partly theirs, flagged `SAT`.
* `machine` (a line below the row) — each CPU's busy share over the window (/proc/stat:
  server, load and all else); with `--server-cpus`, in how many of the quota's 10-ms periods
  the server was stopped, and for how long in all (the per-process quota's stops apart).
* `RSS/s` — (server RSS mean in the window − server RSS just after start, no session) / N, MB.
* `bid` — from the moment a player at a six-seat table of people writes the Enter of a bid
  until another player of that table has that bid on screen (`Current bid: 5×4 by p3`, or the
  `p3  5×4` line of the bids list), one sample per other player; p50/p99 ms. As a person
  does, the player presses Enter once its screen shows what it typed (a bid or chat line
  written at once with its Enter is input faster than a person types, paced by the server's
  input budget: eight keys, then a 1/30-s pause; until stop 29 the bench did that, and a
  chat line's figures carried that pause).
* `chat` — lobby chat: from the Enter of a line with a unique token until each other
  lobby-goer of the same load process (up to 10) shows it; and table chat the same, for the
  other five at the table (`tchat`).
* `conn` — from the TCP connect (before asyncssh.connect) until the lobby shows
  `welcome, pN`, for newcomers arriving in the window under the load as it stands (one every
  `--visit-every` seconds, default 2; each looks at the lobby 2–6 s and quits); `ramp` the
  same for the N players while they arrive (at `--ramp` a second, default 5).
* `drops` — sessions whose connection closed when the bench did not close it.
* `errors` — client-side exceptions and stuck waits (every wait has a timeout; a latency
  watch unanswered after 30 s counts too) plus the server's log lines of level ERROR; the
  first few are printed below the table.
* `lag` — the load processes' own delay: how late a 10-ms sleep of each wakes, p50/p99 ms
  (their loops busy reading the other players' screens). Each latency above includes the
  lag of the process that looked: a latency p99 near the lag's p99 is partly the load's.
* `n` — the samples behind bid / chat / table chat (window only) and connect.
* a window over two minutes is also printed a minute at a time (`from 60 s: server 84 %,
  load 81 %; p99 bid …`): its start is not its steady state (at 300 sessions the bot tables'
  games end from ~100 s on, and their players go through the lobby to make new ones).

Only samples whose start falls in the window count (connect: all). The clients keep their
cost down, so that the latencies are the server's: a session's output is fed to its pyte
screen at once while a latency watch is pending on it (its changed lines checked), else when
its player looks at the screen (a poll every 0.25 s, if changed), and in the background, a
screen at a time with the loop let go in between, once 2 kB wait (or at once if 64 kB do);
the lines are kept as text, read again only where pyte marks them changed; each load process
collects its garbage as the server does (`perudo_ssh.collector`; `load gc` prints its pauses).
At 300 sessions, with every chunk fed at once and Python's collector (pauses up to 220 ms),
the load took 72 % of its core; now 55-75 %, pauses up to 30 ms. Before the background
feeding (stop 33), an idle lobby screen gathered up to 64 kB unread, and setting the watches
of a lobby chat line fed ten such screens at once (~100 ms of pyte each): the load process
stood still up to 660 ms, just when the slowest samples of the run were taken.

`--profile py-spy` runs `py-spy record --pid SERVER --duration WINDOW` during the window
(`--profile-format speedscope` or `raw`, folded stacks) and says where the file went (kept
with `--keep`, else copied beside the current directory as bench-load-N.*). `--keep` keeps
the temp dirs (server log, database, keys).

Screen texts keyed on (these break if the UI's words change): `welcome, NAME`, `Create a
table`, `Seats N … Bots N`, `Waiting for`, the lobby's detail line and the table's title
`Table ID · NAME's table`, `NAME
(you)`, `Your dice`, `Your turn`, `Current bid: C×F by NAME` / `N pacos`, `dice in play`,
`Press Space`, `Game over`, `Table chat · Esc closes`, footers `⏎ Say`, `esc Back to keys`,
`c Create table`.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import gc
import itertools
import json
import multiprocessing as mp
import os
import queue
import random
import re
import shutil
import signal
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from perudo_ssh.collector import PacedCollector
from perudo_ssh.front.server import tune_collector

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"
SERVER_CPU = 0
LOAD_CPU = 1
LAG_PERIOD = 0.01
"""Seconds a load process's lag probe sleeps between two looks at its own delay."""
UNREAD_MAX = 1 << 16
"""Bytes of a session's output the load leaves unread while nobody watches its screen."""
FEED_AHEAD = 1 << 11
"""Bytes of a session's output waiting that the background feeder (`Client._feed_ahead`)
feeds to its screen, a screen at a time."""
FEED_EVERY = 0.25
"""Seconds between two rounds of the background feeder."""
WATCH_TIMEOUT = 30.0
"""Seconds a latency watch waits for its text before it counts as an error."""
DEBUG = bool(os.environ.get("BENCH_LOAD_DEBUG"))
POLL = 0.25
"""Seconds between two looks at a screen for a player's own next move."""

CONFIG = """\
[limits]
max_sessions = 0
max_sessions_per_address = 0
max_sessions_per_key = 0
max_connections_per_address = 0
connection_rate_per_address = 0
max_startups = "0"
lobby_idle_timeout = 0
login_timeout = 0
"""


# ---- the client side (runs in the load processes) -----------------------------------------


class Dropped(Exception):
    """The session's connection closed under a wait."""


class Stuck(Exception):
    """A wait timed out."""


@dataclass
class Watch:
    pattern: re.Pattern
    t0: float
    kind: str
    done: bool = False


@dataclass
class Stats:
    samples: dict[str, list[tuple[float, float]]] = field(
        default_factory=lambda: {
            "bid": [], "chat": [], "tchat": [], "connect": [], "ramp": [], "storm": [],
            "lag": [],
        }
    )  # fmt: skip
    errors: list[str] = field(default_factory=list)
    drops: int = 0
    storm_drops: int = 0
    watch_timeouts: int = 0
    screens: list[str] = field(default_factory=list)
    """Whole screens of players stuck (written to `stuck-screens.txt` with `--keep`)."""

    def error(self, who: str, what: str) -> None:
        self.errors.append(f"{who}: {what}"[:300])


class Player:
    """One SSH session with a pyte screen."""

    def __init__(self, index: int, role: str, stats: Stats) -> None:
        self.index = index
        self.name = f"p{index}"
        self.role = role  # "table", "bots", "lobby"
        self.stats = stats
        self.conn = None
        self.process = None
        self.reader: asyncio.Task | None = None
        self.in_lobby = False  # idle in the lobby, a fit watcher of lobby chat
        self.key = None
        self.reset()

    def reset(self) -> None:
        """A new terminal for the next connection (the first; a stormer's, after a drop)."""
        import pyte

        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.Stream(self.screen)
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.lines = [" " * self.screen.columns] * self.screen.lines
        """The screen's lines as text, each read again only when pyte marks it changed."""
        self.unread: list[bytes] = []
        """Output not fed to the screen yet: fed at once while a latency watch is pending,
        else when the screen is looked at (or `UNREAD_MAX` bytes wait)."""
        self.unread_bytes = 0
        self.changed = True
        self.watches: list[Watch] = []
        self.closing = self.closed = False

    # ---- the terminal ----

    async def connect(self, port: int, kind: str = "ramp") -> None:
        import asyncssh

        key = self.key = self.key or asyncssh.generate_private_key("ssh-ed25519")
        t0 = time.monotonic()
        welcome = self.watch(re.compile(rf"welcome, {re.escape(self.name)}(?![\w-])"), t0, kind)
        self.conn = await asyncio.wait_for(
            asyncssh.connect(
                "127.0.0.1",
                port,
                username=self.name,
                known_hosts=None,
                config=None,
                client_keys=[key],
                agent_path=None,
                keepalive_interval=0,
            ),
            60,
        )
        self.process = await asyncio.wait_for(
            self.conn.create_process(
                term_type="xterm-256color",
                term_size=(80, 24),
                encoding=None,
                stderr=asyncssh.STDOUT,
            ),
            60,
        )
        self.reader = asyncio.create_task(self._read())
        await self.wait(lambda t: welcome.done, 60, "welcome")
        self.in_lobby = True

    def _line(self, y: int) -> str:
        row = self.screen.buffer[y]
        return "".join(row[x].data for x in range(self.screen.columns))

    async def _read(self) -> None:
        try:
            while True:
                data = await self.process.stdout.read(65536)
                if not data:
                    break
                self.unread.append(data)
                self.unread_bytes += len(data)
                self.changed = True
                if self.watches or self.unread_bytes > UNREAD_MAX:
                    self.catch_up()
        except Exception as exc:  # noqa: BLE001
            if not self.closing:
                self.stats.error(self.name, f"reader: {exc!r}")
        finally:
            self.closed = True
            if self.closing:
                pass
            elif self.role == "storm":
                self.stats.storm_drops += 1
            else:
                self.stats.drops += 1

    def catch_up(self) -> None:
        """Feed the output read so far to the screen; check the pending watches against the
        lines it changed.

        A screen nobody watches is fed when it is looked at: the load's one core then
        reads first the output someone waits for (a fan-out of the server reaches many
        screens of a process at once; reading them all in arrival order, at 300 sessions,
        made the load's own delay a part of every latency's p99)."""
        if not self.unread:
            return
        data = b"".join(self.unread)
        self.unread.clear()
        self.unread_bytes = 0
        self.stream.feed(self.decoder.decode(data))
        changed = sorted(y for y in self.screen.dirty if 0 <= y < self.screen.lines)
        for y in changed:
            self.lines[y] = self._line(y)
        if self.watches:
            self._check_watches(changed)
        self.screen.dirty.clear()

    def _check_watches(self, changed: list[int]) -> None:
        now = time.monotonic()
        lines = [self.lines[y] for y in changed]
        if not lines:
            return
        text = "\n".join(lines)
        for watch in self.watches:
            if not watch.done and watch.pattern.search(text):
                watch.done = True
                self.stats.samples[watch.kind].append((watch.t0, now - watch.t0, self.name))
        self.watches = [w for w in self.watches if not w.done]

    def watch(self, pattern: re.Pattern, t0: float, kind: str) -> Watch:
        """Look for `pattern` in what the screen shows from now on (a `kind` sample from
        `t0`; not on a closed screen); what came before is fed first, so it cannot match
        (`Client._watch` feeds it before it reads the clock)."""
        watch = Watch(pattern, t0, kind)
        if not self.closed:
            self.catch_up()
            self.watches.append(watch)
        return watch

    def expire_watches(self, now: float) -> None:
        keep = []
        for w in self.watches:
            # connect and ramp: their own 60 s
            if w.kind not in ("ramp", "connect") and now - w.t0 > WATCH_TIMEOUT:
                if not self.closed:
                    self.stats.watch_timeouts += 1
                    self.stats.error(
                        self.name,
                        f"{w.kind} watch timed out: {w.pattern.pattern}; shows {self.last_lines()}",
                    )
            else:
                keep.append(w)
        self.watches = keep

    @property
    def text(self) -> str:
        self.catch_up()
        # the lines kept as they change: pyte's `display` reads every cell each time (with
        # its width), and polling players read it four times a second (a fifth of the
        # load's CPU at 300 sessions, measured by py-spy)
        return "\n".join(self.lines)

    def send(self, *keys: str) -> None:
        if DEBUG:
            print(f"{time.monotonic():.2f} {self.name} send {keys!r}", file=sys.stderr, flush=True)
        if self.closed:
            raise Dropped(self.name)
        for key in keys:
            self.process.stdin.write(KEYS.get(key, key).encode())

    async def wait(self, check, timeout: float, what: str) -> str:
        """Poll the screen (every POLL s, when it changed) until `check(text)`."""
        deadline = time.monotonic() + timeout
        while True:
            if self.changed:
                self.changed = False
                text = self.text
                if check(text):
                    return text
            if self.closed:
                raise Dropped(f"closed waiting for {what}")
            if time.monotonic() > deadline:
                raise Stuck(f"timed out ({timeout:.0f} s) waiting for {what}: {self.last_lines()}")
            await asyncio.sleep(POLL)

    def last_lines(self) -> str:
        self.catch_up()
        lines = [ln.strip() for ln in self.lines if ln.strip()]
        return " | ".join(lines[:2] + lines[-3:])[:250]

    async def close(self) -> None:
        self.closing = True
        if self.conn is not None:
            self.conn.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.conn.wait_closed(), 5)
        if self.reader is not None:
            self.reader.cancel()


KEYS = {"enter": "\r", "tab": "\t", "escape": "\x1b", "up": "\x1b[A", "down": "\x1b[B"}

TOKEN_CHARS = string.ascii_lowercase + string.digits


def token(rng: random.Random) -> str:
    return "z" + "".join(rng.choice(TOKEN_CHARS) for _ in range(7))


CURRENT_BID = re.compile(r"Current bid: (?:(\d+)×(\d)|(\d+) pacos?) by")
DICE_IN_PLAY = re.compile(r"(\d+) dice in play")
TABLE_ID = re.compile(r"^ Table (\d+) · ")
LOBBY_DETAIL = re.compile(r"^ Table (\d+) · (\S+)'s table", re.MULTILINE)
SETTLE = 0.4
"""Seconds a lobby row must stay shown before the cursor is taken to be on it."""


def lobby_screen(text: str) -> bool:
    return "welcome, " in text.split("\n", 1)[0]


def think(rng: random.Random) -> float:
    return rng.uniform(3.0, 7.0)


class Client:
    """One load process's players and their behaviour."""

    def __init__(
        self,
        port: int,
        specs: list[dict],
        ramp: float,
        offset: float,
        seed: int,
        visit_every: float = 0.0,
        chat_every: float = 30.0,
        again: bool = False,
    ):
        self.visit_every = visit_every
        self.chat_every = chat_every
        self.again = again
        self.seed = seed
        self.visitors = 0
        self.port = port
        self.specs = specs
        self.ramp = ramp
        self.offset = offset
        self.rng = random.Random(seed)
        self.stats = Stats()
        self.players: dict[int, Player] = {}
        self.groups: dict[int, list[Player]] = {}
        self.group_table: dict[tuple[int, int], asyncio.Future] = {}  # by (group, game)
        self.stopping = False
        self.tasks: list[asyncio.Task] = []

    @staticmethod
    def _watch(players: list[Player], pattern: re.Pattern, kind: str) -> None:
        """Watch for `pattern` on the screens of `players` from now (a `kind` sample each):
        what they have not read yet is fed first, so its reading is no part of the time."""
        for q in players:
            q.catch_up()
        t0 = time.monotonic()
        for q in players:
            q.watch(pattern, t0, kind)

    async def _feed_ahead(self) -> None:
        """Every `FEED_EVERY` s, feed the screens with `FEED_AHEAD` bytes or more waiting, one
        at a time, letting the loop go between two: a watch set on ten lobby screens (a chat
        line) or a screen looked at then finds little to read at once, and the load process
        is never held up for long by screens nobody looks at (see the module's text)."""
        while True:
            await asyncio.sleep(FEED_EVERY)
            for p in list(self.players.values()):
                if p.unread_bytes >= FEED_AHEAD:
                    p.catch_up()
                    await asyncio.sleep(0)

    async def _probe_lag(self) -> None:
        """This load process's own delay (`lag`): how late a `LAG_PERIOD` sleep wakes, its
        loop busy reading the other players' screens. A late wake-up is as late a look at a
        screen: a latency whose p99 is near the lag's p99 is partly the load's."""
        while True:
            t0 = time.monotonic()
            await asyncio.sleep(LAG_PERIOD)
            self.stats.samples["lag"].append((t0, time.monotonic() - t0 - LAG_PERIOD, ""))

    async def run(self, ready, stop) -> None:
        loop = asyncio.get_running_loop()
        for spec in self.specs:
            p = Player(spec["index"], spec["role"], self.stats)
            self.players[p.index] = p
            if spec["role"] == "table":
                self.groups.setdefault(spec["group"], []).append(p)
                self.group_table.setdefault((spec["group"], 0), loop.create_future())
        # the load's own collector as the server's (`perudo_ssh.collector`): with Python's
        # thresholds its collections stopped a load process for up to 80 ms (young), 170
        # (middle) and 220 (whole) in a 300-session window, each pause in the latencies of
        # every screen it read meanwhile
        tune_collector()
        collector = PacedCollector()
        collector.start()
        sweeper = asyncio.create_task(self._sweep())
        probe = asyncio.create_task(self._probe_lag())
        feeder = asyncio.create_task(self._feed_ahead())
        setups: list[asyncio.Task] = []
        await asyncio.sleep(self.offset)
        start = time.monotonic()
        for n, spec in enumerate(self.specs):
            delay = start + n / self.ramp - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            p = self.players[spec["index"]]
            seated = loop.create_future()
            self.tasks.append(asyncio.create_task(self._life(p, spec, seated)))
            setups.append(seated)
        await asyncio.wait(setups, timeout=180 + len(self.specs) * 2)
        ready.set()
        visits = []
        next_visit = time.monotonic() + self.rng.uniform(0, self.visit_every)
        while not stop.is_set():
            await asyncio.sleep(0.1)
            if self.visit_every and time.monotonic() >= next_visit:
                next_visit += self.visit_every
                visits.append(asyncio.create_task(self._visit()))
        self.stopping = True
        for task in visits:
            task.cancel()
        await asyncio.gather(*visits, return_exceptions=True)
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await asyncio.gather(*(p.close() for p in self.players.values()), return_exceptions=True)
        sweeper.cancel()
        probe.cancel()
        feeder.cancel()
        collector.stop()

    async def _visit(self) -> None:
        """A newcomer during the window: connects (its time to the lobby screen is a
        `connect` sample, under the load as it stands), looks at the lobby a few seconds,
        quits with q."""
        self.visitors += 1
        index = 1_000_000 + 1000 * self.visitors + self.seed % 1000  # unique over processes
        p = Player(index, "visitor", self.stats)
        try:
            await p.connect(self.port, "connect")
            await asyncio.sleep(self.rng.uniform(2, 6))
            p.send("q")
        except (TimeoutError, Dropped, Stuck, OSError) as exc:
            if not self.stopping:
                self.stats.error(p.name, f"visit: {exc!r}"[:300])
        finally:
            p.closing = True
            await p.close()

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(1)
            now = time.monotonic()
            for p in self.players.values():
                if p.watches:
                    p.expire_watches(now)

    async def _life(self, p: Player, spec: dict, seated: asyncio.Future) -> None:
        def done():
            if not seated.done():
                seated.set_result(None)

        try:
            try:
                await p.connect(self.port)
            except (TimeoutError, Dropped, Stuck, OSError) as exc:
                self.stats.error(p.name, f"connect: {exc!r}"[:300])
                return
            if spec["role"] == "lobby":
                done()
                await self._lobby_goer(p)
            elif spec["role"] == "storm":
                done()
                await self._storm(p, spec["keys"])
            elif spec["role"] == "bots":
                await self._bot_player(p, done)
            else:
                await self._table_player(p, spec, done)
        except asyncio.CancelledError:
            raise
        except (Dropped, Stuck) as exc:
            if not self.stopping:
                self.stats.error(p.name, f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001
            if not self.stopping:
                self.stats.error(p.name, f"{type(exc).__name__}: {exc!r}")
        finally:
            done()
            p.in_lobby = False

    # ---- the lobby ----

    async def _storm(self, p: Player, keys: float) -> None:
        """`?` at `keys` a second, for ever: the help opens and closes (issue 11); a session
        the server ends for it logs in again a second later (with the same key), as an
        attacker would, and storms on."""
        await asyncio.sleep(5.0)  # once the others are in
        every = 0.02
        per = max(1, round(keys * every))
        while True:
            try:
                while True:
                    p.send("?" * per)
                    await asyncio.sleep(every)
            except (Dropped, BrokenPipeError):  # the channel closed before the reader saw it
                pass
            await p.close()
            await asyncio.sleep(1.0)
            p.reset()
            await p.connect(self.port, "storm")

    async def _lobby_goer(self, p: Player) -> None:
        every = self.chat_every
        next_chat = time.monotonic() + self.rng.uniform(5, 5 + every)
        while True:
            await asyncio.sleep(min(think(self.rng), every))
            if time.monotonic() >= next_chat:
                next_chat = time.monotonic() + self.rng.uniform(every * 2 / 3, every * 4 / 3)
                await self._lobby_chat(p)
            else:
                p.send(self.rng.choice(("up", "down")))

    async def _lobby_chat(self, p: Player) -> None:
        p.in_lobby = False
        p.send("m")
        await p.wait(lambda t: "⏎ Say" in t, 60, "lobby chat input")
        tok = token(self.rng)
        p.send(f"hi {tok}")
        await p.wait(lambda t: tok in t, 15, "lobby chat typed")  # as a person sees it typed
        others = [
            q for q in self.players.values() if q is not p and q.in_lobby and q.role == "lobby"
        ]
        self._watch(self.rng.sample(others, min(10, len(others))), re.compile(tok), "chat")
        p.send("enter")
        await asyncio.sleep(0.5)
        p.send("escape")
        await p.wait(lambda t: "c Create table" in t, 60, "lobby after chat")
        p.in_lobby = True

    async def _back_to_lobby(self, p: Player) -> None:
        await asyncio.sleep(self.rng.uniform(1, 3))
        p.send("l")
        await p.wait(lobby_screen, 30, "lobby after game over")
        await asyncio.sleep(0.5)

    # ---- creating and joining ----

    async def _create(self, p: Player, seats: int, bots: int) -> int:
        """Create a table of `seats` with `bots` from the lobby; the new table's id."""
        p.in_lobby = False
        p.send("c")
        await p.wait(lambda t: "Create a table" in t, 60, "create dialog")
        # seats 4 by default (a Select: open, move, choose), then bots (2 by default)
        p.send("tab", "enter")
        await p.wait(lambda t: "▲" in t, 60, "seats list")
        step = seats - 4
        p.send(*(["down"] * step if step > 0 else ["up"] * -step), "enter")
        await p.wait(lambda t: re.search(rf"Seats\s+{seats}\s+▼", t) is not None, 60, "seats set")
        now_bots = min(2, seats - 1)
        if bots != now_bots:
            p.send("tab", "enter")
            await p.wait(lambda t: "▲" in t, 60, "bots list")
            step = bots - now_bots
            p.send(*(["down"] * step if step > 0 else ["up"] * -step), "enter")
        await p.wait(
            lambda t: re.search(rf"Seats\s+{seats}\s+▼\s+Bots\s+{bots}\s+▼", t) is not None,
            60,
            "bots set",
        )
        p.send("\x13")  # ctrl+s: create
        text = await p.wait(lambda t: "Create a table" not in t and TABLE_ID.match(t), 60, "table")
        return int(TABLE_ID.match(text).group(1))

    async def _join(self, p: Player, table: int) -> None:
        """Move the lobby's cursor to `table` and press Enter; again while not seated (the
        list moves as tables are made and closed: Enter may land on another row)."""
        p.in_lobby = False
        name = re.escape(p.name)
        seated = re.compile(rf"{name} \(you\)|{name}(?![\w-]).*← you")
        for attempt in range(5):
            await self._cursor_to(p, table)
            p.send("enter")
            try:
                await p.wait(lambda t: seated.search(t) is not None, 20, f"seat at table {table}")
                return
            except Stuck:
                if attempt == 4 or TABLE_ID.match(p.text):
                    raise  # at another table, or never seated

    async def _cursor_to(self, p: Player, table: int) -> None:
        """Move the lobby's cursor to `table`'s row. The row is read from a screen that has
        stopped changing (`_settled_row`): a frame drawn while some of the keys sent were
        still on their way showed a row the cursor then passed, and Enter joined the table
        below (another group's seat taken, and that group stuck)."""
        for _ in range(40):
            at = await self._settled_row(p)
            if at == table:
                break
            p.send(*(["down"] if at < table else ["up"]) * min(abs(table - at), 10))
            # the screen may lag by seconds under load: look again once the cursor moved
            with contextlib.suppress(Stuck):
                await p.wait(
                    lambda t, at=at: (
                        (m := LOBBY_DETAIL.search(t)) is not None and int(m.group(1)) != at
                    ),
                    20,
                    "lobby cursor",
                )
            p.changed = True
        else:
            raise Stuck(f"could not reach table {table} in the lobby list")

    @staticmethod
    async def _settled_row(p: Player) -> int:
        """The table of the lobby's cursor row once the screen shows the same row twice,
        SETTLE seconds apart."""
        row = None
        while True:
            text = await p.wait(lambda t: LOBBY_DETAIL.search(t) is not None, 60, "lobby row")
            at = int(LOBBY_DETAIL.search(text).group(1))
            if at == row:
                return at
            row = at
            await asyncio.sleep(SETTLE)
            p.changed = True  # read the screen again even if nothing new came

    # ---- playing ----

    async def _table_player(self, p: Player, spec: dict, done) -> None:
        """A player of a six-seat table of people: its creator makes it, the other five
        join; once the game is over they idle in the lobby, or with `--again` make another
        such table together and play again, for ever."""
        group = self.groups[spec["group"]]
        loop = asyncio.get_running_loop()
        for game in itertools.count():
            future = self.group_table.setdefault((spec["group"], game), loop.create_future())
            if spec["creator"]:
                try:
                    table = await self._create(p, 6, 0)
                except BaseException as exc:
                    future.set_exception(Stuck(f"creator failed: {exc}"))
                    raise
                future.set_result(table)
            else:
                wait = 120 + len(self.specs) if game == 0 else 120
                table = await asyncio.wait_for(asyncio.shield(future), wait)
                await self._join(p, table)
            await p.wait(lambda t: "Your dice" in t, 120, "the game to start")
            done()
            await self._play(p, group)
            if not self.again:
                break
        p.in_lobby = True  # idle in the lobby from now on

    async def _bot_player(self, p: Player, done) -> None:
        while True:
            seats = self.rng.choice((2, 3, 4))
            await self._create(p, seats, seats - 1)
            await p.wait(lambda t: "Your dice" in t, 60, "the bot game to start")
            done()
            await self._play(p, None)

    async def _play(self, p: Player, group: list[Player] | None) -> None:
        """Play until the game is over, then go back to the lobby."""
        rng = self.rng
        while True:
            text = await p.wait(
                lambda t: "Game over" in t or "Press Space" in t or "Your turn" in t,
                240,
                "my turn",
            )
            if "Game over" in text:
                await self._back_to_lobby(p)
                return
            if "Press Space" in text:
                await asyncio.sleep(rng.uniform(0.5, 2))
                p.send(" ")
                await p.wait(lambda t: "Press Space" not in t, 60, "reveal closed")
                continue
            await asyncio.sleep(think(rng))
            p.changed = True
            text = await p.wait(lambda t: True, 5, "screen")
            if "Your turn" not in text or "Press Space" in text:
                continue  # the turn timer moved for us, or a reveal came
            move = self._choose(text)
            await self._move(p, group, move)
            if group is not None and rng.random() < 0.12:
                await self._table_chat(p, group)

    def _choose(self, text: str) -> tuple[int, int] | None:
        """A bid (count, face), or None for dudo."""
        rng = self.rng
        dice = DICE_IN_PLAY.search(text)
        in_play = int(dice.group(1)) if dice else 10
        bid = CURRENT_BID.search(text)
        if bid is None:
            return (max(1, in_play // 6 - rng.randint(0, 1)), rng.randint(2, 6))
        if bid.group(3) is not None:  # pacos: too risky to follow, call it
            return None
        count, face = int(bid.group(1)), int(bid.group(2))
        if count + 1 > in_play / 3 + rng.uniform(-1, 1.5):
            return None
        return (count + 1, face)  # more dice, same face: legal in every round

    async def _move(self, p: Player, group: list[Player] | None, move) -> None:
        p.send("tab")
        await p.wait(lambda t: "esc Back to keys" in t, 15, "bid input")
        typed = "dudo" if move is None else f"{move[0]}x{move[1]}"
        p.send(typed)  # the input opens empty
        await p.wait(lambda t: typed in t, 15, "bid typed")
        shown = None  # how the bid shows once taken: the current bid, or its line in the list
        if move is not None:
            bid = f"{move[0]}×{move[1]}"
            name = re.escape(p.name)
            shown = re.compile(
                rf"Current bid: {bid} by {name}(?![\w-])|(?<![\w-]){name} +{bid}(?!\d)"
            )
            if group is not None:
                self._watch([q for q in group if q is not p], shown, "bid")
        p.send("enter")
        try:  # the move is taken when it is no longer our turn, a reveal shows, or the bid
            # is in this round's list (a bot may answer before the player's screen is read:
            # then it is our turn again at once)
            await p.wait(
                lambda t: (
                    "Your turn" not in t
                    or "Press Space" in t
                    or (shown is not None and shown.search(t) is not None)
                ),
                15,
                "move taken",
            )
        except Stuck:
            self.stats.error(p.name, f"move {move} not taken: {p.last_lines()}")
            self.stats.screens.append(
                f"{time.monotonic():.2f} {p.name}: move {move} not taken\n{p.text}"
            )
            p.send("\x15")  # ctrl+u: clear the input (text in the same write would be lost)
            await asyncio.sleep(0.3)
            p.send("dudo", "enter")

    async def _table_chat(self, p: Player, group: list[Player]) -> None:
        p.send("t")
        await p.wait(lambda t: "Table chat · Esc closes" in t, 15, "table chat")
        tok = token(self.rng)
        p.send(f"gl {tok}")
        await p.wait(lambda t: tok in t, 15, "table chat typed")
        self._watch([q for q in group if q is not p], re.compile(tok), "tchat")
        p.send("enter")
        await asyncio.sleep(0.4)
        p.send("escape")
        await p.wait(lambda t: "Table chat · Esc closes" not in t, 15, "table chat closed")


def collector_pauses() -> list[tuple[float, int, float]]:
    """From now on, each pause of this process's garbage collector: (monotonic time at its
    end, generation, seconds), in a list that grows as they come (`load gc`)."""
    pauses: list[tuple[float, int, float]] = []
    started = 0.0

    def timed(phase: str, info: dict) -> None:
        nonlocal started
        if phase == "start":
            started = time.perf_counter()
        else:
            pauses.append((time.monotonic(), info["generation"], time.perf_counter() - started))

    gc.callbacks.append(timed)
    return pauses


def client_main(
    port, specs, ramp, offset, seed, ready, stop, results, pin, visit_every, chat_every, again
) -> None:
    """A load process: its players until `stop`, then its figures on `results`."""
    if pin:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {LOAD_CPU})
    client = Client(port, specs, ramp, offset, seed, visit_every, chat_every, again)
    pauses = collector_pauses()
    try:
        asyncio.run(client.run(ready, stop))
    except Exception as exc:  # noqa: BLE001
        client.stats.error("client", repr(exc))
    s = client.stats
    results.put(
        {
            "samples": s.samples,
            "errors": s.errors,
            "drops": s.drops,
            "storm_drops": s.storm_drops,
            "watch_timeouts": s.watch_timeouts,
            "screens": s.screens,
            "gc": pauses,
        }
    )


# ---- the main process -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    except (OSError, IndexError, ValueError):
        return None


def server_tree(root: int) -> dict[int, str]:
    """The server's processes: `root` and its descendants (`serve --workers`: the supervisor,
    nats-server, the lobby, the fronts), each with its role: "nats", "lobby", "front" or
    "server" (the supervisor, or the one process of plain `serve`)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    roles = {}
    for pid in tree:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"nats-server") for a in argv):
            roles[pid] = "nats"
        elif b"lobby" in argv:
            roles[pid] = "lobby"
        elif b"front" in argv:
            roles[pid] = "front"
        else:
            roles[pid] = "server"
    return roles


def session_fronts(log: Path) -> dict[str, str]:
    """Which process each player's last session ran in (`session_started` lines of the
    log; `serve --workers` names its processes in each line), by name."""
    out = {}
    with contextlib.suppress(OSError), open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            if '"session_started"' not in line:
                continue
            with contextlib.suppress(ValueError):
                rec = json.loads(line)
                out[rec.get("name", "")] = rec.get("process", "")
    return out


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
"""Where the cgroup v1 `cpu` controller is mounted (`--server-cpus`)."""
BUDGET_PERIOD_US = 10_000
"""The CFS period of `--server-cpus`' quota, µs: short, so that a process that spent its
quota waits at most a few ms for the next period (the default 100 ms would put up to
100-ms stalls into every latency)."""


class CpuBudget:
    """`--server-cpus F`: a cgroup of the v1 `cpu` controller holding the server's processes
    (and every child: `serve --workers`' lobby, fronts and nats-server) to F cores of CPU
    time, however many CPUs they run on: a quota of F × `BUDGET_PERIOD_US` per period.
    Its `cpu.shares` is the highest, so the load never takes the server's budget from it:
    below F the server runs whenever it wants to, as on F cores of its own.

    It models a machine of F server cores at a smaller scale on this 2-core one, where the
    load itself needs most of a core: `--server-cpus 0.5` for one process against
    `--workers 2 --server-cpus 1.0` weighs what a second core brings, with the load on what
    is left. Raises OSError if the controller is not there or not writable (root, cgroup v1).

    `core` (`--server-core C`): each of the server's processes is also held to C cores, in a
    group of its own inside (`place`): F = 1.0 and C = 0.5 model two cores at half speed,
    where a front alone at work still runs at half speed, not on the whole budget."""

    def __init__(self, cores: float, name: str, core: float | None = None) -> None:
        if not (CGROUP_CPU / "cpu.cfs_quota_us").exists():
            raise OSError(f"--server-cpus needs the cgroup v1 cpu controller at {CGROUP_CPU}")
        self.cores, self.core = cores, core
        self.path = CGROUP_CPU / name
        self.placed: set[int] = set()
        self._group(self.path, cores)

    @staticmethod
    def _group(path: Path, cores: float) -> None:
        path.mkdir()
        (path / "cpu.cfs_period_us").write_text(str(BUDGET_PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(round(cores * BUDGET_PERIOD_US)))
        (path / "cpu.shares").write_text("262144")

    def place(self, pids) -> None:
        """With `core`: each process of `pids` not placed yet moved into a group of its own
        held to `core` cores (a process gone meanwhile is skipped)."""
        if self.core is None:
            return
        for pid in set(pids) - self.placed:
            with contextlib.suppress(OSError):
                group = self.path / f"p{pid}"
                if not group.exists():
                    self._group(group, self.core)
                (group / "cgroup.procs").write_text(str(pid))
                self.placed.add(pid)

    def wrap(self, cmd: list[str]) -> list[str]:
        """`cmd` run from inside the group (a shell joins it, then execs `cmd`)."""
        return ["sh", "-c", f'echo $$ > {self.path}/cgroup.procs && exec "$@"', "sh", *cmd]

    def stat(self) -> dict[str, int]:
        """The group's `cpu.stat` (nr_periods, nr_throttled, throttled_time in ns), and
        `core_throttled_time`: the processes' own groups' throttled_time summed (`core`)."""
        out: dict[str, int] = {"core_throttled_time": 0}
        groups = [g for g in self.path.iterdir() if g.is_dir()] if self.core else []
        for group in [self.path, *groups]:
            with contextlib.suppress(OSError):
                for line in (group / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    with contextlib.suppress(ValueError):
                        if group == self.path:
                            out[key] = int(value)
                        elif key == "throttled_time":
                            out["core_throttled_time"] += int(value)
        return out

    def close(self) -> None:
        """Removes the group (once its processes are gone; any left are moved out first)."""
        groups = [g for g in self.path.iterdir() if g.is_dir()] if self.path.exists() else []
        for group in [*groups, self.path]:
            with contextlib.suppress(OSError):
                for pid in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        (CGROUP_CPU / "cgroup.procs").write_text(pid)
                group.rmdir()


def cpu_busy() -> dict[str, tuple[int, int]]:
    """Each CPU's (busy, total) jiffies since boot, from /proc/stat: busy is all but idle
    and iowait."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                ticks = [int(x) for x in fields]
                out[name] = (sum(ticks) - ticks[3] - ticks[4], sum(ticks))
    return out


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode}")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"server not listening on {port} after {timeout} s")


def plan(n: int, clients: int, stormers: int = 0, storm_keys: float = 250) -> list[list[dict]]:
    """Each load process's players: six-seat tables (whole, in one process), bots, lobby;
    and `stormers` more, who open and close the help as fast as `--storm-keys` says."""
    tables = int(n / 12 + 0.5) if n >= 6 else 0
    bots = n // 4
    if tables * 6 + bots > n:
        bots = n - tables * 6
    per: list[list[dict]] = [[] for _ in range(clients)]
    index = 0
    for t in range(tables):
        for seat in range(6):
            per[t % clients].append(
                {"index": index, "role": "table", "group": t, "creator": seat == 0}
            )
            index += 1
    for k in range(bots):
        per[k % clients].append({"index": index, "role": "bots"})
        index += 1
    # lobby-goers in blocks, at least 2 a process, so each has others to see its chat lines
    lobby = n - index
    blocks = max(1, min(clients, lobby // 2))
    for k in range(lobby):
        per[k * blocks // lobby].append({"index": index, "role": "lobby"})
        index += 1
    for specs in per:  # interleave roles in the ramp, keeping each table's creator first
        specs.sort(key=lambda s: (s.get("group", s["index"] // 6), not s.get("creator", False)))
    for k in range(stormers):  # last: they storm once everyone is in
        per[k % clients].append({"index": index, "role": "storm", "keys": storm_keys})
        index += 1
    return per


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[k]


def ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1000:.0f}"


def server_errors(log: Path) -> list[str]:
    out = []
    with contextlib.suppress(OSError), open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if str(rec.get("level", "")).upper() in ("ERROR", "CRITICAL"):
                out.append(f"server: {rec.get('event')}: {rec.get('message')}"[:300])
    return out


def server_events(log: Path, names: set[str]) -> dict[str, int]:
    counts = dict.fromkeys(names, 0)
    with contextlib.suppress(OSError), open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                event = json.loads(line).get("event")
            except ValueError:
                continue
            if event in counts:
                counts[event] += 1
    return counts


def run_one(n: int, args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"bench-load-{n}-"))
    (tmp / "perudo.toml").write_text(CONFIG)
    port = free_port()
    log = tmp / "server.log"
    server = [str(args.server)]
    if args.server.suffix == ".py":  # a script of this checkout's (bench/serve_timed.py)
        server = [sys.executable, str(args.server.resolve())]
    cmd = [
        *server, "serve", "--config", str(tmp / "perudo.toml"),
        "--port", str(port), "--db", str(tmp / "perudo.db"),
        "--host-keys", str(tmp / "host_keys"), "--log-file", str(log),
    ]  # fmt: skip
    if args.workers is not None:
        cmd += ["--workers", str(args.workers)]
    pin = pinned(args) and shutil.which("taskset") is not None and os.cpu_count() >= 2
    if pin:
        cmd = ["taskset", "-c", str(SERVER_CPU), *cmd]
    budget = None
    if args.server_cpus is not None:
        budget = CpuBudget(args.server_cpus, f"perudo-bench-{os.getpid()}-{n}", args.server_core)
        cmd = budget.wrap(cmd)
    out = open(tmp / "server.out", "wb")  # noqa: SIM115
    server = subprocess.Popen(cmd, cwd=tmp, stdout=out, stderr=subprocess.STDOUT)
    ctx = mp.get_context("spawn")
    procs: list = []
    stop = ctx.Event()
    results = ctx.Queue()
    row: dict = {"n": n, "dir": tmp, "budget": args.server_cpus}
    profile_proc = None
    try:
        wait_port(port, server)
        time.sleep(1.0)
        if budget:
            budget.place(server_tree(server.pid))
        base_rss = sum(rss_mb(pid) or 0.0 for pid in server_tree(server.pid))
        readies = []
        for k, specs in enumerate(plan(n, args.clients, args.stormers, args.storm_keys)):
            ready = ctx.Event()
            proc = ctx.Process(
                target=client_main,
                args=(port, specs, args.ramp / args.clients, k / args.ramp, 1000 * n + k,
                      ready, stop, results, pin, args.visit_every * args.clients,
                      args.chat_every, args.again),
                daemon=True,
            )  # fmt: skip
            proc.start()
            procs.append(proc)
            readies.append(ready)
        setup_deadline = time.monotonic() + 240 + n * 2 / args.ramp * 2
        for ready in readies:
            ready.wait(max(1.0, setup_deadline - time.monotonic()))
        row["setup_s"] = None
        time.sleep(2.0)  # let the last seats' screens settle
        # ---- the window ----
        if args.profile == "py-spy":
            ext = "speedscope.json" if args.profile_format == "speedscope" else "folded.txt"
            row["profile"] = tmp / f"py-spy-{n}.{ext}"
            profile_proc = subprocess.Popen(
                [str(VENV_BIN / "py-spy"), "record", "-o", str(row["profile"]),
                 "--pid", str(server.pid), "--duration", str(int(args.seconds)),
                 "--format", args.profile_format, "--nonblocking",
                 *(["--subprocesses"] if args.workers is not None else [])],
                stdout=subprocess.DEVNULL, stderr=open(tmp / "py-spy.err", "wb"),  # noqa: SIM115
            )  # fmt: skip
        tick = os.sysconf("SC_CLK_TCK")
        t_start = time.monotonic()
        if budget:
            budget.place(server_tree(server.pid))
        busy_start, budget_start = cpu_busy(), budget.stat() if budget else {}
        loaders = [p.pid for p in procs]
        roles = server_tree(server.pid)
        last = {pid: cpu_ticks(pid) for pid in [*roles, *loaders]}
        srv_samples, load_samples, rss, srv_times = [], [], [], []
        role_ticks: dict[str, int] = {}  # CPU ticks in the window, by role
        t_last = t_start
        while time.monotonic() - t_start < args.seconds:
            time.sleep(1.0)
            now = time.monotonic()
            roles = server_tree(server.pid)  # a child restarted is a new process
            if budget:
                budget.place(roles)
            cur = {pid: cpu_ticks(pid) for pid in [*roles, *loaders]}
            dt = now - t_last

            def spent(pid: int, last=last, cur=cur) -> int:
                a, b = last.get(pid), cur.get(pid)
                return b - a if a is not None and b is not None else 0

            srv = 0
            for pid, role in roles.items():
                role_ticks[role] = role_ticks.get(role, 0) + spent(pid)
                srv += spent(pid)
            srv_samples.append(srv / tick / dt * 100)
            srv_times.append(now)
            load_samples.append(sum(spent(p) for p in loaders) / tick / dt * 100)
            rss.append(sum(rss_mb(pid) or 0.0 for pid in roles))
            last, t_last = cur, now
        t_end = time.monotonic()
        span = t_end - t_start
        busy_end = cpu_busy()
        row["cpus"] = {
            name: (busy - busy_start[name][0]) / max(1, total - busy_start[name][1]) * 100
            for name, (busy, total) in busy_end.items()
            if name in busy_start
        }
        if budget:
            end = budget.stat()
            row["throttled"] = {k: end.get(k, 0) - budget_start.get(k, 0) for k in end}
        row["srv_mean"] = sum(role_ticks.values()) / tick / span * 100
        row["roles"] = {
            role: (ticks / tick / span * 100, sum(1 for r in roles.values() if r == role))
            for role, ticks in role_ticks.items()
        }
        row["srv_p90"] = pct(srv_samples, 90)
        row["load_mean"] = statistics.fmean(load_samples) if load_samples else None
        row["load_max"] = max(load_samples) if load_samples else None
        row["rss_per"] = (statistics.fmean(rss) - base_rss) / n if rss else None
        row["base_rss"] = base_rss
        row["pin"] = pin
        # ---- stop the load, gather the figures ----
        stop.set()
        gathered = []
        deadline = time.monotonic() + 60 + n / 5
        while len(gathered) < len(procs) and time.monotonic() < deadline:
            try:
                gathered.append(results.get(timeout=1))
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and results.empty():
                    break
        samples: dict[str, list[float]] = {
            "bid": [], "chat": [], "tchat": [], "connect": [], "ramp": [], "storm": [],
            "lag": [],
        }  # fmt: skip
        errors: list[str] = []
        drops = timeouts = storm_drops = 0
        timed: list[tuple[str, float, float]] = []  # (kind, when, latency) in the window
        observed: list[tuple[str, str, float]] = []  # (kind, observer, latency) in the window
        for g in gathered:
            for kind, pairs in g["samples"].items():
                for t0, lat, who in pairs:
                    in_window = t_start <= t0 <= t_end
                    if kind == "ramp" or in_window:
                        samples[kind].append(lat)
                    if in_window and kind in ("bid", "chat", "tchat"):
                        observed.append((kind, who, lat))
                    if kind != "ramp" and in_window:
                        timed.append((kind, t0, lat))
            errors += g["errors"]
            drops += g["drops"]
            storm_drops += g.get("storm_drops", 0)
            timeouts += g["watch_timeouts"]
        if len(gathered) < len(procs):
            errors.append(f"bench: {len(procs) - len(gathered)} load process(es) gave no figures")
        per_second = list(zip(srv_times, srv_samples, load_samples, strict=False))
        row["parts"] = window_parts(t_start, t_end, per_second, timed)
        row["observed"] = observed
        row["samples"] = samples
        gcp = [x for g in gathered for x in g.get("gc", ()) if t_start <= x[0] <= t_end]
        for gen in range(3):
            ps = sorted(x[2] for x in gcp if x[1] == gen)
            if ps:
                print(f"load gc gen{gen}: {len(ps)}, max {ps[-1] * 1000:.0f} ms")
        if args.keep:  # every sample, by the machine's monotonic clock (as a server log's)
            raw = {kind: [pair for g in gathered for pair in g["samples"].get(kind, ())]
                   for kind in samples}  # fmt: skip
            cpu = {"server_cpu": list(zip(srv_times, srv_samples, strict=False)),
                   "load_cpu": list(zip(srv_times, load_samples, strict=False))}  # fmt: skip
            (tmp / "samples.json").write_text(
                json.dumps({"window": [t_start, t_end], **raw, **cpu})
            )
        row["client_errors"] = errors
        stuck = [screen for g in gathered for screen in g.get("screens", ())]
        if stuck and args.keep:
            (tmp / "stuck-screens.txt").write_text("\n\n".join(stuck))
            errors.append(f"bench: the stuck players' screens are in {tmp / 'stuck-screens.txt'}")
        row["drops"] = drops
        row["storm_drops"] = storm_drops
        row["watch_timeouts"] = timeouts
    finally:
        stop.set()
        for proc in procs:
            proc.join(timeout=20)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
        if profile_proc is not None:
            try:
                profile_proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                profile_proc.kill()
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(5)
        row["server_status"] = server.returncode
        out.close()
        if budget:
            budget.close()
    row["server_errors"] = server_errors(log)
    row["fronts"] = session_fronts(log)
    row["events"] = server_events(
        log, {"client_dropped", "session_crashed", "automatic_move", "game_over"}
    )
    if "profile" in row and not args.keep:
        dest = Path.cwd() / row["profile"].name
        if row["profile"].exists():
            shutil.copy(row["profile"], dest)
            row["profile"] = dest
        else:
            row["profile"] = None
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return row


PART_SECONDS = 60.0
"""A window longer than two of these is also shown part by part (`window_parts`)."""


def window_parts(
    t_start: float,
    t_end: float,
    cpu: list[tuple[float, float, float]],
    timed: list[tuple[str, float, float]],
) -> list[dict]:
    """The window cut into parts of `PART_SECONDS` (when it holds more than two): for each,
    its start (s into the window), the server's and the load's mean CPU % of the 1-s
    samples `cpu` (time, server, load) in it, and the p99 of each kind of `timed` sample
    (kind, time, latency s) taken in it. A long window's steady state is not its start: at
    300 sessions the bot tables' games end from ~100 s on and their players make new ones."""
    if t_end - t_start <= 2 * PART_SECONDS:
        return []
    parts = []
    start = t_start
    while start < t_end - 1:
        end = min(t_end, start + PART_SECONDS)
        srv = [c for t, c, _ in cpu if start <= t < end]
        load = [c for t, _, c in cpu if start <= t < end]
        part: dict = {
            "from": start - t_start,
            "srv": statistics.fmean(srv) if srv else None,
            "load": statistics.fmean(load) if load else None,
        }
        for kind in ("bid", "chat", "tchat", "lag"):
            part[kind] = pct([lat for k, t, lat in timed if k == kind and start <= t < end], 99)
        parts.append(part)
        start = end
    return parts


HEAD = (
    f"{'N':>4} {'srv CPU mean/p90':>17} {'load CPU':>12} {'RSS/s MB':>8} "
    f"{'bid p50/p99':>12} {'chat p50/p99':>12} {'tchat p50/p99':>13} {'conn p50/p99':>12} "
    f"{'ramp p50/p99':>12} {'lag p50/p99':>11} {'drops':>5} {'errs':>9} "
    f"{'n bid/chat/tchat/conn':>21}"
)


def fmt_row(row: dict) -> str:
    def f(v, spec=".0f"):
        return "-" if v is None else format(v, spec)

    s = row["samples"]
    srv_flag = " SAT" if (row["srv_mean"] or 0) >= 90 * (row.get("budget") or 1) else ""
    load_flag = " SAT" if (row["load_mean"] or 0) >= 90 else ""
    lat = {k: f"{ms(pct(v, 50))}/{ms(pct(v, 99))}" for k, v in s.items()}
    errs = f"{len(row['client_errors'])}+{len(row['server_errors'])}"
    n = "/".join(str(len(s[k])) for k in ("bid", "chat", "tchat", "connect"))
    return (
        f"{row['n']:>4} {f(row['srv_mean']) + '/' + f(row['srv_p90']) + '%' + srv_flag:>17} "
        f"{f(row['load_mean']) + '%' + load_flag:>12} {f(row['rss_per'], '.2f'):>8} "
        f"{lat['bid']:>12} {lat['chat']:>12} {lat['tchat']:>13} {lat['connect']:>12} "
        f"{lat['ramp']:>12} {lat['lag']:>11} {row['drops']:>5} {errs:>9} {n:>21}"
    )


def pinned(args) -> bool:
    """Whether the server runs on CPU 0 and the load on CPU 1: by default with one process,
    with `--workers` only if `--pin` says so (to weigh the split on one core)."""
    return not args.no_pin and args.server_cpus is None and (args.workers is None or args.pin)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10], help="sessions per row")
    parser.add_argument("--seconds", type=float, default=60, help="measuring window (s)")
    parser.add_argument("--clients", type=int, default=2, help="load processes")
    parser.add_argument("--ramp", type=float, default=5, help="connections a second")
    parser.add_argument(
        "--visit-every", type=float, default=2.0,
        help="seconds between two newcomers in the window (their connect times: conn)",
    )  # fmt: skip
    parser.add_argument(
        "--server", type=Path, default=VENV_BIN / "perudo-ssh",
        help="the perudo-ssh command to serve with (another checkout's, to compare; a .py file"
        " runs with this Python, as bench/serve_timed.py)",
    )  # fmt: skip
    parser.add_argument("--no-pin", action="store_true", help="do not pin server/load CPUs")
    parser.add_argument(
        "--pin", action="store_true",
        help="with --workers: all the server's processes on CPU 0, the load on CPU 1",
    )  # fmt: skip
    parser.add_argument(
        "--workers", type=int, metavar="N",
        help="serve with `--workers N` (lobby, N fronts, nats-server; unpinned unless --pin): the "
        "server's CPU and RSS are its processes' summed, and shown by role",
    )  # fmt: skip
    parser.add_argument(
        "--server-cpus", type=float, metavar="F",
        help="hold the server's processes to F cores of CPU time in all (a cgroup quota; "
        "unpinned): a smaller machine modelled, the load on the rest (see CpuBudget)",
    )  # fmt: skip
    parser.add_argument(
        "--server-core", type=float, metavar="C",
        help="with --server-cpus: each of the server's processes held to C cores too (a core "
        "of the smaller machine: --server-cpus 1 --server-core 0.5 is two half cores)",
    )  # fmt: skip
    parser.add_argument("--profile", choices=["py-spy"], help="profile the server in the window")
    parser.add_argument("--profile-format", choices=["speedscope", "raw"], default="speedscope")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs")
    parser.add_argument(
        "--stormers", type=int, default=0,
        help="sessions more (not in N) opening and closing the help as fast as --storm-keys",
    )  # fmt: skip
    parser.add_argument("--storm-keys", type=float, default=250, help="a stormer's keys a second")
    parser.add_argument(
        "--chat-every", type=float, default=30.0,
        help="mean seconds between two lobby chat lines of a lobby-goer (default 30: 20-40)",
    )  # fmt: skip
    parser.add_argument(
        "--again", action="store_true",
        help="the people of a six-seat table play again together once their game is over "
        "(the mix held; else they idle in the lobby)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.server_core is not None and args.server_cpus is None:
        parser.error("--server-core needs --server-cpus")
    if args.server_cpus is not None and not os.access(CGROUP_CPU, os.W_OK):
        parser.error(f"--server-cpus needs the cgroup v1 cpu controller, writable, at {CGROUP_CPU}")
    if pinned(args) and (os.cpu_count() or 1) >= 2:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {LOAD_CPU})  # keep CPU 0 for the server
    print(
        f"window {args.seconds:.0f} s, {args.clients} load processes, ramp {args.ramp:.0f}/s, "
        f"server {'on CPU 0, load on CPU 1' if pinned(args) else 'unpinned'}"
        f"{f', held to {args.server_cpus:g} cores' if args.server_cpus is not None else ''}"
        f"{f' ({args.server_core:g} a process)' if args.server_core is not None else ''}"
        f"{f', serve --workers {args.workers}' if args.workers is not None else ''}"
        f"{', six-seat tables play again' if args.again else ''}",
        flush=True,
    )
    rows = []
    for n in args.sizes:
        t = time.monotonic()
        row = run_one(n, args)
        rows.append(row)
        print(f"-- N={n} done in {time.monotonic() - t:.0f} s", flush=True)
        print(HEAD)
        print(fmt_row(row), flush=True)
        details(row, args)
    print()
    print("all rows:")
    print(HEAD)
    for row in rows:
        print(fmt_row(row))


def by_front(row: dict, args) -> None:
    """With several fronts: the p99s of the players of each front (by the process their
    session ran in); with stormers, the fronts they stormed are marked."""
    fronts = row.get("fronts", {})
    if len(set(fronts.values())) < 2:
        return
    storming = {fronts.get(f"p{i}") for i in range(row["n"], row["n"] + args.stormers)} - {None}
    for front in sorted(set(fronts.values())):
        kinds = {
            kind: [lat for k, who, lat in row["observed"] if k == kind and fronts.get(who) == front]
            for kind in ("bid", "chat", "tchat")
        }
        players = sum(1 for name, f in fronts.items() if f == front)
        mark = " (stormed)" if front in storming else ""
        print(
            f"   {front}{mark}: {players} players; p99 "
            + ", ".join(f"{k} {ms(pct(v, 99))} (n {len(v)})" for k, v in kinds.items())
        )


def details(row: dict, args) -> None:
    ev = row["events"]
    print(
        f"   server: base RSS {row['base_rss']:.0f} MB, exit status {row['server_status']}; "
        f"log: {ev['game_over']} game_over, {ev['automatic_move']} automatic_move, "
        f"{ev['client_dropped']} client_dropped, {ev['session_crashed']} session_crashed; "
        f"load CPU max 1 s sample {row['load_max'] or 0:.0f}%; "
        f"{row['watch_timeouts']} latency watches timed out"
        + (f"; stormers ended by the server {row['storm_drops']} times" if args.stormers else "")
    )

    def cpu(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    if len(row.get("roles", {})) > 1:
        print(
            "   server CPU by role: "
            + ", ".join(
                f"{role} {cpu(v)} %" + (f" ({k} processes)" if k > 1 else "")
                for role, (v, k) in sorted(row["roles"].items())
            )
        )
    if row.get("cpus"):
        print(
            "   machine: "
            + ", ".join(f"{name} {cpu(v)} % busy" for name, v in sorted(row["cpus"].items()))
            + (
                f"; server budget {row['budget']:g} cores, throttled in "
                f"{row['throttled'].get('nr_throttled', 0)} of "
                f"{row['throttled'].get('nr_periods', 0)} periods "
                f"({row['throttled'].get('throttled_time', 0) / 1e6:.0f} ms waited"
                + (
                    f"; its processes at their own quota "
                    f"{row['throttled']['core_throttled_time'] / 1e6:.0f} ms"
                    if row["throttled"].get("core_throttled_time")
                    else ""
                )
                + ")"
                if row.get("throttled") is not None
                else ""
            )
        )
    by_front(row, args)
    for part in row.get("parts", ()):
        print(
            f"   from {part['from']:3.0f} s: server {cpu(part['srv'])} %, "
            f"load {cpu(part['load'])} %; "
            f"p99 bid {ms(part['bid'])}, chat {ms(part['chat'])}, tchat {ms(part['tchat'])}, "
            f"lag {ms(part['lag'])} ms"
        )
    if (row["srv_mean"] or 0) >= 90 * (row.get("budget") or 1):
        print("   the server used its whole CPU (SAT): it is CPU-bound at this N")
    if (row["load_mean"] or 0) >= 90:
        print("   the load processes saturated CPU 1 (SAT): latencies include client delay")
    for line in (row["client_errors"] + row["server_errors"])[:8]:
        print(f"   ! {line}")
    if row.get("profile"):
        print(f"   py-spy profile: {row['profile']}")
    if args.keep:
        print(f"   kept {row['dir']}")


if __name__ == "__main__":
    main(sys.argv[1:])
