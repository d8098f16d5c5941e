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
output a client may leave unread before it is dropped (measured in `pacing`), and, through a
shared `SessionCounts`, how many app sessions the server, an address and a key may hold at
once — a session past one of those is told so in one line (`client_text`) and ends with exit
status 1. What happens is logged as events (`perudo_ssh.logs.log_event`): session_started,
session_ended, session_crashed, session_refused, client_dropped, exec_refused,
subsystem_refused, channel_idle.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import asyncssh

from perudo_ssh.admission import Admission, SessionCounts, SessionRefusal
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.logs import log_event
from perudo_ssh.names import clean_name
from perudo_ssh.ssh.client_text import (
    CRASH_MESSAGE,
    EXEC_MESSAGE,
    NO_PTY_MESSAGE,
    client_text,
    farewell_line,
    locale_of,
)
from perudo_ssh.ssh.driver import SSHDriver
from perudo_ssh.ssh.isolation import color_system_for, isolate_app
from perudo_ssh.ssh.login import AppFactory, Login
from perudo_ssh.ssh.pacing import PacedInput
from perudo_ssh.ssh.terminal_input import format_error

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

logger = logging.getLogger(__name__)

MAX_SIZE = (500, 250)
"""Largest terminal (width, height) honoured; bigger requests are clamped. A full paint
costs about 2 bytes a cell (~250 kB here) and must stay well below
`pacing.MAX_OUTPUT_BUFFER`, or a big terminal on a slow link is dropped on its first screen
(1000x500 was ~1 MB)."""

DEFAULT_SIZE = (80, 24)

RESIZE_INTERVAL = 0.25
"""Seconds between two resizes passed to the app: a resize lays out and repaints the whole
screen (~25 ms of CPU at 100x30, ~100 ms at 500x300), so a storm of window changes is
coalesced into one resize per interval, the last size winning."""

SHUTDOWN_GRACE = 5.0
"""Seconds an app gets to exit after its client left before its task is cancelled."""

NO_START = "no shell or command asked for in {seconds:g} seconds"
"""The SSH disconnect reason of a connection whose session channel never started (English:
it is an SSH-level message, as `NO_SESSION`)."""


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


class AppSession(PacedInput, asyncssh.SSHServerSession[bytes]):
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

    Its input and output are paced, and a client costing too much dropped, by `PacedInput`
    (`perudo_ssh.ssh.pacing`). Subclasses change what a started channel does in `_start()`.
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
        self._init_pacing()
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
