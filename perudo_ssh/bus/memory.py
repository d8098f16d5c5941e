"""The bus inside one process (issue 12): the same interface as NATS, no network.

`perudo-ssh serve` runs its records over it (`perudo_ssh.records`), and the tests run the
whole lobby-and-fronts relay over it without a nats-server. Each subscription is a task
draining its own queue, so handlers run one message at a time, in order, as NATS's do; a
subscription whose queue is full (`PENDING`) loses the message (logged), as NATS drops a
slow consumer's. Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

from perudo_ssh.bus.base import Bus, BusError, BusTimeout, Handler, Responder, Subscription

log = logging.getLogger(__name__)

PENDING = 65_536
"""Most messages waiting for one subscription's handler (nats-py's default)."""


class _MemorySubscription(Subscription):
    def __init__(self, bus: MemoryBus, subject: str, handler: Handler) -> None:
        self.bus = bus
        self.subject = subject
        self.handler = handler
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=PENDING)
        self.task = asyncio.get_running_loop().create_task(self._drain(), name=f"bus {subject}")

    async def _drain(self) -> None:
        while True:
            data = await self.queue.get()
            try:
                await self.handler(data)
            except Exception:
                log.exception("bus: handler of %s failed", self.subject)

    def deliver(self, data: bytes) -> None:
        try:
            self.queue.put_nowait(data)
        except asyncio.QueueFull:
            log.error("bus: subscriber of %s too slow: a message lost", self.subject)

    async def stop(self) -> None:
        subscribers = self.bus._subjects.get(self.subject)
        if subscribers is not None and self in subscribers:
            subscribers.remove(self)
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


class MemoryBus(Bus):
    """A bus whose subscribers are all in this process (`perudo_ssh.bus.base.Bus`)."""

    def __init__(self) -> None:
        super().__init__()
        self._subjects: dict[str, list[_MemorySubscription]] = {}
        self._inboxes = itertools.count(1)
        self._closed = False
        self._answering: set[asyncio.Task[None]] = set()

    async def publish(self, subject: str, data: bytes) -> None:
        """Hand `data` to every subscriber of `subject` (none: it is gone, as on NATS)."""
        if self._closed:
            raise BusError("bus closed")
        if len(data) > self.max_payload:
            raise BusError(f"message of {len(data)} bytes over {self.max_payload}")
        for subscription in self._subjects.get(subject, ()):
            subscription.deliver(bytes(data))

    async def subscribe(self, subject: str, handler: Handler) -> Subscription:
        """Run `handler` for each message on `subject` (`Bus.subscribe`)."""
        if self._closed:
            raise BusError("bus closed")
        subscription = _MemorySubscription(self, subject, handler)
        self._subjects.setdefault(subject, []).append(subscription)
        return subscription

    async def serve(self, subject: str, responder: Responder) -> Subscription:
        """Answer requests on `subject` (`Bus.serve`), each in its own task: a request is
        its reply subject, a newline, then its bytes."""

        async def answer(message: bytes) -> None:
            reply, _, data = message.partition(b"\n")
            try:
                answer = await responder(data)
            except Exception:
                log.exception("bus: responder of %s failed", subject)
                return
            await self.publish(reply.decode(), answer)

        async def receive(message: bytes) -> None:
            # each request answered in its own task: a slow one holds up no other
            task = asyncio.get_running_loop().create_task(answer(message))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)

        return await self.subscribe(subject, receive)

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        """One request and its reply (`Bus.request`)."""
        if not self._subjects.get(subject):
            raise BusTimeout(f"nobody serves {subject}")
        inbox = f"_inbox.{next(self._inboxes)}"
        reply: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        async def got(answer: bytes) -> None:
            if not reply.done():
                reply.set_result(answer)

        subscription = await self.subscribe(inbox, got)
        try:
            await self.publish(subject, inbox.encode() + b"\n" + data)
            try:
                async with asyncio.timeout(timeout):
                    return await reply
            except TimeoutError:
                raise BusTimeout(f"no reply on {subject} in {timeout} s") from None
        finally:
            await subscription.stop()

    async def flush(self) -> None:
        """Nothing to wait for: a published message is in its subscribers' queues."""

    async def close(self) -> None:
        """Stop every subscription; publishing then raises `BusError`."""
        self._closed = True
        for subscriptions in list(self._subjects.values()):
            for subscription in list(subscriptions):
                await subscription.stop()
        self._subjects.clear()
