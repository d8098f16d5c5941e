"""A front's SSH server (issue 12): the SSH listener whose sessions each run a
`screens.app.PerudoApp`, attached to the lobby by a `Connect` — the lobby of this process
(`perudo_ssh.serve.local_connect`) or of another (`perudo_ssh.front.remote.RemoteLobby`) — and
what serving many sessions needs: the garbage collector tuned, the connections closed at
the end. Imports nothing of the store and nothing of the lobby but the session it is given.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Protocol

import asyncssh

from perudo_ssh.admission import Connections, SessionCounts
from perudo_ssh.bans import banner_text, host_of
from perudo_ssh.i18n import language_of
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.logs import log_event
from perudo_ssh.protocol import BanRow
from perudo_ssh.records import Records
from perudo_ssh.session import LobbySession
from perudo_ssh.ssh.identity import GuestNumbers
from perudo_ssh.ssh.server import Login, start_server

log = logging.getLogger(__name__)

Connect = Callable[..., LobbySession]
"""How the SSH layer attaches a session to the lobby: `(name, fingerprint, *, address,
account, bot_account) -> LobbySession` (`local_connect`, `RemoteLobby.connect`)."""

SHUTDOWN_GRACE = 3.0
"""Seconds a stopping server gives its sessions to show the goodbye and close."""
CLOSE_TIMEOUT = 5.0
"""Seconds a stopping server then waits for the connections it closed (and its listener) to
be gone before it finishes its writes and exits anyway."""


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
    sessions: SessionCounts | None = None,
    guests: GuestNumbers | None = None,
    banner: str | None = None,
) -> asyncssh.SSHAcceptor:
    """The front of a server (issue 12): an SSH listener on `host:port` whose sessions each
    run a `screens.app.PerudoApp`, in the language of the client's locale (`Login.lang`,
    English when it sent none), attached to the lobby by `connect` (`local_connect`, or
    `RemoteLobby.connect` in a front process). With `records`, keys are accounts and the
    screens and commands read the stored data there; `bans` are refused at login.
    `reuse_port`: share the port with the other fronts of this machine (`SO_REUSEPORT`).
    `sessions` counts the sessions against the limits (in a front process, asking the lobby
    too: `SessionCounts.shared`) and `guests` numbers the guests (`start_server`'s, which
    makes its own when None); `banner` is shown by clients before their login (None: none).
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
        sessions=sessions,
        guests=guests,
        banner=banner,
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
