"""A player's terminal for end-to-end tests: an asyncssh client with a PTY whose output is
rendered by pyte, so tests read the screen a person would see and type keys into it."""

from __future__ import annotations

import asyncio
import gc
import re
from collections.abc import Callable

import asyncssh
import pyte


class Guest(asyncssh.SSHClient):
    """Answers keyboard-interactive with nothing: the server's guest login."""

    def kbdint_auth_requested(self) -> str:
        return ""

    def kbdint_challenge_received(self, name, instructions, lang, prompts) -> list[str]:
        return [""] * len(prompts)


KEYS = {
    "enter": "\r",
    "tab": "\t",
    "escape": "\x1b",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "f2": "\x1bOQ",
}


SYNC_QUERY = b"\x1b[?2026$p"
"""The app asks whether the terminal supports synchronized output (DECRQM, mode 2026)."""
SYNC_SUPPORTED = b"\x1b[?2026;2$y"
"""The answer of a terminal that does (the mode is known and reset)."""
SYNC_BEGIN, SYNC_END = b"\x1b[?2026h", b"\x1b[?2026l"
"""The marks around each frame of an app that knows the terminal supports them."""


class Terminal:
    """One SSH session seen through a pyte screen of `size` (columns, rows).

    `raw` keeps every byte received (standard output and error, as a terminal shows both),
    to audit what reached the client.

    Like most terminals today (kitty, WezTerm, iTerm2, foot, Windows Terminal…) it says it
    supports synchronized output (mode 2026) when asked, unless `synchronized` is False: the
    app then wraps each frame in begin/end marks, and the terminal shows a frame only once
    all of it arrived. So `text`, `screens` and `changed` follow whole frames, never a frame
    cut where one read of the channel ended (a reader that fell behind gets several frames
    at once, cut at its read size: such a screen mixed old and new rows, e.g. a special-round
    banner over a reveal whose other rows had not moved down yet)."""

    def __init__(self, size: tuple[int, int] = (80, 24), synchronized: bool = True) -> None:
        self.screen = pyte.Screen(*size)
        self.stream = pyte.Stream(self.screen)
        self.raw = bytearray()
        self.screens: list[str] = []  # every distinct whole screen shown, in order
        self.changed = asyncio.Event()
        self.synchronized = synchronized
        self._in_frame = False  # between a frame's begin and end marks
        self._tail = b""  # the last bytes read: a mark may be cut between two reads
        self._shown = ""  # the screen as of the last whole frame
        self.conn: asyncssh.SSHClientConnection | None = None
        self.process: asyncssh.SSHClientProcess | None = None
        self._reader: asyncio.Task | None = None

    async def connect(
        self,
        port: int,
        username: str,
        key: asyncssh.SSHKey | None,
        env: dict[str, str] | None = None,
        window: int | None = None,
    ) -> None:
        """Log in on 127.0.0.1:`port` with `key` (or as a keyboard-interactive guest),
        sending the environment variables `env` (as OpenSSH's SendEnv does, e.g. LANG);
        `window` is the session channel's SSH receive window in bytes (asyncssh's default,
        2 MiB, when None; a small one makes a client that stops reading hold the server
        back soon)."""
        self.conn = await asyncssh.connect(
            "127.0.0.1",
            port,
            username=username,
            known_hosts=None,
            config=None,
            client_keys=[key] if key else None,
            client_factory=None if key else Guest,
            agent_path=None,
        )
        cols, rows = self.screen.columns, self.screen.lines
        self.process = await self.conn.create_process(
            term_type="xterm-256color",
            term_size=(cols, rows),
            encoding=None,
            env=env or {},
            stderr=asyncssh.STDOUT,  # one terminal shows both, as a real one does
            **({} if window is None else {"window": window}),
        )
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process is not None
        while True:
            data = await self.process.stdout.read(65536)
            if not data:
                break
            self.raw += data
            self._follow_frames(data)
            self.stream.feed(data.decode("utf-8", "replace"))
            if self._in_frame:
                continue  # the rest of the frame comes with the next read
            self._shown = "\n".join(self.screen.display)
            if not self.screens or self.screens[-1] != self._shown:
                self.screens.append(self._shown)
            self.changed.set()
        self._in_frame = False
        self._shown = "\n".join(self.screen.display)
        self.changed.set()

    def _follow_frames(self, data: bytes) -> None:
        """Answer the app's question whether synchronized output is supported, and note
        whether `data` ends inside a frame (after a begin mark and before its end mark)."""
        seen = self._tail + data
        if self.synchronized and SYNC_QUERY in seen and SYNC_QUERY not in self._tail:
            assert self.process is not None
            self.process.stdin.write(SYNC_SUPPORTED)
        begin, end = seen.rfind(SYNC_BEGIN), seen.rfind(SYNC_END)
        if begin != end:  # both -1 when neither is there: as before
            self._in_frame = begin > end
        self._tail = seen[-(len(SYNC_QUERY) - 1) :]

    @property
    def text(self) -> str:
        """The screen as of the last whole frame, one line per row."""
        return self._shown

    @property
    def closed(self) -> bool:
        return self._reader is not None and self._reader.done()

    def send(self, *keys: str) -> None:
        """Type `keys`: names of `KEYS` or literal text."""
        assert self.process is not None
        for key in keys:
            self.process.stdin.write(KEYS.get(key, key).encode())

    async def wait_for(self, what: str | Callable[[str], bool], timeout: float = 20.0) -> str:
        """Wait until the screen contains `what` (or `what(screen)` holds); return the screen."""
        check = what if callable(what) else (lambda text: what in text)
        try:
            async with asyncio.timeout(timeout):
                while True:
                    text = self.text
                    if check(text):
                        return text
                    if self.closed:
                        raise AssertionError(f"session closed waiting for {what!r}:\n{text}")
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what!r}:\n{self.text}") from None

    async def ended(self, timeout: float = 10.0) -> int | None:
        """Wait (bounded) until the server ends the session; its exit status (None: none)."""
        assert self._reader is not None and self.process is not None
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        return self.process.exit_status

    async def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            await self.conn.wait_closed()
        if self._reader is not None:
            self._reader.cancel()


async def create_three_seats_one_bot(term: Terminal) -> None:
    """In the create dialog (`Create a table` shown): seats 4 -> 3, then bots 2 -> 1 (each
    Select: open, one up, choose), then ctrl+s: the table waits for one more player."""
    for seats, bots in ((3, 2), (3, 1)):
        term.send("tab", "enter")
        await term.wait_for("▲")
        term.send("up", "enter")
        shown = re.compile(rf"Seats\s+{seats} .*Bots\s+{bots} ")
        await term.wait_for(lambda t, shown=shown: shown.search(t) is not None)
    term.send("\x13")  # ctrl+s: create
    await term.wait_for("Waiting for 1 more player")


def find(pattern: str, text: str) -> re.Match | None:
    """The first match of `pattern` in the screen text, line by line."""
    return re.search(pattern, text, re.MULTILINE)


async def until(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Wait (bounded) for `condition`, which no event announces (an object being freed, a
    buffer filling): poll it, collecting garbage between looks."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        gc.collect()
        await asyncio.sleep(0.02)
