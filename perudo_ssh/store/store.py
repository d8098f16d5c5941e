"""`Store`, the database as the event loop uses it (`perudo_ssh.store`)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Literal

from perudo_ssh.records import (
    Account,
    AuditEntry,
    Ban,
    Claim,
    GameSummary,
    KeyInfo,
    Mute,
    NewGame,
    RatingRow,
    StoredGame,
    level_account_name,
)
from perudo_ssh.store.backup import ServingLock
from perudo_ssh.store.queries import (
    _ACTIVE,
    _account,
    _active_ban_for,
    _add_audit,
    _add_ban,
    _add_game,
    _add_mute,
    _add_ratings,
    _audit,
    _ban,
    _claim_key,
    _execute,
    _fetchall,
    _fetchone,
    _game,
    _games_of,
    _level_account,
    _link_key,
    _mute,
    _new_link_code,
    _now,
    _rating,
    _save_tables,
)
from perudo_ssh.store.schema import (
    DEFAULT_PATH,
    T,
    connect,
)

# ---- the store ------------------------------------------------------------------------------


class Store:
    """The database, used from the event loop: every method is a coroutine whose query runs
    in the store's one thread (in the order called). Make it with `await Store.open(path)`,
    end it with `await store.close()`. Times are unix seconds (float); `now` arguments default
    to the current time and exist for tests. Methods called after `close` raise RuntimeError.
    """

    def __init__(
        self,
        path: Path,
        executor: ThreadPoolExecutor,
        conn: sqlite3.Connection,
        lock: ServingLock | None = None,
    ):
        self.path = path
        self._executor = executor
        self._conn = conn
        self._lock = lock

    @classmethod
    async def open(cls, path: Path | str = DEFAULT_PATH, serving: bool = False) -> Store:
        """Open (creating it on first start) and migrate the database at `path`. A server
        opens it `serving`: the store then holds the database's `ServingLock` until closed,
        so `perudo-ssh restore` and a second server refuse to touch it
        (`perudo_ssh.store.backup`).

        Raises `StoreError` if it cannot be opened or created, is not a SQLite database, or
        was written by a newer perudo-ssh; `DatabaseInUse` (a `StoreError`) if `serving`
        and another server holds it."""
        path = Path(path)
        lock = ServingLock.take(path) if serving else None
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perudo-store")
        try:
            conn = await asyncio.get_running_loop().run_in_executor(executor, connect, path)
        except BaseException:
            executor.shutdown(wait=False)
            if lock is not None:
                lock.release()
            raise
        return cls(path, executor, conn, lock)

    async def close(self) -> None:
        """Finish the queries already asked for, then close the database and give back its
        serving lock (idempotent)."""
        if self._executor is None:
            return
        executor, self._executor = self._executor, None  # type: ignore[assignment]
        try:
            await asyncio.get_running_loop().run_in_executor(executor, self._conn.close)
            executor.shutdown(wait=True)
        finally:
            if self._lock is not None:
                self._lock.release()

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
