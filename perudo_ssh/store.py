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

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import fields
from functools import partial
from pathlib import Path
from typing import Literal, TypeVar

from perudo_ssh.i18n import N_
from perudo_ssh.names import claimable_name, numbered, skeleton
from perudo_ssh.records import (
    LINK_CODE_ALPHABET,
    LINK_CODE_LENGTH,
    LINK_CODE_SECONDS,
    LINK_CODES_PER_ACCOUNT,
    Account,
    AuditEntry,
    Ban,
    Claim,
    GamePlayer,
    GameSummary,
    KeyInfo,
    LinkRefused,
    Mute,
    NewGame,
    RatingRow,
    StoredGame,
    UnknownLinkCode,
    level_account_name,
    normal_code,
)

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
# (`perudo_ssh.lobby.table.TableSnapshot` JSON, hidden dice included: the database is the server's
# own), deleted in the transaction that stores it once finished (`add_game(..., forget=)`),
# or when its table closes mid-game; restored when the server starts.
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


def _account(row: sqlite3.Row | None) -> Account | None:
    return None if row is None else Account(id=row["id"], name=row["name"], bot=bool(row["bot"]))


def _player(row: sqlite3.Row) -> GamePlayer:
    return GamePlayer(
        seat=row["seat"],
        name=row["name"],
        account_id=row["account_id"],
        place=row["place"],
        bot=bool(row["bot"]),
        left_round=row["left_round"],
    )


def _row_as(cls: type[_R], row: sqlite3.Row) -> _R:
    """The dataclass `cls` built from the columns of `row` named like its fields."""
    return cls(**{f.name: row[f.name] for f in fields(cls)})  # type: ignore[arg-type]


def _ban(row: sqlite3.Row | None) -> Ban | None:
    return None if row is None else _row_as(Ban, row)


def _mute(row: sqlite3.Row | None) -> Mute | None:
    return None if row is None else _row_as(Mute, row)


def _audit(row: sqlite3.Row) -> AuditEntry:
    return _row_as(AuditEntry, row)


def _rating(row: sqlite3.Row) -> RatingRow:
    return _row_as(RatingRow, row)


def _taken(conn: sqlite3.Connection, name: str) -> bool:
    """Whether an account has `name` in any case (`name_key`) or one looking like it
    (`name_skeleton`)."""
    return (
        conn.execute(
            "SELECT 1 FROM accounts WHERE name_key = ? OR name_skeleton = ? LIMIT 1",
            (name.casefold(), skeleton(name)),
        ).fetchone()
        is not None
    )


def _new_account(conn: sqlite3.Connection, wanted: str, now: float) -> Account:
    """Create an account (in the caller's transaction) named `claimable_name(wanted)` if
    free (`_taken`), else `numbered(that, n)` for the first free n from the name's counter
    (`name_counters`, by its skeleton; 2 for a name never taken before), which is then set
    past n. A number found taken (someone asked for `ana3` itself) is passed over once and
    never tried again, so a claim makes a bounded number of queries, amortised, however many
    claimed that name before; an account deleted since does not give its number back. The
    first claims are as without a counter: `ana`, then `ana2`, `ana3`, …; names that look
    alike share one counter (`ana`, then the Cyrillic `аna` is `аna2`, Greek `ΑΝΑ` is `ΑΝΑ3`).
    """
    name = claimable_name(wanted)
    if _taken(conn, name):
        shape = skeleton(name)
        row = conn.execute("SELECT next FROM name_counters WHERE skeleton = ?", (shape,)).fetchone()
        number = 2 if row is None else max(2, int(row["next"]))
        base = name
        while _taken(conn, name := numbered(base, number)):
            number += 1
        conn.execute(
            "INSERT INTO name_counters (skeleton, next) VALUES (?, ?)"
            " ON CONFLICT (skeleton) DO UPDATE SET next = excluded.next",
            (shape, number + 1),
        )
    cursor = conn.execute(
        "INSERT INTO accounts (name, name_key, name_skeleton, created) VALUES (?, ?, ?, ?)",
        (name, name.casefold(), skeleton(name), now),
    )
    assert cursor.lastrowid is not None
    return Account(id=cursor.lastrowid, name=name)


