"""Who a logged-in connection plays as: a key's account, or a numbered guest.

With a store (issue 4, item 2), a key is an account: once authentication succeeds the key's
account is looked up, or made — its first login claims the cleaned user name, or a free
alternative when another key holds it (`Store.claim_key`). A client without a key is
`guest-N` (numbered from 1 for the server's life, or over every front: `GuestNumbers`) and
nothing of theirs is stored. The app gets the name, the account and a notice to show through
its `Login` (`with_identity`). Separate from `server` (authentication and the connection's
limits) as this is what a login means to the game, not how it is let in.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from perudo_ssh.i18n import N_
from perudo_ssh.logs import log_event
from perudo_ssh.names import claimable_name, clean_name
from perudo_ssh.records import Account, Records
from perudo_ssh.ssh.login import AppFactory, Login
from perudo_ssh.ssh.terminal_input import format_error

if TYPE_CHECKING:
    from textual.app import App

# the server's logger: account_unreadable is one of its login events, logged under the same
# name as the others (log filters and alerts select them by it)
logger = logging.getLogger("perudo_ssh.ssh.server")


GUEST = N_("You are a guest: log in with an SSH key to keep your name and your games.")
CLAIMED = N_("The name {name} is now yours: log in with this key to keep it.")
TAKEN = N_("The name {asked} belongs to another player's key; you are {name} here.")
RESERVED = N_("Names like {asked} are kept for guests, bots and second sessions; you are {name}.")
KEY_NAME = N_("This key plays as {name}, not {asked}.")
NO_ACCOUNT = N_("Your account could not be read just now; you play as a guest.")


@dataclass(frozen=True)
class Identity:
    """Who a connection plays as: the `name` asked of the lobby, the key's `account` (None
    for a guest), and a `notice` (an `N_` message id with `notice_args`) for the app."""

    name: str
    account: Account | None = None
    notice: str | None = None
    notice_args: Mapping[str, str] = field(default_factory=dict)


GuestNumbers = Callable[[], Awaitable[int]]
"""`await guests()`: the next guest number (`LocalGuests` in one process; in a front process,
the lobby's, so that a guest number is given once over every front: issue 12)."""


class LocalGuests:
    """Guest numbers 1, 2, 3… of one process (`GuestNumbers`)."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)

    async def __call__(self) -> int:
        return next(self._numbers)


async def identify(
    store: Records, username: str, fingerprint: str | None, guests: GuestNumbers
) -> Identity:
    """The identity of a login with `username` and key `fingerprint` (None: a guest, named
    `guest-N` with N from `guests`). A key's first login claims the cleaned user name
    or a free alternative; later logins get the same account whatever name they ask for. A
    store that fails makes the key's holder a guest for this connection (logged)."""
    if fingerprint is None:
        return Identity(name=f"guest-{await guests()}", notice=GUEST)
    asked = clean_name(username)
    try:
        claim = await store.claim_key(fingerprint, asked)
    except Exception as error:
        log_event(
            logger,
            "account_unreadable",
            level=logging.ERROR,
            fingerprint=fingerprint,
            exc=format_error(error),
        )
        return Identity(name=f"guest-{await guests()}", notice=NO_ACCOUNT)
    account = claim.account
    args = {"name": account.name, "asked": asked}
    if account.name.casefold() == asked.casefold():
        notice = CLAIMED if claim.created else None
    elif not claim.created:
        notice = KEY_NAME
    elif claimable_name(asked) != asked:
        notice = RESERVED
    else:
        notice = TAKEN
    return Identity(name=account.name, account=account, notice=notice, notice_args=args)


def with_identity(app_factory: AppFactory, identity: Identity) -> AppFactory:
    """`app_factory`, given the login with the name, account and notice of `identity`."""

    def factory(login: Login) -> App[Any]:
        return app_factory(
            replace(
                login,
                name=identity.name,
                account=identity.account,
                notice=identity.notice,
                notice_args=identity.notice_args,
            )
        )

    return factory
