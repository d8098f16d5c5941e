"""The store's database file (`perudo_ssh.store`): its schema and migrations, the
connection (run in the store's thread only), one write transaction."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from perudo_ssh.names import skeleton

T = TypeVar("T")
_R = TypeVar("_R")

DEFAULT_PATH = Path("perudo.db")
"""The database file when `--db` is not given (relative to the working directory)."""

# ---- the schema -----------------------------------------------------------------------------

_V1 = """
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,          -- casefold(name): one name whatever the case
    created REAL NOT NULL                   -- unix seconds
);
CREATE TABLE keys (
    fingerprint TEXT PRIMARY KEY,           -- "SHA256:..."
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    added REAL NOT NULL
);
CREATE INDEX keys_account ON keys(account_id);
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    finished REAL NOT NULL,
    preset TEXT NOT NULL,
    rated INTEGER NOT NULL DEFAULT 0,
    record TEXT NOT NULL,                   -- perudo-record/1 JSON (RECORD.md)
    verdict TEXT NOT NULL                   -- perudo-verdict/1 JSON
);
CREATE TABLE game_players (
    game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    name TEXT NOT NULL,                     -- the name in the record
    account_id INTEGER REFERENCES accounts(id) ON DELETE SET NULL,  -- NULL: guest or bot
    place INTEGER NOT NULL,                 -- 1 won, 2 went out last, ...
    bot INTEGER NOT NULL DEFAULT 0,         -- a bot's seat from the start
    left_round INTEGER,                     -- round index a person left in (a bot played on)
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_players_account ON game_players(account_id, game_id);
"""

_V2 = """
CREATE TABLE link_codes (
    code TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    expires REAL NOT NULL
);
CREATE TABLE ratings (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (account_id, game_id)
);
CREATE INDEX ratings_game ON ratings(game_id);
CREATE TABLE bans (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('key', 'address')),
    value TEXT NOT NULL,                    -- a fingerprint or an IP address
    reason TEXT NOT NULL,
    until REAL,                             -- NULL: for ever
    by_account INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
    created REAL NOT NULL,
    lifted REAL                             -- set when an admin lifts it early
);
CREATE INDEX bans_value ON bans(kind, value);
CREATE TABLE mutes (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    reason TEXT NOT NULL,
    until REAL,                             -- NULL: for ever
    by_account INTEGER REFERENCES accounts(id) ON DELETE SET NULL,
    created REAL NOT NULL,
    lifted REAL
);
CREATE INDEX mutes_account ON mutes(account_id);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    admin TEXT NOT NULL,                    -- who: the admin's name (and key)
    action TEXT NOT NULL,                   -- what: "ban", "kick", ...
    target TEXT NOT NULL,                   -- whom or which table
    reason TEXT NOT NULL DEFAULT '',        -- why
    detail TEXT NOT NULL DEFAULT ''
);
"""

# Look-alike names: the skeleton of each name (`perudo_ssh.names.skeleton`, registered as the
# SQL function `skeleton` on the store's connections). Not unique: names that look alike and
# were claimed before this version keep their names; new ones are checked (`_new_account`).
_V3 = """
ALTER TABLE accounts ADD COLUMN name_skeleton TEXT NOT NULL DEFAULT '';
UPDATE accounts SET name_skeleton = skeleton(name);
CREATE INDEX accounts_skeleton ON accounts(name_skeleton);
"""

# Unfinished games (issue 5, item 3): each game in play as saved after every accepted move
# (`perudo_ssh.lobby.snapshot.TableSnapshot` JSON, hidden dice included: the database is the
# server's own), deleted in the transaction that stores it once finished
# (`add_game(..., forget=)`), or when its table closes mid-game; restored when the server
# starts.
_V4 = """
CREATE TABLE unfinished_tables (
    id INTEGER PRIMARY KEY,                 -- the game's save key (one per game, not a table id)
    snapshot TEXT NOT NULL,                 -- TableSnapshot JSON
    saved REAL NOT NULL                     -- unix seconds
);
"""

# Names (issue 11, "Safe on the open internet"): `skeleton` now folds `_` and `.` into `-`,
# so the stored skeletons are computed again; and the next number to try for a name asked
# for and taken (`_new_account`), by the skeleton of that name: a claim of a name 1,500 keys
# asked for before is a few queries, not 1,500.
_V5 = """
UPDATE accounts SET name_skeleton = skeleton(name);
CREATE TABLE name_counters (
    skeleton TEXT PRIMARY KEY,              -- skeleton() of a name asked for and taken
    next INTEGER NOT NULL                   -- the number to try next: name2, name3, ...
) WITHOUT ROWID;
"""

# A player's settings (issue 13, "your turn, when you are elsewhere"): whether the terminal
# rings and its title says so when it becomes their turn while they read the rules or chat.
_V6 = """
ALTER TABLE accounts ADD COLUMN turn_bell INTEGER NOT NULL DEFAULT 1;
"""

# Bot accounts (issue 14, "programs as players"): an account whose keys are a program's. It
# plays through `ssh HOST play` (perudo_ssh.botapi), is marked BOT wherever its name is
# shown, and is rated apart from people (perudo_ssh.lobby.archive.update_ratings).
_V7 = """
ALTER TABLE accounts ADD COLUMN bot INTEGER NOT NULL DEFAULT 0;
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7)
"""`MIGRATIONS[i]` takes a database from schema version i to i + 1. Append only: a released
script never changes (a database out there already ran it)."""
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    """The database file cannot be used: not a SQLite database, unreadable, damaged (its
    `PRAGMA quick_check` found a problem), or written by a newer perudo-ssh (its schema
    version is above `SCHEMA_VERSION`)."""


