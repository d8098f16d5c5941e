"""The bus's one small interface (issue 12): subjects, messages of bytes, request and reply.

A `Bus` carries opaque bytes (msgspec-encoded by its users) between the lobby process and
the front processes. It promises what NATS promises and no more:

- messages one publisher sends on one subject reach each subscriber in the order sent;
- each subscription's handler runs for one message at a time, in that order;
- a message may be lost when a connection breaks (at most once): its users resynchronise
  (`perudo_ssh.front.remote`), they never assume delivery;
- `request` waits for one reply, or raises `BusTimeout`.

Subjects are dot-separated names matched exactly (no wildcards are used). Transports:
`perudo_ssh.bus.memory.MemoryBus` (one process: tests, and `perudo-ssh serve`'s records)
and `perudo_ssh.bus.nats_bus.NatsBus` (processes and machines). Imports neither textual nor
asyncssh.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable

Handler = Callable[[bytes], Awaitable[None]]
"""What a subscription runs for each message: its bytes."""
Responder = Callable[[bytes], Awaitable[bytes]]
"""What a served subject runs for each request: its bytes in, the reply's bytes out."""
StateListener = Callable[[str], None]
"""Told the bus's connection state as it changes: "disconnected", "reconnected"."""


class BusError(Exception):
    """The bus could not carry a message (not connected, closed, a message too large)."""


class BusTimeout(BusError):
    """No reply came to a request in time (nobody serves the subject, or it is slow)."""


class Subscription(abc.ABC):
    """A subject being received; `stop` ends it (idempotent)."""

    @abc.abstractmethod
    async def stop(self) -> None:
        """Receive nothing more on this subscription."""


class Bus(abc.ABC):
    """A connection to the bus. `publish` never waits for the receivers; `close` ends every
    subscription and the connection."""

    max_payload: int = 1024 * 1024
    """The largest message, in bytes (NATS's default; a `NatsBus` reads its server's)."""

    def __init__(self) -> None:
        self._listeners: list[StateListener] = []

    @abc.abstractmethod
    async def publish(self, subject: str, data: bytes) -> None:
        """Send `data` on `subject`; raises `BusError` if it cannot be sent (too large, the
        connection closed, or broken with its buffer full)."""

    @abc.abstractmethod
    async def subscribe(self, subject: str, handler: Handler) -> Subscription:
        """Run `handler(data)` for every message published on `subject` from now on."""

    @abc.abstractmethod
    async def serve(self, subject: str, responder: Responder) -> Subscription:
        """Answer every request on `subject` with `await responder(data)`; a responder
        that raises sends no reply (the requester times out; the error is logged)."""

    @abc.abstractmethod
    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        """Send `data` on `subject` and wait up to `timeout` seconds for the one reply;
        raises `BusTimeout` when none comes, `BusError` when it cannot be sent."""

    @abc.abstractmethod
    async def flush(self) -> None:
        """Wait until what was published so far has left this process."""

    @abc.abstractmethod
    async def close(self) -> None:
        """End every subscription and the connection (idempotent)."""

    def on_state(self, listener: StateListener) -> None:
        """Tell `listener` of each change of the connection's state ("disconnected",
        "reconnected"), on the event loop."""
        self._listeners.append(listener)

    def _state(self, state: str) -> None:
        for listener in list(self._listeners):
            listener(state)
