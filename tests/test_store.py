"""The store (issue 4, item 1): one SQLite file, created on first start, its schema migrated
at start-up from an empty file or from any earlier version; what was acknowledged survives a
restart and a kill -9; the queries never run on the event loop's thread. And the accounts,
link codes, games, ratings, bans, mutes and audit rows it keeps."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import signal
import sqlite3
import stat
import sys
import threading
from pathlib import Path

import pytest

from perudo_ssh.names import claimable_name
from perudo_ssh.records import LINK_CODE_SECONDS, Account, GamePlayer, LinkRefused, NewGame
from perudo_ssh.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError, migrate, schema_version
from perudo_ssh.store import schema as store_schema

SCRIPT = Path(sys.executable).with_name("perudo-ssh")

TABLES_BY_VERSION = {
    1: {"accounts", "keys", "games", "game_players"},
    2: {"link_codes", "ratings", "bans", "mutes", "audit"},
    3: set(),  # a column: accounts.name_skeleton
    4: {"unfinished_tables"},
    5: {"name_counters"},  # and accounts.name_skeleton computed again
    6: set(),  # a column: accounts.turn_bell
    7: set(),  # a column: accounts.bot (bot accounts, issue 14)
}


def tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows}


def game(account_id: int | None, n: int = 0) -> NewGame:
    """A small finished game of `account_id` (seat 0, won) against a bot."""
    return NewGame(
        finished=1_700_000_000.0 + n,
        preset="classic",
        rated=True,
        record=b'{"format":"perudo-record/1","n":%d}' % n,
        verdict=b'{"format":"perudo-verdict/1"}',
        players=(
            GamePlayer(seat=0, name="ana", account_id=account_id, place=1),
            GamePlayer(seat=1, name="bot-Luis", account_id=None, place=2, bot=True),
        ),
    )


# ---- migrations ---------------------------------------------------------------------------


def test_the_schema_has_every_version_and_the_tables_each_adds():
    assert SCHEMA_VERSION == len(MIGRATIONS) == len(TABLES_BY_VERSION) >= 3


async def test_a_missing_file_is_created_with_the_latest_schema_in_wal_mode(tmp_path):
    db = tmp_path / "new.db"
    store = await Store.open(db)
    await store.close()
    assert tables(db) >= set().union(*TABLES_BY_VERSION.values())
    with sqlite3.connect(db) as conn:
        assert schema_version(conn) == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
async def test_a_database_of_every_earlier_version_is_migrated_keeping_its_rows(tmp_path, version):
    db = tmp_path / "old.db"
    with sqlite3.connect(db, isolation_level=None) as conn:
        assert migrate(conn, to=version) == version
        assert tables(db) == (
            set().union(*(TABLES_BY_VERSION[v] for v in range(1, version + 1)))
            if version
            else set()
        )
        if version >= 1:
            conn.execute(
                "INSERT INTO accounts (id, name, name_key, created) VALUES (7, 'Ana', 'ana', 1.0)"
            )
            conn.execute("INSERT INTO keys VALUES ('SHA256:ana', 7, 1.0)")
            conn.execute(
                "INSERT INTO games (id, finished, preset, rated, record, verdict)"
                " VALUES (3, 2.0, 'club', 1, '{}', '{}')"
            )
            conn.execute("INSERT INTO game_players VALUES (3, 0, 'Ana', 7, 1, 0, NULL)")
    conn.close()

    store = await Store.open(db)
    try:
        with sqlite3.connect(db) as check:
            assert schema_version(check) == SCHEMA_VERSION
        if version >= 1:
            account = await store.account_for_key("SHA256:ana")
            assert account is not None and (account.id, account.name) == (7, "Ana")
            with sqlite3.connect(db) as check:
                skeletons = check.execute("SELECT name_skeleton FROM accounts").fetchall()
            # filled by the v3 migration, and again by v5 (for a row inserted at v3 or v4
            # itself, which skipped the store's code); a row inserted at v5 without the
            # store's code has none (no later migration computes them)
            assert skeletons == ([("ana",)] if version < 5 else [("",)])
            (summary,) = await store.games_of(7)
            assert (summary.id, summary.preset, summary.place) == (3, "club", 1)
        # the tables of the later versions work
        await store.add_audit("ana", "kick", "ben", "spam")
        assert [a.action for a in await store.list_audit()] == ["kick"]
        await store.save_tables({4: b'{"id":4}'})
        assert await store.unfinished_tables() == [(4, b'{"id":4}')]
    finally:
        await store.close()


async def test_migration_3_fills_the_skeletons_of_the_names_already_there(tmp_path):
    db = tmp_path / "v2.db"
    with sqlite3.connect(db, isolation_level=None) as conn:
        migrate(conn, to=2)
        conn.executemany(
            "INSERT INTO accounts (id, name, name_key, created) VALUES (?, ?, ?, 1.0)",
            # "аna" with a Cyrillic "а": claimed before version 3 checked look-alikes
            [(1, "ana", "ana"), (2, "\u0430na", "\u0430na"), (3, "Иван", "иван")],
        )
    conn.close()
    store = await Store.open(db)
    try:
        with sqlite3.connect(db) as check:
            rows = check.execute("SELECT id, name, name_skeleton FROM accounts ORDER BY id")
            assert rows.fetchall() == [
                (1, "ana", "ana"),
                (2, "\u0430na", "ana"),
                (3, "Иван", "иbah"),
            ]
            plan = check.execute(
                "EXPLAIN QUERY PLAN SELECT 1 FROM accounts WHERE name_skeleton = 'ana'"
            ).fetchall()
            assert "accounts_skeleton" in str(plan[0][-1])
        # both look-alikes keep their names; a new one gets an alternative
        assert (await store.account(2)) == Account(2, "\u0430na")
        assert (await store.claim_key("SHA256:new", "ΑΝΑ")).account.name == "ΑΝΑ2"
    finally:
        await store.close()


async def test_migration_5_computes_the_skeletons_again_and_adds_the_name_counters(tmp_path):
    db = tmp_path / "v4.db"
    with sqlite3.connect(db, isolation_level=None) as conn:
        migrate(conn, to=4)
        # the skeletons as version 4 computed them: `_` and `.` were themselves
        conn.executemany(
            "INSERT INTO accounts (id, name, name_key, name_skeleton, created)"
            " VALUES (?, ?, ?, ?, 1.0)",
            [
                (1, "alice_2", "alice_2", "alice_2"),
                (2, "a.b", "a.b", "a.b"),
                (3, "Ana", "ana", "ana"),
            ],
        )
    conn.close()
    store = await Store.open(db)
    try:
        with sqlite3.connect(db) as check:
            assert schema_version(check) == SCHEMA_VERSION
            rows = check.execute("SELECT id, name, name_skeleton FROM accounts ORDER BY id")
            assert rows.fetchall() == [
                (1, "alice_2", "alice-2"),
                (2, "a.b", "a-b"),
                (3, "Ana", "ana"),
            ]
            assert check.execute("SELECT * FROM name_counters").fetchall() == []
        # the names claimed before keep them; a look-alike by its separator gets a number
        assert (await store.account(1)) == Account(1, "alice_2")
        assert (await store.claim_key("SHA256:new", "a-b")).account.name == "a-b2"
        assert (await store.claim_key("SHA256:ana", "ana")).account.name == "ana2"
        with sqlite3.connect(db) as check:
            counters = check.execute("SELECT * FROM name_counters ORDER BY skeleton").fetchall()
            assert counters == [("a-b", 3), ("ana", 3)]
    finally:
        await store.close()


async def test_a_failing_migration_changes_nothing(tmp_path, monkeypatch):
    db = tmp_path / "half.db"
    with sqlite3.connect(db, isolation_level=None) as conn:
        migrate(conn, to=1)
    conn.close()
    broken = (MIGRATIONS[0], "CREATE TABLE bans (id INTEGER PRIMARY KEY); SELECT nonsense FROM x;")
    monkeypatch.setattr(store_schema, "MIGRATIONS", broken)
    with pytest.raises(StoreError, match="no such table: x"):
        await Store.open(db)
    with sqlite3.connect(db) as conn:
        assert schema_version(conn) == 1
    assert "bans" not in tables(db)


async def test_a_newer_or_foreign_file_is_refused_with_a_clear_error(tmp_path):
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match=f"newer.db: schema version {SCHEMA_VERSION + 1} is newer"):
        await Store.open(newer)
    garbage = tmp_path / "notes.txt"
    garbage.write_text("this is not a database, just some text long enough " * 40)
    with pytest.raises(StoreError, match="notes.txt: file is not a database"):
        await Store.open(garbage)
    with pytest.raises(StoreError, match="folder.db: .*No such file or directory"):
        await Store.open(tmp_path / "no" / "such" / "folder.db")


async def test_the_database_and_its_wal_are_private(tmp_path, monkeypatch):
    """Issue 11: the files hold every game's hidden dice: 0600 under the usual umask, and an
    older file left 0644 is made 0600 at start."""
    old = os.umask(0o022)
    try:
        db = tmp_path / "perudo.db"
        store = await Store.open(db)
        await store.claim_key("SHA256:ana", "ana")
        files = [db, tmp_path / "perudo.db-wal", tmp_path / "perudo.db-shm"]
        assert [stat.S_IMODE(f.stat().st_mode) for f in files] == [0o600] * 3
        await store.close()
        for f in files:
            if f.exists():
                f.chmod(0o644)
        store = await Store.open(db)
        await store.claim_key("SHA256:ben", "ben")
        modes = [stat.S_IMODE(f.stat().st_mode) for f in files if f.exists()]
        assert modes and set(modes) == {0o600}
        await store.close()
    finally:
        os.umask(old)


async def test_a_damaged_database_is_refused_naming_the_file(tmp_path):
    """Garbage written into the middle of the file (an index page): the start stops with
    one line naming the file, instead of serving from a damaged database."""
    db = tmp_path / "perudo.db"
    store = await Store.open(db)
    for i in range(300):
        await store.claim_key(f"SHA256:key{i}", f"player{i}")
    await store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    assert pages > 4
    data = bytearray(db.read_bytes())
    middle = (pages // 2) * page
    data[middle : middle + page] = b"\x5a" * page
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=r"perudo.db: (the database is damaged|database disk)"):
        await Store.open(db)


# ---- durability -------------------------------------------------------------------------


async def test_what_was_written_is_there_after_a_restart(tmp_path):
    db = tmp_path / "perudo.db"
    store = await Store.open(db)
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    game_id = await store.add_game(game(ana.id))
    await store.close()
    await store.close()  # idempotent

    store = await Store.open(db)
    try:
        assert await store.account_for_key("SHA256:ana") == ana
        stored = await store.game(game_id)
        assert stored is not None and stored.record == game(ana.id).record.decode()
    finally:
        await store.close()
    with pytest.raises(RuntimeError, match="closed"):
        await store.account(ana.id)


WRITER = """
import asyncio, sys
from perudo_ssh.store import Store
from perudo_ssh.records import GamePlayer, NewGame

