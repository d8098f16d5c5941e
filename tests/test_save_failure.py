"""A save that fails pauses the game, shows nothing a crash could lose, and resumes (issue 11).

The disk is full two ways: an injected `sqlite3.OperationalError` (what SQLite raises on a
full disk), and a real full disk — a 1 MB tmpfs filled up under a real `Store` — where the
machine lets the test mount one.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.snapshot import restore_table
from perudo_ssh.rules import legal_bids
from perudo_ssh.store import Store
from tests.test_lobby_resilience import with_key
from tests.test_lobby_support import running_lobby


async def _game(lobby: Lobby):
    ana = await with_key(lobby, "ana", "SHA256:ana")
    ben = await with_key(lobby, "ben", "SHA256:ben")
    ana.send(P.CreateTable(seats=2, bots=0, turn_seconds=30))
    created = await ana.expect(P.TableState)
    ben.send(P.JoinTable(table=created.id))
    start = await ana.expect(P.TableState, lambda e: e.status == "playing")
    await ben.expect(P.TableState, lambda e: e.status == "playing")
    table = lobby.tables[start.id]
    turn = table.state.turn
    mover, other = (ana, ben) if table.seats[turn].name == "ana" else (ben, ana)
    return table, mover, other


def _no_bid_seen(*players) -> None:
    for player in players:
        for event in player.events:
            assert not (isinstance(event, P.TableState) and event.game and event.game.bids), event


async def test_a_table_whose_save_fails_is_paused_shows_nothing_and_resumes_once_saved():
    saved: dict[int, bytes | None] = {}
    full = False
    failures = 0

    async def persist(changes):
        nonlocal failures
        if full:
            failures += 1
            raise sqlite3.OperationalError("database or disk is full")
        saved.update(changes)

    async with running_lobby(persist=persist, timer_scale=1.0) as lobby:
        table, mover, other = await _game(lobby)
        key = table.save_key
        assert restore_table(saved[key])[0].state == table.state
        before = table.state
        bid = legal_bids(table.state, table.state.turn)[0]
        full = True
        mover.send(P.MakeBid(count=bid.count, face=bid.face))
        # everyone at the table is told, and nobody is shown the bid
        for player in (mover, other):
            notice = await player.expect(P.Notice)
            assert notice.text == P.SAVE_PAUSED
        _no_bid_seen(mover, other)
        assert lobby.unsaved == {table.id}
        assert "turn" not in lobby._timers.get(table.id, {})  # its clock stopped
        # a crash now loses only what nobody saw
        assert restore_table(saved[key])[0].state == before
        # the table takes no move meanwhile, and says why
        other.send(P.MakeCall(call="dudo"))
        refused = await other.expect(P.Refused)
        assert (refused.code, refused.message) == ("paused", P.SAVE_PAUSED)
        # chat is not a game change: it still goes through
        other.send(P.Say(text="what happened?"))
        line = await mover.expect(P.ChatLine)
        assert line.text == "what happened?"
        # the saves are tried again by themselves, and the first that works resumes
        while failures < 2:
            await asyncio.sleep(0.05)
        full = False
        for player in (mover, other):
            seen = await player.expect(P.TableState, lambda e: e.game is not None and e.game.bids)
            assert seen.game.bids[0].bid == bid
            assert seen.clock is not None and seen.clock.seat == table.state.turn
            # told first, then shown the table as it is
            assert any(isinstance(e, P.Notice) and e.text == P.SAVE_RESUMED for e in player.events)
        assert lobby.unsaved == set()
        assert restore_table(saved[key])[0].state == table.state
        # and the game goes on
        other.send(P.MakeCall(call="dudo"))
        await other.expect(P.TableState, lambda e: e.game.phase == "rolling")


async def test_the_admin_screen_state_shows_a_table_that_cannot_be_saved():
    full = False

    async def persist(changes):
        if full:
            raise sqlite3.OperationalError("database or disk is full")

    async with running_lobby(persist=persist) as lobby:
        table, mover, _other = await _game(lobby)
        full = True
        bid = legal_bids(table.state, table.state.turn)[0]
        mover.send(P.MakeBid(count=bid.count, face=bid.face))
        await mover.expect(P.Notice, lambda e: e.text == P.SAVE_PAUSED)
        state = lobby._admin.state()
        (row,) = [t for t in state.tables if t.id == table.id]
        assert row.unsaved and row.status == "playing"


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 1 MB tmpfs, unmounted afterwards; skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(path: Path) -> None:
    """Write zeros to `path` until the disk is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: full
        pass
    finally:
        os.close(fd)


