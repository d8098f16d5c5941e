"""A Textual driver that talks to one SSH channel instead of the server's terminal.

No threads, no signal handlers, no access to the server's stdin/stdout: output goes
to the session's `send`, input arrives through `feed`, size through `resize`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, Protocol, TextIO

from textual import constants, events
from textual.driver import Driver
from textual.geometry import Size
from textual.message import Message

from perudo_ssh.limits import DEFAULT_LIMITS
from perudo_ssh.logs import log_event
from perudo_ssh.ssh.terminal_input import TerminalInput

if TYPE_CHECKING:
    from textual.app import App

logger = logging.getLogger(__name__)

MAX_PASTE = DEFAULT_LIMITS.max_paste
"""The default of `Limits.max_paste`: longest bracketed paste passed to the app, in
characters; the rest is dropped."""

# Kitty keyboard protocol flags, as LinuxDriver sets them: disambiguate escape
# codes (a lone Escape arrives as a sequence), report all keys, associated text.
_KITTY_FLAGS = 0b00001 | 0b01000 | 0b10000

# Mouse reporting: clicks, the wheel, and motion only while a button is held (1002, a drag:
# the scrollbars use it), not all motion (1003): no screen here uses a pointer moving over it,
# and every motion report costs the app a message and often a repaint (issue 11: mouse
# motion alone took half a core). SGR coordinates (1006; 1015 for older terminals).
_MOUSE_ON = "\x1b[?1000h\x1b[?1002h\x1b[?1015h\x1b[?1006h"
_MOUSE_OFF = "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1015l\x1b[?1006l"


class SessionTerminal(Protocol):
    """What the driver needs from the SSH session it draws on."""

    @property
    def size(self) -> tuple[int, int]:
        """Current (width, height) of the client's terminal, in cells."""
        ...

    def send(self, data: bytes) -> None:
        """Send bytes to the client's terminal (dropped once the channel closed)."""
        ...

    def attach(self, driver: SSHDriver) -> None:
        """Start routing the client's input to `driver`."""
        ...


