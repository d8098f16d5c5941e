"""`perudo_ssh.ssh.slim` (issue 10, memory a session): the slim queue, event and timer set
answer as Textual's and asyncio's, and a whole app runs on them holding no idle deque."""

from __future__ import annotations

import asyncio
import collections
import gc

import pytest
from textual.app import App, ComposeResult
from textual.message_pump import MessagePump
from textual.widgets import Input, Static

from perudo_ssh.ssh.slim import LazyTimers, SlimEvent, SlimQueue, install_slim_pumps

pytestmark = pytest.mark.timeout(30)


async def test_the_queue_gives_values_first_in_first_out_and_wakes_its_reader() -> None:
    queue: SlimQueue[int] = SlimQueue()
    assert queue.empty() and queue.qsize() == 0
    with pytest.raises(asyncio.QueueEmpty):
        queue.get_nowait()
    reader = asyncio.create_task(queue.get())
    await asyncio.sleep(0)  # the reader waits
    assert not reader.done()
    queue.put_nowait(1)
    queue.put_nowait(2)
    assert await reader == 1
    assert queue.qsize() == 1 and not queue.empty()
    queue.put_nowait(3)
    assert [await queue.get(), queue.get_nowait()] == [2, 3]
    assert queue.empty()


async def test_a_cancelled_reader_leaves_the_queue_working() -> None:
    queue: SlimQueue[str] = SlimQueue()
    reader = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    queue.put_nowait("after")
    assert await queue.get() == "after"


async def test_the_event_wakes_every_waiter_and_keeps_no_deque_after() -> None:
    event = SlimEvent()
    assert not event.is_set() and event._waiters == ()
    waiters = [asyncio.create_task(event.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert isinstance(event._waiters, collections.deque) and len(event._waiters) == 3
    waiters[0].cancel()  # one gives up: the others still wait
    await asyncio.sleep(0)
    assert len(event._waiters) == 2
    event.set()
    assert await asyncio.gather(*waiters[1:]) == [True, True]
    assert event._waiters == ()
    assert await event.wait() is True  # set: at once
    event.clear()
    assert not event.is_set()


def test_the_timers_are_made_on_the_first_and_held_weakly() -> None:
    timers = LazyTimers()
    assert not timers and len(timers) == 0 and list(timers) == []
    timers.clear()

    class Timer:
        pass

    kept = Timer()
    timers.add(kept)  # type: ignore[arg-type]
    timers.add(Timer())  # type: ignore[arg-type]  # no other reference: gone
    gc.collect()
    assert list(timers) == [kept] and timers
    timers.clear()
    assert len(timers) == 0


class Form(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("hello", id="greeting")
        yield Input(id="name")


async def test_an_app_runs_on_slim_pumps_with_no_idle_deque() -> None:
    install_slim_pumps()
    install_slim_pumps()  # idempotent
    app = Form()
    async with app.run_test() as pilot:
        await pilot.press("a", "b")
        await pilot.pause()
        assert app.query_one(Input).value == "ab"  # keys reached the input through its queue
        pumps = [app.screen, *app.screen.walk_children()]
        assert all(isinstance(pump._message_queue, SlimQueue) for pump in pumps)
        idle = [pump for pump in pumps if isinstance(pump, MessagePump)]
        for pump in idle:
            assert isinstance(pump._timers, LazyTimers)
            assert pump._mounted_event.is_set()
            assert pump._mounted_event._waiters == ()  # mounted, awaited, let go
        input_timers = list(app.query_one(Input)._timers)
        assert input_timers  # the cursor's blink: a timer kept in the lazy set
