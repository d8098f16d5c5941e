"""Backups of the database while the server runs, restores while it does not (issue 15,
item 4), and the lock that tells the two apart.

- `backup(db, target)` copies the database with SQLite's online backup API
  (`sqlite3.Connection.backup`): a consistent copy of every committed transaction, WAL
  included, taken while the server goes on writing (in WAL mode a reader blocks no writer).
  The copy is written next to `target` under a temporary name, checked (`PRAGMA
  quick_check`, a perudo-ssh schema), made private and renamed over `target`: a backup
  interrupted half-way never looks like a backup, and `target` is replaced whole.
- `restore(source, db)` puts a backup in place of the database. It refuses while a server
  uses the database (`DatabaseInUse`) and refuses a file that is no perudo-ssh database, is
  damaged, or was written by a newer perudo-ssh. The database it replaces is first copied
  aside to `<db>.before-restore-<UTC time>`, so a restore of the wrong file is undone by
  another restore. Both copies go through SQLite (never a file copy), so a -wal file beside
  the old database can never be replayed into the restored one.
- `ServingLock` is held by every process that serves the database (`perudo-ssh serve`,
  `perudo-ssh lobby`: `Store.open(serving=True)`; `serve --workers` for its whole run,
  handing it to its lobby process, so that it stays held while the lobby restarts): an
  exclusive `flock` on `<db>.lock`, which the kernel releases when the process ends however
  it ends, so a `kill -9` leaves no stale lock. A second server on the same database is
  refused too (two lobbies would both restore and play the same tables).

Imports neither textual nor asyncssh; prints nothing (the `perudo-ssh backup` and `restore`
commands in `perudo_ssh.cli` say what happened).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import time
from pathlib import Path
from typing import NamedTuple

from perudo_ssh.store.schema import FILE_MODE, SCHEMA_VERSION, StoreError, schema_version

LOCK_SUFFIX = ".lock"
"""The serving lock of database `perudo.db` is the file `perudo.db.lock` beside it."""

LOCK_FD_ENV = "PERUDO_SSH_LOCK_FD"
"""The descriptor of the lock `serve --workers` holds for its whole run and hands to its lobby
process, which adopts it (`ServingLock.take`): the database stays locked while the lobby
restarts."""

ASIDE = ".before-restore-"
"""What `restore` names the database it replaced: `perudo.db.before-restore-20261207-0930`."""


class DatabaseInUse(StoreError):
    """A server (this process or another) holds the database's `ServingLock`. The message
    names the database and, when known, the server's process id."""


class Contents(NamedTuple):
    """What a database file holds, as `backup` and `restore` report it: `accounts`, finished
    `games`, unfinished `tables` saved for a restart, its `size` in bytes."""

    accounts: int
    games: int
    tables: int
    size: int


class Restored(NamedTuple):
    """What `restore` did: the restored database's `contents`, and where the database it
    replaced was put (`aside`; None when there was none)."""

    contents: Contents
    aside: Path | None


def lock_path(db: Path) -> Path:
    """The serving lock file of database `db` (`LOCK_SUFFIX`)."""
    return db.with_name(db.name + LOCK_SUFFIX)


class ServingLock:
    """The exclusive lock of a database that a server holds while it serves it (module
    docstring). `ServingLock.take(db)` returns it held, or raises `DatabaseInUse` (held by
    another process, or another `ServingLock` of this one) or `StoreError` (the lock file
    cannot be made). `release()` gives it back (idempotent); the lock file stays, empty of
    meaning once no process holds it."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def take(cls, db: Path) -> ServingLock:
        path = lock_path(db)
        inherited = cls._inherited(path)
        if inherited is not None:
            return inherited
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        except OSError as exc:
            raise StoreError(f"{db}: cannot make its lock file {path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            who = f" (process {holder})" if holder.isdigit() else ""
            raise DatabaseInUse(f"{db} is in use by a perudo-ssh server{who}") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"{db}: cannot lock {path}: {exc.strerror}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    @classmethod
    def _inherited(cls, path: Path) -> ServingLock | None:
        """The lock of `path` handed down by the supervisor (`LOCK_FD_ENV`), if it is this
        file's: its open file description is locked already (closing this copy of it
        releases nothing while the supervisor holds it)."""
        fd_text = os.environ.get(LOCK_FD_ENV, "")
        if not fd_text.isdigit():
            return None
        fd = int(fd_text)
        try:
            given, here = os.fstat(fd), os.stat(path)
        except OSError:
            return None
        if (given.st_dev, given.st_ino) != (here.st_dev, here.st_ino):
            return None
        del os.environ[LOCK_FD_ENV]  # adopted once: a second take is refused as usual
        return cls(path, fd)

    @property
    def held(self) -> bool:
        """Whether this lock is still held (not released)."""
        return self._fd is not None

    def fileno(self) -> int:
        """The lock file's descriptor (to hand it to a child process); ValueError once
        released."""
        if self._fd is None:
            raise ValueError("the lock was released")
        return self._fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the last descriptor releases the flock


def contents(conn: sqlite3.Connection, path: Path) -> Contents:
    """Count what the perudo-ssh database open on `conn` (the file `path`) holds."""

    def count(table: str) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    return Contents(
        count("accounts"), count("games"), count("unfinished_tables"), path.stat().st_size
    )


def _check(conn: sqlite3.Connection, path: Path) -> None:
    """Raise `StoreError` unless `conn` (the file `path`) is an undamaged perudo-ssh database
    this version can open."""
    try:
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
        version = schema_version(conn)
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.OperationalError as exc:  # locked, unreadable: not the file's fault
        raise StoreError(f"cannot read {path}: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not a perudo-ssh database ({exc})") from None
    if problems != ["ok"]:
        raise StoreError(f"{path} is damaged ({'; '.join(problems)[:300]})")
    if version == 0 or not {"accounts", "games", "unfinished_tables"} <= tables:
        raise StoreError(f"{path} is not a perudo-ssh database")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer perudo-ssh (schema {version}; this one knows "
            f"up to {SCHEMA_VERSION})"
        )


def _open_existing(path: Path) -> sqlite3.Connection:
    """A connection to the existing database file `path` (never creating one)."""
    if not path.is_file():
        raise StoreError(f"no database {path}")
    try:
        conn = sqlite3.connect(f"file:{path.resolve()}?mode=rw", uri=True, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 5000")
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: {exc}") from None
    return conn


def _copy(source: sqlite3.Connection, target: Path) -> None:
    """Write the database open on `source` to the new file `target` (mode `FILE_MODE`)
    through SQLite's online backup, then flush it to disk."""
    fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_EXCL, FILE_MODE)
    os.close(fd)
    with contextlib.closing(sqlite3.connect(target, isolation_level=None)) as copy:
        source.backup(copy)
        copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
    with open(target, "rb") as written:
        os.fsync(written.fileno())