class SSHDriver(Driver):
    """Textual driver for one SSH session.

    Textual builds it as `driver_class(app, debug=..., mouse=..., size=...)`; give
    the app `functools.partial(SSHDriver, terminal=session, max_paste=...)` as its driver
    class. `max_paste` is the longest bracketed paste passed on, in characters.
    """

    def __init__(
        self,
        app: App[Any],
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
        terminal: SessionTerminal,
        max_paste: int = MAX_PASTE,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._terminal = terminal
        self._input = TerminalInput(max_paste=max_paste)
        self._deferred: list[Message] = []
        self._input_enabled = False
        self._output: list[str] = []
        self._flush_handle: asyncio.Handle | None = None
        self._tick_handle: asyncio.TimerHandle | None = None

    # Output

    def write(self, data: str) -> None:
        """Queue `data`; it is sent at the next `flush` or loop iteration."""
        self._output.append(data)
        if self._flush_handle is None:
            # Not every Textual write is followed by flush() (bell, clipboard, ...).
            self._flush_handle = self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Send everything written so far to the client, as one SSH write."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self._output:
            data = "".join(self._output).encode("utf-8", "replace")
            self._output.clear()
            self._terminal.send(data)

    # Application mode

    def start_application_mode(self) -> None:
        """Set up the client's terminal and start taking its input."""
        write = self.write
        write("\x1b[?1049h")  # alternate screen
        if self._mouse:
            write(_MOUSE_ON)
        write("\x1b[?25l")  # hide cursor
        write("\x1b[?1004h")  # focus in/out reports
        if not constants.DISABLE_KITTY_KEY:
            write(f"\x1b[>{_KITTY_FLAGS}u")
        write("\x1b[?2026$p")  # does the terminal support synchronized output?
        write("\x1b[?2004h")  # bracketed paste
        write("\x1b[?7l")  # no line wrap
        self.flush()
        self._input_enabled = True
        self._terminal.attach(self)
        self.resize(*self._terminal.size)

    def disable_input(self) -> None:
        """Ignore any further input from the client."""
        self._input_enabled = False
        if self._tick_handle is not None:
            self._tick_handle.cancel()
            self._tick_handle = None

    def stop_application_mode(self) -> None:
        """Give the client's terminal back as it was."""
        self.disable_input()
        write = self.write
        write("\x1b[?2004l\x1b[?7h")
        if self._mouse:
            write(_MOUSE_OFF)
        write("\x1b[<u")  # pop the Kitty keyboard mode; before leaving the alt screen
        write("\x1b[?1049l\x1b[?25h\x1b[?1004l")
        self.flush()

    def close(self) -> None:
        """Final cleanup: nothing may call back into the app after this."""
        self.disable_input()
        self.flush()

    # Input from the session

    @property
    def backlog(self) -> int:
        """Messages waiting in the app's queue: the session stops feeding when high."""
        return self._app.message_queue_size

    @property
    def deferred(self) -> int:
        """Events parsed and not posted yet (`feed`'s `most`)."""
        return len(self._deferred)

    def feed(self, data: bytes, most: int | None = None) -> tuple[int, int]:
        """Parse bytes typed by the client and post the resulting events to the app, the
        events left from an earlier call first; at most `most` of them (None: all), the
        rest kept for the next call (`deferred`).

        Returns what that cost: (characters parsed, messages posted). Paste beyond
        `max_paste` is dropped unparsed and costs nothing."""
        if not self._input_enabled:
            return 0, 0
        parsed = self._input.parsed
        messages = self._deferred + self._input.feed(data) if data else self._deferred
        self._deferred = []
        if most is not None and len(messages) > most:
            messages, self._deferred = messages[:most], messages[most:]
        for message in messages:
            self.process_message(message)
        # The parser only tells a lone Escape from the start of a sequence once
        # ESCAPE_DELAY has passed with nothing more; nothing would ask it otherwise.
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        self._tick_handle = self._loop.call_later(constants.ESCAPE_DELAY + 0.01, self._tick)
        return self._input.parsed - parsed, len(messages)

    def _tick(self) -> None:
        self._tick_handle = None
        if self._input_enabled:
            for message in self._input.tick():
                self.process_message(message)

    def resize(self, width: int, height: int) -> None:
        """Tell the app the client's terminal is now `width` x `height` cells."""
        size = Size(width, height)
        self.send_message(events.Resize(size, size))

    def process_message(self, message: Message) -> None:
        """As the base driver; but a button pressed again without a release is kept once (the
        base driver's list of pressed buttons grew by one for every press report sent)."""
        super().process_message(message)
        if len(self._down_buttons) > 3:
            self._down_buttons[:] = dict.fromkeys(self._down_buttons)

    def send_message(self, message: Message) -> None:
        """Post `message` to the app; we are always on the app's own loop and thread."""
        self._app.post_message(message)

    # Things that would act on the server machine, refused

    def open_url(self, url: str, new_tab: bool = True) -> None:
        """Refuse: the base driver would open a browser on the server."""
        log_event(logger, "url_refused", url=url[:200])
        self._app.notify("Opening links is not available over SSH.", severity="warning")

    def deliver_binary(
        self,
        binary: BinaryIO | TextIO,
        *,
        delivery_key: str,
        save_path: Path,
        open_method: Literal["browser", "download"] = "download",
        encoding: str | None = None,
        mime_type: str | None = None,
        name: str | None = None,
    ) -> None:
        """Refuse: the base driver would write the file (e.g. a screenshot) on the server."""
        binary.close()
        log_event(logger, "file_refused", name=save_path.name[:200])
        self._app.notify("Saving files is not available over SSH.", severity="warning")
        error = PermissionError("file delivery is disabled over SSH")
        self.send_message(events.DeliveryFailed(key=delivery_key, exception=error, name=name))
