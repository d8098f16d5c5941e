"""Game records in the store (issue 4, item 3): every finished game with an account holder is
stored as a perudo-record/1 with its verdict, and each stored record passes `perudo-ssh
referee` with exit 0 and exactly the stored verdict; players fetch their own records with
`ssh host records` / `ssh host record ID`, and nobody else's."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.lobby.archive import GameArchive, places
from perudo_ssh.record import decode_record
from perudo_ssh.records import StoredGame
from perudo_ssh.referee import verdict_of
from perudo_ssh.rules import PRESET_NAMES
from perudo_ssh.store import Store
from tests.conftest import StoredServer
from tests.sshterm import Terminal
from tests.test_identity import fingerprint, new_key, play_a_game_against_bots, run
from tests.test_lobby_support import Player, play_randomly, running_lobby

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # the quick loop: -m "not slow"

SCRIPT = Path(sys.executable).with_name("perudo-ssh")


def referee(record: str) -> subprocess.CompletedProcess[str]:
    """`perudo-ssh referee -` on `record`."""
    return subprocess.run(
        [SCRIPT, "referee", "-"], input=record, capture_output=True, text=True, check=False
    )


def assert_referee_agrees(game: StoredGame) -> None:
    """The stored record is legal for the referee, whose verdict is the stored one."""
    done = referee(game.record)
    assert done.returncode == 0, done.stderr
    assert done.stdout == game.verdict + "\n"


async def stored_games(store: Store, game_ids) -> list[StoredGame]:
    games = [await store.game(i) for i in game_ids]
    assert all(g is not None for g in games)
    return games  # type: ignore[return-value]


async def test_every_preset_is_stored_and_each_record_referees_to_its_stored_verdict(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store)
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    try:
        async with running_lobby(on_game_over=archive.game_over) as lobby:
            for i, preset in enumerate(PRESET_NAMES):
                player = Player(lobby, "ana")
                archive.session_joined(player.session, ana)
                await player.joined()
                player.send(P.CreateTable(preset=preset, seats=4, bots=3))
                created = await player.expect(P.TableState)
                final = await play_randomly(player, random.Random(i), start=created)
                assert final.game.winner is not None
                player.session.close()
            await archive.drain()
        summaries = await store.games_of(ana.id)
        assert [s.preset for s in summaries] == list(reversed(PRESET_NAMES))
        for game in await stored_games(store, [s.id for s in summaries]):
            assert_referee_agrees(game)
            record = decode_record(game.record)
            verdict = verdict_of(record)
            assert record.rules["preset"] == game.preset
            assert [p.name for p in game.players] == list(record.players)
            assert {p.name: p.place for p in game.players} == places(record.players, verdict)
            (me,) = [p for p in game.players if p.account_id == ana.id]
            assert me.name == "ana" and not me.bot
            assert all(p.bot and p.account_id is None for p in game.players if p is not me)
    finally:
        await store.close()


async def test_a_player_who_leaves_mid_game_keeps_their_seat_in_the_record(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store)
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    try:
        async with running_lobby(on_game_over=archive.game_over) as lobby:
            players = {}
            for account in (ana, ben):
                players[account.name] = Player(lobby, account.name)
                archive.session_joined(players[account.name].session, account)
                await players[account.name].joined()
            players["ana"].send(P.CreateTable(preset="classic", seats=3, bots=1))
            created = await players["ana"].expect(P.TableState)
            players["ben"].send(P.JoinTable(table=created.id))
            await players["ana"].expect(P.TableState, lambda e: e.game is not None)
            players["ana"].send(P.LeaveTable())  # a bot plays ana's seat from now on
            await players["ana"].expect(P.LeftTable)
            final = await play_randomly(players["ben"], random.Random(3))
            assert final.game.winner is not None
            await archive.drain()
        (summary,) = await store.games_of(ana.id)
        game = await store.game(summary.id)
        assert game is not None
        assert {p.name: p.account_id for p in game.players} == {
            "ana": ana.id,
            "ben": ben.id,
            **{p.name: None for p in game.players if p.name.startswith("bot-")},
        }
        assert [p.name for p in game.players if p.bot] == [
            p.name for p in game.players if p.name.startswith("bot-")
        ]
        assert (await store.games_of(ben.id))[0].id == game.id
        assert_referee_agrees(game)
    finally:
        await store.close()


async def records_of(port: int, key: asyncssh.SSHKey) -> list[list[str]]:
    """`ssh host records`, each game line split into its columns (id, date, time, rules,
    place, players...)."""
    done = await run(port, key, "records")
    assert done.exit_status == 0, done.stderr
    lines = done.stdout.splitlines()
    if lines == ["No games yet."]:
        return []
    assert lines[0].split() == ["game", "finished", "(UTC)", "rules", "place", "players"]
    return [line.split(maxsplit=5) for line in lines[1:]]


async def test_records_and_record_over_ssh_give_your_games_and_nobody_elses(
    stored_server: StoredServer,
):
    ana_key, ben_key = new_key(), new_key()
    port = stored_server.port
    assert await records_of(port, ana_key) == []
    ana = Terminal((100, 30))
    await ana.connect(port, "ana", ana_key)
    try:
        await play_a_game_against_bots(ana, "ana")
    finally:
        await ana.close()
    assert stored_server.archive is not None
    await stored_server.archive.drain()
    (line,) = await records_of(port, ana_key)
    game_id, _, _, preset, place, players = line
    assert preset == "classic" and place in ("1/3", "2/3", "3/3")
    assert players.startswith("ana, bot-")
    assert stored_server.store is not None
    stored = await stored_server.store.game(int(game_id))
    assert stored is not None

    mine = await run(port, ana_key, f"record {game_id}")
    assert (mine.exit_status, mine.stderr) == (0, "")
    assert mine.stdout == stored.record + "\n"
    assert json.loads(mine.stdout)["format"] == "perudo-record/1"
    assert_referee_agrees(stored)

    # ben has an account but did not play it; nobody gets a game that is not theirs
    for key, number in ((ben_key, game_id), (ana_key, "999"), (ana_key, "0")):
        refused = await run(port, key, f"record {number}", "ben")
        assert (refused.exit_status, refused.stdout) == (1, "")
        assert refused.stderr == (
            f"Game {number} is not one of your games. `records` lists yours with their game "
            "numbers (a table's number in the lobby is not a game number).\n"
        )
    for number in ("../../etc/passwd", "-1", "１", "9" * 30):
        refused = await run(port, ana_key, f"record {number}")
        assert (refused.exit_status, refused.stdout) == (1, "")
        assert refused.stderr == "A game is given by its number, as records lists them.\n"
    for command in ("record 1; rm -rf /", "ls", "records --all", "link", "x" * 300):
        refused = await run(port, ana_key, command)
        assert refused.exit_status == 1 and refused.stdout == "", command
        assert refused.stderr.startswith("perudo-ssh does not run that command."), command
        assert "record GAME (one of them as JSON, by its game number; a table's number" in (
            refused.stderr
        )


async def test_subsystems_stay_refused_with_a_store(stored_server: StoredServer):
    async with asyncssh.connect(
        "127.0.0.1",
        stored_server.port,
        username="ana",
        known_hosts=None,
        config=None,
        client_keys=[new_key()],
        agent_path=None,
    ) as conn:
        with pytest.raises((asyncssh.ChannelOpenError, asyncssh.SFTPError)):
            await conn.start_sftp_client()


SERVER = """
import asyncio, random, sys
from pathlib import Path
from perudo_ssh.lobby.archive import GameArchive
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.archive import update_ratings
from perudo_ssh.serve import start_game_server
from perudo_ssh.store import Store
from perudo_ssh.limits import Limits
PLAYING_FAST = Limits(
    input_events_per_second=1000, input_events_burst=1000, input_screens_per_second=1000.0
)

