"""Waiting for the signal to stop, as every long-running process of the server does (the
lobby and front processes of issue 12). Imports neither textual nor asyncssh."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator


@contextlib.asynccontextmanager
async def stop_signals(stop: asyncio.Event | None = None) -> AsyncIterator[asyncio.Event]:
    """Within the block, SIGINT and SIGTERM set the event given (a new one when None), which
    is yielded; outside it the signals are the process's own again (a second one, during the
    clean stop that follows, is not swallowed)."""
    event = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, event.set)
    try:
        yield event
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