async def test_with_a_real_full_disk_no_game_is_lost_after_a_crash(tiny_disk: Path):
    store = await Store.open(tiny_disk / "perudo.db")
    lobby = Lobby(bot_delay=(0.0, 0.0), persist=store.save_tables)
    lobby.start()
    try:
        table, mover, other = await _game(lobby)
        _fill(tiny_disk / "filler")
        shown = table.state
        # moves until a save fails (SQLite may find room in its file for a first one)
        while not lobby.unsaved:
            if table.state.turn is None:
                break
            player = mover if table.seats[table.state.turn].name == mover.name else other
            bids = legal_bids(table.state, table.state.turn)
            if not bids:
                break
            player.send(P.MakeBid(count=bids[0].count, face=bids[0].face))
            event = await player.expect((P.TableState, P.Notice))
            if isinstance(event, P.TableState):
                shown = table.state
        assert lobby.unsaved == {table.id}
        for player in (mover, other):
            if not any(isinstance(e, P.Notice) and e.text == P.SAVE_PAUSED for e in player.events):
                await player.expect(P.Notice, lambda e: e.text == P.SAVE_PAUSED)
        # kill -9 now: what is on disk is what players saw last, not the unsaved move
        on_disk = sqlite3.connect(f"file:{tiny_disk / 'perudo.db'}?mode=ro", uri=True)
        try:
            ((snapshot,),) = on_disk.execute("SELECT snapshot FROM unfinished_tables")
        finally:
            on_disk.close()
        assert restore_table(snapshot.encode())[0].state == shown
        assert shown != table.state
        # room again: the game is saved and goes on
        (tiny_disk / "filler").unlink()
        await mover.expect(P.Notice, lambda e: e.text == P.SAVE_RESUMED)
        assert lobby.unsaved == set()
        ((_key, snapshot),) = await store.unfinished_tables()
        assert restore_table(snapshot)[0].state == table.state
    finally:
        await lobby.stop()
        await store.close()


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_over_ssh_a_full_disk_pauses_the_game_and_a_kill_loses_nothing_shown(
    tiny_disk: Path,
):
    """The real `perudo-ssh serve` with its database on a tmpfs that fills up mid-game: the
    player is told, the game takes no move, and after `kill -9` and a restart with room on
    the disk she is back at her seat with every bid she had seen."""
    from tests.sshterm import Terminal
    from tests.test_e2e_faults import (
        _kill,
        _serve,
        flat,
        history,
        my_dice,
        my_turn,
        start_against_a_bot,
    )  # fmt: skip

    key = asyncssh.generate_private_key("ssh-ed25519")
    served = await _serve(tiny_disk)
    ana, ana_again = Terminal(), Terminal()
    try:
        await ana.connect(served.port, "ana", key)
        await ana.wait_for("welcome, ana")
        await start_against_a_bot(ana)
        _fill(tiny_disk / "filler")

        def paused(text: str) -> bool:
            return "cannot save this game right now" in flat(text)  # the notice

        for _ in range(60):  # she plays on until a save fails
            text = await ana.wait_for(lambda t: paused(t) or "Press Space" in t or my_turn(t))
            if paused(text):
                break
            if "Press Space" in text:
                ana.send(" ")
                await ana.wait_for(lambda t: paused(t) or "Press Space" not in t)
            else:
                before = history(text)
                ana.send("enter")
                await ana.wait_for(lambda t, b=before: paused(t) or history(t) != b)
        # the banner stays; once the notice has gone it hides nothing
        text = await ana.wait_for(
            lambda t: (
                "PAUSED: the server cannot save this game" in t and "right now" not in flat(t)
            ),
            timeout=30,
        )
        shown_dice, shown_bids = my_dice(text), history(text)
        assert shown_dice is not None
        # no move goes through meanwhile
        if my_turn(text):
            ana.send("enter")
            await ana.wait_for(lambda t: "Refused" in t)
            assert history(ana.text) == shown_bids
        served.process.kill()
        await _kill(served)
        (tiny_disk / "filler").unlink()

        served = await _serve(tiny_disk)
        await ana_again.connect(served.port, "ana", key)
        text = await ana_again.wait_for(lambda t: my_dice(t) is not None)
        assert my_dice(text) == shown_dice
        assert [line for line in history(text) if line in shown_bids] == shown_bids
    finally:
        for term in (ana, ana_again):
            await term.close()
        await _kill(served)
