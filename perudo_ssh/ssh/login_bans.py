"""The bans a connection meets as it logs in and opens its sessions (issue 4, item 6).

They are enforced by a `BanCheck` the server is given: an address ban when authentication
begins, a key ban when the key is offered. A key ban covers the key's account: with a store,
an offered key is refused when any key of its account is banned (so a second key linked to
the account does not evade the ban). A banned client is sent an authentication banner saying
until when and why, then every authentication method is refused (a banned key does not come
in as a guest either) and the connection is closed, so that the client asks for nothing
more; a new session on a connection whose key or address was banned since is refused too.
Separate from `server` (which asks these questions at each step of a login) as this holds
the answers: the check, the keys linked to each offered key, and whether a ban was met.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

import asyncssh

from perudo_ssh.logs import log_event
from perudo_ssh.records import Records
from perudo_ssh.ssh.terminal_input import format_error

# the server's logger: login_refused and linked_keys_unreadable are among its login events,
# logged under the same name as the others (log filters and alerts select them by it)
logger = logging.getLogger("perudo_ssh.ssh.server")

BanCheck = Callable[[str | None, str | None, Collection[str]], str | None]
"""`(key fingerprint or None, IP address or None, the other keys of that key's account)` ->
the banner to show a banned client (until when, why), or None when none of them is banned.
Called on the event loop; must not block."""


class ConnectionBans:
    """The bans one connection meets: its address, the key it offers and the other keys of
    that key's account, checked by `check` (None: nothing is banned). With a `store` and a
    check, an offered key's account is looked up (`learn_account`) before the key is let in.

    `opened(conn, peer, address)` gives it the connection once it is made; `met` is True once
    a ban was met (every authentication method is refused from then)."""

    def __init__(self, check: BanCheck | None, store: Records | None) -> None:
        self._check = check
        self._store = store
        self._linked: dict[str, tuple[str, ...]] = {}  # key -> the other keys of its account
        self._conn: asyncssh.SSHServerConnection | None = None
        self._peer = "unknown"
        self._address: str | None = None
        self.met = False

    def opened(self, conn: asyncssh.SSHServerConnection, peer: str, address: str | None) -> None:
        """The connection is made: `peer` as logged, `address` its normal IP address."""
        self._conn, self._peer, self._address = conn, peer, address

    @property
    def covers_accounts(self) -> bool:
        """Whether a ban on one key of an account covers its other keys (there is a store
        to link them, and a check)."""
        return self._store is not None and self._check is not None

    def banner(self, fingerprint: str | None) -> str | None:
        """The banner of a ban in force on key `fingerprint`, a key of its account (as far
        as `learn_account` found) or this connection's address; None when there is none."""
        if self._check is None:
            return None
        linked = self._linked.get(fingerprint, ()) if fingerprint is not None else ()
        return self._check(fingerprint, self._address, linked)

    def refuses(self, fingerprint: str | None) -> bool:
        """Whether key `fingerprint`, a key of its account or this connection's address is
        banned; the first time it is, the client is sent the ban's banner and every method
        is refused from then."""
        if self.met:
            return True
        banner = self.banner(fingerprint)
        if banner is None:
            return False
        self.met = True
        log_event(
            logger, "login_refused", peer=self._peer, fingerprint=fingerprint, reason="banned"
        )
        if self._conn is not None:
            self._conn.send_auth_banner(banner)
            # then the connection ends (the banner is sent first; nothing after): with every
            # method refused, OpenSSH would ask three times for a password there is none of
            self._conn.disconnect(
                asyncssh.DISC_NO_MORE_AUTH_METHODS_AVAILABLE, "banned from this server"
            )
        return True

    async def learn_account(self, fingerprint: str) -> None:
        """Look up, once, the other keys of key `fingerprint`'s account (`covers_accounts`
        must be True)."""
        assert self._store is not None
        if fingerprint not in self._linked:
            self._linked[fingerprint] = await linked_keys(self._store, fingerprint)


async def linked_keys(store: Records, fingerprint: str) -> tuple[str, ...]:
    """The other keys of the account key `fingerprint` signs in as (none for a key never
    seen). A store that fails gives none (logged): the key's own bans still hold."""
    try:
        account = await store.account_for_key(fingerprint)
        keys = [] if account is None else await store.keys_of(account.id)
    except Exception as error:
        log_event(
            logger,
            "linked_keys_unreadable",
            level=logging.ERROR,
            fingerprint=fingerprint,
            exc=format_error(error),
        )
        return ()
    return tuple(k.fingerprint for k in keys if k.fingerprint != fingerprint)
