"""The garbage collector, paced for a server of many sessions (issue 10).

Python collects its young generation when the objects made since the last collection,
minus those freed, pass a threshold. A server of Textual apps makes and frees a great
many objects a second: each frame's strips replace those its caches held, which are old
by then, so the count stays low while the young generation fills with fresh, living
strips. At 300 sessions a young collection came every 2-8 s and walked 110,000 objects or
more, freeing almost none: 60-206 ms with the whole server standing still, and each
second-generation one (every fifth) 230-460 ms — what the slowest actions were made of.

`PacedCollector` collects by the clock instead: the young generation every `YOUNG_EVERY`
(about 1 ms each at 300 sessions, 8 at most). What outlives a young collection is almost
never garbage of a cycle: at 300 sessions the young collections found nothing in a minute,
and collecting the middle generation every 2 s found 0-574 objects a minute while each pass
walked the 80,000 objects the young ones had left (rendered strips and segments, kept by
the caches until the next frame of their widget) with the whole server standing still,
35 ms p50 and up to 90. So every `MIDDLE_EVERY` what the young collections left is not
walked but moved out of their way (`gc.freeze()`, which moves lists, walking nothing), for
the whole collection to see: the few cycles among it wait for that one. A whole collection
(`gc.unfreeze()`, then generation 2) walks every object of every session (1-2 s at 300
sessions) and is the only one that frees cycles among old objects; since the widgets of an
ended screen are unlinked when it ends (`perudo_ssh.ssh.release`) it finds little: 3,030
objects after a 300-session ramp, during which a rule of a quarter more memory (as Python's
own of a quarter more long-lived objects) had run eight, the last three of 1.0-1.8 s each.
So it runs by the clock too, as often as it pays: every `FULL_EVERY` at first, twice as
often after one that found `FULL_WORTH` objects or more, half as often after one that found
fewer (between `FULL_EVERY_MIN` and `FULL_EVERY_MAX`). Python's own thresholds
(`perudo_ssh.front.server.COLLECTOR_THRESHOLDS`) stay for the two younger generations, for a burst
that makes objects faster than the clock collects them; its whole collections are left to
the clock.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

YOUNG_EVERY = 0.05
"""Seconds between young collections."""
MIDDLE_EVERY = 2.0
"""Seconds between two moves of what the young collections left out of their way (a young
collection first)."""
FULL_EVERY = 600.0
"""Seconds before the first whole collection; then between `FULL_EVERY_MIN` and
`FULL_EVERY_MAX` as they pay (`FULL_WORTH`)."""
FULL_EVERY_MIN = 60.0
FULL_EVERY_MAX = 3600.0
FULL_WORTH = 10_000
"""Objects a whole collection must find for the next to come sooner."""
NO_AUTOMATIC_FULL = 1_000_000_000
"""Python's third threshold while the clock collects: no whole collection but the clock's."""


class PacedCollector:
    """Collect the garbage by the clock (see the module's text): `step()` every
    `young_every` seconds on the running loop from `start()` until `stop()`.

    `clock` (seconds), `collect` (`gc.collect`: takes a generation 0-2, returns the objects
    found unreachable), `freeze` and `unfreeze` (`gc.freeze`, `gc.unfreeze`: move every
    tracked object out of the collections' way, and back into the oldest generation) are
    Python's unless given (tests)."""

    def __init__(
        self,
        *,
        young_every: float = YOUNG_EVERY,
        middle_every: float = MIDDLE_EVERY,
        full_every: float = FULL_EVERY,
        clock: Callable[[], float] = time.monotonic,
        collect: Callable[[int], int] = gc.collect,
        freeze: Callable[[], None] = gc.freeze,
        unfreeze: Callable[[], None] = gc.unfreeze,
    ) -> None:
        self.young_every = young_every
        self.middle_every = middle_every
        self.full_every = full_every
        """Seconds from the last whole collection to the next (it moves: see the module)."""
        self._clock = clock
        self._collect = collect
        self._freeze = freeze
        self._unfreeze = unfreeze
        self._middle_at = self._full_at = clock()
        self._handle: asyncio.TimerHandle | None = None
        self._thresholds: tuple[int, int, int] | None = None
        self.collections = [0, 0, 0]
        """How many steps of each kind `step` made: young collections, moves (each after a
        young collection), whole collections."""

    def step(self) -> int:
        """Make one step and say which (0, 1 or 2): the whole heap collected, everything
        moved out of the way first undone (`unfreeze`), if `full_every` seconds have passed
        since the last whole one; else a young collection, and if `middle_every` seconds
        have passed since the last move, what it left moved out of the way (`freeze`)."""
        now = self._clock()
        generation = 0
        if now - self._full_at >= self.full_every:
            self._full_at = self._middle_at = now
            generation = 2
        elif now - self._middle_at >= self.middle_every:
            self._middle_at = now
            generation = 1
        if generation == 2:
            self._unfreeze()
            found = self._collect(2)
            if found >= FULL_WORTH:
                self.full_every = max(FULL_EVERY_MIN, self.full_every / 2)
            else:
                self.full_every = min(FULL_EVERY_MAX, self.full_every * 2)
        else:
            self._collect(0)
            if generation == 1:
                self._freeze()
        self.collections[generation] += 1
        return generation

    def start(self) -> None:
        """Collect by the clock on the running loop from now on; Python's own whole
        collections stop (`NO_AUTOMATIC_FULL`). Raises `RuntimeError` if no loop runs."""
        loop = asyncio.get_running_loop()

        def tick() -> None:
            self._handle = loop.call_later(self.young_every, tick)
            self.step()

        self._handle = loop.call_later(self.young_every, tick)
        self._thresholds = gc.get_threshold()
        young, middle, _ = self._thresholds
        gc.set_threshold(young, middle, NO_AUTOMATIC_FULL)

    def stop(self) -> None:
        """Collect no more by the clock; Python's own thresholds as they were, and every
        object moved out of the way back where Python's own collections see it."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
            self._unfreeze()
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None
