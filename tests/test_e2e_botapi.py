"""End to end over SSH (issue 14, item 3): programs as players.

The example client (examples/perudo_bot.py) plays a whole game through the `ssh` command
(OpenSSH where it is installed, else tests/ssh_shim.py, asyncssh as the client); a bot
account's program and two people finish a game together, and the game is stored, refereed
and rated apart; `play` is refused to a person's account."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import botapi
from perudo_ssh.record import decode_record
from perudo_ssh.referee import verdict_of
from tests.conftest import StoredServer
from tests.sshterm import until
from tests.test_e2e_game import play_until_over
from tests.test_identity import login, new_key, run
from tests.test_records_store import records_of

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # the quick loop: -m "not slow"

ROOT = Path(__file__).resolve().parent.parent


async def bot_account(server: StoredServer, name: str, key: asyncssh.SSHKey) -> int:
    """Log `key` in once as `name` (its account is made), then make it a bot account."""
    assert server.store is not None
    done = await run(server.port, key, "records", username=name)
    assert done.exit_status == 0, done.stderr
    account = await server.store.account_for_key(key.get_fingerprint("sha256"))
    assert account is not None and account.name == name
    assert await server.store.set_bot(account.id, True)
    return account.id


def ssh_command(tmp_path: Path) -> dict[str, str]:
    """The environment whose `ssh` runs the example: OpenSSH, or the shim where it is not."""
    env = dict(os.environ)
    if shutil.which("ssh") is None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        ssh = bin_dir / "ssh"
        ssh.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT}/tests/ssh_shim.py" "$@"\n')
        ssh.chmod(0o755)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


async def refereed(server: StoredServer, key: asyncssh.SSHKey, name: str):
    """The one stored game of `key`'s account, refereed: its record and verdict."""
    assert server.archive is not None
    await server.archive.drain()
    (line,) = await records_of(server.port, key)
    done = await run(server.port, key, f"record {line[0]}", username=name)
    record = decode_record(done.stdout.encode())
    return record, verdict_of(record)


async def test_the_example_client_plays_a_whole_game_through_the_ssh_command(
    stored_server: StoredServer, tmp_path: Path
):
    key = new_key()
    key_file = tmp_path / "botkey"
    key.write_private_key(key_file)
    key_file.chmod(0o600)
    await bot_account(stored_server, "robo", key)
    options = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
    options += ["-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR"]
    example = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "examples" / "perudo_bot.py"), "--seats", "3",
        "-i", str(key_file), "-p", str(stored_server.port), *options, "robo@127.0.0.1",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=ssh_command(tmp_path),
    )  # fmt: skip
    out, err = await asyncio.wait_for(example.communicate(), 100)
    assert example.returncode == 0, err.decode()
    assert re.fullmatch(r"game over: (robo|bot-\w+) won\n", out.decode()), (out, err)
    record, verdict = await refereed(stored_server, key, "robo")
    assert verdict.legal and verdict.winner is not None
    assert record.players[0] == "robo" and len(record.players) == 3
    assert out.decode() == f"game over: {verdict.winner} won\n"


async def program_plays(process: asyncssh.SSHClientProcess) -> dict:
    """A bot program: a table of 3 seats for people, then dudo when it may, else the
    lowest bid; confirms each reveal. Returns the last table (game over)."""
    process.stdin.write(json.dumps({"type": "CreateTable", "seats": 3, "bots": 0}) + "\n")
    done = set()
    async for line in process.stdout:
        event = json.loads(line)
        if event["type"] != "TableState" or event["game"] is None:
            continue
        game = event["game"]
        if event["status"] == "over":
            return event
        now = (game["round_index"], len(game["bids"]))
        me = event["seats"][event["me"]]["name"]
        if me in event["waiting_for"] and ("ready", now) not in done:
            done.add(("ready", now))
            process.stdin.write(json.dumps({"type": "Ready", "round": game["round_index"]}) + "\n")
        elif game["phase"] == "bidding" and game["turn"] == game["me"] and now not in done:
            done.add(now)
            choices = game["choices"]
            move = (
                {"type": "MakeCall", "call": "dudo"}
                if choices["dudo"]
                else {"type": "MakeBid", **choices["bids"][0]}
            )
            process.stdin.write(json.dumps(move) + "\n")
    raise AssertionError("the program's session ended before the game")


