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
import weakref
from collections.abc import Collection
from pathlib import Path

import asyncssh

from perudo_ssh import ratings
from perudo_ssh.archive import GameArchive, RatingChanges
from perudo_ssh.collector import PacedCollector
from perudo_ssh.i18n import language_of
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.lobby import Lobby
from perudo_ssh.logs import log_event
from perudo_ssh.moderation import AdminList, banner_text, host_of
from perudo_ssh.records import NewGame
from perudo_ssh.referee import Verdict
from perudo_ssh.session import LobbySession
from perudo_ssh.ssh.server import Connections, Login, start_server
from perudo_ssh.store import DEFAULT_PATH, Store

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 3.0
"""Seconds a stopping server gives its sessions to show the goodbye and close."""
CLOSE_TIMEOUT = 5.0
"""Seconds a stopping server then waits for the connections it closed (and its listener) to
be gone before it finishes its writes and exits anyway."""


_RATING_LOCKS: weakref.WeakKeyDictionary[Store, asyncio.Lock] = weakref.WeakKeyDictionary()
"""One lock per store: two games finishing together must not both start from the same
ratings (read, rate, write is one step)."""


async def update_ratings(
    store: Store, game_id: int, game: NewGame, verdict: Verdict
) -> RatingChanges | None:
    """The ratings hook: called once each finished game is stored as `game_id` (`game` as
    stored, `verdict` its referee's verdict).

    A game of a rated table (`game.rated`, the table option) with at least two account
    holders (`perudo_ssh.ratings.is_rated`) moves their ratings by `perudo_ssh.ratings.rate`
    over the finishing order (`finishing_order`, a player who left mid-game placed when they
    left: `GamePlayer.left_round`); bots and guests (no account) are left out
    of the ranking. People and bot accounts (issue 14) are rated apart: the people are
    ranked among the people, the bot accounts among the bot accounts (each pool needs two to
    be rated), so a program's games never move a person's rating nor the reverse. The
    built-in bots of each level share one rating (`Store.level_account`): it moves by the
    game's whole finishing order, everyone rated at the table counted at their rating (the
    level's seats at its own; several seats of a level: their new ratings averaged), while
    nobody else's moves for it — so a level's rating says how it fares against people and
    programs, and beating bots never farms a rating. Each
    account starts from its latest stored rating (`ratings.DEFAULT` for a
    newcomer); the new ones are written in one transaction, dated when the game finished.
    An illegal or unfinished verdict rates nothing. Returns what it changed, by account
    id: (name, before, after) in shown points (`ratings.ordinal`, rounded); None if the game
    was not rated."""
    if not game.rated or not verdict.legal or verdict.winner is None:
        return None
    account_of = {p.name: p.account_id for p in game.players}
    level_of: dict[str, str] = {
        p.name: p.level for p in game.players if p.level is not None and p.account_id is None
    }
    left = {p.name: p.left_round for p in game.players if p.left_round is not None}
    order = ratings.finishing_order(verdict, left)
    accounts = [account for account in account_of.values() if account is not None]
    lock = _RATING_LOCKS.setdefault(store, asyncio.Lock())
    async with lock:
        programs = await store.bot_accounts(accounts)
        levels = {level: await store.level_account(level) for level in set(level_of.values())}
        rated_as = {name: account for name, account in account_of.items() if account is not None}
        rated_as.update((name, levels[level].id) for name, level in level_of.items())
        before: dict[str, ratings.Rating] = {}
        for name in order:
            if name in rated_as:
                row = await store.rating_of(rated_as[name])
                before[name] = (
                    ratings.DEFAULT if row is None else ratings.Rating(mu=row.mu, sigma=row.sigma)
                )
        new: dict[int, tuple[float, float]] = {}
        changes: dict[int, tuple[str, int, int]] = {}
        # two pools: people among people, bot accounts among bot accounts (issue 14)
        for pool in (False, True):
            entries = [
                before[name]
                if account_of.get(name) is not None and (account_of[name] in programs) == pool
                else None
                for name in order
            ]
            if not ratings.is_rated(game.rated, entries):
                continue
            for name, old, rating in zip(order, entries, ratings.rate(entries), strict=True):
                account = account_of.get(name)
                if rating is not None and account is not None and old is not None:
                    new[account] = (rating.mu, rating.sigma)
                    changes[account] = (name, shown(old), shown(rating))
        # each level of built-in bots against everyone rated at the table, who stay as they are
        everyone = [before.get(name) for name in order]
        if levels and ratings.is_rated(game.rated, everyone):
            after = ratings.rate(everyone)
            for level, level_account in levels.items():
                seats = [after[i] for i, name in enumerate(order) if level_of.get(name) == level]
                rated = [rating for rating in seats if rating is not None]
                new[level_account.id] = (
                    sum(r.mu for r in rated) / len(rated),
                    sum(r.sigma for r in rated) / len(rated),
                )
        if not new:
            return None
        await store.add_ratings(game_id, new, at=game.finished)
    return changes or None