def _not_the_database(other: Path, db: Path, what: str) -> None:
    """Raise `StoreError` if `other` is the database `db` itself, one of its -wal, -shm or
    lock files, or a database a server holds (a backup renamed over a live database would
    fork it: the server would go on writing into the file it had open, lost at its next
    start)."""
    names = {db.name + suffix for suffix in ("", "-wal", "-shm", LOCK_SUFFIX)}
    same_folder = other.resolve().parent == db.resolve().parent
    if (same_folder and other.name in names) or (
        other.exists() and db.exists() and os.path.samefile(other, db)
    ):
        raise StoreError(f"cannot {what} {other}: it is the database {db} itself")
    if other.exists() and lock_path(other).exists():
        try:
            ServingLock.take(other).release()
        except DatabaseInUse:
            raise StoreError(f"cannot {what} {other}: a perudo-ssh server uses it") from None


def backup(db: Path, target: Path) -> Contents:
    """Copy the database `db` to the file `target` (replacing it whole if it exists) while
    a server may be using `db` (module docstring). Returns what the copy holds.

    Raises `StoreError`: `db` missing, not a perudo-ssh database or damaged; `target` the
    database itself (or its -wal, -shm, lock file) or a database a server uses; `target`'s
    folder missing or not writable (`target` is then unchanged)."""
    _not_the_database(target, db, "back up onto")
    temporary = target.with_name(f".{target.name}.partial-{os.getpid()}")
    with contextlib.closing(_open_existing(db)) as source:
        _check(source, db)
        try:
            _copy(source, temporary)
            with contextlib.closing(_open_existing(temporary)) as copy:
                _check(copy, temporary)
                held = contents(copy, temporary)
            os.replace(temporary, target)
        except OSError as exc:
            raise StoreError(f"cannot write {target}: {exc.strerror}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"cannot copy {db}: {exc}") from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
    return held._replace(size=target.stat().st_size)


def restore(source: Path, db: Path, now: float | None = None) -> Restored:
    """Put the backup `source` in place of the database `db` (module docstring): `db`, if
    it exists, is first copied aside to `<db>.before-restore-<UTC time of now>`.

    Raises `DatabaseInUse` (a server serves `db`; nothing changed), `StoreError` (`source`
    missing, not a perudo-ssh database, damaged or from a newer version; `db` unusable;
    nothing changed)."""
    _not_the_database(source, db, "restore from")
    lock = ServingLock.take(db)
    try:
        with contextlib.closing(_open_existing(source)) as backup_conn:
            _check(backup_conn, source)
            aside: Path | None = None
            try:
                if db.exists() and db.stat().st_size > 0:
                    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
                    aside = db.with_name(f"{db.name}{ASIDE}{stamp}")
                    number = 1
                    while aside.exists():  # two restores in one second: keep both
                        number += 1
                        aside = db.with_name(f"{db.name}{ASIDE}{stamp}-{number}")
                    with contextlib.closing(_open_existing(db)) as old:
                        _copy(old, aside)
                if not db.exists():
                    os.close(os.open(db, os.O_RDWR | os.O_CREAT, FILE_MODE))
                with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
                    conn.execute("PRAGMA busy_timeout = 5000")
                    backup_conn.backup(conn)
                    _check(conn, db)
                    held = contents(conn, db)
            except OSError as exc:
                raise StoreError(f"cannot write {db}: {exc.strerror}") from None
            except sqlite3.Error as exc:
                raise StoreError(f"cannot restore into {db}: {exc}") from None
    finally:
        lock.release()
    return Restored(held, aside)