def _level_account(conn: sqlite3.Connection, name: str, now: float) -> Account:
    with _write(conn):
        row = conn.execute(
            "SELECT id, name, bot FROM accounts WHERE name_key = ?", (name.casefold(),)
        ).fetchone()
        if row is not None:
            return Account(row["id"], row["name"], True)
        cursor = conn.execute(
            "INSERT INTO accounts (name, name_key, name_skeleton, created, bot)"
            " VALUES (?, ?, ?, ?, 1)",
            (name, name.casefold(), skeleton(name), now),
        )
        assert cursor.lastrowid is not None
        return Account(cursor.lastrowid, name, True)


def _claim_key(conn: sqlite3.Connection, fingerprint: str, wanted: str, now: float) -> Claim:
    with _write(conn):
        row = conn.execute(
            "SELECT a.id, a.name, a.bot FROM keys k JOIN accounts a ON a.id = k.account_id"
            " WHERE k.fingerprint = ?",
            (fingerprint,),
        ).fetchone()
        if row is not None:
            account = Account(row["id"], row["name"], bool(row["bot"]))
            return Claim(account=account, asked=wanted, created=False)
        account = _new_account(conn, wanted, now)
        conn.execute(
            "INSERT INTO keys (fingerprint, account_id, added) VALUES (?, ?, ?)",
            (fingerprint, account.id, now),
        )
        return Claim(account=account, asked=wanted, created=True)


def _new_link_code(conn: sqlite3.Connection, account_id: int, now: float) -> str:
    with _write(conn):
        conn.execute("DELETE FROM link_codes WHERE expires <= ?", (now,))
        while True:
            code = "".join(secrets.choice(LINK_CODE_ALPHABET) for _ in range(LINK_CODE_LENGTH))
            try:
                conn.execute(
                    "INSERT INTO link_codes (code, account_id, expires) VALUES (?, ?, ?)",
                    (code, account_id, now + LINK_CODE_SECONDS),
                )
            except sqlite3.IntegrityError:
                continue  # the same code twice: draw again
            conn.execute(
                "DELETE FROM link_codes WHERE account_id = ? AND code NOT IN"
                " (SELECT code FROM link_codes WHERE account_id = ?"
                " ORDER BY expires DESC, rowid DESC LIMIT ?)",
                (account_id, account_id, LINK_CODES_PER_ACCOUNT),
            )
            return code


def _link_key(
    conn: sqlite3.Connection, code: str, fingerprint: str, now: float, banned: Collection[str]
) -> Account:
    if fingerprint in banned:
        raise LinkRefused(N_("this key is banned from this server: it cannot be linked"))
    with _write(conn):
        row = conn.execute(
            "SELECT a.id, a.name, a.bot FROM link_codes c JOIN accounts a ON a.id = c.account_id"
            " WHERE c.code = ? AND c.expires > ?",
            (normal_code(code), now),
        ).fetchone()
        if row is None:
            raise UnknownLinkCode(N_("that code is unknown or has expired: ask for a new one"))
        account = Account(row["id"], row["name"], bool(row["bot"]))
        keys = conn.execute("SELECT fingerprint FROM keys WHERE account_id = ?", (account.id,))
        if any(key["fingerprint"] in banned for key in keys):
            raise LinkRefused(
                N_("{name} is banned from this server: no key can be linked to it"),
                name=account.name,
            )
        held = conn.execute(
            "SELECT account_id FROM keys WHERE fingerprint = ?", (fingerprint,)
        ).fetchone()
        if held is not None and held["account_id"] == account.id:
            conn.execute("DELETE FROM link_codes WHERE code = ?", (normal_code(code),))
            return account
        if held is not None:
            old = held["account_id"]
            played = conn.execute(
                "SELECT 1 FROM game_players WHERE account_id = ? LIMIT 1", (old,)
            ).fetchone()
            if played is not None:
                name = conn.execute("SELECT name FROM accounts WHERE id = ?", (old,)).fetchone()
                raise LinkRefused(
                    N_("this key already holds {name}, who has played games: it stays theirs"),
                    name=name["name"],
                )
            conn.execute("DELETE FROM keys WHERE fingerprint = ?", (fingerprint,))
            # an account this key made by logging in once, with no games: it goes with it
            if conn.execute("SELECT 1 FROM keys WHERE account_id = ?", (old,)).fetchone() is None:
                conn.execute("DELETE FROM accounts WHERE id = ?", (old,))
        conn.execute(
            "INSERT INTO keys (fingerprint, account_id, added) VALUES (?, ?, ?)",
            (fingerprint, account.id, now),
        )
        conn.execute("DELETE FROM link_codes WHERE code = ?", (normal_code(code),))
        return account


