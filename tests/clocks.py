"""A clock for tests: monotonic seconds that move only when the test moves them."""

from __future__ import annotations


class Clock:
    """A monotonic clock moved by hand: call it for `now` (seconds, 1000.0 unless given)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
