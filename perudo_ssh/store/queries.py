"""The store's queries (`perudo_ssh.store`): each a function of the connection, run in the
store's one thread by `Store`; rows made into `perudo_ssh.records` rows."""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import fields

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
    LinkRefused,
    Mute,
    NewGame,
    RatingRow,
    StoredGame,
    UnknownLinkCode,
    normal_code,
)
from perudo_ssh.store.schema import (
    _R,
    _write,
)


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