def _add_game(conn: sqlite3.Connection, game: NewGame, forget: int | None = None) -> int:
    with _write(conn):
        if forget is not None:
            conn.execute("DELETE FROM unfinished_tables WHERE id = ?", (forget,))
        cursor = conn.execute(
            "INSERT INTO games (finished, preset, rated, record, verdict) VALUES (?, ?, ?, ?, ?)",
            (
                game.finished,
                game.preset,
                int(game.rated),
                game.record.decode(),
                game.verdict.decode(),
            ),
        )
        game_id = cursor.lastrowid
        assert game_id is not None
        # an account gone since its session began (a link moved its only key) plays as a
        # guest: NULL, not a foreign-key error that would lose the game for everyone
        conn.executemany(
            "INSERT INTO game_players (game_id, seat, name, account_id, place, bot, left_round)"
            " VALUES (?, ?, ?, (SELECT id FROM accounts WHERE id = ?), ?, ?, ?)",
            [
                (game_id, p.seat, p.name, p.account_id, p.place, int(p.bot), p.left_round)
                for p in game.players
            ],
        )
        return game_id


def _game(conn: sqlite3.Connection, game_id: int) -> StoredGame | None:
    row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
    if row is None:
        return None
    players = conn.execute(
        "SELECT * FROM game_players WHERE game_id = ? ORDER BY seat", (game_id,)
    ).fetchall()
    return StoredGame(
        id=row["id"],
        finished=row["finished"],
        preset=row["preset"],
        rated=bool(row["rated"]),
        record=row["record"],
        verdict=row["verdict"],
        players=tuple(_player(p) for p in players),
    )


def _games_of(
    conn: sqlite3.Connection, account_id: int, limit: int, before: int | None
) -> list[GameSummary]:
    rows = conn.execute(
        "SELECT g.id, g.finished, g.preset, g.rated, me.name, me.place,"
        " (SELECT json_group_array(name) FROM"
        "   (SELECT name FROM game_players WHERE game_id = g.id ORDER BY seat)) AS players"
        " FROM game_players me JOIN games g ON g.id = me.game_id"
        " WHERE me.account_id = ? AND g.id < ?"
        " ORDER BY g.id DESC LIMIT ?",
        (account_id, before if before is not None else 2**62, limit),
    ).fetchall()
    return [
        GameSummary(
            id=row["id"],
            finished=row["finished"],
            preset=row["preset"],
            rated=bool(row["rated"]),
            players=tuple(json.loads(row["players"])),
            name=row["name"],
            place=row["place"],
        )
        for row in rows
    ]


_ACTIVE = "lifted IS NULL AND (until IS NULL OR until > ?)"


def _add_ban(
    conn: sqlite3.Connection,
    kind: str,
    value: str,
    reason: str,
    until: float | None,
    by_account: int | None,
    now: float,
) -> Ban:
    if kind not in ("key", "address"):
        raise ValueError(f"a ban is on a key or an address, not {kind!r}")
    with _write(conn):
        cursor = conn.execute(
            "INSERT INTO bans (kind, value, reason, until, by_account, created)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (kind, value, reason, until, by_account, now),
        )
        ban = _ban(conn.execute("SELECT * FROM bans WHERE id = ?", (cursor.lastrowid,)).fetchone())
    assert ban is not None
    return ban


def _active_ban_for(
    conn: sqlite3.Connection, fingerprint: str | None, address: str | None, now: float
) -> Ban | None:
    row = conn.execute(
        f"SELECT * FROM bans WHERE {_ACTIVE} AND ((kind = 'key' AND value = ?)"
        " OR (kind = 'address' AND value = ?)) ORDER BY until IS NOT NULL, until DESC LIMIT 1",
        (now, fingerprint, address),
    ).fetchone()
    return _ban(row)


