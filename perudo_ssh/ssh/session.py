"""One SSH session channel running one Textual app.

An app may have a `detach()` method: it is called once the app's task ends, however it ends
(an exit, a crash, or a cancel when the app did not exit within `SHUTDOWN_GRACE` of its client
leaving), so that whatever the app is attached to (a `PerudoApp`'s lobby session) lets go of
it even when the app never got to its own teardown. It must be idempotent.

An app may leave a `farewell` attribute (a str: why it ended, in the player's language): once
it has exited and left the terminal as it found it, that is written as one plain line,
`perudo-ssh: <farewell>`, so that it stays on the client's terminal after `ssh` exits (the
app's own screen is gone with the alternate screen).

Limits (issue 5, item 4) come from the server's `Limits`: the input rate and largest paste, the
output a client may leave unread before it is dropped, and, through a shared `SessionCounts`,
how many app sessions the server, an address and a key may hold at once — a session past one
of those is told so in one line and ends with exit status 1. What happens is logged as events
(`perudo_ssh.logs.log_event`): session_started, session_ended, session_crashed,
session_refused, client_dropped, exec_refused, subsystem_refused, channel_idle.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import asyncssh

from perudo_ssh.admission import Admission, SessionCounts, SessionRefusal
from perudo_ssh.chat import clean_chat
from perudo_ssh.i18n import N_, language_of, translator
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.logs import log_event
from perudo_ssh.names import clean_name
from perudo_ssh.ssh.driver import SSHDriver
from perudo_ssh.ssh.isolation import color_system_for, isolate_app
from perudo_ssh.ssh.login import AppFactory, Login
from perudo_ssh.ssh.terminal_input import format_error

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

logger = logging.getLogger(__name__)

MAX_OUTPUT_BUFFER = DEFAULT_LIMITS.output_buffer_bytes
"""The default of `Limits.output_buffer_bytes`: bytes of output waiting for a client that
stopped reading before it is dropped."""

MAX_SIZE = (500, 250)
"""Largest terminal (width, height) honoured; bigger requests are clamped. A full paint
costs about 2 bytes a cell (~250 kB here) and must stay well below `MAX_OUTPUT_BUFFER`, or
a big terminal on a slow link is dropped on its first screen (1000x500 was ~1 MB)."""

DEFAULT_SIZE = (80, 24)

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
RESIZE_INTERVAL = 0.25
"""Seconds between two resizes passed to the app: a resize lays out and repaints the whole
screen (~25 ms of CPU at 100x30, ~100 ms at 500x300), so a storm of window changes is
coalesced into one resize per interval, the last size winning."""
INPUT_CHUNK = 1024
"""Bytes parsed per loop step, so one session's flood cannot starve the others."""
MAX_PENDING_INPUT = 64 * 1024
"""Bytes held before the channel stops reading (SSH flow control then slows the client)."""
MAX_BACKLOG = 100
"""App messages queued before parsing more input waits."""

SHUTDOWN_GRACE = 5.0
"""Seconds an app gets to exit after its client left before its task is cancelled."""

NO_PTY_MESSAGE = N_("perudo-ssh needs an interactive terminal: run `ssh -t ...`")
EXEC_MESSAGE = N_("perudo-ssh does not run commands: connect with plain `ssh ...`")
NO_START = "no shell or command asked for in {seconds:g} seconds"
"""The SSH disconnect reason of a connection whose session channel never started (English:
it is an SSH-level message, as `NO_SESSION`)."""
CRASH_MESSAGE = N_("perudo-ssh: something went wrong and this session ended. Sorry!")

MAX_FAREWELL = 500
"""Longest farewell printed, in characters."""

LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The client's environment variables that choose its language, strongest first (POSIX)."""


def locale_of(env: Mapping[str, str]) -> str | None:
    """The client's locale from the environment it sent (OpenSSH's `SendEnv LANG LC_*`):
    the first non-empty of `LOCALE_VARIABLES`, at most 64 characters; None if none."""
    for name in LOCALE_VARIABLES:
        value = env.get(name, "")[:64]
        if value:
            return value
    return None


