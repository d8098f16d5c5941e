"""A connection's handle on the lobby actor (STYLE.md item 4).

One `LobbySession` per connection, made by `Lobby.connect`. Commands go into the lobby's
inbox without waiting; events come back through this session's own bounded outbox of
encoded bytes, which only the lobby fills and only this session drains. Imports neither
textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from perudo_ssh import protocol


class LobbySession:
    """A session's handle on the lobby (one per connection).

    `name` is the requested name until `Welcome` arrives, then the unique name the lobby
    gave. `send` never blocks; `next_event` waits for the next event. Once the lobby has
    ended the session (`Goodbye`), `next_event` returns that `Goodbye` again at once, so a
    reader loop cannot hang on a dead session.
    """

    def __init__(
        self,
        sid: int,
        name: str,
        outbox: asyncio.Queue[bytes],
        post: Callable[[object], None],
        fingerprint: str | None = None,
    ) -> None:
        self.id = sid
        self.name = name
        self.fingerprint = fingerprint
        self.outbox = outbox
        self._post = post
        self._closed = False
        self._goodbye: protocol.Goodbye | None = None

    @property
    def closed(self) -> bool:
        """True once closed by either side; commands sent then are dropped."""
        return self._closed

    def send(self, command: protocol.Command) -> None:
        """Put `command` into the lobby inbox; never blocks. Ignored once closed."""
        if not self._closed:
            self._post(FromSession(self.id, command))

    async def next_event(self) -> protocol.Event:
        """The next event for this session, decoded from its outbox."""
        if self._goodbye is not None and self.outbox.empty():
            return self._goodbye
        event = protocol.decode_event(await self.outbox.get())
        match event:
            case protocol.Welcome(name=name):
                self.name = name
            case protocol.Goodbye():
                self._goodbye = event
                self._closed = True
        return event

    def close(self) -> None:
        """Disconnect from the lobby (a seat follows the leave rule); idempotent."""
        if not self._closed:
            self._closed = True
            self._post(Disconnected(self.id))

    # ---- the lobby actor's side ----------------------------------------------------------

    def offer(self, data: bytes) -> bool:
        """Put an encoded event into the outbox without waiting; False when it is full."""
        try:
            self.outbox.put_nowait(data)
        except asyncio.QueueFull:
            return False
        return True

    def end(self, reason: str, args: protocol.Args | None = None) -> None:
        """The lobby ends this session: what was not read is dropped, `Goodbye(reason, args)`
        (`reason` an English message id marked `N_`) is all that is left to read, and
        commands sent from now on are ignored."""
        while not self.outbox.empty():
            self.outbox.get_nowait()
        goodbye = protocol.Goodbye(reason=reason, args=dict(args or {}))
        self.outbox.put_nowait(protocol.encode(goodbye))
        self._closed = True


@dataclass(frozen=True, slots=True)
class FromSession:
    """Inbox message: `command` from session `sid` (not checked yet: anything may come),
    posted at `at` (`time.monotonic()` seconds: the start of its broadcast latency)."""

    sid: int
    command: object
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class Disconnected:
    """Inbox message: session `sid` closed its connection."""

    sid: int