def shown(rating: ratings.Rating) -> int:
    """A rating as players see it, in whole points (`ratings.ordinal`, rounded)."""
    return round(ratings.ordinal(rating))


async def shown_ratings(store: Store) -> dict[int, int]:
    """Every rated account's shown rating (`shown`), by account id: the lobby's start."""
    return {
        account.id: shown(ratings.Rating(mu=row.mu, sigma=row.sigma))
        for account, row in await store.current_ratings()
    }


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
    from screens.app import make_app

    if lobby is None:
        lobby = Lobby(outbox_size=limits.output_queue_events)
    store = archive.store if archive is not None else None
    if archive is not None and lobby.on_game_over is None:
        lobby.on_game_over = archive.game_over
        # ratings beside names, and what a game did to them (issue 13)
        if archive.after_game is update_ratings:
            lobby.ratings = await shown_ratings(archive.store)
            archive.on_rated = lobby.rated
    moderation = lobby.moderation
    if store is not None and moderation.store is None:
        moderation.store = store
        await moderation.load()
    if store is not None and lobby.persist is None:
        # issue 5, item 3: the unfinished games come back, and every move is saved
        lobby.restore(await store.unfinished_tables())
        lobby.persist = store.save_tables
    lobby.start()

    def is_banned(
        fingerprint: str | None, address: str | None, linked: Collection[str]
    ) -> str | None:
        ban = moderation.active_ban(fingerprint, address, linked)
        return None if ban is None else banner_text(ban, fingerprint)

    def app_factory(login: Login):
        session = lobby.connect(
            login.name,
            login.fingerprint,
            admin=admins is not None and admins.is_admin(login.fingerprint),
            address=host_of(login.peer),
            account_id=login.account.id if login.account is not None else None,
            bot_account=login.account is not None and login.account.bot,
        )
        try:
            if archive is not None:
                archive.session_joined(session, login.account)
            app = make_app(session, language_of(login.lang), limits)
        except BaseException:
            session.close()  # no app to close it: it would stay in the lobby for ever
            raise
        app.store = store if login.account is not None else None
        app.account = login.account
        if login.notice is not None:
            app.arrival_notice = (login.notice, dict(login.notice_args))
        return app

    def program_factory(login: Login) -> LobbySession:
        """A bot account's program (`ssh host play`, issue 14): a lobby session, as an
        app's, marked a bot account's."""
        assert login.account is not None
        session = lobby.connect(
            login.name,
            login.fingerprint,
            admin=admins is not None and admins.is_admin(login.fingerprint),
            address=host_of(login.peer),
            account_id=login.account.id,
            bot_account=True,
        )
        if archive is not None:
            archive.session_joined(session, login.account)
        return session

    acceptor = await start_server(
        app_factory,
        program_factory=program_factory if store is not None else None,
        host=host,
        port=port,
        host_key_dir=host_key_dir,
        store=store,
        bans=is_banned,
        banned_keys=moderation.banned_keys,
        limits=limits,
        connections=connections,
    )
    return acceptor, lobby


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
            await _close_connections(acceptor, connections)
    finally:
        try:
            await archive.drain()  # every finished game is written before the database closes
        finally:
            collector.stop()
            await store.close()
            for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal waited until now
                loop.remove_signal_handler(sig)


async def _close_connections(acceptor: asyncssh.SSHAcceptor, connections: Connections) -> None:
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