async def main():
    store = await Store.open(sys.argv[1])
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    n = 0
    while True:
        players = (GamePlayer(0, "ana", ana.id, 1), GamePlayer(1, "bot-Luis", None, 2, True))
        game = NewGame(float(n), "classic", True, b'{"n":%d}' % n, b"{}", players)
        print(await store.add_game(game), flush=True)  # acknowledged: committed
        n += 1

asyncio.run(main())
"""


async def test_every_acknowledged_game_survives_a_kill_9(tmp_path):
    db = tmp_path / "perudo.db"
    writer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, str(db), stdout=asyncio.subprocess.PIPE
    )
    assert writer.stdout is not None
    acknowledged = []
    try:
        async with asyncio.timeout(30):
            while len(acknowledged) < 200:
                line = await writer.stdout.readline()
                assert line, "the writer died"
                acknowledged.append(int(line))
    finally:
        writer.send_signal(signal.SIGKILL)  # mid-write, most likely
        await writer.wait()
    assert writer.returncode == -signal.SIGKILL
    store = await Store.open(db)
    try:
        for game_id in acknowledged:
            stored = await store.game(game_id)
            assert stored is not None and stored.record == f'{{"n":{game_id - 1}}}'
        summaries = await store.games_of(1, limit=100_000)
        assert len(summaries) >= len(acknowledged)
    finally:
        await store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_queries_run_in_the_store_thread_not_the_loop(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        names = await asyncio.gather(
            *(store._run(lambda conn: threading.current_thread().name) for _ in range(5))
        )
        assert {re.sub(r"_\d+$", "", n) for n in names} == {"perudo-store"}
        assert threading.current_thread().name != names[0]
    finally:
        await store.close()


@pytest.mark.slow
async def test_serve_creates_the_db_file_and_refuses_one_it_cannot_use(tmp_path):
    db = tmp_path / "sub" / "perudo.db"
    db.parent.mkdir()
    server = await asyncio.create_subprocess_exec(
        SCRIPT, "serve", "--port", "0", "--host-keys", str(tmp_path / "keys"), "--db", str(db),
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert server.stderr is not None
    try:
        async with asyncio.timeout(30):
            while b"perudo-ssh listening" not in (line := await server.stderr.readline()):
                assert line, "the server ended before listening"
        with sqlite3.connect(db) as conn:
            assert schema_version(conn) == SCHEMA_VERSION
        server.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            assert await server.wait() == 0
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"\x00not sqlite\x00" * 200)
    done = await asyncio.create_subprocess_exec(
        SCRIPT, "serve", "--port", "0", "--host-keys", str(tmp_path / "keys"), "--db", str(bad),
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await done.communicate()
    assert done.returncode == 2
    assert b"perudo-ssh serve: cannot use the database" in err and b"bad.db" in err


# ---- accounts and keys ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "claimable"),
    [
        ("ana", "ana"),
        ("guest-3", "guest3"),
        ("Guest-12", "Guest12"),
        ("bot-Ana", "botAna"),
        ("ana-2", "ana2"),
        ("ana-b", "ana-b"),
        ("guest", "guest"),
        ("-", "-"),
        # any of `-_.` passes for the lobby's hyphen (issue 11)
        ("bot.Ana", "botAna"),
        ("bot_Ana", "botAna"),
        ("alice_2", "alice2"),
        ("alice.2", "alice2"),
        ("guest_3", "guest3"),
        ("GUEST.3", "GUEST3"),
        # several separators go at once: none is left to make the shape again
        ("bot--Ana", "botAna"),
        ("bot._Ana", "botAna"),
        ("alice-_2", "alice2"),
        ("bot.Ana_2", "botAna2"),
        ("a_b.c-d", "a_b.c-d"),
        ("ana_b2", "ana_b2"),
        ("robot.x", "robot.x"),
    ],
)
def test_names_shaped_like_the_lobby_s_own_lose_their_hyphen(wanted, claimable):
    assert claimable_name(wanted) == claimable


async def test_a_key_claims_a_name_others_get_the_next_free_one(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        first = await store.claim_key("SHA256:1", "ana")
        assert (first.account.name, first.created) == ("ana", True)
        again = await store.claim_key("SHA256:1", "zed")  # a known key: its account, any name
        assert (again.account, again.asked, again.created) == (first.account, "zed", False)
        assert (await store.claim_key("SHA256:2", "ANA")).account.name == "ANA2"
        assert (await store.claim_key("SHA256:3", "Ana")).account.name == "Ana3"
        # "ana-2" reads as ana's second session: it claims "ana2", taken, so "ana22"
        assert (await store.claim_key("SHA256:4", "ana-2")).account.name == "ana22"
        assert (await store.claim_key("SHA256:5", "guest-1")).account.name == "guest1"
        # "Ана" and "АНА" are one name: casefold, not ASCII-only NOCASE
        assert (await store.claim_key("SHA256:6", "Ана")).account.name == "Ана"
        assert (await store.claim_key("SHA256:7", "АНА")).account.name == "АНА2"
        long = "abcdefghijklmnop"  # 16, the longest name
        assert (await store.claim_key("SHA256:8", long)).account.name == long
        assert (await store.claim_key("SHA256:9", long)).account.name == "abcdefghijklmno2"
        assert await store.account_named("aNa") == first.account
        assert await store.account(first.account.id) == first.account
        assert await store.account_for_key("SHA256:nobody") is None
    finally:
        await store.close()


async def test_a_name_looking_like_a_taken_one_gets_the_next_free_one(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        assert (await store.claim_key("SHA256:ana", "ana")).account.name == "ana"
        # a Cyrillic "а", then Greek capitals: they look like "ana" / "ANA", one name
        lookalike = await store.claim_key("SHA256:mallory", "\u0430na")
        assert (lookalike.account.name, lookalike.asked) == ("\u0430na2", "\u0430na")
        assert (await store.claim_key("SHA256:greek", "ΑΝΑ")).account.name == "ΑΝΑ3"
        # "ana2" looks like "аna2", "ana3" like "ΑΝΑ3": both taken
        assert (await store.claim_key("SHA256:x", "ana")).account.name == "ana4"
        # a wholly Cyrillic or Greek name that looks like no other is itself
        assert (await store.claim_key("SHA256:ivan", "Иван")).account.name == "Иван"
        assert (await store.claim_key("SHA256:eva", "ανα")).account.name == "ανα"  # "ava"
        assert (await store.claim_key("SHA256:ava", "ava")).account.name == "ava2"
    finally:
        await store.close()


async def test_lobby_shaped_names_with_any_separator_are_never_given(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        assert (await store.claim_key("SHA256:1", "bot.Ana")).account.name == "botAna"
        assert (await store.claim_key("SHA256:2", "alice_2")).account.name == "alice2"
        assert (await store.claim_key("SHA256:3", "guest_3")).account.name == "guest3"
        # skeleton folds `_ . -`: "alice_b" looks like "alice.b" and "alice-b"
        assert (await store.claim_key("SHA256:4", "alice_b")).account.name == "alice_b"
        assert (await store.claim_key("SHA256:5", "alice.b")).account.name == "alice.b2"
        assert (await store.claim_key("SHA256:6", "alice-b")).account.name == "alice-b3"
        # a taken name ending in a separator: its number does not make "ana-2"
        assert (await store.claim_key("SHA256:7", "ana-")).account.name == "ana-"
        assert (await store.claim_key("SHA256:8", "ana_")).account.name == "ana2"
    finally:
        await store.close()


async def trace(store: Store) -> list[str]:
    """The SQL statements the store's connection runs from now on (set in its thread)."""
    statements: list[str] = []
    await store._run(lambda conn: conn.set_trace_callback(statements.append))
    return statements