def client_text(message: str, lang: str | None, /, **args: object) -> bytes:
    """`message` (an `N_` id, with its named `args`) in the language of locale `lang`, as one
    terminal line.

    Said by the SSH layer itself when no app runs (no PTY, a command, a crash, a session
    limit), so it is translated here, for this one client, from the locale it sent."""
    return translator(language_of(lang))._(message, **args).encode() + b"\r\n"


def farewell_line(farewell: object) -> bytes | None:
    """The line printed after an app that left `farewell` (see the module docstring) has
    exited: `perudo-ssh: <farewell>` as plain text — every escape sequence and control
    character dropped (an admin typed part of it), at most `MAX_FAREWELL` characters — or
    None when there is nothing to say."""
    if not isinstance(farewell, str):
        return None
    text = clean_chat(farewell)
    if text is None:
        return None
    return f"perudo-ssh: {text[:MAX_FAREWELL]}".encode() + b"\r\n"


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


def _detach(app: object, peer: str) -> None:
    """Call the `detach()` of an app whose task has ended, if it has one (see the module
    docstring); an error there is logged, never raised (the task may be being cancelled)."""
    detach = getattr(app, "detach", None)
    if not callable(detach):
        return
    try:
        detach()
    except Exception as error:
        log_event(logger, "detach_failed", level=logging.ERROR, peer=peer, exc=format_error(error))


def _clamp(width: int, height: int) -> tuple[int, int]:
    if width <= 0 or height <= 0:
        return DEFAULT_SIZE
    return min(width, MAX_SIZE[0]), min(height, MAX_SIZE[1])


