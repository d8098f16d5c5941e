"""`ssh HOST play`: a bot account's program playing over one SSH session channel (issue 14).

`ProgramRun` joins the channel to a `perudo_ssh.botapi.ProgramLink`: the program's input
goes to the link as it comes (the link bounds what it keeps and ends a program that floods
it; the channel's reading is never paused: asyncssh opens its window whole again at each
resume, so a paused channel's buffer is not bounded), the lobby's events go out as JSON
lines. The session ends when the program closes its input or the connection
(the lobby is told, and a seat in play is held for the grace period as for anyone who lost
their connection), when the lobby ends it (`Goodbye`, written as the last line), when the
program leaves more than `Limits.output_buffer_bytes` unread (dropped), and when the table
waited for it `botapi.ANSWER_SECONDS` without a line, or it sent past the rate too long
(an `Error` line says which). Exit status 0 when the program or the lobby ended it, 1 else.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable

import asyncssh

from perudo_ssh import botapi, protocol
from perudo_ssh.admission import Admission
from perudo_ssh.botapi import PROTOCOL, Error, Hello, ProgramLink, encode_line
from perudo_ssh.limits import Limits
from perudo_ssh.logs import log_event
from perudo_ssh.session import LobbySession

logger = logging.getLogger(__name__)

CHECK_SECONDS = 1.0
"""How often a running program is checked for `botapi.ANSWER_SECONDS`."""


class ProgramRun:
    """One program's `play` session on `chan`, attached to the lobby as `session`.

    `admission` (the server's session limits; released when it ends) and `limits` are the
    server's, as for an app session. `on_end()` is called once when it ends, however."""

    def __init__(
        self,
        chan: asyncssh.SSHServerChannel[bytes],
        session: LobbySession,
        *,
        peer: str,
        limits: Limits,
        admission: Admission | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self._chan = chan
        self._session = session
        self._peer = peer
        self._limits = limits
        self._admission = admission
        self._on_end = on_end
        self._loop = asyncio.get_running_loop()
        now = self._loop.time()
        # read at run time, so that a test may shorten the wait
        self.link = ProgramLink(session, self._write, now, answer_seconds=botapi.ANSWER_SECONDS)
        self._pump_timer: asyncio.TimerHandle | None = None  # the held lines' next turn
        self._check: asyncio.TimerHandle | None = None
        self._events_task: asyncio.Task[None] | None = None
        self.ended = False

    def start(self) -> None:
        """Say hello and start passing the lobby's events to the program."""
        log_event(logger, "program_started", peer=self._peer, name=self._session.name)
        self._write(encode_line(Hello(protocol=PROTOCOL, name=self._session.name)))
        self._events_task = self._loop.create_task(
            self._events(), name=f"perudo-ssh play {self._peer}"
        )
        self._check = self._later(CHECK_SECONDS, self._check_answer)

    async def _events(self) -> None:
        try:
            while not self.ended:
                event = await self._session.next_event()
                if self.ended:
                    return
                self._write(self.link.event(event, self._loop.time()))
                if isinstance(event, protocol.Goodbye):
                    self._end(0)
                    return
        except Exception:  # a bug of ours: this session ends, never the others
            logger.exception("play session of %s failed", self._peer)
            self._end(1)

    def _write(self, line: bytes) -> None:
        chan = self._chan
        if self.ended or chan.is_closing():
            return
        chan.write(line)
        # asyncssh ignores TCP back-pressure while the client's window is open: what the
        # program leaves unread piles up in the transport too (as `AppSession.send` counts)
        transport = getattr(chan.get_extra_info("connection"), "_transport", None)
        buffered = chan.get_write_buffer_size() + (
            transport.get_write_buffer_size() if transport is not None else 0
        )
        if buffered > self._limits.output_buffer_bytes:
            log_event(
                logger,
                "client_dropped",
                level=logging.WARNING,
                peer=self._peer,
                reason="output_unread",
                bytes=buffered,
                limit=self._limits.output_buffer_bytes,
            )
            self._end(None)
            chan.get_extra_info("connection").abort()

    def received(self, data: bytes) -> None:
        """Input from the program."""
        if self.ended:
            return
        self._pumped(self.link.received(data, self._loop.time()))

    def _pump(self) -> None:
        self._pump_timer = None
        if not self.ended:
            self._pumped(self.link.pump(self._loop.time()))

    def _pumped(self, wait: float | None) -> None:
        """After the link handed on what the rate allowed: the next turn in `wait` seconds
        (None: nothing held), or the end for a program flooding."""
        if self.link.flooding:
            self._end(1)
            return
        if wait is not None and self._pump_timer is None:
            self._pump_timer = self._later(wait, self._pump)

    def _check_answer(self) -> None:
        self._check = None
        if self.ended:
            return
        if self.link.overdue(self._loop.time()):
            message = "the table waited too long for this program: it counts as disconnected"
            self._write(encode_line(Error(code="no_answer", message=message)))
            log_event(logger, "program_silent", peer=self._peer, name=self._session.name)
            self._end(1)
            return
        self._check = self._later(CHECK_SECONDS, self._check_answer)

    def input_ended(self) -> None:
        """The program closed its input: it has left."""
        self._end(0)

    def lost(self) -> None:
        """The connection is gone."""
        self._end(None)

    def _end(self, status: int | None) -> None:
        """End once: leave the lobby, stop the timers, exit with `status` (None: the
        channel is gone or being cut, nothing to say)."""
        if self.ended:
            return
        self.ended = True
        self._session.close()
        for handle in (self._check, self._pump_timer):
            if handle is not None:
                handle.cancel()
        task = self._events_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        if self._admission is not None:
            self._admission.release()
            self._admission = None
        if status is not None and not self._chan.is_closing():
            self._chan.exit(status)
        log_event(logger, "program_ended", peer=self._peer, name=self._session.name)
        if self._on_end is not None:
            self._on_end()

    def _later(self, delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        # an empty context: a timer made inside another task must not keep that task's
        # context (and whatever it holds) alive
        return self._loop.call_later(delay, callback, context=contextvars.Context())