async def main():
    store = await Store.open(sys.argv[1])
    archive = GameArchive(store, after_game=update_ratings)
    lobby = Lobby(bot_delay=(0, 0), reveal_timeout=60, rng=random.Random(int(sys.argv[3])))
    acceptor, _ = await start_game_server(
        "127.0.0.1", 0, Path(sys.argv[2]), lobby, archive=archive, limits=PLAYING_FAST
    )
    print(acceptor.get_port(), flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


async def start_server_process(db: Path, keys: Path, seed: int):
    """The server code `perudo-ssh serve` runs (store, archive, lobby, SSH), with instant bots,
    in its own process; returns it and its port."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SERVER, str(db), str(keys), str(seed),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    async with asyncio.timeout(30):
        line = await process.stdout.readline()
    assert line, "the server ended before listening"
    return process, int(line)


async def test_games_survive_a_kill_9_of_the_server_between_two_games(tmp_path: Path):
    db, keys, key = tmp_path / "perudo.db", tmp_path / "keys", new_key()
    server, port = await start_server_process(db, keys, seed=1)
    try:
        ana = Terminal((100, 30))
        await ana.connect(port, "ana", key)
        try:
            await play_a_game_against_bots(ana, "ana")
        finally:
            await ana.close()
        async with asyncio.timeout(20):  # stored by a task after game over: wait for it
            while not (first := await records_of(port, key)):
                await asyncio.sleep(0.05)
        server.kill()  # SIGKILL: no goodbye, no clean close of the database
        await server.wait()

        server, port = await start_server_process(db, keys, seed=2)
        assert await records_of(port, key) == first
        ana = Terminal((100, 30))
        await ana.connect(port, "ana", key)  # the same key is the same account: ana
        try:
            await play_a_game_against_bots(ana, "ana")
        finally:
            await ana.close()
        async with asyncio.timeout(20):
            while len(both := await records_of(port, key)) < 2:
                await asyncio.sleep(0.05)
        assert both[1] == first[0]
        for line in both:
            done = await run(port, key, f"record {line[0]}")
            assert done.exit_status == 0
            judged = referee(done.stdout)
            assert judged.returncode == 0, judged.stderr
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    with __import__("sqlite3").connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # ana's, and the one that rates the bots' level (issue 14)
        names = [row[0] for row in conn.execute("SELECT name FROM accounts ORDER BY id")]
        assert names == ["ana", "bot-medium"]
    assert fingerprint(key).startswith("SHA256:")
