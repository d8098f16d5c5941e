"""The `perudo-ssh` commands that work on the database file itself, with or without a server
running: `backup` and `restore` (issue 15, item 4; `perudo_ssh.store.backup`), `admin bot`
(issue 14), and the name look-up `admin add|remove NAME` uses. Each prints what it did on
stdout, a failure as one line on stderr, and returns the exit status.

The database is `--db`, else the config file's `[server] db`, else the store's default
(`perudo.db`), as `serve` finds it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from perudo_ssh import config as configuration

if TYPE_CHECKING:
    from perudo_ssh.store.backup import Contents


def database(args: argparse.Namespace) -> Path:
    """The database file the command of `args` works on (module docstring). Raises
    `ConfigError` for a malformed config file."""
    from perudo_ssh.store import DEFAULT_PATH

    return args.db or configuration.load_config(args.config).server.db or DEFAULT_PATH


def _size(size: int) -> str:
    return f"{size / 1024:.0f} KB" if size < 10 * 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"


def _told(contents: Contents) -> str:
    tables = contents.tables
    return (
        f"{contents.accounts} account{'s' * (contents.accounts != 1)}, "
        f"{contents.games} finished game{'s' * (contents.games != 1)}, "
        f"{tables} unfinished table{'s' * (tables != 1)}, {_size(contents.size)}"
    )


def backup_command(args: argparse.Namespace) -> int:
    """`perudo-ssh backup FILE [--db perudo.db]`: copy the database to FILE while the server
    runs (`perudo_ssh.store.backup.backup`; FILE is replaced whole if it exists). Prints
    what the copy holds. Returns 0 done, 2 the database or FILE unusable (one line on
    stderr; FILE unchanged)."""
    from perudo_ssh.store import StoreError
    from perudo_ssh.store.backup import backup

    try:
        db = database(args)
        held = backup(db, args.file)
    except (configuration.ConfigError, StoreError) as exc:
        print(f"perudo-ssh backup: {exc}", file=sys.stderr)
        return 2
    print(f"backed up {db} to {args.file}: {_told(held)}")
    return 0


def restore_command(args: argparse.Namespace) -> int:
    """`perudo-ssh restore FILE [--db perudo.db]`: put the backup FILE in place of the
    database, which is first copied aside (`perudo_ssh.store.backup.restore`). Refuses
    while a server uses the database. Prints what was restored and where the replaced
    database went. Returns 0 done, 2 refused (a server runs, FILE is no usable backup, the
    database cannot be written; one line on stderr; nothing changed)."""
    from perudo_ssh.store import StoreError
    from perudo_ssh.store.backup import DatabaseInUse, restore

    try:
        db = database(args)
        done = restore(args.file, db)
    except DatabaseInUse as exc:
        print(f"perudo-ssh restore: {exc}; stop it first", file=sys.stderr)
        return 2
    except (configuration.ConfigError, StoreError) as exc:
        print(f"perudo-ssh restore: {exc}", file=sys.stderr)
        return 2
    print(f"restored {args.file} into {db}: {_told(done.contents)}")
    if done.aside is not None:
        print(f"the database it replaced is kept as {done.aside}")
    return 0


def bot_command(args: argparse.Namespace) -> int:
    """`perudo-ssh admin bot NAME [--remove]`: make the account NAME a bot account, whose
    keys play through `ssh HOST play` (issue 14; docs/BOT-API.md), or (`--remove`) a
    person's account again. The database is `--db`, else the config file's `[server] db`,
    else the store's default; it must exist. Takes effect at the account's next login.

    Prints what it did on stdout. Returns 0 done (already so included), 2 an unknown name or
    an unusable database or config file (one line on stderr)."""
    from perudo_ssh.store import Store, StoreError

    try:
        db = database(args)
    except configuration.ConfigError as exc:
        print(f"perudo-ssh admin: {exc}", file=sys.stderr)
        return 2
    if not db.is_file():
        print(f"perudo-ssh admin: no player database {db}", file=sys.stderr)
        return 2
    bot = not args.remove

    async def mark() -> tuple[str, bool] | None:
        store = await Store.open(db)
        try:
            account = await store.account_named(args.name)
            if account is None:
                return None
            if account.bot != bot:
                await store.set_bot(account.id, bot)
            return account.name, account.bot != bot
        finally:
            await store.close()

    try:
        done = asyncio.run(mark())
    except StoreError as exc:
        print(f"perudo-ssh admin: {exc}", file=sys.stderr)
        return 2
    if done is None:
        print(f"perudo-ssh admin: no player called {args.name} in {db}", file=sys.stderr)
        return 2
    name, changed = done
    kind = "a bot account" if bot else "a person's account"
    print(f"{name} is {'now' if changed else 'already'} {kind}")
    return 0


def name_resolver(
    args: argparse.Namespace, path: Path, missing_ok: bool = False
) -> configuration.Resolver:
    """How `admin` turns a player NAME into the fingerprints of every key of that account:
    a look-up in the player database (`--db`, else the config file's `[server] db`, else
    the store's default). The database is never created: a missing one gives no keys if
    `missing_ok` (remove: by label only), else a `ConfigError`, as does an unusable one."""
    from perudo_ssh.store import DEFAULT_PATH, Store, StoreError

    db: Path = args.db or configuration.load_config(path).server.db or DEFAULT_PATH

    async def fingerprints(name: str) -> list[str]:
        store = await Store.open(db)
        try:
            account = await store.account_named(name)
            return (
                [] if account is None else [k.fingerprint for k in await store.keys_of(account.id)]
            )
        finally:
            await store.close()

    def resolve(name: str) -> list[str]:
        if not db.is_file():
            if missing_ok:
                return []
            raise configuration.ConfigError(f"no player database {db} to look {name!r} up in")
        try:
            return asyncio.run(fingerprints(name))
        except StoreError as exc:
            raise configuration.ConfigError(str(exc)) from None

    return resolve
