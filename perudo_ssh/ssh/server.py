"""The SSH server: anyone may log in, each PTY session gets its own Textual app.

Identity is the public key a client proves it holds (its SHA256 fingerprint); a
client without keys gets in as a guest through keyboard-interactive with zero
prompts. Passwords, port forwarding, agent and X11 forwarding and SFTP/SCP are
refused.

With a store (issue 4, item 2), a key is an account: once authentication succeeds the
key's account is looked up, or made, and every session of the connection waits for that
before it starts; a guest is `guest-N` (`perudo_ssh.ssh.identity`). With a store, `ssh host
COMMAND` runs the whitelisted commands of `perudo_ssh.ssh.commands`; without one, every
command is refused.

Bans (issue 4, item 6) are enforced here, by a `BanCheck` the server is given: an address ban
when authentication begins, a key ban (covering the key's account) when the key is offered,
and a ban since on a new session; a banned client is shown its ban and refused
(`perudo_ssh.ssh.login_bans`).

Limits (issue 5, item 4) are the server's `Limits`: the login timeout and SSH keepalive of
every connection, and the app sessions the server, one address and one key may hold at once,
counted by one `SessionCounts` shared by all its connections (a session past a limit is told
which in its terminal). The connections themselves are counted per address by one
`Connections`: one past `max_connections_per_address` is closed as soon as it opens, before
any authentication (the client is sent an SSH disconnect saying why, in English: its
language is not known yet), and so is one past its address's `connection_rate_per_address`
(before the key exchange it would make the server compute) or refused by `max_startups`, the
server-wide cap on connections not logged in yet (OpenSSH's random early drop; one from an
address with none starting instead takes the place of the oldest of the addresses holding
the most, logged connection_evicted). A logged-in connection with no session channel open
(a game or a command) for `login_timeout` seconds — since it logged in, or since its last
session closed — is closed too (an OpenSSH ControlPersist master, a client that only logged
in). A stopping
server closes the connections it still has through `Connections.close_all`.

Connections, logins and refusals are logged as events (`perudo_ssh.logs.log_event`):
connection_opened, connection_closed, connection_refused, connection_idle, login_ok,
login_refused, login_timeout, session_refused, listening; the sessions log theirs
(`perudo_ssh.ssh.session`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import weakref
from collections.abc import Callable, Collection, Coroutine
from pathlib import Path
from typing import Any

import asyncssh

from perudo_ssh.admission import STARTUPS_FULL, Connections, SessionCounts
from perudo_ssh.bans import normal_address
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.logs import log_event
from perudo_ssh.records import Records
from perudo_ssh.ssh.commands import CommandSession, ProgramFactory
from perudo_ssh.ssh.hardening import (
    COMPRESSION_ALGS,
    ENCRYPTION_ALGS,
    KEX_ALGS,
    MAC_ALGS,
    SIGNATURE_ALGS,
    guard,
)
from perudo_ssh.ssh.hostkey import load_or_create_host_key
from perudo_ssh.ssh.identity import GuestNumbers, Identity, LocalGuests, identify, with_identity
from perudo_ssh.ssh.isolation import (
    install_drawing_savers,
    install_redirect_guard,
)
from perudo_ssh.ssh.login import AppFactory, Login
from perudo_ssh.ssh.login_bans import BanCheck, ConnectionBans
from perudo_ssh.ssh.session import AppSession

__all__ = [
    "AppFactory",
    "BanCheck",
    "Connections",
    "Limits",
    "Login",
    "SessionCounts",
    "start_server",
]

logger = logging.getLogger(__name__)

MAX_SESSIONS_PER_CONNECTION = 4
"""Session channels one connection may hold open at once (OpenSSH multiplexing)."""

LOGIN_TIMEOUT_EXPIRED = "Login timeout expired"
"""What asyncssh's login timer closes a connection with."""

NO_SESSION = "no session opened in {seconds:g} seconds"
"""The SSH disconnect reason of a logged-in connection left without a session channel."""


def _evicted(conn: Any) -> None:
    """Close `conn`, not logged in yet, to make room for a connection from an address with
    none starting (`Connections.admit`, `Limits.max_startups`)."""
    log_event(
        logger,
        "connection_evicted",
        level=logging.WARNING,
        peer=_format_peer(conn.get_extra_info("peername")),
        reason="startups",
    )
    conn.disconnect(asyncssh.DISC_TOO_MANY_CONNECTIONS, STARTUPS_FULL)


