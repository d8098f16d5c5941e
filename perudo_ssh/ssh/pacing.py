"""The pacing of one session channel: what its client may cost the server, and when it is cut.

Each session shares one event loop and one CPU with every other, so its input is given to
its app at a pace (issue 5, item 4; issue 11) and its output watched: input packets and
window changes past `MESSAGE_RATE` (input held back, resizes dropping the client); input
parsed within `Limits.input_bytes_per_second` a chunk at a time; events given to the app
within `Limits.input_events_per_second` and the screens they make it draw within
`Limits.input_screens_per_second` (past `Limits.input_flood_seconds` of that, the session
ends, saying why); output left unread past `Limits.output_buffer_bytes` drops the client.
Drops are logged as client_dropped (`perudo_ssh.logs.log_event`).

Separate from `session` (what the channel is asked for, and the app it runs) as this is the
one part that measures; `PacedInput` is mixed into `AppSession`, whose state it shares.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import asyncssh

from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.logs import log_event

if TYPE_CHECKING:
    from textual.app import App

    from perudo_ssh.ssh.driver import SSHDriver

# the session's own logger: its client_dropped events are the session's, logged under the
# same name as its others (log filters and alerts select them by it)
logger = logging.getLogger("perudo_ssh.ssh.session")

MAX_OUTPUT_BUFFER = DEFAULT_LIMITS.output_buffer_bytes
"""The default of `Limits.output_buffer_bytes`: bytes of output waiting for a client that
stopped reading before it is dropped."""

INPUT_RATE = DEFAULT_LIMITS.input_bytes_per_second
"""The default of `Limits.input_bytes_per_second`: sustained input parsed per session,
characters per second (typing and mouse are far less; a paste beyond `Limits.max_paste` is
dropped unparsed and not counted)."""
INPUT_BURST = 128 * 1024
"""Input parsed at once above the sustained rate (a paste), or the sustained rate if more."""
SCREENS_BURST = 8.0
"""Whole screens of output a session may cause at once above `Limits.input_screens_per_second`
before its input waits."""
ANSWER_PAUSE = 1 / 30
"""Seconds between two feeds of input to the app while more waits: time for the app to draw
what the last events changed (Textual draws up to 60 times a second), so that it is counted
against `input_screens_per_second` before more events are given."""
SCREENS_DEBT = 2.0
"""Most whole screens of output counted beyond the budget: what a session's input waits for
is then at most (1 + this) / `input_screens_per_second` seconds, however much one key made
its app draw."""
CELL_BYTES = 13
"""Bytes of output counted as one cell drawn: `input_screens_per_second` counts the client's
terminal in cells (measured: the help drawn over the lobby at 80x24 is 25.7 kB, 13.4 bytes a
cell; closing it, 10.2 kB)."""
ANSWER_SECONDS = 1.0
"""Output within this many seconds of an input event given to the app, or while more of its
input waits, counts against its `input_screens_per_second` (what the keys made it draw, and
what a storm costs while it lasts); output at other times (the first screens, a table's
moves and the lobby's updates to a player not typing) does not."""
FLOOD_MESSAGE = "too much input: {rate} keys or mouse events a second for {seconds:g} s"
"""The farewell of a session past `Limits.input_flood_seconds`, left on the client's terminal
once its app is gone (English, as the SSH layer's other reasons)."""
MESSAGE_RATE = 300
"""Sustained input packets and window changes accepted per second. Each costs asyncssh about
0.2 ms of CPU before the app sees it, so a client sending thousands a second would take a core
from every other session. Past the burst, input packets are held back (the channel stops
reading until the rate allows one more, and SSH flow control slows the client: a 10 MB paste
sent in 1 KB packets takes its time, and is cut to `Limits.max_paste`); window changes past
it drop the client (nothing a terminal does sends thousands). A person's keys and mouse send
far fewer."""
RATE_PAUSE = 0.02
"""Shortest pause of a channel's reading held back for its packet rate, in seconds (one timer
per pause, not per packet)."""
MESSAGE_BURST = 1000
"""Input packets and window changes accepted at once above the sustained rate."""
INPUT_CHUNK = 1024
"""Bytes parsed per loop step, so one session's flood cannot starve the others."""
MAX_PENDING_INPUT = 64 * 1024
"""Bytes held before the channel stops reading (SSH flow control then slows the client)."""
MAX_BACKLOG = 100
"""App messages queued before parsing more input waits."""
UNBRACKETED_PASTE = 64
"""Bytes in one input packet, none of them an escape, taken as the start of a paste the
terminal did not bracket: a paste marker is put before it, and the paste goes on through
the packets after it that hold no escape, whatever their size (a long paste reaches the SSH
client in several reads), until one holds an escape or none comes for `PASTE_IDLE`; then
the end marker. So the app gets one paste (a bid field refuses it whole, a chat line is cut
to its length, a newline in it submits nothing; `Limits.max_paste` cuts it whole, and a
character's UTF-8 bytes are never parted by a marker), not thousands of keys that would
wait on the session's event budget and end it as a flood. A person's keys come a packet
each (an SSH client sends what the terminal gave it at once), a key held down or a mouse
report too; only a paste, or a program, sends more. (A client that sends a whole line in
one packet, as a phone's input bar may: a line this long is pasted, not sent.)"""
PASTE_IDLE = 0.1
"""Seconds without input that end a paste the terminal did not bracket."""
_PASTE_START = b"\x1b[200~"
_PASTE_END = b"\x1b[201~"
_MARKER_TAIL = len(_PASTE_START) - 1
"""Bytes of a packet kept to find a paste marker parted between two packets."""


def _may_begin_marker(tail: bytes) -> bool:
    """Whether `tail`, a packet's last bytes, may be the start of a paste marker that the
    next packet ends."""
    return any(
        marker.startswith(tail[-n:])
        for n in range(1, len(tail) + 1)
        for marker in (_PASTE_START, _PASTE_END)
    )


class _TokenBucket:
    """Allows `rate` units per second, up to `burst` at once."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate, self.burst = rate, burst
        self._tokens, self._time = burst, now

    def take(self, wanted: int, now: float) -> int:
        """Take up to `wanted` units; returns how many were granted (0 while in debt)."""
        self._refill(now)
        granted = max(0, min(wanted, int(self._tokens)))
        self._tokens -= granted
        return granted

    def give_back(self, unused: int) -> None:
        """Return units taken but not used; a negative `unused` is spent beyond what was
        taken, as a debt paid off before anything more is granted."""
        self._tokens = min(self.burst, self._tokens + unused)

    def _refill(self, now: float) -> None:
        self._tokens = min(self.burst, self._tokens + (now - self._time) * self.rate)
        self._time = now

    def left(self, now: float) -> float:
        """Units left now (negative: a debt)."""
        self._refill(now)
        return self._tokens

    def spend(self, units: float, now: float, floor: float = float("-inf")) -> None:
        """Count `units` used, beyond what is left if need be (a debt paid off first, never
        counted below `floor`)."""
        self._refill(now)
        self._tokens = max(floor, self._tokens - units)

    def wait(self, wanted: int) -> float:
        """Seconds until `wanted` units (capped at burst) will be available."""
        return max(0.0, min(wanted, self.burst) - self._tokens) / self.rate


class PacedInput:
    """The pacing of one session channel's input and output (see the module docstring),
    mixed into `AppSession`: asyncssh's `data_received` and the driver's `send` are here.

    The session sets `_loop`, `_limits`, `_peer`, `_chan` (once the channel is made),
    `_closed`, `_size`, `_app` and `_driver` (while its app runs), and calls
    `_init_pacing()` once, from its `__init__`."""

    _loop: asyncio.AbstractEventLoop
    _limits: Limits
    _peer: str
    _chan: asyncssh.SSHServerChannel[bytes] | None
    _closed: bool
    _size: tuple[int, int]
    _app: App[Any] | None
    _driver: SSHDriver | None

    def _init_pacing(self) -> None:
        """Nothing pending, reading on, and every budget full (from `_limits`)."""
        limits = self._limits
        self._pending = bytearray()
        self._client_pasting = False  # inside a bracketed paste of the client's own
        self._tail = b""  # the last input's last bytes while they may part a paste marker
        self._unbracketed: asyncio.TimerHandle | None = None  # ends our paste (`_marked`)
        self._reading_paused = False  # the channel's reading is paused (`_update_reading`)
        self._pending_full = False  # ... for `MAX_PENDING_INPUT` bytes not parsed yet
        self._rate_handle: asyncio.TimerHandle | None = None  # ... for its packet rate
        self._pump_handle: asyncio.Handle | None = None
        rate = limits.input_bytes_per_second
        self._bucket = _TokenBucket(rate, max(INPUT_BURST, rate), self._loop.time())
        # the session's CPU budget: events that cost the app a screen change (issue 11)
        self._events = _TokenBucket(
            limits.input_events_per_second, limits.input_events_burst, self._loop.time()
        )
        self._screens = _TokenBucket(
            limits.input_screens_per_second, SCREENS_BURST, self._loop.time()
        )  # ... and what its screen costs to draw, in whole screens
        self._held_since: float | None = None  # input held back by it since, without a break
        self._answered_until = 0.0  # output until then counts against `_screens`
        self._flooded = False  # ended for `input_flood_seconds`: no more input is read
        self._messages = _TokenBucket(MESSAGE_RATE, MESSAGE_BURST, self._loop.time())

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        """asyncssh: `data` from the client, kept until the pump gives it to the app; past
        `MESSAGE_RATE` packets, the channel's reading is held back (never the data dropped).
        A packet of `UNBRACKETED_PASTE` bytes or more without an escape begins a paste."""
        if self._closed or self._flooded:
            return
        self._pending += self._marked(data)
        now = self._loop.time()
        if not self._messages.take(1, now) and self._rate_handle is None:
            # past `MESSAGE_RATE` packets: held back, never dropped (a big paste arrives in
            # thousands of small packets); SSH flow control then slows the client
            wait = max(self._messages.wait(1), RATE_PAUSE)
            self._rate_handle = self._call_later(wait, self._rate_resumed)
        self._update_reading()
        self._schedule_pump(0.0)

    def _marked(self, data: bytes) -> bytes:
        """`data` with the markers of a paste the terminal did not bracket put in
        (`UNBRACKETED_PASTE`): the start before a long packet with no escape, the end before
        the next packet with one (or after `PASTE_IDLE` without input, `_end_unbracketed`).
        Nothing is put inside the client's own bracketed paste, nor where a packet may end
        in the start of a marker the next one finishes."""
        out = data
        escape = b"\x1b" in data
        if self._unbracketed is not None:  # a paste of ours is open
            self._unbracketed.cancel()
            self._unbracketed = None
            if not escape:  # it goes on, whatever the packet's size
                self._unbracketed = self._call_later(PASTE_IDLE, self._end_unbracketed)
            else:
                out = _PASTE_END + data
        elif (
            len(data) >= UNBRACKETED_PASTE
            and not escape
            and not self._client_pasting
            and not _may_begin_marker(self._tail)
        ):
            self._unbracketed = self._call_later(PASTE_IDLE, self._end_unbracketed)
            out = _PASTE_START + data
        if escape or self._tail:  # the client's own paste markers: inside its paste or not
            joined = self._tail + data
            start, end = joined.rfind(_PASTE_START), joined.rfind(_PASTE_END)
            if start != end:
                self._client_pasting = start > end
            tail = joined[-_MARKER_TAIL:]
            self._tail = tail if b"\x1b" in tail else b""
        return out

    def _end_unbracketed(self) -> None:
        """No input for `PASTE_IDLE`: the paste the terminal did not bracket ends."""
        self._unbracketed = None
        if self._closed or self._flooded:
            return
        self._pending += _PASTE_END
        self._schedule_pump(0.0)

    def _hold(self, now: float) -> None:
        """Input is held back by the session's CPU budget now: past `input_flood_seconds`
        of that without a break, the session ends, saying why."""
        if self._held_since is None:
            self._held_since = now
        flood = self._limits.input_flood_seconds
        if flood and now - self._held_since > flood:
            rate = self._limits.input_events_per_second
            app = self._app
            if app is None:  # nothing to say it: cut
                self._drop("input_flood", rate=rate, seconds=flood)
                return
            # the app ends, and its farewell stays on the client's terminal after ssh exits
            self._log_drop("input_flood", rate=rate, seconds=flood)
            self._flooded = True
            self._pending.clear()
            app.farewell = FLOOD_MESSAGE.format(rate=rate, seconds=flood)  # type: ignore[attr-defined]
            app.exit()

    def _rate_resumed(self) -> None:
        self._rate_handle = None
        self._update_reading()

    def _update_reading(self) -> None:
        """Pause the channel's reading while input is held back, for its packet rate or for
        `MAX_PENDING_INPUT` bytes not parsed yet; resume it once neither holds."""
        chan = self._chan
        if chan is None or self._closed:
            return
        if len(self._pending) > MAX_PENDING_INPUT:
            self._pending_full = True
        elif len(self._pending) <= MAX_PENDING_INPUT // 2:
            self._pending_full = False
        paused = self._pending_full or self._rate_handle is not None
        if paused != self._reading_paused:
            self._reading_paused = paused
            if paused:
                chan.pause_reading()
            else:
                chan.resume_reading()

    def _flooding(self) -> bool:
        """Count one message from the client; past `MESSAGE_RATE`, drop the client."""
        if self._closed:
            return True
        if self._messages.take(1, self._loop.time()):
            return False
        self._drop("flood", rate=MESSAGE_RATE, burst=MESSAGE_BURST)
        return True

    def _drop(self, reason: str, **fields: object) -> None:
        """Cut the connection now, without waiting for the client (`_log_drop`)."""
        self._log_drop(reason, **fields)
        self._closed = True
        if self._chan is not None:
            self._chan.get_extra_info("connection").abort()

    def _log_drop(self, reason: str, **fields: object) -> None:
        """Log `client_dropped`: `reason`, a snake_case word, and what was measured."""
        warning = logging.WARNING
        log_event(logger, "client_dropped", level=warning, peer=self._peer, reason=reason, **fields)

    def send(self, data: bytes) -> None:
        """Write to the client, or drop the connection if it stopped reading."""
        chan = self._chan
        if self._closed or chan is None or chan.is_closing():
            return
        chan.write(data)
        now = self._loop.time()
        driver = self._driver
        # drawn for its input, or while more of it waits: counts against its budget
        if now <= self._answered_until or self._pending or (driver and driver.deferred):
            width, height = self._size
            cost = len(data) / (CELL_BYTES * width * height)
            self._screens.spend(cost, now, floor=-SCREENS_DEBT)
        buffered = chan.get_write_buffer_size() + self._transport_buffer_size(chan)
        if buffered > self._limits.output_buffer_bytes:
            self._drop("output_unread", bytes=buffered, limit=self._limits.output_buffer_bytes)

    @staticmethod
    def _transport_buffer_size(chan: asyncssh.SSHServerChannel[bytes]) -> int:
        # asyncssh ignores TCP back-pressure: while the client's SSH window is
        # open, unread output piles up in the asyncio transport, not the channel.
        # A client may advertise a huge window, so count that buffer too.
        transport = getattr(chan.get_extra_info("connection"), "_transport", None)
        return transport.get_write_buffer_size() if transport is not None else 0

    def _schedule_pump(self, delay: float) -> None:
        if self._pump_handle is None and not self._closed:
            self._pump_handle = self._call_later(delay, self._pump_input)

    def _call_later(self, delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        # Callbacks such as connection_lost can run inside the app's task (a write
        # found the pipe broken); a timer scheduled there would copy the task's
        # context, whose `active_app` keeps the app alive until the timer fires.
        return self._loop.call_later(delay, callback, context=contextvars.Context())

    def _pump_input(self) -> None:
        """Feed pending input to the driver a chunk at a time, within rates and backlog.

        A chunk is no longer than the events left to give (a byte yields at most about
        one event); what feeding it actually cost, in characters parsed and events
        posted, is settled afterwards, so dropped paste costs nothing."""
        self._pump_handle = None
        driver = self._driver
        if driver is None or not (self._pending or driver.deferred) or self._closed:
            return
        if self._flooded:
            return
        if driver.backlog > MAX_BACKLOG:
            self._schedule_pump(0.02)
            return
        now = self._loop.time()
        if self._screens.left(now) < 1:  # its screen cost more than its budget: input waits
            self._hold(now)
            if not self._closed:
                self._schedule_pump(max(self._screens.wait(1), RATE_PAUSE))
            return
        # no more events at once than whole screens are left in the budget, as any of them
        # may redraw it all: the rest wait, parsed (`deferred`), and no more is parsed
        most = max(1, int(self._screens.left(now)))
        deferred = driver.deferred
        wanted = 0 if deferred else min(len(self._pending), INPUT_CHUNK)
        granted = self._bucket.take(wanted, now)
        # a byte gives at most one event
        events = self._events.take(min(deferred, most) if deferred else granted, now)
        if not deferred:
            self._bucket.give_back(granted - events)
            granted = events
        posted = 0
        if events:
            chunk = bytes(self._pending[:granted])
            del self._pending[:granted]
            parsed, posted = driver.feed(chunk, min(events, most))
            self._bucket.give_back(granted - parsed)
            self._events.give_back(events - posted)
            if posted:
                self._answered_until = now + ANSWER_SECONDS
        if self._reading_paused:
            self._update_reading()
        if not (self._pending or driver.deferred):
            self._held_since = None
        elif self._events.wait(1) > 0:  # held back by the event budget
            self._hold(now)
            if self._closed:
                return
        if self._pending or driver.deferred:
            wait = max(self._bucket.wait(1), self._events.wait(1))
            # after events, a frame's pause: what they make the app draw is counted
            # (`send`) before more are given, or a storm would get ahead of its budget
            self._schedule_pump(ANSWER_PAUSE if posted else 0.0 if events else wait)
