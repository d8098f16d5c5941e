"""Backups and restores (issue 15, item 4): `perudo-ssh backup FILE` copies the database while
the server runs; `perudo-ssh restore FILE` refuses while a server uses it, keeps the database
it replaces, and refuses what is not a usable backup. A backup taken in the middle of a game
and restored into a fresh server gives the players their seats back; the game they finish
there is in their history."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh.cli import main
from perudo_ssh.store import SCHEMA_VERSION, Store, StoreError
from perudo_ssh.store.backup import (
    DatabaseInUse,
    ServingLock,
    backup,
    lock_path,
    restore,
)
from tests.conftest import StoredServer
from tests.sshterm import Terminal
from tests.test_e2e_faults import a_few_moves_in, my_turn, play_on, sit_down, steer

SCRIPT = Path(sys.executable).with_name("perudo-ssh")


def names_in(db: Path) -> list[str]:
    with closing(sqlite3.connect(db)) as conn:
        return [row[0] for row in conn.execute("SELECT name FROM accounts ORDER BY id")]


async def a_database(path: Path, *names: str) -> Path:
    store = await Store.open(path)
    try:
        for name in names:
            await store.claim_key(f"SHA256:{name}", name)
    finally:
        await store.close()
    return path


async def test_a_backup_holds_every_committed_write_of_a_server_still_running(tmp_path):
    db = tmp_path / "perudo.db"
    store = await Store.open(db, serving=True)  # as `serve` opens it
    try:
        await store.claim_key("SHA256:ana", "ana")
        await store.save_tables({1: b"table one"})
        held = backup(db, tmp_path / "copy.db")  # the server keeps its WAL open meanwhile
        await store.claim_key("SHA256:ben", "ben")  # and writes on after it
    finally:
        await store.close()
    assert (held.accounts, held.games, held.tables) == (1, 0, 1)
    assert held.size == (tmp_path / "copy.db").stat().st_size
    assert names_in(tmp_path / "copy.db") == ["ana"]
    assert not list(tmp_path.glob(".copy.db.partial-*"))  # no half-written file left
    assert (tmp_path / "copy.db").stat().st_mode & 0o777 == 0o600  # keys and bans: private
    copy = await Store.open(tmp_path / "copy.db")
    try:
        assert await copy.unfinished_tables() == [(1, b"table one")]
    finally:
        await copy.close()


async def test_restore_is_refused_while_a_server_uses_the_database_and_changes_nothing(tmp_path):
    db = await a_database(tmp_path / "perudo.db", "ana")
    old = await a_database(tmp_path / "old.db", "zoe")
    store = await Store.open(db, serving=True)
    try:
        before = db.read_bytes()
        with pytest.raises(DatabaseInUse, match=r"perudo.db is in use by a perudo-ssh server"):
            restore(old, db)
        assert db.read_bytes() == before
        assert not list(tmp_path.glob("perudo.db.before-restore-*"))
        with pytest.raises(DatabaseInUse):  # nor does a second server start on it
            await Store.open(db, serving=True)
    finally:
        await store.close()
    done = restore(old, db)  # once the server has stopped
    assert names_in(db) == ["zoe"]
    assert done.aside is not None and names_in(done.aside) == ["ana"]


async def test_the_restored_database_is_the_backup_and_the_replaced_one_is_kept(tmp_path):
    db = await a_database(tmp_path / "perudo.db", "ana", "ben")
    copy = tmp_path / "backup.db"
    backup(db, copy)
    store = await Store.open(db, serving=True)
    try:
        await store.claim_key("SHA256:cyd", "cyd")  # after the backup: in the WAL only
    finally:
        await store.close()
    done = restore(copy, db, now=1796635800.0)  # 2026-12-07 09:30 UTC
    assert done.aside == tmp_path / "perudo.db.before-restore-20261207-093000"
    assert (done.contents.accounts, done.contents.games) == (2, 0)
    assert names_in(db) == ["ana", "ben"]
    assert names_in(done.aside) == ["ana", "ben", "cyd"]
    store = await Store.open(db, serving=True)  # the server opens it as ever
    try:
        assert (await store.account_named("ben")) is not None
        assert (await store.account_named("cyd")) is None
    finally:
        await store.close()
    fresh = tmp_path / "fresh" / "perudo.db"
    fresh.parent.mkdir()
    assert restore(copy, fresh).aside is None  # into a new place: nothing to keep
    assert names_in(fresh) == ["ana", "ben"]


async def test_what_is_no_usable_backup_is_refused_and_nothing_changes(tmp_path):
    db = await a_database(tmp_path / "perudo.db", "ana")
    before = names_in(db)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all " * 300)
    newer = tmp_path / "newer.db"
    backup(db, newer)
    with closing(sqlite3.connect(newer)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE notes (text)")
        conn.execute("PRAGMA user_version = 1")
    for source, why in (
        (tmp_path / "missing.db", "no database"),
        (junk, "is not a perudo-ssh database"),
        (other, "is not a perudo-ssh database"),
        (newer, "was written by a newer perudo-ssh"),
    ):
        with pytest.raises(StoreError, match=why):
            restore(source, db)
        assert names_in(db) == before
    with pytest.raises(StoreError, match="no database"):
        backup(tmp_path / "missing.db", tmp_path / "copy.db")
    with pytest.raises(StoreError, match="cannot write"):
        backup(db, tmp_path / "no such folder" / "copy.db")
    assert not list(tmp_path.glob("perudo.db.before-restore-*"))


def test_a_killed_server_leaves_no_lock_behind(tmp_path):
    db = tmp_path / "perudo.db"
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from perudo_ssh.store.backup import "
            "ServingLock; ServingLock.take(Path(sys.argv[1])); print('held', flush=True); "
            "sys.stdin.read()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            with pytest.raises(DatabaseInUse, match=rf"\(process {holder.pid}\)"):
                ServingLock.take(db)
        finally:
            holder.kill()  # kill -9: no clean-up runs
    assert holder.returncode == -9
    lock = ServingLock.take(db)
    assert lock.held and lock_path(db).exists()
    lock.release()
    assert not lock.held


async def test_the_commands_say_what_they_did_and_refuse_with_one_line(tmp_path, capsys):
    db = await a_database(tmp_path / "perudo.db", "ana", "ben")
    config = ["--config", str(tmp_path / "none.toml")]
    assert main(["backup", str(tmp_path / "b.db"), "--db", str(db), *config]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"backed up {db} to {tmp_path / 'b.db'}: 2 accounts, 0 finished games, "
        "0 unfinished tables, "
    ) and out.endswith(" KB\n")
    store = await Store.open(db, serving=True)
    try:
        assert main(["restore", str(tmp_path / "b.db"), "--db", str(db), *config]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (
            f"perudo-ssh restore: {db} is in use by a perudo-ssh server (process "
            f"{__import__('os').getpid()}); stop it first\n"
        )
    finally:
        await store.close()
    assert main(["restore", str(tmp_path / "b.db"), "--db", str(db), *config]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"restored {tmp_path / 'b.db'} into {db}: 2 accounts, ")
    assert lines[1].startswith(f"the database it replaced is kept as {db}.before-restore-")
    assert main(["restore", str(tmp_path / "nope.db"), "--db", str(db), *config]) == 2
    assert capsys.readouterr().err == f"perudo-ssh restore: no database {tmp_path / 'nope.db'}\n"


async def command(*args: str) -> tuple[int, str, str]:
    """Run `perudo-ssh ARGS` as its own process: (exit status, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        SCRIPT, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_backup_taken_mid_game_restored_into_a_fresh_server_finishes_into_history(
    tmp_path,
):
    prepare = steer(seats=3, bots=1, turn_seconds=0, options={"dice_per_player": 2})
    server = StoredServer(db=tmp_path / "perudo.db", host_keys=tmp_path / "keys", prepare=prepare)
    await server.start()
    keys = {name: asyncssh.generate_private_key("ssh-ed25519") for name in ("ana", "ben")}
    ana, ben = Terminal(), Terminal()
    try:
        await ana.connect(server.port, "ana", keys["ana"])
        await ben.connect(server.port, "ben", keys["ben"])
        await ana.wait_for("welcome, ana")
        table = await sit_down(server, ana, ben)
        names = [seat.name for seat in table.seats]

        a_few_moves_in_and_a_human_to_play = a_few_moves_in(table)
        await asyncio.gather(
            play_on(ana, a_few_moves_in_and_a_human_to_play, dudo=False),
            play_on(ben, a_few_moves_in_and_a_human_to_play, dudo=False),
        )
        midgame = table.state  # a player's turn, no timer: nothing moves until they do
        assert midgame is not None and table.status == "playing"

        status, out, err = await command("backup", str(tmp_path / "backup.db"), "--db",
                                         str(server.db))  # fmt: skip
        assert (status, err) == (0, "")
        assert "2 accounts, 0 finished games, 1 unfinished table, " in out
        status, out, err = await command("restore", str(tmp_path / "backup.db"), "--db",
                                         str(server.db))  # fmt: skip
        assert (status, out) == (2, "")
        assert "is in use by a perudo-ssh server" in err
    finally:
        await ana.close()
        await ben.close()
        await server.stop()

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    status, out, err = await command("restore", str(tmp_path / "backup.db"), "--db",
                                     str(fresh / "perudo.db"))  # fmt: skip
    assert (status, err) == (0, "") and "1 unfinished table" in out
    again = StoredServer(db=fresh / "perudo.db", host_keys=fresh / "keys")
    await again.start()
    ana, ben = Terminal(), Terminal()
    try:
        assert again.lobby is not None
        (restored,) = again.lobby.tables.values()
        assert restored.state == midgame  # every die, bid and count of the backup
        await ana.connect(again.port, "ana", keys["ana"])
        await ben.connect(again.port, "ben", keys["ben"])
        for term, name in ((ana, "ana"), (ben, "ben")):
            await term.wait_for(lambda t, name=name: f"{name} (you)" in t and "Your dice" in t)
        turn = names[midgame.turn]
        await (ana if turn == "ana" else ben).wait_for(my_turn)
        await asyncio.gather(play_on(ana), play_on(ben))
        assert restored.status == "over"
        assert again.archive is not None
        await again.archive.drain()
        ana.send("l")  # leave the finished table for the lobby
        await ana.wait_for("welcome, ana")
        ana.send("h")
        await ana.wait_for(lambda t: "Games of ana" in t and "1 game · Enter replays" in t)
    finally:
        await ana.close()
        await ben.close()
        await again.stop()


async def test_a_backup_is_never_written_over_a_database_in_use(tmp_path):
    db = await a_database(tmp_path / "perudo.db", "ana")
    store = await Store.open(db, serving=True)
    try:
        for target in (db, tmp_path / "perudo.db-wal", tmp_path / "perudo.db.lock",
                       tmp_path / "." / "perudo.db"):  # fmt: skip
            with pytest.raises(StoreError, match="it is the database"):
                backup(db, target)
        other = await a_database(tmp_path / "other.db", "zoe")
        held = await Store.open(other, serving=True)  # another server's live database
        try:
            with pytest.raises(StoreError, match="a perudo-ssh server uses it"):
                backup(db, other)
        finally:
            await held.close()
        await store.claim_key("SHA256:ben", "ben")  # the server goes on writing
    finally:
        await store.close()
    assert names_in(db) == ["ana", "ben"]  # nothing forked, nothing lost
    with pytest.raises(StoreError, match="it is the database"):
        restore(db, db)


def gone(pid: int) -> bool:
    """Whether process `pid` has exited (a zombie not reaped yet has closed its files)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.startswith("State:\tZ") for line in status)
    except FileNotFoundError:
        return True


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_serve_workers_keeps_its_database_locked_while_its_lobby_restarts(tmp_path):
    db = await a_database(tmp_path / "perudo.db", "ana")
    backup(db, tmp_path / "backup.db")
    process = await asyncio.create_subprocess_exec(
        SCRIPT, "serve", "--workers", "1", "--port", "0", "--db", str(db),
        "--host-keys", str(tmp_path / "keys"), "--config", str(tmp_path / "none.toml"),
        stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    lobby_pid = None
    try:
        async with asyncio.timeout(60):
            while lobby_pid is None:
                line = (await process.stderr.readline()).decode()
                assert line, "serve --workers ended before its lobby started"
                event = json.loads(line) if line.startswith("{") else {}
                if event.get("event") == "worker_started" and event.get("worker") == "lobby":
                    lobby_pid = event["pid"]
        os.kill(lobby_pid, signal.SIGKILL)  # the lobby dies: the supervisor restarts it
        while not gone(lobby_pid):  # its descriptors closed: only the supervisor's lock is left
            await asyncio.sleep(0.001)
        with pytest.raises(DatabaseInUse):  # before the new lobby could have taken it again
            ServingLock.take(db)
        status, out, err = await command("restore", str(tmp_path / "backup.db"), "--db", str(db))
        assert (status, out) == (2, ""), err  # refused at once, as at any other moment
        assert "is in use by a perudo-ssh server" in err
        status, _, err = await command("serve", "--port", "0", "--db", str(db))
        assert status == 2 and "is in use by a perudo-ssh server" in err  # no second server
    finally:
        process.terminate()
        async with asyncio.timeout(30):
            await process.communicate()
    assert process.returncode == 0
    assert restore(tmp_path / "backup.db", db).contents.accounts == 1  # free once it stopped


async def test_two_restores_in_one_second_keep_both_databases_they_replaced(tmp_path):
    db = await a_database(tmp_path / "perudo.db", "ana")
    copy = await a_database(tmp_path / "copy.db", "zoe")
    first = restore(copy, db, now=1796635800.0)
    second = restore(copy, db, now=1796635800.0)
    assert first.aside is not None and second.aside is not None
    assert second.aside.name == first.aside.name + "-2"
    assert names_in(first.aside) == ["ana"] and names_in(second.aside) == ["zoe"]
