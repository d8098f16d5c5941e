"""The SSH server: anyone may log in, each PTY session gets its own Textual app.

Identity is the public key a client proves it holds (its SHA256 fingerprint); a
client without keys gets in as a guest through keyboard-interactive with zero
prompts. Passwords, port forwarding, agent and X11 forwarding, SFTP/SCP and
commands are all refused.
"""

from __future__ import annotations

import logging
import weakref
from pathlib import Path

import asyncssh

from perudo_ssh.ssh.hostkey import load_or_create_host_key
from perudo_ssh.ssh.isolation import install_redirect_guard
from perudo_ssh.ssh.login import AppFactory, Login
from perudo_ssh.ssh.session import AppSession

__all__ = ["AppFactory", "Login", "start_server"]

logger = logging.getLogger(__name__)

MAX_SESSIONS_PER_CONNECTION = 4
"""Session channels one connection may hold open at once (OpenSSH multiplexing)."""

KEEPALIVE_INTERVAL = 30.0
"""Seconds between keepalives; three unanswered ones drop a vanished client."""

LOGIN_TIMEOUT = 30.0
"""Seconds a client has to finish logging in."""


def _format_peer(peername: tuple[str, int] | tuple[str, int, int, int] | None) -> str:
    if not peername:
        return "unknown"
    host, port = peername[0], peername[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _PerudoServer(asyncssh.SSHServer):
    """Authentication and session creation for one client connection."""

    def __init__(self, app_factory: AppFactory) -> None:
        self._app_factory = app_factory
        self._peer = "unknown"
        self._username = ""
        self._offered_fingerprint: str | None = None
        self._fingerprint: str | None = None
        self._sessions: weakref.WeakSet[AppSession] = weakref.WeakSet()

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._peer = _format_peer(conn.get_extra_info("peername"))
        logger.debug("connection from %s", self._peer)

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            # str(): a log record holding the exception would hold, through its
            # traceback's frames, whatever app was writing when the pipe broke.
            logger.info("connection from %s lost: %s", self._peer, str(exc))

    def begin_auth(self, username: str) -> bool:
        self._username = username
        return True  # "none" must fail, so that clients offer their keys first

    def password_auth_supported(self) -> bool:
        return False

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        # Called for each key offered and again for the signed request; asyncssh
        # checks the signature afterwards, so the last key seen before success is
        # the one the client proved it holds.
        self._offered_fingerprint = key.get_fingerprint("sha256")
        return True

    def kbdint_auth_supported(self) -> bool:
        return True

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> bool:
        self._offered_fingerprint = None  # a guest, whatever keys were offered before
        return True  # success with no prompts

    def auth_completed(self) -> None:
        self._fingerprint = self._offered_fingerprint
        logger.info(
            "login %r from %s with %s",
            self._username,
            self._peer,
            self._fingerprint or "no key (guest)",
        )

    def session_requested(self) -> AppSession | bool:
        if sum(not session.closed for session in self._sessions) >= MAX_SESSIONS_PER_CONNECTION:
            logger.info("refused extra session from %s", self._peer)
            return False
        session = AppSession(self._app_factory, self._username, self._fingerprint, self._peer)
        self._sessions.add(session)
        return session


async def start_server(
    app_factory: AppFactory,
    host: str = "127.0.0.1",
    port: int = 2222,
    host_key_dir: Path = Path("host_keys"),
) -> asyncssh.SSHAcceptor:
    """Listen for SSH clients; run `app_factory(login)` for each PTY session.

    The host key is `host_key_dir/ssh_host_ed25519_key` (mode 0600), generated on
    first start and reused afterwards. `port=0` picks a free port: read it back with
    `acceptor.get_port()`. Closing the acceptor stops new connections only;
    sessions already running go on until their clients leave.

    Raises:
        OSError: the host key cannot be read or written, or the port is taken.
    """
    install_redirect_guard()
    host_key = load_or_create_host_key(host_key_dir)
    acceptor = await asyncssh.create_server(
        lambda: _PerudoServer(app_factory),
        host,
        port,
        server_host_keys=[host_key],
        encoding=None,  # bytes both ways: the session decodes input leniently itself
        line_editor=False,
        agent_forwarding=False,
        x11_forwarding=False,
        allow_scp=False,
        sftp_factory=None,
        password_auth=False,
        keepalive_interval=KEEPALIVE_INTERVAL,
        keepalive_count_max=3,
        login_timeout=LOGIN_TIMEOUT,
    )
    logger.info(
        "listening on %s:%d, host key %s",
        host,
        acceptor.get_port(),
        host_key.get_fingerprint("sha256"),
    )
    return acceptor
