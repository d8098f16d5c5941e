"""The lobby process (issue 12): the one lobby actor, the store, bots, timers, persistence,
serving the front processes over NATS (`perudo-ssh lobby --nats URL`).

`prepare_lobby` readies a `Lobby` with its archive, as one process (`perudo-ssh serve`) and
the lobby process both do. `run_lobby` is the lobby process itself: it attaches the fronts'
sessions (`LobbyHost`), answers their calls for stored data (`serve_records`) and the bans
(`LobbyHost`), and on SIGTERM or SIGINT stops cleanly: every session is told, every game
saved and every finished game written, then it returns (exit 0). Imports neither textual nor
asyncssh.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from perudo_ssh.bus.nats_bus import NatsBus, NatsOptions
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.lobby.actor import Lobby
from perudo_ssh.lobby.archive import GameArchive, shown_ratings, update_ratings
from perudo_ssh.lobby.host import LobbyHost
from perudo_ssh.lobby.moderation import AdminList
from perudo_ssh.lobby.notes import watch_notes
from perudo_ssh.metrics import Metered
from perudo_ssh.records_bus import serve_records
from perudo_ssh.stopping import stop_signals
from perudo_ssh.store import DEFAULT_PATH, Store

log = logging.getLogger(__name__)


async def prepare_lobby(lobby: Lobby, archive: GameArchive | None) -> None:
    """Ready `lobby` (not started yet) with `archive` (None: nothing stored): it stores every
    game the lobby finishes (unless the lobby already has an `on_game_over`) and, when it rates
    them (`update_ratings`), the lobby shows the ratings and tells a table what its game did to
    them (issue 13); the lobby's moderation uses the archive's store (unless it has one), the
    bans and mutes in force loaded; the games left unfinished by the last run are restored and
    every accepted move is saved before it is shown (unless the lobby has a `persist`; issue 5,
    item 3). Raises what the store raises."""
    if archive is None:
        return
    store = archive.store
    if lobby.on_game_over is None:
        lobby.on_game_over = archive.game_over
        if archive.after_game is update_ratings:
            lobby.ratings = await shown_ratings(store)
            archive.on_rated = lobby.rated
    moderation = lobby.moderation
    if moderation.store is None:
        moderation.store = store
        await moderation.load()
    if lobby.persist is None:
        lobby.restore(await store.unfinished_tables())
        lobby.persist = store.save_tables


async def run_lobby(
    nats: NatsOptions,
    db: Path | None = DEFAULT_PATH,
    config: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
    prefix: str = "perudo",
    stop: asyncio.Event | None = None,
    metrics: str | None = None,
) -> None:
    """Run the lobby process until SIGTERM or SIGINT (or `stop` is set), then stop cleanly
    (the module docstring). `db` is the database file (created on first start), `config` the
    configuration whose `[admins]` are the admins (read again when it changes; None: no
    admins), `limits` the server's: its session limits are counted here over every front
    (`LobbyHost`); its `output_queue_events` bounds nothing here (each front bounds its own
    sessions). Raises `StoreError` (the database cannot be used),
    `BusError` (NATS cannot be reached within `NatsBus.connect`'s wait) before serving.
    `metrics` is the `HOST:PORT` of its Prometheus metrics (None: none, or its supervisor's:
    `perudo_ssh.metrics`; ValueError if malformed)."""
    admins = AdminList(config) if config is not None else None
    store = await Store.open(db or DEFAULT_PATH, serving=True)
    archive = GameArchive(store, after_game=update_ratings)
    log.info("database %s", store.path)
    lobby = Lobby(outbox_size=limits.output_queue_events)
    bus: NatsBus | None = None
    host: LobbyHost | None = None
    metered: Metered | None = None
    notes: asyncio.Task[None] | None = None
    try:
        metered = Metered.start(lobby, metrics)
        await prepare_lobby(lobby, archive)
        bus = await NatsBus.connect(nats)
        lobby.start()
        if config is not None:
            notes = asyncio.get_running_loop().create_task(watch_notes(lobby, config))
        host = LobbyHost(
            lobby,
            bus,
            prefix=prefix,
            admins=admins,
            joined=archive.session_joined,
            limits=limits,
        )
        await host.start()
        await serve_records(store, bus, prefix, banned_keys=lobby.moderation.banned_keys)
        async with stop_signals(stop) as stopping:
            log.info("perudo-ssh lobby serving on %s (subjects %s.*)", nats.url, prefix)
            await stopping.wait()
        log.info("stopping")
    finally:
        try:
            await lobby.stop()  # every session told, every game saved
            if host is not None:
                await host.stop()  # the goodbyes go out to the fronts
            await archive.drain()
        finally:
            if notes is not None:
                notes.cancel()
            if metered is not None:
                metered.stop()
            if bus is not None:
                await bus.close()
            await store.close()
