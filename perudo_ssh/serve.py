"""The game server: one lobby actor, one SSH listener, one Textual app per connection.

This is the only module that joins the lobby (`perudo_ssh.lobby`), the front
(`perudo_ssh.front.server`: the SSH layer and the screens) and the store
(`perudo_ssh.store`, through the lobby's archive) in one process; with several processes
`perudo_ssh.lobby.process` and `perudo_ssh.front.process` join them over the bus.

With a store, a key's session reaches it as `PerudoApp.store` and `PerudoApp.account` (None
for a guest), set by the app factory here; every finished game is stored by the
`GameArchive`, which then calls `update_ratings`.

Moderation (issue 4, item 6): whether a session is an admin is decided here, from its key and
the configuration's admins (`AdminList`), and handed to the lobby; the lobby's `Moderation`
is loaded from the store at start, and the SSH server refuses the keys and addresses it bans.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import asyncssh

from perudo_ssh.collector import PacedCollector
from perudo_ssh.front.server import (
    SHUTDOWN_GRACE,
    Connect,
    close_connections,
    start_front,
    tune_collector,
)
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.archive import GameArchive, update_ratings
from perudo_ssh.lobby.moderation import AdminList
from perudo_ssh.lobby.notes import watch_notes
from perudo_ssh.lobby.process import prepare_lobby
from perudo_ssh.metrics import Metered
from perudo_ssh.records import Account
from perudo_ssh.session import LobbySession
from perudo_ssh.ssh.server import Connections
from perudo_ssh.store import DEFAULT_PATH, Store

log = logging.getLogger(__name__)


async def start_game_server(
    host: str = "127.0.0.1",
    port: int = 2222,
    host_key_dir: Path = Path("host_keys"),
    lobby: Lobby | None = None,
    archive: GameArchive | None = None,
    admins: AdminList | None = None,
    limits: Limits = DEFAULT_LIMITS,
    connections: Connections | None = None,
    banner: str | None = None,
) -> tuple[asyncssh.SSHAcceptor, Lobby]:
    """Start `lobby` (a new one by default) and an SSH listener on `host:port` whose
    sessions each run a `screens.app.PerudoApp` attached to it, in the language of the
    client's locale (`Login.lang`, English when it sent none). Port 0 picks a free port
    (read it from `acceptor.get_port()`).

    With an `archive`, its store knows the players (keys are accounts, guests `guest-N`,
    the exec commands run) and it stores every game the lobby finishes (unless the lobby
    already has an `on_game_over`); the games left unfinished by the last run are restored
    and every accepted move is saved there before it is shown (unless the lobby already has
    a `persist`; issue 5, item 3); the caller closes the store after stopping the lobby and
    `archive.drain()`. The lobby's moderation then uses that store too (unless it has one):
    the bans and mutes in force are loaded before listening (raises what the store raises).
    With an archive that rates games (`update_ratings`), the lobby shows every account's
    rating beside its name and tells a table what its game did to them (issue 13).

    `admins` says which keys are admins' (none by default); bans are refused at login.

    `limits` (`perudo_ssh.limits.Limits`) are the SSH layer's, each app's lobby idle timeout,
    and the outbox size of a new lobby (a lobby given keeps its own `outbox_size`). The
    open SSH connections are kept in `connections` (`perudo_ssh.ssh.server.start_server`;
    a new one when None): pass one to close them when stopping. `banner` is sent to clients
    before their login (None: none)."""
    if lobby is None:
        lobby = Lobby(outbox_size=limits.output_queue_events)
    await prepare_lobby(lobby, archive)
    lobby.start()
    store = archive.store if archive is not None else None
    acceptor = await start_front(
        local_connect(lobby, archive, admins),
        store,
        lobby.moderation,
        host,
        port,
        host_key_dir,
        limits,
        connections,
        banner=banner,
    )
    return acceptor, lobby


def local_connect(
    lobby: Lobby, archive: GameArchive | None = None, admins: AdminList | None = None
) -> Connect:
    """How the SSH layer attaches a session to `lobby` in this process: `Lobby.connect`, the
    admins decided from the key by `admins` (none when None), and the session's account told
    to `archive` (its games are the account's)."""

    def connect(
        name: str,
        fingerprint: str | None = None,
        *,
        admin: bool = False,
        address: str | None = None,
        account: Account | None = None,
        bot_account: bool = False,
    ) -> LobbySession:
        session = lobby.connect(
            name,
            fingerprint,
            admin=admins is not None and admins.is_admin(fingerprint),
            address=address,
            account_id=account.id if account is not None else None,
            bot_account=bot_account,
        )
        if archive is not None:
            try:
                archive.session_joined(session, account)
            except BaseException:
                session.close()
                raise
        return session

    return connect


async def serve_forever(
    host: str,
    port: int,
    host_key_dir: Path,
    db: Path | None = DEFAULT_PATH,
    config: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
    metrics: str | None = None,
    banner: str | None = None,
) -> None:
    """Run the server until SIGINT or SIGTERM, then close sessions and stop cleanly: tell
    every session (the lobby's Goodbye), give the apps `SHUTDOWN_GRACE` seconds to show it
    and end, close every SSH connection still open (waiting up to `CLOSE_TIMEOUT` for
    them), then write every finished game and close the store — whatever went wrong in the
    steps before — and return (the process exits 0).

    `db` is the database file (created on first start; `perudo_ssh.store`); `config` the
    configuration file whose `[admins]` are the admins (read again when it changes; None:
    no admins); `limits` the server's limits (`perudo_ssh.limits.Limits`); `metrics` the
    `HOST:PORT` of its Prometheus metrics (None: none; `perudo_ssh.metrics`); `banner` the
    text clients show before their login (None: none). The configuration's `[server]` name
    and message of the day are shown in the lobby, read again when the file changes
    (`perudo_ssh.lobby.notes`). Raises
    `StoreError` if the database cannot be used, `ConfigError` if the configuration is
    malformed, ValueError if `metrics` is, `OSError` if a port is taken, before serving."""
    admins = AdminList(config) if config is not None else None
    store = await Store.open(db or DEFAULT_PATH, serving=True)
    archive = GameArchive(store, after_game=update_ratings)
    log.info("database %s", store.path)
    connections = Connections(limits)
    try:
        acceptor, lobby = await start_game_server(
            host,
            port,
            host_key_dir,
            archive=archive,
            admins=admins,
            limits=limits,
            connections=connections,
            banner=banner,
        )
        try:
            metered = Metered.start(lobby, metrics)
        except BaseException:
            acceptor.close()
            await lobby.stop()
            raise
    except BaseException:
        await store.close()
        raise
    tune_collector()
    collector = PacedCollector()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)  # before saying so: a stop may come at once
    log.info(
        "perudo-ssh listening on %s:%d — connect with: ssh -p %d %s",
        host,
        acceptor.get_port(),
        acceptor.get_port(),
        host,
    )
    collector.start()
    notes = None if config is None else loop.create_task(watch_notes(lobby, config))
    try:
        await stop.wait()
        log.info("stopping")
        acceptor.close()
        try:
            await lobby.stop()  # every session gets Goodbye("server stopping") and shows it
            # let the apps show the goodbye and close their channels
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if others:
                await asyncio.wait(others, timeout=SHUTDOWN_GRACE)
        finally:
            await close_connections(acceptor, connections)
    finally:
        try:
            await archive.drain()  # every finished game is written before the database closes
        finally:
            collector.stop()
            if notes is not None:
                notes.cancel()
            if metered is not None:
                metered.stop()
            await store.close()
            for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal waited until now
                loop.remove_signal_handler(sig)