def _add_mute(
    conn: sqlite3.Connection,
    account_id: int,
    reason: str,
    until: float | None,
    by_account: int | None,
    now: float,
) -> Mute:
    with _write(conn):
        cursor = conn.execute(
            "INSERT INTO mutes (account_id, reason, until, by_account, created)"
            " VALUES (?, ?, ?, ?, ?)",
            (account_id, reason, until, by_account, now),
        )
        mute = _mute(
            conn.execute("SELECT * FROM mutes WHERE id = ?", (cursor.lastrowid,)).fetchone()
        )
    assert mute is not None
    return mute


def _add_audit(
    conn: sqlite3.Connection,
    admin: str,
    action: str,
    target: str,
    reason: str,
    detail: str,
    now: float,
) -> AuditEntry:
    with _write(conn):
        cursor = conn.execute(
            "INSERT INTO audit (at, admin, action, target, reason, detail)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (now, admin, action, target, reason, detail),
        )
        row = conn.execute("SELECT * FROM audit WHERE id = ?", (cursor.lastrowid,)).fetchone()
    return _audit(row)


def _add_ratings(
    conn: sqlite3.Connection, game_id: int, ratings: Mapping[int, tuple[float, float]], at: float
) -> None:
    with _write(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO ratings (account_id, game_id, mu, sigma, at)"
            " SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?)",
            [
                (account, game_id, mu, sigma, at, account)
                for account, (mu, sigma) in ratings.items()
            ],
        )