async def test_a_name_many_keys_ask_for_costs_each_claim_a_few_statements(tmp_path):
    """Issue 11: 1,500 keys asking for one name made each login walk zz2, zz3, ... with a
    query each; the name counter makes a claim a bounded number of statements."""
    store = await Store.open(tmp_path / "perudo.db")
    try:
        statements = await trace(store)
        names, counts = [], []
        for i in range(300):
            before = len(statements)
            names.append((await store.claim_key(f"SHA256:{i}", "zz")).account.name)
            counts.append(len(statements) - before)
        assert names == ["zz"] + [f"zz{n}" for n in range(2, 301)]
        # BEGIN, the key, the name, the counter, the number, account, counter, key, COMMIT:
        # the 300th claim costs what the 2nd did
        assert counts[0] == 6 and set(counts[1:]) == {9}
    finally:
        await store.close()


async def test_a_number_taken_directly_is_passed_over_once(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        statements = await trace(store)
        assert (await store.claim_key("SHA256:1", "ana")).account.name == "ana"
        assert (await store.claim_key("SHA256:3", "ana3")).account.name == "ana3"
        assert (await store.claim_key("SHA256:2", "ana")).account.name == "ana2"
        before = len(statements)
        assert (await store.claim_key("SHA256:4", "ana")).account.name == "ana4"
        skipping = len(statements) - before
        before = len(statements)
        assert (await store.claim_key("SHA256:5", "ANA")).account.name == "ANA5"
        assert len(statements) - before == skipping - 1  # ana3 is not tried again
        # names cut to fit 16 characters with their number
        long = "abcdefghijklmnop"
        claimed = [(await store.claim_key(f"SHA256:l{i}", long)).account.name for i in range(11)]
        assert claimed == [long] + [f"abcdefghijklmno{n}" for n in range(2, 10)] + [
            "abcdefghijklmn10",
            "abcdefghijklmn11",
        ]
    finally:
        await store.close()


async def test_a_link_code_links_a_key_once_and_expires(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:laptop", "ana", now=1000.0)).account
        code = await store.new_link_code(ana.id, now=1000.0)
        assert re.fullmatch(r"[A-HJ-NP-Z2-9]{8}", code)
        expired = await store.new_link_code(ana.id, now=1000.0)
        with pytest.raises(LinkRefused) as refused:
            await store.link_key(expired, "SHA256:phone", now=1000.0 + LINK_CODE_SECONDS)
        assert refused.value.message == "that code is unknown or has expired: ask for a new one"
        # typed in lower case with a dash, as shown
        linked = await store.link_key(f"{code[:4].lower()}-{code[4:]}", "SHA256:desktop", 1001.0)
        assert linked == ana
        with pytest.raises(LinkRefused):  # used up
            await store.link_key(code, "SHA256:tablet", now=1002.0)
        assert [k.fingerprint for k in await store.keys_of(ana.id)] == [
            "SHA256:laptop",
            "SHA256:desktop",
        ]
        # linking a key already ana's again changes nothing (and uses the code)
        again = await store.new_link_code(ana.id, now=1003.0)
        assert await store.link_key(again, "SHA256:laptop", now=1003.0) == ana
        assert len(await store.keys_of(ana.id)) == 2
    finally:
        await store.close()


async def test_a_key_whose_account_has_games_is_not_moved_by_a_link(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        ben = (await store.claim_key("SHA256:ben", "ben")).account
        await store.add_game(game(ben.id))
        code = await store.new_link_code(ana.id)
        with pytest.raises(LinkRefused) as refused:
            await store.link_key(code, "SHA256:ben")
        assert refused.value.message_args == {"name": "ben"}
        assert str(refused.value) == (
            "this key already holds ben, who has played games: it stays theirs"
        )
        assert await store.account_for_key("SHA256:ben") == ben
        # an account made by one login and no game goes with its only key
        cyd = (await store.claim_key("SHA256:cyd", "cyd")).account
        assert await store.link_key(code, "SHA256:cyd") == ana
        assert await store.account(cyd.id) is None
    finally:
        await store.close()


async def test_a_game_of_an_account_that_a_link_removed_mid_game_is_still_stored(tmp_path):
    # Seen over SSH: cyd's session sat at a table as account cyd while cyd's key was linked
    # to ana; at the game's end the foreign key to the deleted account lost the whole game.
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        cyd = (await store.claim_key("SHA256:cyd", "cyd")).account
        assert await store.link_key(await store.new_link_code(ana.id), "SHA256:cyd") == ana
        players = (
            GamePlayer(seat=0, name="cyd", account_id=cyd.id, place=1),
            GamePlayer(seat=1, name="ana", account_id=ana.id, place=2),
        )
        game_id = await store.add_game(dataclasses.replace(game(None), players=players))
        stored = await store.game(game_id)
        assert stored is not None
        assert [(p.name, p.account_id) for p in stored.players] == [("cyd", None), ("ana", ana.id)]
        assert [g.id for g in await store.games_of(ana.id)] == [game_id]
        await store.add_ratings(game_id, {cyd.id: (27.0, 8.0), ana.id: (23.0, 8.0)}, at=5.0)
        assert await store.rating_of(cyd.id) is None
        latest = await store.rating_of(ana.id)
        assert latest is not None and (latest.game_id, latest.mu) == (game_id, 23.0)
    finally:
        await store.close()


# ---- games and ratings ------------------------------------------------------------------


async def test_games_are_listed_newest_first_page_by_page(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        ben = (await store.claim_key("SHA256:ben", "ben")).account
        ids = [await store.add_game(game(ana.id, n)) for n in range(5)]
        await store.add_game(game(ben.id, 9))
        page = await store.games_of(ana.id, limit=3)
        assert [g.id for g in page] == ids[:1:-1]
        rest = await store.games_of(ana.id, limit=3, before=page[-1].id)
        assert [g.id for g in rest] == ids[1::-1]
        assert page[0].players == ("ana", "bot-Luis")
        assert (page[0].name, page[0].place, page[0].rated) == ("ana", 1, True)
        stored = await store.game(ids[0])
        assert stored is not None
        assert stored.seat_of(ana.id) == GamePlayer(0, "ana", ana.id, 1)
        assert stored.seat_of(ben.id) is None
        assert await store.game(12345) is None
    finally:
        await store.close()


async def test_ratings_are_kept_per_game_and_the_latest_is_current(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        ben = (await store.claim_key("SHA256:ben", "ben")).account
        g1, g2 = await store.add_game(game(ana.id, 1)), await store.add_game(game(ana.id, 2))
        await store.add_ratings(g1, {ana.id: (26.5, 8.0), ben.id: (23.5, 8.0)}, at=10.0)
        await store.add_ratings(g2, {ana.id: (27.0, 7.5)}, at=20.0)
        assert [(r.game_id, r.mu) for r in await store.rating_history(ana.id)] == [
            (g1, 26.5),
            (g2, 27.0),
        ]
        latest = await store.rating_of(ana.id)
        assert latest is not None and (latest.mu, latest.sigma, latest.at) == (27.0, 7.5, 20.0)
        current = {a.name: r.mu for a, r in await store.current_ratings()}
        assert current == {"ana": 27.0, "ben": 23.5}
        assert await store.rating_of(12345) is None
    finally:
        await store.close()


# ---- moderation -------------------------------------------------------------------------


async def test_bans_hold_until_they_end_or_are_lifted(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        admin = (await store.claim_key("SHA256:admin", "boss")).account
        key_ban = await store.add_ban("key", "SHA256:eve", "spam", None, admin.id, now=100.0)
        address_ban = await store.add_ban("address", "10.0.0.9", "flood", until=200.0, now=100.0)
        assert await store.active_ban_for("SHA256:eve", None, now=150.0) == key_ban
        assert await store.active_ban_for(None, "10.0.0.9", now=150.0) == address_ban
        assert await store.active_ban_for("SHA256:ok", "10.0.0.9", now=200.0) is None
        assert await store.active_ban_for("SHA256:ok", "10.0.0.1", now=150.0) is None
        assert [b.id for b in await store.bans(now=150.0)] == [address_ban.id, key_ban.id]
        assert await store.lift_ban(key_ban.id, now=160.0) is True
        assert await store.lift_ban(key_ban.id, now=161.0) is False
        assert await store.active_ban_for("SHA256:eve", None, now=170.0) is None
        with pytest.raises(ValueError):
            await store.add_ban("name", "eve", "no")  # type: ignore[arg-type]
    finally:
        await store.close()


async def test_mutes_and_the_audit_log(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ben = (await store.claim_key("SHA256:ben", "ben")).account
        mute = await store.add_mute(ben.id, "shouting", until=60.0, now=0.0)
        assert await store.active_mute(ben.id, now=30.0) == mute
        assert await store.active_mutes(now=30.0) == [mute]
        assert await store.active_mute(ben.id, now=60.0) is None
        await store.add_mute(ben.id, "again", now=70.0)
        assert await store.lift_mute(ben.id, now=80.0) == 1
        assert await store.active_mutes(now=90.0) == []
        for action in ("mute", "kick", "ban"):
            await store.add_audit("boss", action, "ben", "why", now=1.0)
        log = await store.list_audit(limit=2)
        assert [(e.admin, e.action, e.target, e.reason) for e in log] == [
            ("boss", "ban", "ben", "why"),
            ("boss", "kick", "ben", "why"),
        ]
    finally:
        await store.close()


@pytest.mark.parametrize("module", ["perudo_ssh.store", "perudo_ssh.lobby.archive"])
def test_the_store_and_the_archive_import_neither_textual_nor_asyncssh(module):
    from tests.test_layering import _imported_after

    assert _imported_after(module) == []


async def test_the_turn_bell_is_on_until_the_player_turns_it_off_and_it_is_kept(tmp_path):
    db = tmp_path / "bell.db"
    store = await Store.open(db)
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        ben = (await store.claim_key("SHA256:ben", "ben")).account
        assert await store.turn_bell(ana.id) and await store.turn_bell(ben.id)
        await store.set_turn_bell(ana.id, False)
        assert not await store.turn_bell(ana.id) and await store.turn_bell(ben.id)
    finally:
        await store.close()
    store = await Store.open(db)  # kept across a restart
    try:
        assert not await store.turn_bell(ana.id)
        await store.set_turn_bell(ana.id, True)
        assert await store.turn_bell(ana.id)
    finally:
        await store.close()
