"""The game server: one lobby actor, one SSH listener, one Textual app per connection.

This is the only module that joins the lobby (`perudo_ssh.lobby`), the SSH layer
(`perudo_ssh.ssh`), the store (`perudo_ssh.store`, through `perudo_ssh.archive`) and the
screens (`screens`).

With a store, a key's session reaches it as `PerudoApp.store` and `PerudoApp.account` (None
for a guest), set by the app factory here; every finished game is stored by the
`GameArchive`, which then calls `update_ratings`.

Moderation (issue 4, item 6): whether a session is an admin is decided here, from its key and
the configuration's admins (`AdminList`), and handed to the lobby; the lobby's `Moderation`
is loaded from the store at start, and the SSH server refuses the keys and addresses it bans.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Protocol

import asyncssh

from perudo_ssh.archive import GameArchive, update_ratings
from perudo_ssh.collector import PacedCollector
from perudo_ssh.i18n import language_of
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.process import prepare_lobby
from perudo_ssh.logs import log_event
from perudo_ssh.moderation import AdminList, banner_text, host_of
from perudo_ssh.protocol import BanRow
from perudo_ssh.records import Account, Records
from perudo_ssh.session import LobbySession
from perudo_ssh.ssh.server import Connections, Login, start_server
from perudo_ssh.store import DEFAULT_PATH, Store

log = logging.getLogger(__name__)

Connect = Callable[..., LobbySession]
"""How the SSH layer attaches a session to the lobby: `(name, fingerprint, *, address,
account, bot_account) -> LobbySession` (`local_connect`, `RemoteLobby.connect`)."""

SHUTDOWN_GRACE = 3.0
"""Seconds a stopping server gives its sessions to show the goodbye and close."""
CLOSE_TIMEOUT = 5.0
"""Seconds a stopping server then waits for the connections it closed (and its listener) to
be gone before it finishes its writes and exits anyway."""


async def start_game_server(
    host: str = "127.0.0.1",
    port: int = 2222,
    host_key_dir: Path = Path("host_keys"),
    lobby: Lobby | None = None,
    archive: GameArchive | None = None,
    admins: AdminList | None = None,
    limits: Limits = DEFAULT_LIMITS,
    connections: Connections | None = None,
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
    a new one when None): pass one to close them when stopping."""
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


class Bans(Protocol):
    """What the SSH layer reads of the bans: `Moderation` in one process, the lobby's copy
    (`BanList`) in a front process."""

    def active_ban(
        self, fingerprint: str | None, address: str | None, linked: Collection[str] = ()
    ) -> BanRow | None: ...

    def banned_keys(self) -> frozenset[str]: ...


async def start_front(
    connect: Connect,
    records: Records | None,
    bans: Bans,
    host: str = "127.0.0.1",
    port: int = 2222,
    host_key_dir: Path = Path("host_keys"),
    limits: Limits = DEFAULT_LIMITS,
    connections: Connections | None = None,
    reuse_port: bool = False,
) -> asyncssh.SSHAcceptor:
    """The front of a server (issue 12): an SSH listener on `host:port` whose sessions each
    run a `screens.app.PerudoApp`, in the language of the client's locale (`Login.lang`,
    English when it sent none), attached to the lobby by `connect` (`local_connect`, or
    `RemoteLobby.connect` in a front process). With `records`, keys are accounts and the
    screens and commands read the stored data there; `bans` are refused at login.
    `reuse_port`: share the port with the other fronts of this machine (`SO_REUSEPORT`).
    Raises `OSError` when it cannot listen."""
    from screens.app import make_app

    def is_banned(
        fingerprint: str | None, address: str | None, linked: Collection[str]
    ) -> str | None:
        ban = bans.active_ban(fingerprint, address, linked)
        return None if ban is None else banner_text(ban, fingerprint)

    def app_factory(login: Login):
        session = connect(
            login.name,
            login.fingerprint,
            address=host_of(login.peer),
            account=login.account,
            bot_account=login.account is not None and login.account.bot,
        )
        try:
            app = make_app(session, language_of(login.lang), limits)
        except BaseException:
            session.close()  # no app to close it: it would stay in the lobby for ever
            raise
        app.store = records if login.account is not None else None
        app.account = login.account
        if login.notice is not None:
            app.arrival_notice = (login.notice, dict(login.notice_args))
        return app

    def program_factory(login: Login) -> LobbySession:
        """A bot account's program (`ssh host play`, issue 14): a lobby session, as an
        app's, marked a bot account's."""
        assert login.account is not None
        return connect(
            login.name,
            login.fingerprint,
            address=host_of(login.peer),
            account=login.account,
            bot_account=True,
        )

    return await start_server(
        app_factory,
        program_factory=program_factory if records is not None else None,
        host=host,
        port=port,
        host_key_dir=host_key_dir,
        store=records,
        bans=is_banned,
        banned_keys=bans.banned_keys,
        limits=limits,
        connections=connections,
        reuse_port=reuse_port,
    )


