"""Fault injection over real SSH (issue 5): a client cut off in the middle of its turn, a
client that stops reading, the server restarted mid-game, and the real `perudo-ssh serve`
stopped by SIGTERM during a round (then killed with SIGKILL right after a move). Each time the
game goes on, and nobody's game is lost.

The server is the real one with its store (`conftest.StoredServer`) and seeded dice; turn
timers and grace periods run at `SCALE` of their seconds. Players create their tables through
the create dialog; `steer` makes the table what the test needs (seats, bots, timers, dice —
what a player would otherwise set field by field). Every wait is on a condition, bounded.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import signal
import sqlite3
import sys
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import asyncssh
import msgspec
import pytest

from perudo_ssh import protocol
from perudo_ssh.i18n import translator
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.snapshot import restore_table
from perudo_ssh.lobby.table import Table
from perudo_ssh.record import decode_record
from perudo_ssh.referee import verdict_of
from perudo_ssh.rules import Bid, Options, PlaceBid, State
from screens.bidtext import format_bid
from tests.conftest import PLAYING_FAST, StoredServer
from tests.sshterm import Terminal

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # the quick loop: -m "not slow"

SCALE = 0.01
"""Turn timers and grace periods at 1/100 of their seconds: a 120 s grace is 1.2 s."""

SAVED_GOODBYE = "Server stopping: your game is saved; log in again to go on"
"""What a player at a playing table is told when the server stops (lobby `_shutdown`)."""

SCRIPT = Path(sys.executable).with_name("perudo-ssh")


# ---- steering the server ----------------------------------------------------------------------


def steer(**create: object) -> Callable[[Lobby], None]:
    """A `StoredServer.prepare` that gives every `CreateTable` a session sends the fields
    `create` (`seats`, `bots`, `turn_seconds`, `options`, …) before the lobby sees it."""

    def prepare(lobby: Lobby) -> None:
        connect = lobby.connect

        def steered_connect(name: str, fingerprint: str | None = None, **moderation: object):
            session = connect(name, fingerprint, **moderation)  # type: ignore[arg-type]
            send = session.send

            def steered_send(command: protocol.Command) -> None:
                if isinstance(command, protocol.CreateTable):
                    command = msgspec.structs.replace(command, **create)
                send(command)

            session.send = steered_send  # type: ignore[method-assign]
            return session

        lobby.connect = steered_connect  # type: ignore[method-assign]

    return prepare


def both(*prepares: Callable[[Lobby], None]) -> Callable[[Lobby], None]:
    """One `prepare` doing each of `prepares` in turn."""

    def prepare(lobby: Lobby) -> None:
        for each in prepares:
            each(lobby)

    return prepare


def fingerprint(key: asyncssh.SSHKey) -> str:
    return key.get_fingerprint("sha256")


# ---- reading the screen -----------------------------------------------------------------------

_DIE = re.compile(r"([│║┃]) ([1-6]) \1")
"""One boxed die's middle row: `│ 3 │` (hidden), `║ 1 ║` (a hidden paco), `┃ 4 ┃` (set aside)."""