def _execute(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> int:
    with _write(conn):
        return conn.execute(sql, params).rowcount


def _fetchone(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> sqlite3.Row | None:
    return conn.execute(sql, params).fetchone()


def _fetchall(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> list[sqlite3.Row]:
    return conn.execute(sql, params).fetchall()


# ---- the store ------------------------------------------------------------------------------


class Store:
    """The database, used from the event loop: every method is a coroutine whose query runs
    in the store's one thread (in the order called). Make it with `await Store.open(path)`,
    end it with `await store.close()`. Times are unix seconds (float); `now` arguments default
    to the current time and exist for tests. Methods called after `close` raise RuntimeError.
    """

    def __init__(self, path: Path, executor: ThreadPoolExecutor, conn: sqlite3.Connection):
        self.path = path
        self._executor = executor
        self._conn = conn

    @classmethod
    async def open(cls, path: Path | str = DEFAULT_PATH) -> Store:
        """Open (creating it on first start) and migrate the database at `path`.

        Raises `StoreError` if it cannot be opened or created, is not a SQLite database, or
        was written by a newer perudo-ssh."""
        path = Path(path)
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perudo-store")
        try:
            conn = await asyncio.get_running_loop().run_in_executor(executor, connect, path)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(path, executor, conn)

    async def close(self) -> None:
        """Finish the queries already asked for, then close the database (idempotent)."""
        if self._executor is None:
            return
        executor, self._executor = self._executor, None  # type: ignore[assignment]
        await asyncio.get_running_loop().run_in_executor(executor, self._conn.close)
        executor.shutdown(wait=True)

    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        if self._executor is None:
            raise RuntimeError("the store is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, self._conn, *args))

    # ---- accounts and keys (issue 4, item 2) ----------------------------------------------

    async def claim_key(self, fingerprint: str, wanted: str, now: float | None = None) -> Claim:
        """The account of key `fingerprint`; a key seen for the first time claims `wanted`
        (a `clean_name`) — or, if another key holds that name or one looking like it
        (`perudo_ssh.names.skeleton`: the Cyrillic "аna" is taken by "ana"), or it is
        lobby-shaped (`claimable_name`), the first free alternative (`ana2`, `ana3`, …; a
        few queries however many keys asked for that name before: `_new_account`)."""
        return await self._run(_claim_key, fingerprint, wanted, _now(now))

    async def account_for_key(self, fingerprint: str) -> Account | None:
        """The account key `fingerprint` signs in as, or None for a key never seen."""
        row = await self._run(
            _fetchone,
            "SELECT a.id, a.name, a.bot FROM keys k JOIN accounts a ON a.id = k.account_id"
            " WHERE k.fingerprint = ?",
            (fingerprint,),
        )
        return _account(row)

    async def account(self, account_id: int) -> Account | None:
        """The account with id `account_id`, or None."""
        row = await self._run(
            _fetchone, "SELECT id, name, bot FROM accounts WHERE id = ?", (account_id,)
        )
        return _account(row)

    async def account_named(self, name: str) -> Account | None:
        """The account called `name` (any case), or None."""
        row = await self._run(
            _fetchone,
            "SELECT id, name, bot FROM accounts WHERE name_key = ?",
            (name.casefold(),),
        )
        return _account(row)

    async def turn_bell(self, account_id: int) -> bool:
        """Whether `account_id` wants the bell and the terminal title when it becomes their
        turn while they are elsewhere (issue 13); True for an account not found."""
        row = await self._run(
            _fetchone, "SELECT turn_bell FROM accounts WHERE id = ?", (account_id,)
        )
        return row is None or bool(row["turn_bell"])

    async def set_turn_bell(self, account_id: int, on: bool) -> None:
        """Keep `account_id`'s choice of `turn_bell`."""
        await self._run(
            _execute, "UPDATE accounts SET turn_bell = ? WHERE id = ?", (int(on), account_id)
        )

    async def set_bot(self, account_id: int, bot: bool) -> bool:
        """Make `account_id` a bot account (`bot` True) or a person's again (issue 14): it
        takes effect at its keys' next login. False if there is no such account."""
        changed = await self._run(
            _execute, "UPDATE accounts SET bot = ? WHERE id = ?", (int(bot), account_id)
        )
        return changed > 0

    async def level_account(self, level: str, now: float | None = None) -> Account:
        """The account that holds the rating of the built-in bots of `level` (issue 14:
        `perudo_ssh.bots.LEVELS`), made on first use: named `bot-LEVEL` (a lobby-shaped
        name no player can claim: `claimable_name`), a bot account, no key."""
        name = level_account_name(level)
        return await self._run(_level_account, name, _now(now))

    async def rated_games(self, account_ids: Sequence[int]) -> dict[int, int]:
        """`{account_id: rated games}` (an account never rated is 0): for the built-in bots'
        levels, whose seats are nobody's account in the stored games."""
        counts = dict.fromkeys(account_ids, 0)
        if counts:
            marks = ", ".join("?" * len(counts))
            rows = await self._run(
                _fetchall,
                "SELECT account_id, COUNT(*) AS n FROM ratings"
                f" WHERE account_id IN ({marks}) GROUP BY account_id",
                list(counts),
            )
            counts.update((row["account_id"], row["n"]) for row in rows)
        return counts

    async def bot_accounts(self, account_ids: Sequence[int]) -> set[int]:
        """Which of `account_ids` are bot accounts."""
        if not account_ids:
            return set()
        marks = ", ".join("?" * len(account_ids))
        rows = await self._run(
            _fetchall, f"SELECT id FROM accounts WHERE bot = 1 AND id IN ({marks})", account_ids
        )
        return {row["id"] for row in rows}

    async def keys_of(self, account_id: int) -> list[KeyInfo]:
        """The keys that sign in as `account_id`, oldest first."""
        rows = await self._run(
            _fetchall,
            "SELECT fingerprint, added FROM keys WHERE account_id = ? ORDER BY added, fingerprint",
            (account_id,),
        )
        return [KeyInfo(fingerprint=r["fingerprint"], added=r["added"]) for r in rows]

    async def new_link_code(self, account_id: int, now: float | None = None) -> str:
        """A one-time code (`LINK_CODE_LENGTH` characters of `LINK_CODE_ALPHABET`, valid
        `LINK_CODE_SECONDS`) that links another key to `account_id` (`link_key`). The
        account's codes beyond the newest `LINK_CODES_PER_ACCOUNT` stop working."""
        return await self._run(_new_link_code, account_id, _now(now))

    async def link_key(
        self,
        code: str,
        fingerprint: str,
        now: float | None = None,
        banned: Collection[str] = (),
    ) -> Account:
        """Key `fingerprint` signs in as the account of link code `code` from now on; the code
        is used up. Returns that account.

        A key that already signs in as an account with no games leaves it (and that account
        is deleted once it has no key left). Raises `LinkRefused` for an unknown or expired
        code, a key whose account has played games, and — `banned` being the fingerprints
        under a ban — a banned key or an account one of whose keys is banned (the code is
        kept then)."""
        return await self._run(_link_key, code, fingerprint, _now(now), frozenset(banned))

    # ---- finished games (issue 4, item 3) --------------------------------------------------

    async def add_game(self, game: NewGame, forget: int | None = None) -> int:
        """Store a finished game with its players; returns its id (ids only grow). A
        player's `account_id` that no longer exists (the account went with its only key to
        another account by `link_key` during the game) is stored as None, a guest's.
        `forget`: the game's save key in the unfinished tables (`save_tables`), deleted in
        the same transaction — at every moment the game is in one table or the other."""
        return await self._run(_add_game, game, forget)

    async def game(self, game_id: int) -> StoredGame | None:
        """The stored game `game_id`, or None."""
        return await self._run(_game, game_id)

    async def games_of(
        self, account_id: int, limit: int = 100, before: int | None = None
    ) -> list[GameSummary]:
        """The games `account_id` played, newest first: at most `limit`, with ids below
        `before` if given (the next page)."""
        return await self._run(_games_of, account_id, limit, before)

    async def game_counts(self, account_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """`{account_id: (games, wins)}` over the stored games of each of `account_ids` (a
        win is place 1); an account with no game is `(0, 0)`. For the leaderboard."""
        counts = dict.fromkeys(account_ids, (0, 0))
        for start in range(0, len(counts), 500):  # SQLite's limit on ? parameters
            chunk = list(counts)[start : start + 500]
            rows = await self._run(
                _fetchall,
                "SELECT account_id, COUNT(*) AS games, SUM(place = 1) AS wins FROM game_players"
                f" WHERE account_id IN ({', '.join('?' * len(chunk))}) GROUP BY account_id",
                chunk,
            )
            for row in rows:
                counts[row["account_id"]] = (row["games"], row["wins"])
        return counts

    # ---- ratings (computed by perudo_ssh.ratings) -----------------------------------------

    async def add_ratings(
        self, game_id: int, ratings: Mapping[int, tuple[float, float]], at: float | None = None
    ) -> None:
        """Each account's `(mu, sigma)` after game `game_id` (one transaction); an account
        that no longer exists is skipped (see `add_game`)."""
        await self._run(_add_ratings, game_id, dict(ratings), _now(at))

    async def rating_of(self, account_id: int) -> RatingRow | None:
        """`account_id`'s latest rating, or None before any rated game."""
        row = await self._run(
            _fetchone,
            "SELECT * FROM ratings WHERE account_id = ? ORDER BY game_id DESC LIMIT 1",
            (account_id,),
        )
        return None if row is None else _rating(row)

    async def rating_history(self, account_id: int) -> list[RatingRow]:
        """`account_id`'s rating after each rated game, oldest first."""
        rows = await self._run(
            _fetchall,
            "SELECT * FROM ratings WHERE account_id = ? ORDER BY game_id",
            (account_id,),
        )
        return [_rating(r) for r in rows]

    async def current_ratings(self) -> list[tuple[Account, RatingRow]]:
        """Every rated account with its latest rating (in no particular order: rank them
        with `perudo_ssh.ratings.ordinal`)."""
        rows = await self._run(
            _fetchall,
            "SELECT r.*, a.name, a.bot FROM ratings r JOIN accounts a ON a.id = r.account_id"
            " WHERE r.game_id = (SELECT MAX(game_id) FROM ratings WHERE account_id = r.account_id)",
            (),
        )
        return [(Account(r["account_id"], r["name"], bool(r["bot"])), _rating(r)) for r in rows]

    # ---- moderation: bans, mutes, the audit log -------------------------------------------

    async def add_ban(
        self,
        kind: Literal["key", "address"],
        value: str,
        reason: str,
        until: float | None = None,
        by_account: int | None = None,
        now: float | None = None,
    ) -> Ban:
        """Ban a key (`value` a fingerprint) or an address until `until` (None: for ever).
        Raises ValueError for another `kind`."""
        return await self._run(_add_ban, kind, value, reason, until, by_account, _now(now))

    async def active_ban_for(
        self, fingerprint: str | None, address: str | None, now: float | None = None
    ) -> Ban | None:
        """The ban in force on key `fingerprint` or address `address` (the longest one), or
        None."""
        return await self._run(_active_ban_for, fingerprint, address, _now(now))

    async def lift_ban(self, ban_id: int, now: float | None = None) -> bool:
        """Lift ban `ban_id` now; False if there was no such ban in force."""
        n = await self._run(
            _execute,
            f"UPDATE bans SET lifted = ? WHERE id = ? AND {_ACTIVE}",
            (_now(now), ban_id, _now(now)),
        )
        return n > 0

    async def bans(self, now: float | None = None) -> list[Ban]:
        """The bans in force, newest first."""
        rows = await self._run(
            _fetchall, f"SELECT * FROM bans WHERE {_ACTIVE} ORDER BY id DESC", (_now(now),)
        )
        return [ban for r in rows if (ban := _ban(r)) is not None]

    async def add_mute(
        self,
        account_id: int,
        reason: str,
        until: float | None = None,
        by_account: int | None = None,
        now: float | None = None,
    ) -> Mute:
        """Mute `account_id`'s chat until `until` (None: for ever)."""
        return await self._run(_add_mute, account_id, reason, until, by_account, _now(now))

    async def active_mute(self, account_id: int, now: float | None = None) -> Mute | None:
        """The mute in force on `account_id` (the longest one), or None."""
        row = await self._run(
            _fetchone,
            f"SELECT * FROM mutes WHERE account_id = ? AND {_ACTIVE}"
            " ORDER BY until IS NOT NULL, until DESC LIMIT 1",
            (account_id, _now(now)),
        )
        return _mute(row)

    async def active_mutes(self, now: float | None = None) -> list[Mute]:
        """Every mute in force (to load at start), oldest first."""
        rows = await self._run(
            _fetchall, f"SELECT * FROM mutes WHERE {_ACTIVE} ORDER BY id", (_now(now),)
        )
        return [mute for r in rows if (mute := _mute(r)) is not None]

    async def lift_mute(self, account_id: int, now: float | None = None) -> int:
        """Lift every mute in force on `account_id`; returns how many were lifted."""
        return await self._run(
            _execute,
            f"UPDATE mutes SET lifted = ? WHERE account_id = ? AND {_ACTIVE}",
            (_now(now), account_id, _now(now)),
        )

    async def add_audit(
        self,
        admin: str,
        action: str,
        target: str,
        reason: str = "",
        detail: str = "",
        now: float | None = None,
    ) -> AuditEntry:
        """Write one admin action to the audit log: who, what, whom, why (and when: now)."""
        return await self._run(_add_audit, admin, action, target, reason, detail, _now(now))

    async def list_audit(self, limit: int = 100) -> list[AuditEntry]:
        """The last `limit` audit entries, newest first."""
        rows = await self._run(_fetchall, "SELECT * FROM audit ORDER BY id DESC LIMIT ?", (limit,))
        return [_audit(r) for r in rows]

    # ---- unfinished tables (issue 5, item 3) ------------------------------------------------

    async def save_tables(
        self, changes: Mapping[int, bytes | None], now: float | None = None
    ) -> None:
        """Save the snapshots of `changes` (a game's save key -> snapshot JSON, or None:
        forget that game) in one transaction: when this returns, they survive a crash of the
        server."""
        if changes:
            await self._run(_save_tables, dict(changes), _now(now))

    async def unfinished_tables(self) -> list[tuple[int, bytes]]:
        """Every saved game as (save key, snapshot bytes), by key. The bytes are as stored,
        whatever they are (a row that is not a snapshot is the reader's to refuse)."""
        rows = await self._run(
            _fetchall,
            "SELECT id, CAST(snapshot AS BLOB) AS snapshot FROM unfinished_tables ORDER BY id",
            (),
        )
        return [(row["id"], bytes(row["snapshot"] or b"")) for row in rows]


def _save_tables(conn: sqlite3.Connection, changes: dict[int, bytes | None], now: float) -> None:
    with _write(conn):
        for table_id, snapshot in changes.items():
            if snapshot is None:
                conn.execute("DELETE FROM unfinished_tables WHERE id = ?", (table_id,))
            else:
                conn.execute(
                    "INSERT INTO unfinished_tables (id, snapshot, saved) VALUES (?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot,"
                    " saved = excluded.saved",
                    (table_id, snapshot.decode(), now),
                )


def _now(now: float | None) -> float:
    return time.time() if now is None else now
