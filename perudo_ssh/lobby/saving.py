"""Saving the tables in play after every batch, before anyone is told (issue 5, item 3), and
what a failed save does (issue 11): the tables it held pause until a save works, retried
after `SAVE_RETRY`. Functions of the lobby (`perudo_ssh.lobby.actor`), called on the actor's
turn only. Imports neither textual nor asyncssh."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perudo_ssh import protocol
from perudo_ssh.lobby import flow
from perudo_ssh.lobby.snapshot import save_table
from perudo_ssh.logs import log_event

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SaveRetry:
    """Time to try again a save that failed (`save`): the batch this message ends
    writes what is still unwritten."""


SAVE_RETRY = (0.5, 15.0)
"""After a failed save, the first wait before trying again and the longest, in seconds: the
wait doubles after each failure until a save works."""


async def save(lobby: Lobby) -> bool:
    """Persist the games changed since the last save (`persist`), each under its own save
    key (`Table.save_key`, one per game): a game in play, its snapshot; a game that just
    ended, its last snapshot, which the archive forgets in the transaction that stores the
    game (`GameArchive.game_over`; with no `on_game_over`, forgotten here); a game whose
    table closed before it ended, None. True once all of it is written (or there is
    nothing to write, or no `persist`).

    A failed save (a full disk, a database error: issue 11) loses nothing and shows
    nothing: what it could not write is kept for the next save, which writes it with
    whatever changed since; every table in it joins `unsaved` — it takes no move, its
    timers stop, what it did in the batch is not sent (`broadcast.end_batch`) — and everyone at it
    is told "the server cannot save this game right now; it is paused". A `SaveRetry`
    comes back after `SAVE_RETRY` (doubling); the first save that works resumes them
    (`saving.resume_saved`). False while that has not happened."""
    finishing, lobby._finishing = lobby._finishing, {}
    if lobby.persist is None:
        return True
    changes, lobby._unwritten = lobby._unwritten, {}
    tables: set[int] = set(lobby.unsaved)
    for tid in {**lobby._changed, **dict.fromkeys(finishing)}:
        # a table whose game ended is saved even if it closed in the same batch
        table = finishing.get(tid) or lobby.tables.get(tid)
        saving = lobby._saving.get(tid)
        game = table.log if table is not None else None
        if saving is not None and saving[0] is not game:
            del lobby._saving[tid]  # closed, or back to waiting, before its game ended
            changes[saving[1]] = None
            tables.add(tid)
            saving = None
        if table is None or game is None:
            continue
        if table.status == "playing" and saving is None:
            saving = (game, next(lobby._save_keys))
            lobby._saving[tid] = saving
            table.save_key = saving[1]
        if saving is None:
            continue
        try:
            snapshot = save_table(table, paused=tid in lobby.paused)
        except Exception:
            log.exception("lobby: could not snapshot table %d", tid)
            continue
        changes[saving[1]] = snapshot
        tables.add(tid)
        if table.status == "over" and tid in finishing:
            del lobby._saving[tid]  # the archive forgets it once the game is stored
            if lobby.on_game_over is None:
                changes[saving[1]] = None
    if not changes:
        return True
    try:
        await lobby.persist(changes)
    except Exception as error:
        lobby._unwritten = changes
        lobby.meter.saved(False)
        save_failed(lobby, tables, error)
        return False
    lobby.meter.saved(True)
    lobby._retry_wait = SAVE_RETRY[0]
    return True


def save_failed(lobby: Lobby, tables: set[int], error: Exception) -> None:
    """A save of `tables` failed with `error`: pause the ones not paused for it yet, tell
    everyone at them, log it, and have the save tried again (`saving.save`)."""
    newly = sorted(tid for tid in tables - lobby.unsaved if tid in lobby.tables)
    lobby.unsaved |= tables
    log_event(
        log,
        "save_failed",
        level=logging.ERROR if newly or lobby._retry is None else logging.WARNING,
        tables=sorted(tables),
        paused=newly,
        exc=f"{type(error).__name__}: {error}",
    )
    message = protocol.encode(protocol.Notice(text=protocol.SAVE_PAUSED))
    for tid in newly:
        flow.cancel_timer(lobby, tid)
        for sid in lobby.tables[tid].sessions():
            if sid in lobby._clients:
                lobby.deliver(lobby._clients[sid], message)  # untagged: sent now
    if lobby._retry is None:
        loop = asyncio.get_running_loop()
        lobby._retry = loop.call_later(lobby._retry_wait, lobby._inbox.put_nowait, SaveRetry())
        lobby._retry_wait = min(lobby._retry_wait * 2, SAVE_RETRY[1])


def resume_saved(lobby: Lobby) -> None:
    """A save worked after some failed: the `unsaved` tables are safe again. Their held
    notices go out, they are told, and they move on (`_after_change`: timers restarted,
    each sent afresh to everyone at it)."""
    resumed, lobby.unsaved = sorted(lobby.unsaved), set()
    held, lobby._held = lobby._held, []
    for client, data in held:
        lobby.deliver(client, data)
    if lobby._retry is not None:
        lobby._retry.cancel()
        lobby._retry = None
    log_event(log, "save_resumed", tables=resumed)
    for tid in resumed:
        table = lobby.tables.get(tid)
        if table is not None:
            lobby.notice(table, protocol.SAVE_RESUMED)
            lobby._guarded(lobby.after_change, table)


# ---- delivery ------------------------------------------------------------------------