# ---- names ----------------------------------------------------------------------------------

# ---- the connection (runs in the store's thread only) -----------------------------------------


FILE_MODE = 0o600
"""The database's mode, and its -wal and -shm files' (issue 11): they hold the hidden dice of
every game in progress, so only the server's user may read them."""


def make_private(path: Path) -> None:
    """Create the database file `path` if missing, and make it and its -wal/-shm files (those
    that exist) `FILE_MODE`. SQLite creates the -wal and -shm files with the database's own
    mode, so they are private from then on. Raises `OSError`."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    os.close(fd)
    for each in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if each.exists() and stat.S_IMODE(each.stat().st_mode) != FILE_MODE:
            each.chmod(FILE_MODE)


def check_integrity(conn: sqlite3.Connection) -> None:
    """`PRAGMA quick_check` of the whole database. Raises `StoreError` with the first
    problem it found (a database with garbage in the middle must not start)."""
    problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        problem = "; ".join(problems)[:300]
        raise StoreError(f"the database is damaged ({problem}); restore a backup or move it away")


def connect(path: Path) -> sqlite3.Connection:
    """Open the database at `path` (created if missing, mode `FILE_MODE`: `make_private`)
    with the store's settings (WAL, `synchronous=NORMAL`, foreign keys, autocommit:
    transactions are explicit), check it (`check_integrity`) and migrate it. The connection
    must stay in the thread that opened it.

    Raises `StoreError` (naming `path`) if it cannot be used or is damaged."""
    conn: sqlite3.Connection | None = None
    try:
        make_private(path)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        check_integrity(conn)
        add_functions(conn)
        migrate(conn)
    except (sqlite3.Error, StoreError, OSError) as exc:
        if conn is not None:
            conn.close()
        raise StoreError(f"{path}: {exc}") from None
    return conn


def add_functions(conn: sqlite3.Connection) -> None:
    """Register the store's SQL functions on `conn`: `skeleton(name)` is
    `perudo_ssh.names.skeleton` (migrations 3 and 5 fill `accounts.name_skeleton` with it)."""
    conn.create_function("skeleton", 1, skeleton, deterministic=True)


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's schema version (`PRAGMA user_version`; 0 for a new file)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, to: int = SCHEMA_VERSION) -> int:
    """Apply the missing `MIGRATIONS` up to version `to`, each in its own transaction (a
    failing one leaves the database at the version before it). Returns the version reached.

    Registers the store's SQL functions on `conn` (`add_functions`), which the migrations use.
    Raises `StoreError` when the database is newer than this code knows."""
    add_functions(conn)
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"schema version {version} is newer than this perudo-ssh knows ({SCHEMA_VERSION})"
        )
    while version < to:
        script = MIGRATIONS[version]
        try:
            # executescript runs it all; BEGIN..COMMIT makes it one transaction
            conn.executescript(
                f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {version + 1};\nCOMMIT;"
            )
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        version += 1
    return version


@contextmanager
def _write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed on success, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