COLLECTOR_THRESHOLDS = (20_000, 5, 100)
"""The garbage collector's thresholds while serving (`gc.set_threshold`; Python's own are
(700, 10, 10)). Drawing a screen makes and drops many short-lived objects, most freed by
their reference counts at once; with Python's thresholds each of the many young
collections moved Textual's fresh render caches into the old generations, and the full
collections that followed walked every object of every session with the whole server
standing still (issue 10: at 50 sessions, 14 of 1.6 s each a minute). The middle one is
low: a second-generation collection walks every object that survived the young ones since
the last, so with 50 young collections between them it stopped the server for up to 0.6 s
at 100 sessions, with 5 for up to 0.2 s (once the strips and layouts stopped making cyclic
garbage, keeping it longer costs little: 2.20 -> 2.34 MB a session measured)."""


def tune_collector() -> None:
    """Tune the garbage collector for a server of many sessions (issue 10): freeze what
    start-up made (modules, parsed CSS, the store: never garbage, so no collection walks it
    until the first whole one of `PacedCollector`) and collect less often
    (`COLLECTOR_THRESHOLDS`). Objects in reference cycles are still found and freed, only
    later. `serve_forever` then collects by the clock (`perudo_ssh.collector.PacedCollector`:
    it moves what outlives its young collections aside in the same way): the first two
    thresholds remain for bursts, the third is lifted while the clock makes the whole
    collections."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


async def serve_forever(
    host: str,
    port: int,
    host_key_dir: Path,
    db: Path | None = DEFAULT_PATH,
    config: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Run the server until SIGINT or SIGTERM, then close sessions and stop cleanly: tell
    every session (the lobby's Goodbye), give the apps `SHUTDOWN_GRACE` seconds to show it
    and end, close every SSH connection still open (waiting up to `CLOSE_TIMEOUT` for
    them), then write every finished game and close the store — whatever went wrong in the
    steps before — and return (the process exits 0).

    `db` is the database file (created on first start; `perudo_ssh.store`); `config` the
    configuration file whose `[admins]` are the admins (read again when it changes; None:
    no admins); `limits` the server's limits (`perudo_ssh.limits.Limits`). Raises
    `StoreError` if the database cannot be used, `ConfigError` if the configuration is
    malformed, before listening."""
    admins = AdminList(config) if config is not None else None
    store = await Store.open(db or DEFAULT_PATH)
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
        )
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
            await store.close()
            for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal waited until now
                loop.remove_signal_handler(sig)


async def close_connections(acceptor: asyncssh.SSHAcceptor, connections: Connections) -> None:
    """Close every SSH connection still open (a ControlPersist master whose session ended, a
    client that stopped reading, one logged in with no session) and wait, up to
    `CLOSE_TIMEOUT` seconds, for them and for the closed listener `acceptor` to be gone
    (from Python 3.12.1 `wait_closed()` waits for every connection: without this, one idle
    client kept a stopping server running). Those that do not close in time are logged and
    left to the process's exit."""
    closing = connections.close_all()
    closed = await connections.wait_closed(CLOSE_TIMEOUT)
    try:
        async with asyncio.timeout(CLOSE_TIMEOUT):
            await acceptor.wait_closed()
    except TimeoutError:
        closed = False
    if closing:
        log_event(log, "connections_closed", count=closing, all_closed=closed)
