"""`PacedCollector`: the garbage collected by the clock while serving (issue 10)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections.abc import Iterator

from perudo_ssh.collector import (
    FULL_EVERY_MAX,
    FULL_EVERY_MIN,
    FULL_WORTH,
    NO_AUTOMATIC_FULL,
    PacedCollector,
)
from tests.clocks import Clock


def test_young_each_step_moved_aside_every_second_the_whole_heap_as_often_as_it_pays() -> None:
    clock, asked, found = Clock(100.0), [], [0]

    def collect(generation: int) -> int:
        asked.append(generation)
        return found[0] if generation == 2 else 0

    collector = PacedCollector(young_every=0.05, middle_every=1.0, full_every=600.0,
                               clock=clock, collect=collect,
                               freeze=lambda: asked.append("freeze"),
                               unfreeze=lambda: asked.append("unfreeze"))  # fmt: skip
    for k in range(1, 20):
        clock.now = 100 + k / 20
        collector.step()
    assert asked == [0] * 19  # 0.95 s: young ones only
    asked.clear()
    clock.now = 101.0
    assert collector.step() == 1  # a second since the start: a young one, then moved aside
    assert asked == [0, "freeze"]
    clock.now = 101.5
    assert collector.step() == 0
    clock.now = 699.99
    assert collector.step() == 1
    asked.clear()
    clock.now = 700.0
    assert collector.step() == 2  # 600 s since the start: all of it back, then collected
    assert asked == ["unfreeze", 2]
    assert collector.full_every == 1200.0  # found nothing: the next comes later
    clock.now = 700.5
    assert collector.step() == 0  # the next move counts from the whole one too
    clock.now = 1900.0
    found[0] = FULL_WORTH  # one that pays: the next comes sooner
    assert collector.step() == 2 and collector.full_every == 600.0
    assert collector.collections == [21, 2, 2]
    for _ in range(5):  # each pays: 300, 150, 75, then no sooner than a minute
        clock.now += collector.full_every
        assert collector.step() == 2
    assert collector.full_every == FULL_EVERY_MIN
    found[0] = 0
    collector.full_every = FULL_EVERY_MAX
    clock.now += FULL_EVERY_MAX
    assert collector.step() == 2  # found nothing again, and no later than an hour:
    assert collector.full_every == FULL_EVERY_MAX


class Node:
    other: object = None


def cycle() -> tuple[list[Node], weakref.ref[Node]]:
    """Two nodes that hold each other, also held by the list returned (clear it to leave
    them to the cycle alone), and a weak reference to one."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return [a, b], weakref.ref(a)


@contextlib.contextmanager
def only_the_collector() -> Iterator[None]:
    """No collection but the collector's meanwhile; after, nothing left moved aside."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def test_what_is_moved_aside_no_young_collection_walks_and_a_whole_one_frees() -> None:
    """Python's own `gc.freeze`: a cycle moved aside outlives young collections (they no
    longer walk it) and goes at the next whole collection."""
    collector = PacedCollector(middle_every=0.0, full_every=3600.0)
    with only_the_collector():
        held, gone = cycle()
        assert collector.step() == 1  # a young collection (they live), then moved aside
        assert gc.get_freeze_count() > 0
        held.clear()
        assert collector.step() == 1
        assert gone() is not None  # young ones do not see it
        collector.full_every = 0.0
        assert collector.step() == 2
        assert gone() is None and gc.get_freeze_count() == 0


def test_a_young_collection_frees_a_cycle_made_since_the_last() -> None:
    collector = PacedCollector()
    with only_the_collector():
        held, gone = cycle()
        held.clear()
        assert gone() is not None  # held by the cycle alone
        assert collector.step() == 0
        assert gone() is None


async def test_it_collects_on_the_running_loop_until_stopped() -> None:
    """Started, it collects by the clock and Python makes no whole collection of its own;
    stopped, it collects no more, Python's thresholds are as they were and nothing is left
    moved aside."""
    collected: list[int] = []
    enough = asyncio.Event()

    def collect(generation: int) -> int:
        collected.append(generation)
        if len(collected) == 3:
            enough.set()
        return 0

    before = gc.get_threshold()
    unfrozen: list[bool] = []
    collector = PacedCollector(young_every=0.001, collect=collect, freeze=lambda: None,
                               unfreeze=lambda: unfrozen.append(True))  # fmt: skip
    collector.start()
    try:
        assert gc.get_threshold() == (*before[:2], NO_AUTOMATIC_FULL)
        async with asyncio.timeout(10):
            await enough.wait()
    finally:
        collector.stop()
    assert gc.get_threshold() == before
    assert unfrozen == [True]  # what was moved aside is Python's own collections' again
    made = len(collected)
    assert made >= 3
    await asyncio.sleep(0.01)  # ten periods: none made after stop()
    assert len(collected) == made