async def test_a_bot_accounts_program_and_two_people_finish_a_rated_game(
    stored_server: StoredServer,
):
    port, store = stored_server.port, stored_server.store
    assert store is not None
    robo_key, ana_key, ben_key = new_key(), new_key(), new_key()
    robo = await bot_account(stored_server, "robo", robo_key)
    async with asyncssh.connect(
        "127.0.0.1", port, username="robo", client_keys=[robo_key], known_hosts=None,
        config=None, agent_path=None,
    ) as conn:  # fmt: skip
        process = await conn.create_process("play")
        hello = json.loads(await process.stdout.readline())
        assert hello == {"type": "Hello", "protocol": "perudo-bot/1", "name": "robo"}
        program = asyncio.create_task(program_plays(process))
        ana = await login(port, "ana", ana_key)
        ben = await login(port, "ben", ben_key)
        try:
            for term, name, taken in ((ana, "ana", 1), (ben, "ben", 2)):
                await term.wait_for(f"welcome, {name}")
                await term.wait_for(lambda t, n=taken: re.search(rf"robo.*classic\s+{n}/3", t))
                assert "BOT robo" in term.text  # the online column marks the program
                term.send("enter")  # the cursor is on the only table: join it
                # seated: the waiting room, or the game the last seat starts
                await term.wait_for(lambda t, n=name: f"{n} ← you" in t or f"{n} (you)" in t)
            await ana.wait_for(lambda t: "BOT robo" in t and "Bids this round" in t)
            over, *_ = await asyncio.gather(program, play_until_over(ana), play_until_over(ben))
        finally:
            program.cancel()
            await ana.close()
            await ben.close()
    winner = over["seats"][over["game"]["winner"]]["name"]
    assert over["seats"][0] == {**over["seats"][0], "name": "robo", "bot_account": True}
    record, verdict = await refereed(stored_server, robo_key, "robo")
    assert verdict.legal and verdict.winner == winner
    assert sorted(record.players) == ["ana", "ben", "robo"]
    # rated apart: the two people among themselves, the lone program not at all
    assert stored_server.archive is not None
    await stored_server.archive.drain()
    ana_account = await store.account_for_key(ana_key.get_fingerprint("sha256"))
    assert ana_account is not None and await store.rating_of(ana_account.id) is not None
    assert await store.rating_of(robo) is None


async def test_play_is_refused_to_a_persons_account_and_to_a_guest(stored_server: StoredServer):
    key = new_key()
    done = await run(stored_server.port, key, "play", username="ana")
    assert done.exit_status == 1 and done.stdout == ""
    assert "not a bot account" in done.stderr and "perudo-ssh admin bot" in done.stderr
    guest = await run(stored_server.port, None, "play")
    assert guest.exit_status == 1 and "connect with the SSH key of one" in guest.stderr


async def test_a_silent_program_counts_as_disconnected_and_comes_back_to_its_seat(
    stored_server: StoredServer, monkeypatch
):
    monkeypatch.setattr(botapi, "ANSWER_SECONDS", 1.0)
    key = new_key()
    await bot_account(stored_server, "robo", key)
    connect = dict(username="robo", client_keys=[key], known_hosts=None, config=None)
    async with asyncssh.connect("127.0.0.1", stored_server.port, **connect) as conn:
        process = await conn.create_process("play")
        # a table whose turn timer is off: only the program's silence ends its turn
        table = {"type": "CreateTable", "seats": 2, "bots": 1, "turn_seconds": 0}
        process.stdin.write(json.dumps(table) + "\n")
        lines = [json.loads(line) async for line in process.stdout if line.strip()]
        completed = await process.wait()
    assert completed.exit_status == 1
    assert lines[-1]["type"] == "Error" and lines[-1]["code"] == "no_answer"
    states = [line for line in lines if line["type"] == "TableState" and line["game"]]
    assert states, "the game never started"
    assert stored_server.lobby is not None
    (held,) = stored_server.lobby.tables.values()
    assert held.status == "playing" and held.seats[0].away  # held for the grace period
    async with asyncssh.connect("127.0.0.1", stored_server.port, **connect) as conn:
        process = await conn.create_process("play")
        async for line in process.stdout:
            event = json.loads(line)
            if event["type"] == "TableState":  # seated back at once, with its dice
                assert event["me"] == 0 and event["game"]["seats"][0]["hidden"]
                assert not event["seats"][0]["away"]
                break
        process.stdin.write_eof()


async def test_a_program_flooding_its_input_is_ended_at_once(stored_server: StoredServer):
    """A program sending lines of 8,000 bytes as fast as it can: asyncssh's buffer of a paused
    channel would grow without bound, so the server reads all and ends the flood itself."""
    key = new_key()
    await bot_account(stored_server, "robo", key)
    connect = dict(username="robo", client_keys=[key], known_hosts=None, config=None)
    async with asyncssh.connect("127.0.0.1", stored_server.port, **connect) as conn:
        process = await conn.create_process("play")
        line = "x" * 8000 + "\n"

        async def flood() -> None:
            with contextlib.suppress(asyncssh.Error, OSError, BrokenPipeError):
                for _ in range(1000):  # 8 MB, if nothing stops it
                    process.stdin.write(line)
                    await process.stdin.drain()

        flooding = asyncio.create_task(flood())
        lines = [json.loads(text) async for text in process.stdout if text.strip()]
        completed = await process.wait()
        flooding.cancel()
    assert completed.exit_status == 1
    assert lines[-1]["type"] == "Error" and lines[-1]["code"] == "too_much_input"
    lobby = stored_server.lobby
    assert lobby is not None
    await until(lambda: not lobby._clients, "the program's session gone from the lobby")
