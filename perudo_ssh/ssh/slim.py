"""What every widget of every app holds, made when first needed (issue 10: memory a session).

Each Textual message pump (the app, each screen, each widget: ~60 a session at a table) makes
three structures it mostly never uses: a `WeakSet` of its timers (~0.8 KB with its inner
set, list and callback; one widget in ten ever has a timer), and two `asyncio.Event`s (its
queue's ready signal and its mounted signal), each with a `deque` for waiters (~0.6 KB
apiece) that only an `await event.wait()` fills. A loaded server held ~160 such deques and
~60 weak sets a session, ~0.11 MB of its ~2.3 MB.

`install_slim_pumps` (from `isolation.install_drawing_savers`) swaps in:

* `SlimQueue` for a pump's message queue: a list, and one future while its reader waits;
* `SlimEvent` for its mounted signal: an `asyncio.Event` whose waiters' deque exists only
  while someone waits;
* `LazyTimers`, a pump's timers as a `WeakSet` made on the first `add()`.

Behaviour is asyncio's and Textual's: the same methods answer the same.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterator
from functools import cached_property
from typing import Any, Generic, Literal, TypeVar
from weakref import WeakSet

import textual.message_pump
from textual.message_pump import MessagePump
from textual.timer import Timer

T = TypeVar("T")


class SlimEvent(asyncio.Event):
    """`asyncio.Event` without a waiters' deque until someone waits (`wait`); `set`, `clear`,
    `is_set` and `wait` behave as asyncio's."""

    def __init__(self) -> None:
        self._waiters = ()  # type: ignore[assignment]  # a deque while anyone waits
        self._value = False

    async def wait(self) -> Literal[True]:
        """As `asyncio.Event.wait`: True once the event is set."""
        if self._value:
            return True
        if isinstance(self._waiters, tuple):
            self._waiters = collections.deque()
        try:
            return await super().wait()
        finally:
            # each waiter is in the deque from before its await until its own removal in
            # asyncio's `finally`, so an empty deque has no waiter left: let it go
            if not self._waiters:
                self._waiters = ()  # type: ignore[assignment]


class SlimQueue(Generic[T]):
    """Textual's message queue (`textual._queue.Queue`: one pump's messages, read by the
    pump's own task) in a list, woken by one future made while the reader waits: no deque
    and no event with its own deque for every widget. Same methods, same order (first in,
    first out); a queue is a few messages long, so `pop(0)` is cheap."""

    __slots__ = ("values", "_waiter")

    def __init__(self) -> None:
        self.values: list[T] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, value: T) -> None:
        """Add `value` at the end; wake the reader."""
        self.values.append(value)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def qsize(self) -> int:
        """How many values wait."""
        return len(self.values)

    def empty(self) -> bool:
        """Whether none waits."""
        return not self.values

    def task_done(self) -> None:
        """As Textual's: nothing to count."""

    async def get(self) -> T:
        """The first value, waiting for one if there is none."""
        while not self.values:
            waiter = self._waiter
            if waiter is None or waiter.done():
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        return self.values.pop(0)

    def get_nowait(self) -> T:
        """The first value; `asyncio.QueueEmpty` if there is none."""
        if not self.values:
            raise asyncio.QueueEmpty()
        return self.values.pop(0)


class LazyTimers:
    """A pump's timers (Textual keeps a `WeakSet` of them to stop them on close): the set is
    made on the first `add`. Iterating, `len`, truth and `clear` as a `WeakSet`'s."""

    __slots__ = ("_timers",)

    def __init__(self) -> None:
        self._timers: WeakSet[Timer] | None = None

    def add(self, timer: Timer) -> None:
        """Keep `timer` (weakly)."""
        if self._timers is None:
            self._timers = WeakSet()
        self._timers.add(timer)

    def clear(self) -> None:
        """Forget every timer."""
        if self._timers is not None:
            self._timers.clear()

    def __iter__(self) -> Iterator[Timer]:
        return iter(()) if self._timers is None else iter(self._timers)

    def __len__(self) -> int:
        return 0 if self._timers is None else len(self._timers)


def _slim_mounted_event(self: MessagePump) -> asyncio.Event:
    return SlimEvent()


def _lazy_weak_set(*args: Any) -> Any:
    # message_pump's only WeakSet is a pump's timers (made with no argument)
    return LazyTimers() if not args else WeakSet(*args)


def install_slim_pumps() -> None:
    """Give every pump made from now on a `SlimQueue`, a `SlimEvent` and `LazyTimers` (see the
    module docstring). Idempotent."""
    if textual.message_pump.Queue is SlimQueue:
        return
    textual.message_pump.Queue = SlimQueue  # type: ignore[misc,assignment]
    mounted = cached_property(_slim_mounted_event)
    mounted.__set_name__(MessagePump, "_mounted_event")
    MessagePump._mounted_event = mounted  # type: ignore[assignment,method-assign]
    textual.message_pump.WeakSet = _lazy_weak_set  # type: ignore[misc,assignment]