def dice_rows(text: str) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every row of boxed dice on the screen (the player's own dice, `DiceRow`): its hidden
    faces and its faces set aside face up, in the order drawn."""
    rows = []
    for line in text.splitlines():
        dice = _DIE.findall(line)
        if dice:
            hidden = tuple(int(face) for box, face in dice if box != "┃")
            shown = tuple(int(face) for box, face in dice if box == "┃")
            rows.append((hidden, shown))
    return rows


def my_dice(text: str) -> tuple[int, ...] | None:
    """The hidden dice this player's screen shows (one row of boxed dice), else None."""
    rows = dice_rows(text)
    return rows[0][0] if len(rows) == 1 else None


def history(text: str) -> list[str]:
    """The lines of the bids sidebar (right of `▏`), stripped, without its title."""
    lines = [line.split("▏", 1)[1].strip() for line in text.splitlines() if "▏" in line]
    return [line for line in lines if line and line != "Bids this round"]


def bid_lines(state: State, names: list[str], options: Options) -> list[str]:
    """The sidebar's lines for the bids of `state`'s round, as `tableview.history_lines`
    writes them."""
    terms = translator("en").terms(options)
    return [f"{names[e.seat][:14]:<14} {format_bid(e.bid, terms)}" for e in state.bids]


def my_turn(text: str) -> bool:
    """Whether the screen says it is this player's turn (`your turn`, or `Your turn — 0:42`
    with a turn timer)."""
    return re.search(r"\b[Yy]our turn\b", text) is not None


def flat(text: str) -> str:
    """The screen as one line with single spaces (a toast's sentence wraps over lines)."""
    return " ".join(re.sub(r"[▏▎▍▌▋▊▉█│]", " ", text).split())


# ---- playing through the screens -----------------------------------------------------------------


async def play_on(
    term: Terminal,
    done: Callable[[], bool] = lambda: False,
    *,
    dudo: bool = True,
    calzone: bool = False,
    timeout: float = 30.0,
) -> str:
    """Play one seat through its screen until the game is over or `done()` holds (checked at
    every change of the screen); return the screen then. On its turn: Dudo on a bid when
    `dudo`, else the bid the composer offers (Enter); Space on each reveal; the calzone
    question answered `y` when `calzone`, else `n`. After each key it waits for the screen to
    change, so that one screen is never answered twice."""
    while True:
        text = await term.wait_for(
            lambda t: (
                done()
                or "Game over" in t
                or any(w in t for w in ("Press Space", "Declare"))
                or my_turn(t)
            ),
            timeout,
        )
        if done() or "Game over" in text:
            return text
        if "Declare" in text:
            term.send("y" if calzone else "n")
        elif "Press Space" in text:
            term.send(" ")
        elif dudo and "Current bid: " in text:
            term.send("d")
        else:
            term.send("enter")
        await term.wait_for(lambda t, before=text: t != before or done(), timeout)


async def sit_down(server: StoredServer, creator: Terminal, joiner: Terminal) -> Table:
    """`creator` (logged in) creates a table through the dialog (`steer` gives it its
    seats and bots), `joiner` (logged in) takes its last free seat from the lobby list; the
    game starts. Returns the lobby's table."""
    creator.send("c")
    await creator.wait_for("Create a table")
    creator.send("\x13")  # ctrl+s: create
    await creator.wait_for("Waiting for 1 more player")
    await joiner.wait_for(lambda t: re.search(r"^ *1 .*waiting", t, re.MULTILINE) is not None)
    joiner.send("enter")
    await joiner.wait_for("Your dice")
    await creator.wait_for("Your dice")
    assert server.lobby is not None
    (table,) = server.lobby.tables.values()
    assert table.status == "playing"
    return table


async def until(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Wait (bounded) for `condition` on the server's side, which no screen announces:
    look again every 10 ms."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def seat_named(table: Table, name: str) -> int:
    return [seat.name for seat in table.seats].index(name)


def actions(table: Table) -> int:
    """Moves made so far in the table's game."""
    assert table.log is not None
    return sum(len(round_.actions) for round_ in table.log.rounds)


def a_few_moves_in(table: Table, moves: int = 4) -> Callable[[], bool]:
    """A `play_on` stop: `moves` moves made, and a human to bid with every human still in
    (nothing moves by itself then: no bot's turn, no turn timer)."""

    def done() -> bool:
        state = table.state
        return (
            state is not None
            and actions(table) >= moves
            and state.phase == "bidding"
            and not table.seats[state.turn].bot
            and all(state.counts[i] for i, seat in enumerate(table.seats) if not seat.bot)
        )

    return done


def moves_of(table: Table, seat: int) -> int:
    """Moves `seat` made so far in the table's game."""
    assert table.log is not None
    return sum(1 for round_ in table.log.rounds for action in round_.actions if action.seat == seat)


async def close_all(*terms: Terminal) -> None:
    for term in terms:
        await term.close()


# ---- a client cut off in the middle of its turn ------------------------------------------------


async def test_a_player_cut_off_mid_turn_keeps_the_seat_a_bot_stands_in_and_they_take_it_back(
    tmp_path: Path,
):
    server = StoredServer(
        db=tmp_path / "perudo.db",
        host_keys=tmp_path / "keys",
        # these dice have the stand-in bid (another seed may have it call: both are handled)
        lobby_options={"timer_scale": SCALE, "rng": random.Random(1)},
        prepare=steer(
            seats=3, bots=1, turn_seconds=0, grace_seconds=120, options={"dice_per_player": 2}
        ),
    )
    await server.start()
    ana_key = asyncssh.generate_private_key("ssh-ed25519")
    ben_key = asyncssh.generate_private_key("ssh-ed25519")
    ana, ben, ben_again = Terminal(), Terminal(), Terminal()
    try:
        await ana.connect(server.port, "ana", ana_key)
        await ben.connect(server.port, "ben", ben_key)
        await ana.wait_for("welcome, ana")
        table = await sit_down(server, ana, ben)
        names = [seat.name for seat in table.seats]
        b = seat_named(table, "ben")
        assert table.state is not None

        def bens_turn() -> bool:
            state = table.state
            return state is not None and state.phase == "bidding" and state.turn == b

        # ana raises (never calls), ben only goes on after reveals, until it is ben's turn
        await asyncio.gather(play_on(ana, bens_turn, dudo=False), play_on(ben, bens_turn))
        await ben.wait_for(my_turn)
        round_index, done_before = table.state.round_index, len(table.log.rounds[-1].actions)

        ben.conn.abort()  # the TCP connection dies: no SSH disconnect, no clean exit

        # the seat is held for him: nobody plays it, the game waits (no turn timer here)
        await until(lambda: table.seats[b].away, "ben's seat held")
        seat = table.seats[b]
        assert (seat.sid, seat.bot, seat.away, seat.owner is not None) == (None, False, True, True)
        assert bens_turn() and len(table.log.rounds[-1].actions) == done_before
        # ana is told, and sees him still in his seat, to play, his cup marked
        held = re.compile(r"^╭─ ▶ ben · disconnected, seat held [0-9]:[0-5][0-9] ─", re.MULTILINE)
        text = await ana.wait_for(
            lambda t: held.search(t) is not None and "lost their connection" in flat(t)
        )
        assert "ben lost their connection; their seat is held for 120 seconds" in flat(text)

        # after the grace period (1.2 s here) a bot plays his seat and the game moves on
        await until(lambda: table.seats[b].bot, "a bot standing in for ben", timeout=10)
        assert table.seats[b].away  # still his seat: he may come back
        await until(
            lambda: len(table.log.rounds[round_index].actions) > done_before,
            "the stand-in's move",
            timeout=10,
        )
        move = table.log.rounds[round_index].actions[done_before]
        assert move.seat == b
        if isinstance(move, PlaceBid):
            line = f"{'ben':<14} {format_bid(move.bid, translator('en').terms(table.options))}"
            text = await ana.wait_for(lambda t: line in history(t))
            assert "ben · away, a bot plays for now" in text
        else:  # the stand-in called: the reveal says so
            await ana.wait_for(lambda t: "ben called" in flat(t))
        await ana.wait_for(lambda t: "has not come back" in flat(t))

        # ben logs in again with the same key: straight back at his seat
        await ben_again.connect(server.port, "ben", ben_key)
        text = await ben_again.wait_for(lambda t: f"Table {table.id} · ana's table" in t)
        assert "welcome, ben" not in text  # the table screen, not the lobby
        seat = table.seats[b]
        assert seat.sid is not None and not seat.bot and not seat.away
        await ana.wait_for(lambda t: "ben is back" in flat(t))
        if table.state.phase == "rolling":  # back during the reveal of his stand-in's call
            text = await ben_again.wait_for("Press Space")
            reveal = text.splitlines()[1:8]
            assert "ben called" in flat("\n".join(reveal))
            assert ana.text.splitlines()[1:8] == reveal  # the reveal ana has open
            for term in (ana, ben_again):
                term.send(" ")
        # his own dice, the round's bids: as the server has them
        text = await ben_again.wait_for(
            lambda t: table.state.phase == "bidding" and my_dice(t) == table.state.hidden[b]
        )
        assert "ben (you)" in text
        expected = bid_lines(table.state, names, table.options)
        text = await ben_again.wait_for(lambda t: all(line in history(t) for line in expected))
        assert [line for line in history(text) if "×" in line or "paco" in line] == expected

        # and the two of them play the game to its end
        over = await asyncio.gather(play_on(ana), play_on(ben_again))
        assert table.status == "over" and table.state.winner is not None
        winner = names[table.state.winner]
        said = f"Game over: {winner}{' (bot)' if table.seats[table.state.winner].bot else ''} wins."
        for name, screen in zip(("ana", "ben"), over, strict=True):
            assert ("Game over: you win!" if name == winner else said) in screen
        assert table.seats[b].left_round is None  # he came back: not ranked as gone
    finally:
        await close_all(ana, ben, ben_again)
        await server.stop()


# ---- a client that stops reading ---------------------------------------------------------------


async def test_a_client_that_stops_reading_is_dropped_and_the_table_plays_on_without_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.WARNING, logger="perudo_ssh.ssh.session")
    server = StoredServer(
        db=tmp_path / "perudo.db",
        host_keys=tmp_path / "keys",
        # quick bots; the turn timer (10 s: 0.1 s here) moves for a player who does not
        lobby_options={"timer_scale": SCALE, "bot_delay": (0.01, 0.03), "reveal_timeout": 0.2},
        limits=msgspec.structs.replace(PLAYING_FAST, output_buffer_bytes=16384),
        prepare=steer(seats=4, bots=2, turn_seconds=10, grace_seconds=60),
    )
    await server.start()
    ana, cyd = Terminal(), Terminal()
    try:
        await ana.connect(server.port, "ana", asyncssh.generate_private_key("ssh-ed25519"))
        # cyd's SSH window is small: once it stops reading, the server's output piles up
        await cyd.connect(
            server.port, "cyd", asyncssh.generate_private_key("ssh-ed25519"), window=8192
        )
        await cyd.wait_for("welcome, cyd")
        table = await sit_down(server, cyd, ana)
        c = seat_named(table, "cyd")
        assert cyd.process is not None and cyd.conn is not None

        cyd.process.channel.pause_reading()  # stuck: reads nothing more, acknowledges nothing
        moves, seen = actions(table), len(ana.screens)

        # the server drops it for the output it left unread; its seat is then held...
        await until(lambda: table.seats[c].away, "cyd dropped and its seat held", timeout=30)
        assert not table.seats[c].bot and table.seats[c].sid is None
        dropped = [r for r in caplog.records if getattr(r, "event", None) == "client_dropped"]
        assert [r.fields["reason"] for r in dropped] == ["output_unread"]  # type: ignore[attr-defined]
        assert dropped[0].fields["limit"] == 16384  # type: ignore[attr-defined]
        async with asyncio.timeout(10):
            await cyd.conn.wait_closed()  # cut off at the client's end too
        # ...and all that time the table went on, and ana was shown its moves
        assert actions(table) > moves and table.status == "playing"
        assert len({tuple(history(screen)) for screen in ana.screens[seen:]}) > 1

        # ...then, after the grace period, a bot plays it, and the game goes on for ana
        await until(lambda: table.seats[c].bot, "a bot standing in for cyd", timeout=10)
        assert table.seats[c].away
        stood_in, seen = moves_of(table, c), len(ana.screens)
        await until(lambda: moves_of(table, c) > stood_in, "the stand-in's move")
        await until(
            lambda: len({tuple(history(screen)) for screen in ana.screens[seen:]}) > 1,
            "ana shown the moves",
        )
    finally:
        await close_all(ana, cyd)
        await server.stop()


# ---- the server restarted mid-game -------------------------------------------------------------


async def test_a_game_survives_a_restart_of_the_server_and_is_stored_once_finished(
    tmp_path: Path,
):
    server = StoredServer(
        db=tmp_path / "perudo.db",
        host_keys=tmp_path / "keys",
        prepare=steer(seats=3, bots=1, turn_seconds=0, options={"dice_per_player": 2}),
    )
    await server.start()
    ana_key = asyncssh.generate_private_key("ssh-ed25519")
    ben_key = asyncssh.generate_private_key("ssh-ed25519")
    ana, ben = Terminal(), Terminal()
    ana_again, ben_again = Terminal(), Terminal()
    try:
        await ana.connect(server.port, "ana", ana_key)
        await ben.connect(server.port, "ben", ben_key)
        await ana.wait_for("welcome, ana")
        table = await sit_down(server, ana, ben)
        tid, names = table.id, [seat.name for seat in table.seats]

        a_few_moves_in_and_a_human_to_play = a_few_moves_in(table)
        await asyncio.gather(
            play_on(ana, a_few_moves_in_and_a_human_to_play, dudo=False),
            play_on(ben, a_few_moves_in_and_a_human_to_play, dudo=False),
        )
        # nothing moves by itself now (a player's turn, no turn timer): this is the game
        assert table.status == "playing" and table.log is not None
        before, rounds_before = table.state, [r.dice for r in table.log.rounds]
        assert before is not None

        await server.stop()  # as `perudo-ssh serve` does on SIGTERM
        for term in (ana, ben):
            await term.wait_for(lambda t, term=term: SAVED_GOODBYE.encode() in term.raw)
        assert await asyncio.wait_for(ana.ended(), 10) == 0

        await server.start()  # the same database
        assert server.lobby is not None
        restored = server.lobby.tables[tid]
        assert restored.state == before  # every die, bid, count and turn
        assert [s.name for s in restored.seats] == names
        assert [(s.away, s.bot) for s in restored.seats] == [
            (not s.bot, s.bot) for s in table.seats
        ]

        # both log in again with their keys: back at their seats, their own dice shown
        await ana_again.connect(server.port, "ana", ana_key)
        await ben_again.connect(server.port, "ben", ben_key)
        for term, name in ((ana_again, "ana"), (ben_again, "ben")):
            seat = names.index(name)
            text = await term.wait_for(lambda t, seat=seat: my_dice(t) == before.hidden[seat])
            assert f"{name} (you)" in text
            expected = bid_lines(before, names, before.options)
            assert [line for line in history(text) if line in expected] == expected
        assert restored.seats[names.index("ana")].sid is not None

        await asyncio.gather(play_on(ana_again), play_on(ben_again))
        assert restored.status == "over"
        assert server.archive is not None and server.store is not None
        await server.archive.drain()
        accounts = [
            await server.store.account_for_key(fingerprint(key)) for key in (ana_key, ben_key)
        ]
        assert None not in accounts
        ids = [account.id for account in accounts if account is not None]
        (summary,) = await server.store.games_of(ids[0])
        stored = await server.store.game(summary.id)
        assert stored is not None
        # each seat is its player's (their new sessions of after the restart), and rated
        by_name = {player.name: player.account_id for player in stored.players}
        assert (by_name["ana"], by_name["ben"]) == tuple(ids) and stored.rated
        for account_id in ids:
            rating = await server.store.rating_of(account_id)
            assert rating is not None and rating.game_id == stored.id
        record = decode_record(stored.record)
        verdict = verdict_of(record)
        assert verdict.legal and verdict.winner == names[restored.state.winner]
        assert record.players == tuple(names)
        # the record is the whole game: the rounds played before the restart, then the rest
        dice = [tuple(tuple(r.dice.get(n, ())) for n in names) for r in record.rounds]
        assert dice[: len(rounds_before)] == rounds_before
        assert len(dice) > len(rounds_before)
        assert await server.store.unfinished_tables() == []  # over: no longer kept to restore
    finally:
        await close_all(ana, ben, ana_again, ben_again)
        await server.stop()


# ---- SIGTERM to the real `perudo-ssh serve` during a round -------------------------------------


@dataclass
class Served:
    """A `perudo-ssh serve` process, its port, and its log (stderr) read as it comes."""

    process: asyncio.subprocess.Process
    port: int
    log: list[str]
    reader: asyncio.Task[None]


async def _serve(tmp_path: Path) -> Served:
    """Start `perudo-ssh serve` on a free port with its database and host key in `tmp_path`;
    return once it listens (its log says so on stderr)."""
    process = await asyncio.create_subprocess_exec(
        SCRIPT, "serve", "--port", "0", "--db", str(tmp_path / "perudo.db"),
        "--host-keys", str(tmp_path / "keys"), "--config", str(tmp_path / "none.toml"),
        stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stderr = process.stderr
    assert stderr is not None
    log: list[str] = []
    async with asyncio.timeout(30):
        while True:
            line = (await stderr.readline()).decode()
            assert line, f"the server ended before listening: {log}"
            log.append(line)
            if match := re.search(r"perudo-ssh listening on [\d.]+:(\d+)", line):
                break

    async def read_on() -> None:  # a log nobody reads would fill the pipe and stall it
        while line := await stderr.readline():
            log.append(line.decode())

    return Served(process, int(match.group(1)), log, asyncio.create_task(read_on()))


async def _stop(served: Served) -> tuple[int, float]:
    """SIGTERM: the exit status, and the seconds it took to exit."""
    started = time.monotonic()
    served.process.send_signal(signal.SIGTERM)
    async with asyncio.timeout(15):
        status = await served.process.wait()
        took = time.monotonic() - started
        await served.reader
    return status, took


async def _kill(served: Served) -> None:
    if served.process.returncode is None:
        served.process.kill()
        await served.process.wait()
    await served.reader


def _unfinished(db: Path) -> list[tuple[int, str]]:
    """The rows of the database's unfinished tables, read with sqlite3 itself."""
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT id, snapshot FROM unfinished_tables").fetchall()


async def start_against_a_bot(term: Terminal) -> None:
    """From the lobby, through the create dialog: a table of 2 seats, one a bot, started."""
    term.send("c")
    await term.wait_for("Create a table")
    term.send("tab", "enter")  # seats 4 -> 2; the bots follow to 1
    await term.wait_for("▲")
    term.send("up", "up", "enter")
    await term.wait_for(
        lambda t: re.search(r"Seats\s+2 .*Bots\s+1 ", t) is not None and "▲" not in t
    )
    term.send("\x13")  # ctrl+s: the game starts at once
    await term.wait_for("Your dice")


async def test_sigterm_mid_round_saves_the_game_a_restart_seats_the_player_a_kill_loses_nothing(
    tmp_path: Path,
):
    key = asyncssh.generate_private_key("ssh-ed25519")
    served = await _serve(tmp_path)
    ana, ana_again = Terminal(), Terminal()
    try:
        await ana.connect(served.port, "ana", key)
        await ana.wait_for("welcome, ana")
        await start_against_a_bot(ana)
        # her bid, then her turn again once the bot has moved: the round waits for her
        bid_made = False
        while True:
            text = await ana.wait_for(lambda t: "Press Space" in t or my_turn(t))
            if "Press Space" in text:  # the bot called: on to the next round
                ana.send(" ")
                await ana.wait_for(lambda t: "Press Space" not in t)
            elif bid_made:
                break
            else:
                ana.send("enter")
                bid_made = True
                await ana.wait_for(lambda t: not my_turn(t))
        shown = my_dice(ana.text)
        assert shown is not None

        status, took = await _stop(served)
        assert (status, took < 8) == (0, True), served.log  # exit status 0, in a few seconds
        await ana.wait_for(lambda _: SAVED_GOODBYE.encode() in ana.raw)

        (row,) = _unfinished(tmp_path / "perudo.db")
        saved, _ = restore_table(row[1].encode())
        assert saved.state is not None and saved.status == "playing"
        me = seat_named(saved, "ana")
        assert saved.state.hidden[me] == shown  # what she saw is what was saved
        assert saved.state.turn == me and saved.state.phase == "bidding"
        assert saved.log is not None
        mine = [a for r in saved.log.rounds for a in r.actions if a.seat == me]
        assert any(isinstance(a, PlaceBid) for a in mine)

        served = await _serve(tmp_path)
        await ana_again.connect(served.port, "ana", key)
        text = await ana_again.wait_for(lambda t: my_dice(t) == shown)
        assert "ana (you)" in text and my_turn(text)
        names = [seat.name for seat in saved.seats]
        expected = bid_lines(saved.state, names, saved.options)
        assert [line for line in history(text) if line in expected] == expected

        # she bids; once her screen shows the bid, even a kill -9 cannot lose it: it was
        # saved before it was sent
        before = history(text)
        ana_again.send("enter")
        text = await ana_again.wait_for(
            lambda t: any(line.startswith("ana ") for line in history(t)[len(before) :])
        )
        line = next(line for line in history(text)[len(before) :] if line.startswith("ana "))
        said = re.fullmatch(r"ana +(\d+)(?:×([2-6])| pacos?)", line)
        assert said is not None, line
        bid = Bid(count=int(said[1]), face=int(said[2] or 1))
        served.process.kill()
        await _kill(served)
        (row,) = _unfinished(tmp_path / "perudo.db")
        again, _ = restore_table(row[1].encode())
        assert again.log is not None and again.id == saved.id
        assert PlaceBid(seat=me, bid=bid) in again.log.rounds[len(saved.log.rounds) - 1].actions
    finally:
        await close_all(ana, ana_again)
        await _kill(served)