class AppSession(asyncssh.SSHServerSession[bytes]):
    """Runs the factory's app on one PTY session channel.

    Refuses exec requests, subsystems (SFTP) and sessions without a PTY with a
    one-line message and exit status 1. Ends with the app's return code (0 for a
    plain `App.exit()`), or 1 and a short apology if the app crashed.

    `limits` gives the input rate, the largest paste and the output left unread before the
    client is dropped. With `sessions`, the app starts only if `sessions.admit(address,
    fingerprint)` admits it (`address` the client's IP address); else the client is told
    which limit it met, exit status 1. `on_start()`, if given, is called once the channel
    became a shell or a command, and `on_close(started)` once it has closed, `started` telling
    whether it had (the server counts the channels a connection has open). A channel that does
    not become a shell or a command within `limits.login_timeout` seconds of opening is closed
    with its connection (logged: channel_idle), so that an unused channel holds nothing.

    Subclasses change what a started channel does in `_start()`.
    """

    def __init__(
        self,
        app_factory: AppFactory,
        username: str,
        fingerprint: str | None,
        peer: str,
        *,
        limits: Limits = DEFAULT_LIMITS,
        sessions: SessionCounts | None = None,
        address: str | None = None,
        on_start: Callable[[], None] | None = None,
        on_close: Callable[[bool], None] | None = None,
    ) -> None:
        self._app_factory = app_factory
        self._on_start = on_start
        self._on_close = on_close
        self._started = False
        self._start_timer: asyncio.TimerHandle | None = None
        self._username = username
        self._fingerprint = fingerprint
        self._peer = peer
        self._limits = limits
        self._sessions = sessions
        self._address = address
        self._admission: Admission | None = None
        self._loop = asyncio.get_running_loop()
        self._chan: asyncssh.SSHServerChannel[bytes] | None = None
        self._refusal: str | None = None
        self._size = DEFAULT_SIZE
        self._task: asyncio.Task[None] | None = None
        self._app: App[Any] | None = None
        self._driver: SSHDriver | None = None
        self._closed = False
        self._pending = bytearray()
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
        self._resize_handle: asyncio.TimerHandle | None = None
        self._cancel_handle: asyncio.TimerHandle | None = None  # the app's exit deadline
        self._resized_at = -RESIZE_INTERVAL

    @property
    def closed(self) -> bool:
        """True once the channel is gone."""
        return self._closed

    # asyncssh callbacks: setup

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self._chan = chan
        timeout = self._limits.login_timeout
        if timeout > 0:
            self._start_timer = self._call_later(timeout, self._never_started)

    def _never_started(self) -> None:
        """`login_timeout` passed since the channel opened and it is no shell or command:
        close its connection (see the class docstring)."""
        self._start_timer = None
        if self._started or self._closed or self._chan is None:
            return
        seconds = self._limits.login_timeout
        log_event(
            logger,
            "channel_idle",
            level=logging.WARNING,
            peer=self._peer,
            fingerprint=self._fingerprint,
            seconds=seconds,
        )
        self._closed = True
        conn = self._chan.get_extra_info("connection")
        conn.disconnect(asyncssh.DISC_BY_APPLICATION, NO_START.format(seconds=seconds))

    def pty_requested(
        self, term_type: str, term_size: tuple[int, int, int, int], term_modes: Any
    ) -> bool:
        self._size = _clamp(term_size[0], term_size[1])
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        # Accepted only to answer with a message; the command is never run.
        log_event(logger, "exec_refused", peer=self._peer, command=command[:80])
        self._refusal = EXEC_MESSAGE
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        log_event(logger, "subsystem_refused", peer=self._peer, subsystem=subsystem[:80])
        return False

    def session_started(self) -> None:
        self._started = True
        if self._start_timer is not None:
            self._start_timer.cancel()
            self._start_timer = None
        if self._on_start is not None:
            self._on_start()
        self._start()

    def _start(self) -> None:
        """The channel became a shell or a command: run the app, or say why not."""
        chan = self._chan
        assert chan is not None
        term = chan.get_terminal_type()
        env = chan.get_environment()
        if term is None or self._refusal is not None:
            chan.write_stderr(client_text(self._refusal or NO_PTY_MESSAGE, locale_of(env)))
            chan.exit(1)
            return
        if self._sessions is not None:
            admitted = self._sessions.admit(self._address, self._fingerprint)
            if not isinstance(admitted, Admission):
                self._refuse_session(admitted, locale_of(env))
                return
            self._admission = admitted
        login = Login(
            username=self._username,
            name=clean_name(self._username),
            fingerprint=self._fingerprint,
            peer=self._peer,
            term=term[:64],
            colorterm=env.get("COLORTERM", "")[:64] or None,
            lang=locale_of(env),
            size=self._size,
        )
        self._task = self._loop.create_task(self._run(login), name=f"perudo-ssh {self._peer}")
        # released once the task is done, however it ends (even cancelled before it ran)
        self._task.add_done_callback(self._release)

    def _refuse_session(self, refusal: SessionRefusal, lang: str | None) -> None:
        chan = self._chan
        assert chan is not None
        log_event(
            logger,
            "session_refused",
            peer=self._peer,
            fingerprint=self._fingerprint,
            reason=refusal.reason,
            limit=refusal.args.get("limit"),
        )
        chan.write_stderr(client_text(refusal.message, lang, **refusal.args))
        chan.exit(1)

    def _release(self, task: object) -> None:
        if self._admission is not None:
            self._admission.release()
            self._admission = None

    # asyncssh callbacks: running

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        if self._flooding():
            return
        self._size = _clamp(width, height)
        if self._resize_handle is None and not self._closed:
            delay = max(0.0, self._resized_at + RESIZE_INTERVAL - self._loop.time())
            self._resize_handle = self._call_later(delay, self._resize_app)

    def _resize_app(self) -> None:
        self._resize_handle = None
        self._resized_at = self._loop.time()
        if self._driver is not None:
            self._driver.resize(*self._size)

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if self._closed or self._flooded:
            return
        self._pending += data
        now = self._loop.time()
        if not self._messages.take(1, now) and self._rate_handle is None:
            # past `MESSAGE_RATE` packets: held back, never dropped (a big paste arrives in
            # thousands of small packets); SSH flow control then slows the client
            wait = max(self._messages.wait(1), RATE_PAUSE)
            self._rate_handle = self._call_later(wait, self._rate_resumed)
        self._update_reading()
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

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self._start_timer is not None:
            self._start_timer.cancel()
            self._start_timer = None
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close(self._started)
        self._pending.clear()
        for handle in (self._pump_handle, self._resize_handle, self._rate_handle):
            if handle is not None:
                handle.cancel()
        self._pump_handle = self._resize_handle = self._rate_handle = None
        if self._app is not None:
            logger.debug("client %s left; closing its app", self._peer)
            self._app.exit()
            self._cancel_handle = self._call_later(SHUTDOWN_GRACE, self._cancel_task)

    # SessionTerminal, for the driver

    @property
    def size(self) -> tuple[int, int]:
        """Current (width, height) of the client's terminal, in cells."""
        return self._size

    def attach(self, driver: SSHDriver) -> None:
        """Route input to `driver` (called when the app enters application mode)."""
        self._driver = driver
        self._schedule_pump(0.0)

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

    # Input pacing

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

    # The app

    async def _run(self, login: Login) -> None:
        chan = self._chan
        assert chan is not None
        if self._closed:  # the client left before its app was made: make none
            return
        shared = self._sessions.shared if self._sessions is not None else None
        if shared is not None:  # a front process: the limits over every front (issue 12)
            refusal = await shared(self._address, self._fingerprint)
            if self._closed:
                return
            if refusal is not None:
                self._refuse_session(refusal, login.lang)
                return
        status, crashed = 1, True
        farewell: bytes | None = None
        started = time.monotonic()
        peer, fingerprint, name = login.peer, login.fingerprint, login.name
        app: App[Any] | None = None
        try:
            app = self._app_factory(login)
            isolate_app(app, color_system_for(login.term, login.colorterm))
            driver = partial(self._make_driver, max_paste=self._limits.max_paste)
            app.driver_class = cast("type[Driver]", driver)
            self._app = app
            log_event(
                logger,
                "session_started",
                peer=peer,
                fingerprint=fingerprint,
                name=name,
                term=login.term,
            )
            await app.run_async(size=login.size)
            error = getattr(app, "_exception", None)
            if error is not None:
                self._crashed(peer, fingerprint, name, error)
            else:
                status, crashed = app.return_code or 0, False
                farewell = farewell_line(getattr(app, "farewell", None))
        except Exception as error:
            self._crashed(peer, fingerprint, name, error)
        finally:
            self._app = None
            self._driver = None
            self._pending.clear()
            if self._cancel_handle is not None:  # it exited in time: nothing holds the
                self._cancel_handle.cancel()  # session (and its connection) any longer
                self._cancel_handle = None
            if app is not None:
                _detach(app, peer)
        if not self._closed and not chan.is_closing():
            if crashed:
                chan.write_stderr(b"\r\n" + client_text(CRASH_MESSAGE, login.lang))
            elif farewell is not None:
                chan.write(farewell)  # the terminal is the player's own again by now
            chan.exit(status)
        seconds = round(time.monotonic() - started, 3)
        log_event(
            logger,
            "session_ended",
            peer=peer,
            fingerprint=fingerprint,
            name=name,
            status=status,
            seconds=seconds,
        )

    def _make_driver(self, *args: Any, max_paste: int, **kwargs: Any) -> SSHDriver:
        """The app's driver, made by Textual as the app starts. Textual (on Python 3.12 and
        later) has just made every new task of the event loop eager (`App.run_async` sets
        `asyncio.eager_task_factory`): the loop is the whole server's, and asyncssh then
        stalls (a key login never got an answer once one app ran). That is undone here."""
        eager = getattr(asyncio, "eager_task_factory", None)
        if eager is not None and self._loop.get_task_factory() is eager:
            self._loop.set_task_factory(None)
        return SSHDriver(*args, terminal=self, max_paste=max_paste, **kwargs)

    def _crashed(self, peer: str, fingerprint: str | None, name: str, error: BaseException) -> None:
        """Log the crash of a session's app (the traceback as text: see `format_error`): an
        error, or a warning when its client had already left (Textual may trip over widgets
        being torn down while a screen still mounts; nobody was playing any more)."""
        log_event(
            logger,
            "session_crashed",
            level=logging.WARNING if self._closed else logging.ERROR,
            peer=peer,
            fingerprint=fingerprint,
            name=name,
            client_left=self._closed,
            exc=format_error(error),
        )

    def _cancel_task(self) -> None:
        if self._task is not None and not self._task.done():
            log_event(logger, "app_cancelled", level=logging.WARNING, peer=self._peer)
            self._task.cancel()