def _format_peer(peername: tuple[str, int] | tuple[str, int, int, int] | None) -> str:
    if not peername:
        return "unknown"
    host, port = peername[0], peername[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _PerudoServer(asyncssh.SSHServer):
    """Authentication and session creation for one client connection."""

    def __init__(
        self,
        app_factory: AppFactory,
        store: Records | None = None,
        guests: GuestNumbers | None = None,
        bans: BanCheck | None = None,
        banned_keys: Callable[[], Collection[str]] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        counts: SessionCounts | None = None,
        connections: Connections | None = None,
        program_factory: ProgramFactory | None = None,
        banner: str | None = None,
    ) -> None:
        self._app_factory = app_factory
        self._banner = banner
        self._program_factory = program_factory
        self._limits = limits
        self._counts = counts
        self._connections = connections
        self._loop = asyncio.get_running_loop()
        self._refused = False  # past the connections limit: closed at once
        self._lost = False  # the connection is gone
        self._channels = 0  # session channels given a session and not closed yet
        self._idle_timer: asyncio.TimerHandle | None = None
        self._authenticated = False
        self._store = store
        self._bans = ConnectionBans(bans, store)
        self._banned_keys = banned_keys
        self._conn: asyncssh.SSHServerConnection | None = None
        self._address: str | None = None
        self._guests = guests if guests is not None else LocalGuests()
        self._peer = "unknown"
        self._username = ""
        self._offered_fingerprint: str | None = None
        self._fingerprint: str | None = None
        self._identity: asyncio.Task[Identity] | None = None
        self._sessions: weakref.WeakSet[AppSession] = weakref.WeakSet()

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        peername = conn.get_extra_info("peername")
        self._peer = _format_peer(peername)
        self._address = normal_address(str(peername[0])) if peername else None
        self._bans.opened(conn, self._peer, self._address)
        refusal = None
        if self._connections is not None:
            refusal = self._connections.admit(conn, self._address, _evicted)
        if refusal is not None:
            self._refused = True
            log_event(
                logger,
                "connection_refused",
                level=logging.WARNING,
                peer=self._peer,
                reason=refusal.reason,
                limit=refusal.limit,
            )
            # once asyncssh has sent its version (right after this returns): the client then
            # reads the reason (OpenSSH: "Received disconnect from ...: too many ...")
            code = asyncssh.DISC_TOO_MANY_CONNECTIONS
            self._loop.call_soon(
                conn.disconnect, code, refusal.message, context=contextvars.Context()
            )
            return
        log_event(logger, "connection_opened", peer=self._peer)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True  # its sessions may learn it later: no idle timer from them
        self._cancel_idle_timer()
        if self._connections is not None and self._conn is not None:
            self._connections.release(self._conn)
        if self._refused:
            return  # logged once, as connection_refused
        # str(): a log record holding the exception would hold, through its traceback's
        # frames, whatever app was writing when the pipe broke.
        reason = str(exc) if exc is not None else None
        if not self._authenticated and reason == LOGIN_TIMEOUT_EXPIRED:
            timeout = self._limits.login_timeout
            log_event(logger, "login_timeout", peer=self._peer, seconds=timeout)
        log_event(logger, "connection_closed", peer=self._peer, reason=reason)

    # A logged-in connection with no session channel (`Limits.login_timeout`)

    def _arm_idle_timer(self) -> None:
        """Close this connection `login_timeout` seconds from now unless a session channel
        opens by then (called once it logged in, and when its last session closed)."""
        self._cancel_idle_timer()
        timeout = self._limits.login_timeout
        if timeout > 0 and self._authenticated and self._channels == 0 and not self._lost:
            # a fresh context: this may be called from a session's callback run inside its
            # app's task, whose context would keep the app alive until the timer fires
            context = contextvars.Context()
            self._idle_timer = self._loop.call_later(timeout, self._idle_expired, context=context)

    def _cancel_idle_timer(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _idle_expired(self) -> None:
        self._idle_timer = None
        if self._channels or self._conn is None or self._lost:
            return
        seconds = self._limits.login_timeout
        log_event(
            logger,
            "connection_idle",
            peer=self._peer,
            fingerprint=self._fingerprint,
            seconds=seconds,
        )
        reason = NO_SESSION.format(seconds=seconds)
        self._conn.disconnect(asyncssh.DISC_BY_APPLICATION, reason)

    def _channel_started(self) -> None:
        """A session channel became a shell or a command: no idle timeout while it is open.
        (A channel opened and never started leaves the timeout running, and is closed by its
        own: asking again and again, or opening channels, does not put it off.)"""
        self._channels += 1
        self._cancel_idle_timer()

    def _channel_closed(self, started: bool) -> None:
        """A session channel closed: the idle timeout starts again after the last one that
        had started."""
        if not started:
            return
        self._channels = max(0, self._channels - 1)
        if self._channels == 0:
            self._arm_idle_timer()

    # Authentication

    def begin_auth(self, username: str) -> bool:
        self._username = username
        if self._banner and self._conn is not None:  # shown by the client before its login
            self._conn.send_auth_banner(self._banner)
        self._bans.refuses(None)  # an address ban: refused before any key is offered
        return True  # "none" must fail, so that clients offer their keys first

    def password_auth_supported(self) -> bool:
        return False

    def public_key_auth_supported(self) -> bool:
        return not self._bans.met

    def validate_public_key(
        self, username: str, key: asyncssh.SSHKey
    ) -> bool | Coroutine[Any, Any, bool]:
        # Called for each key offered and again for the signed request; asyncssh
        # checks the signature afterwards, so the last key seen before success is
        # the one the client proved it holds. With a store, asyncssh awaits the
        # lookup of the key's account before it goes on.
        fingerprint = key.get_fingerprint("sha256")
        if self._bans.refuses(fingerprint):
            return False
        if not self._bans.covers_accounts:
            self._offered_fingerprint = fingerprint
            return True
        return self._validate_account_key(fingerprint)

    async def _validate_account_key(self, fingerprint: str) -> bool:
        """Whether key `fingerprint` may sign in, once the other keys of its account are
        known: a ban on any of them refuses it (with its banner)."""
        await self._bans.learn_account(fingerprint)
        if self._bans.refuses(fingerprint):
            return False
        self._offered_fingerprint = fingerprint
        return True

    def kbdint_auth_supported(self) -> bool:
        return not self._bans.met  # a banned key does not come in as a guest

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> bool:
        self._offered_fingerprint = None  # a guest, whatever keys were offered before
        return True  # success with no prompts

    def auth_completed(self) -> None:
        self._authenticated = True
        if self._connections is not None and self._conn is not None:
            self._connections.logged_in(self._conn)
        self._fingerprint = self._offered_fingerprint
        log_event(
            logger,
            "login_ok",
            peer=self._peer,
            username=self._username[:64],
            fingerprint=self._fingerprint,
            guest=self._fingerprint is None,
        )
        if self._store is not None:
            # asyncssh does not wait for this method before it takes channel requests, so
            # the lookup is a task that every session request waits for
            work = identify(self._store, self._username, self._fingerprint, self._guests)
            self._identity = asyncio.get_running_loop().create_task(work)
        self._arm_idle_timer()

    def session_requested(self) -> Any:
        # a channel of ours (it stores only the environment the server uses), with the
        # session, or a coroutine giving it that asyncssh awaits
        assert self._conn is not None
        if self._identity is None:
            session = self._new_session(None)
            return (self._guarded_channel(), session) if session else False
        return self._guarded_channel(), self._identified_session()

    def _guarded_channel(self) -> asyncssh.SSHServerChannel[bytes]:
        assert self._conn is not None
        return guard(self._conn.create_server_channel(encoding=None))

    async def _identified_session(self) -> AppSession:
        assert self._identity is not None
        identity = await self._identity
        session = self._new_session(identity)
        if not isinstance(session, AppSession):
            raise asyncssh.ChannelOpenError(asyncssh.OPEN_CONNECT_FAILED, "Session refused")
        return session

    def _new_session(self, identity: Identity | None) -> AppSession | bool:
        """A session for this connection, or False past `MAX_SESSIONS_PER_CONNECTION` or
        when its key, its account's or its address was banned since it logged in. (The
        server's session limits are met once the session starts: see `AppSession`.)"""
        peer, fingerprint = self._peer, self._fingerprint
        if self._bans.banner(self._fingerprint) is not None:
            log_event(
                logger, "session_refused", peer=peer, fingerprint=fingerprint, reason="banned"
            )
            return False
        if sum(not session.closed for session in self._sessions) >= MAX_SESSIONS_PER_CONNECTION:
            log_event(
                logger,
                "session_refused",
                peer=peer,
                fingerprint=fingerprint,
                reason="connection_full",
                limit=MAX_SESSIONS_PER_CONNECTION,
            )
            return False
        session: AppSession
        if identity is None or self._store is None:
            session = AppSession(
                self._app_factory,
                self._username,
                self._fingerprint,
                self._peer,
                limits=self._limits,
                sessions=self._counts,
                address=self._address,
                on_start=self._channel_started,
                on_close=self._channel_closed,
            )
        else:
            session = CommandSession(
                with_identity(self._app_factory, identity),
                self._username,
                self._fingerprint,
                self._peer,
                store=self._store,
                account=identity.account,
                banned_keys=self._banned_keys,
                program_factory=self._program_factory,
                limits=self._limits,
                sessions=self._counts,
                address=self._address,
                on_start=self._channel_started,
                on_close=self._channel_closed,
            )
        self._sessions.add(session)
        return session


async def start_server(
    app_factory: AppFactory,
    host: str = "127.0.0.1",
    port: int = 2222,
    host_key_dir: Path = Path("host_keys"),
    store: Records | None = None,
    bans: BanCheck | None = None,
    banned_keys: Callable[[], Collection[str]] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    sessions: SessionCounts | None = None,
    connections: Connections | None = None,
    program_factory: ProgramFactory | None = None,
    reuse_port: bool = False,
    guests: GuestNumbers | None = None,
    banner: str | None = None,
) -> asyncssh.SSHAcceptor:
    """Listen for SSH clients; run `app_factory(login)` for each PTY session.
    `reuse_port`: other processes may listen on the same port (`SO_REUSEPORT`: the kernel
    spreads the connections over them; issue 12).

    The host key is `host_key_dir/ssh_host_ed25519_key` (mode 0600), generated on
    first start and reused afterwards. `port=0` picks a free port: read it back with
    `acceptor.get_port()`. Closing the acceptor stops new connections only;
    sessions already running go on until their clients leave. With a `store`, keys
    are accounts, guests are `guest-N`, and the whitelisted commands run (see the
    module's docstring); without one, `Login.name` is the cleaned user name. With `bans`,
    banned keys (and the keys of their accounts) and addresses are shown their ban and
    refused (the module's docstring); `banned_keys()` gives the fingerprints under a ban,
    which `ssh host link CODE` refuses to join to an account. `program_factory(login)`
    attaches a bot account's program (`ssh host play`, with a store; issue 14) to the
    lobby; without one, `play` is refused. `guests` numbers the guests (`LocalGuests` when
    None). `banner`, if given, is sent before authentication (SSH's auth banner, RFC 4252
    §5.4: clients show it before the login; perudo.toml `[server] banner`).

    `limits` sets the login timeout, the keepalive, the session limits and each session's
    input and output limits (`perudo_ssh.limits.Limits`). The live app sessions are counted
    in `sessions`, against its own limits (a new `SessionCounts(limits)` when None; pass one
    to read the counts, or to share them between listeners). The open connections are
    counted in `connections` (a new `Connections(limits)` when None), against
    `limits.max_connections_per_address`; pass one to read them or, once the acceptor is
    closed, to close those still open (`Connections.close_all`: closing the acceptor
    leaves them open, and from Python 3.12.1 its `wait_closed()` waits for every one).

    Raises:
        OSError: the host key cannot be read or written, or the port is taken.
    """
    install_redirect_guard()
    install_drawing_savers()
    host_key = load_or_create_host_key(host_key_dir)
    guests = guests if guests is not None else LocalGuests()
    counts = sessions if sessions is not None else SessionCounts(limits)
    conns = connections if connections is not None else Connections(limits)
    acceptor = await asyncssh.create_server(
        lambda: _PerudoServer(
            app_factory,
            store,
            guests,
            bans,
            banned_keys,
            limits,
            counts,
            conns,
            program_factory,
            banner=banner,
        ),
        host,
        port,
        reuse_port=reuse_port or None,
        server_host_keys=[host_key],
        encoding=None,  # bytes both ways: the session decodes input leniently itself
        line_editor=False,
        agent_forwarding=False,
        x11_forwarding=False,
        allow_scp=False,
        sftp_factory=None,
        password_auth=False,
        keepalive_interval=limits.keepalive_interval,
        keepalive_count_max=limits.keepalive_count_max,
        login_timeout=limits.login_timeout,
        kex_algs=list(KEX_ALGS),
        encryption_algs=list(ENCRYPTION_ALGS),
        mac_algs=list(MAC_ALGS),
        compression_algs=list(COMPRESSION_ALGS),
        signature_algs=list(SIGNATURE_ALGS),
    )
    log_event(
        logger,
        "listening",
        host=host,
        port=acceptor.get_port(),
        host_key=host_key.get_fingerprint("sha256"),
    )
    return acceptor
