"""The store: one SQLite database file for accounts, keys, finished games and moderation
(issue 4, item 1).

`await Store.open(path)` creates the file on first start and brings its schema up to date:
`PRAGMA user_version` is the schema version, `MIGRATIONS[i]` takes version i to i + 1, and
each missing one runs in its own transaction. One dedicated thread owns the connection; every
method is a coroutine that runs its query there, so database work never blocks the event loop,
and runs in the order called.

Durability: WAL journal with `synchronous=NORMAL`, every write one transaction. A commit is in
the WAL file (written to the operating system) before its coroutine returns, so a clean stop,
a crash or `kill -9` of the server loses nothing acknowledged; only a power cut or an
operating-system crash may lose the last commits (`synchronous=FULL` would fsync each one,
which the game does not need). Foreign keys are enforced.

Names (issue 4, item 2): an account's name is unique ignoring case (`name_key`, the
`str.casefold` of the name, so "Ана" and "АНА" are one name), and a new account's name must
not look like an existing one either (`name_skeleton`, `perudo_ssh.names.skeleton`: the
Cyrillic "аna" looks like "ana", so it is not given while "ana" exists). Names shaped like
the lobby's own — `guest-N` for guests, `bot-…` for bots, `…-N` for a second session of one
name, with any of `-_.` for the hyphen — are never given to an account (`claimable_name`), so
the lobby never has to rename an account holder for someone else, and no account passes for
one of them. A name taken gets the first free `name2`, `name3`, … in a few queries however
many asked for it before: `name_counters` keeps, per skeleton of a name asked for, the number
to try next.

Imports neither textual nor asyncssh.
"""

from perudo_ssh.store.schema import (
    DEFAULT_PATH,
    MIGRATIONS,
    SCHEMA_VERSION,
    StoreError,
    migrate,
    schema_version,
)
from perudo_ssh.store.store import Store

__all__ = [
    "DEFAULT_PATH",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Store",
    "StoreError",
    "migrate",
    "schema_version",
]
