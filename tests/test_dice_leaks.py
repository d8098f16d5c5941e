"""The dice-leak audit (issue 5; DEVELOPERS.md rule 3): whole games over real SSH — classic
with calza, the club (show and reroll, jonti, calzone, stakes) and gamerules — with two
players logged in with keys, a bot, a spectator, and a player who drops mid-round and comes
back, and nowhere does a hidden die reach anyone but its owner before the reveal:

1. the events: every event the lobby hands a session (`LobbySession.offer`) is checked as it
   is handed over, against the lobby's own table at that instant: a `TableState` carries the
   hidden dice of the recipient's own seat and of no other (a spectator's, of none);
2. the screens: every byte each SSH client received, rendered by pyte after every chunk: a
   cup shows `[?]` for each hidden die (faces only for dice set aside face up, as the game
   had them), boxed dice are the viewer's own hands (a spectator sees none), and the faces of
   a reveal are those of the round it reveals, once that round is over;
3. the server's log, at DEBUG as `perudo-ssh serve --log-level DEBUG` writes it: no line holds
   any hand of the game in any usual form, nor a field named `dice`, `hidden` or `hands`.

Each check counts what it examined and the test asserts it examined something: none of them
passes for having looked at nothing.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import msgspec
import pytest

from perudo_ssh import bots, protocol
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.game_log import GameLog
from perudo_ssh.logs import setup_logging
from perudo_ssh.rules import Resign, Roll, RoundResult, apply, new_game
from perudo_ssh.session import LobbySession
from tests.conftest import StoredServer
from tests.sshterm import SYNC_BEGIN, SYNC_END, Terminal
from tests.test_e2e_faults import both, dice_rows, play_on, steer, until

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # the quick loop: -m "not slow"


# ---- what the game really was ------------------------------------------------------------------


@dataclass
class Truth:
    """A finished game as the server had it, by seat name: every hand of hidden dice each seat
    held (after each roll and reroll), every tuple of dice it had set aside face up (the
    empty one included), and each round's result (its `hands` revealed at the call)."""

    names: tuple[str, ...]
    hands: dict[str, set[tuple[int, ...]]] = field(default_factory=dict)
    shown: dict[str, set[tuple[int, ...]]] = field(default_factory=dict)
    results: tuple[RoundResult, ...] = ()

    def all_hands(self) -> set[tuple[int, ...]]:
        return {hand for hands in self.hands.values() for hand in hands if hand}


def truth_of(log: GameLog) -> Truth:
    """Replay `log` through the engine, noting every hidden hand and set-aside tuple."""
    names = log.players
    truth = Truth(names, {n: set() for n in names}, {n: set() for n in names})
    state = new_game(log.options, len(names), log.first_opener)

    def note() -> None:
        for seat, name in enumerate(names):
            truth.hands[name].add(tuple(state.hidden[seat]))
            truth.shown[name].add(tuple(state.shown[seat]))

    for round_ in log.rounds:
        state = apply(state, Roll(dice=round_.dice))
        note()
        for action in round_.actions:
            state = apply(state, action)
            note()
        for seat in round_.left:
            state = apply(state, Resign(seat=seat))
    assert state.phase == "over"
    truth.results = tuple(state.results)
    return truth


# ---- 1. the events -------------------------------------------------------------------------------


class EventAudit:
    """Checks every event offered to a session (`LobbySession.offer`, called inside the
    lobby actor) against the lobby's table at that instant. `faults` says what leaked;
    `counts` what was examined: "player" and "spectator" table states with a game,
    "in play" those of a round being bid with another seat holding dice, "other" events."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lobby: Lobby | None = None
        self.faults: list[str] = []
        self.counts: Counter[str] = Counter()
        offer = LobbySession.offer
        audit = self

        def audited_offer(session: LobbySession, data: bytes) -> bool:
            audit.look(session.id, data)
            return offer(session, data)

        monkeypatch.setattr(LobbySession, "offer", audited_offer)

    def prepare(self, lobby: Lobby) -> None:
        """`StoredServer.prepare`: audit this lobby."""
        self.lobby = lobby

    def look(self, sid: int, data: bytes) -> None:
        event = protocol.decode_event(data)
        if not isinstance(event, protocol.TableState) or event.game is None:
            self.counts["other"] += 1
            return
        assert self.lobby is not None
        table = self.lobby.tables.get(event.id)
        if table is None or table.state is None:
            self.faults.append(f"a game of table {event.id}, which has none, sent to {sid}")
            return
        seat = table.seat_of(sid)
        watching = sid in table.spectators
        who = "a spectator" if watching else f"seat {seat}"
        if seat is None and not watching:
            self.faults.append(f"table {event.id} sent to session {sid}, not at it")
        if event.me != seat or event.game.me != seat:
            self.faults.append(f"{who} sent the view of seat {event.me}")
        for view in event.game.seats:
            if view.seat != seat and view.hidden is not None:
                self.faults.append(f"seat {view.seat}'s hidden dice {view.hidden} sent to {who}")
        if seat is not None and event.game.seats[seat].hidden != table.state.hidden[seat]:
            self.faults.append(f"seat {seat} sent dice that are not its own")
        self.counts["spectator" if watching else "player"] += 1
        state = table.state
        others = [s for s in range(state.seats) if s != seat and state.counts[s] > 0]
        if state.phase == "bidding" and others:
            self.counts["in play"] += 1


# ---- 2. the screens ------------------------------------------------------------------------------

_CUP_TOP = re.compile(r"^╭─ (?:▶ )?(\S+)")
"""A seat's card, top border: `╭─ ▶ ben · disconnected, …` (its name first)."""
_CUP_BODY = re.compile(r"^│ ((?:\[[?1-6]\])+) +\d dic?e? ")
"""A seat's card, its cup: `│ [?][?][3]      3 dice`."""
_REVEAL_TITLE = re.compile(r"^ Round (\d+): ", re.MULTILINE)
_REVEAL_HAND = re.compile(r"^ (.{17})((?:\[[1-6]\] | [1-6]  )+)")
"""A hand in the reveal: the name in 17 columns, then each die `[5] ` (counted) or ` 3  `."""


def audit_frames(term: Terminal, me: str | None, truth: Truth) -> tuple[Counter[str], list[str]]:
    """Every whole screen `term` showed (each frame once all of it arrived), as the player
    `me` (None: a spectator) of the game `truth`: what was examined, and what leaked."""
    counts: Counter[str] = Counter()
    faults: list[str] = []
    for frame in term.screens:
        counts["frames"] += 1
        lines = frame.splitlines()
        for i, line in enumerate(lines):
            cup = _CUP_BODY.match(line)
            if cup is None:
                continue
            faces = re.findall(r"\[(.)\]", cup[1])
            hidden = len(faces) - len([f for f in faces if f != "?"])
            top = _CUP_TOP.match(lines[i - 1]) if i else None
            name = top[1] if top is not None and top[1] in truth.names else None
            face_up = tuple(int(f) for f in faces[hidden:] if f != "?")
            if faces[:hidden] != ["?"] * hidden or len(face_up) != len(faces) - hidden:
                faces_on = "".join(f"[{f}]" for f in faces)
                faults.append(f"{name}'s cup shows {faces_on}:\n{frame}")
            elif not any(face_up in truth.shown[n] for n in ([name] if name else truth.names)):
                faults.append(f"{name}'s cup shows {face_up} face up, never set aside:\n{frame}")
            counts["cups"] += 1
            counts["cups with dice set aside"] += bool(face_up)
        for hidden_faces, shown_faces in dice_rows(frame):
            counts["dice rows"] += 1
            if me is None:
                faults.append(f"a spectator sees dice {hidden_faces} {shown_faces}:\n{frame}")
            elif hidden_faces not in truth.hands[me] or shown_faces not in truth.shown[me]:
                faults.append(f"{me} sees dice {hidden_faces} {shown_faces}, not theirs:\n{frame}")
        hands = [m for m in map(_REVEAL_HAND.match, lines) if m is not None]
        titles = _REVEAL_TITLE.findall(frame)
        if hands and len(titles) != 1:
            faults.append(f"faces shown outside a reveal:\n{frame}")
            continue
        for hand in hands:
            name = hand[1].strip()
            faces = tuple(int(f) for f in re.findall(r"[1-6]", hand[2]))
            finished = int(titles[0]) - 1
            if name not in truth.names or not 0 <= finished < len(truth.results):
                faults.append(f"a hand {faces} of {name!r} in round {finished + 1}:\n{frame}")
            elif truth.results[finished].hands[truth.names.index(name)] != faces:
                faults.append(f"{name}'s hand {faces} is not round {finished + 1}'s:\n{frame}")
            counts["revealed hands"] += 1
    return counts, faults


# ---- 3. the log ----------------------------------------------------------------------------------

FORBIDDEN_FIELDS = frozenset({"dice", "hidden", "hands"})


def hand_forms(hand: tuple[int, ...]) -> set[str]:
    """A hand as code would write it into a log line: a tuple or a list (`(3, 5, 1)`, also
    inside a struct's repr), JSON (`[3,5,1]`), msgpack bytes (`\\x93\\x03\\x05\\x01`)."""
    return {
        repr(hand),
        repr(list(hand)),
        json.dumps(list(hand), separators=(",", ":")),
        repr(msgspec.msgpack.encode(hand))[2:-1],
    }


def _walk(value: object) -> Iterator[tuple[str | None, object]]:
    """Every (key, value) inside a decoded JSON value, depth first (key None in a list)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key, inner
            yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield None, inner
            yield from _walk(inner)


def log_leaks(lines: Iterable[str], hands: set[tuple[int, ...]]) -> list[str]:
    """The log lines (JSON objects) that hold one of `hands` in a form of `hand_forms`, as
    their text or in any string inside them, or a field named in `FORBIDDEN_FIELDS`."""
    forms = {form: hand for hand in hands for form in hand_forms(hand)}
    leaks = []
    for line in lines:
        data = json.loads(line)
        texts = [line] + [v for _, v in _walk(data) if isinstance(v, str)]
        found = sorted({forms[f] for f in forms for text in texts if f in text})
        keys = sorted({k for k, _ in _walk(data) if k in FORBIDDEN_FIELDS})
        if found or keys:
            leaks.append(f"{found} {keys}: {line}")
    return leaks


def test_the_log_audit_finds_a_hand_in_every_form_it_looks_for():
    """The detector itself, so that a clean log means something."""
    hand = (3, 5, 1)
    lines = [
        json.dumps({"event": "x", "message": f"rolled {hand!r}"}),
        json.dumps({"event": "x", "message": f"rolled {list(hand)!r}"}),
        json.dumps({"event": "x", "cup": list(hand)}, separators=(",", ":")),
        json.dumps({"event": "x", "message": repr(Roll(dice=((2, 2), hand)))}),
        json.dumps({"event": "x", "message": repr(msgspec.msgpack.encode(hand))}),
        json.dumps({"event": "x", "hidden": None}),
        json.dumps({"event": "x", "seat": {"dice": 3}}),
    ]
    assert len(log_leaks(lines, {hand})) == len(lines)
    assert log_leaks([json.dumps({"event": "x", "bid": [3, 5]})], {hand}) == []


@pytest.fixture
def server_log() -> Iterator[io.StringIO]:
    """Every log record at DEBUG, as `perudo-ssh serve --log-level DEBUG` writes them (one
    JSON object a line), for the test's length."""
    root, ssh = logging.getLogger(), logging.getLogger("asyncssh")
    levels = root.level, ssh.level
    stream = io.StringIO()
    handler = setup_logging(stream, logging.DEBUG)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(levels[0])
        ssh.setLevel(levels[1])


# ---- the games -----------------------------------------------------------------------------------

GAMES = {
    "classic-calza": ("classic", {"calza": "on-turn"}),
    "club": ("club", {}),  # show and reroll (the bot always does), jonti, calzone, stakes
    "gamerules": ("gamerules", {}),
}


@pytest.mark.parametrize("game", list(GAMES))
async def test_no_hidden_die_reaches_anyone_but_its_owner_before_the_reveal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server_log: io.StringIO, game: str
):
    preset, options = GAMES[game]
    if preset == "club":  # dice set aside face up, in every cup, each time the bot may
        monkeypatch.setattr(bots, "REROLL_CHANCE", 1.0)
    events = EventAudit(monkeypatch)
    server = StoredServer(
        db=tmp_path / "perudo.db",
        host_keys=tmp_path / "keys",
        lobby_options={"bot_delay": (0.0, 0.02), "rng": random.Random(game)},
        prepare=both(
            events.prepare,
            steer(
                preset=preset,
                seats=3,
                bots=1,
                turn_seconds=0,
                options={"dice_per_player": 2, **options},
            ),
        ),
    )
    await server.start()
    ben_key = asyncssh.generate_private_key("ssh-ed25519")
    ana, ben, ben_again, cyd = Terminal(), Terminal(), Terminal(), Terminal()
    terms = (ana, ben, ben_again, cyd)
    stopped = False
    try:
        await ana.connect(server.port, "ana", asyncssh.generate_private_key("ssh-ed25519"))
        await ben.connect(server.port, "ben", ben_key)
        await cyd.connect(server.port, "cyd", None)  # a guest, to watch
        await ana.wait_for("welcome, ana")
        ana.send("c")
        await ana.wait_for("Create a table")
        ana.send("\x13")  # ctrl+s: create
        await ana.wait_for("Waiting for 1 more player")
        await ben.wait_for(lambda t: re.search(r"^ *1 .*waiting", t, re.MULTILINE) is not None)
        ben.send("enter")
        await cyd.wait_for(lambda t: re.search(r"^ *1 .*playing", t, re.MULTILINE) is not None)
        cyd.send("s")  # watch
        await cyd.wait_for("Spectators see every cup")
        assert server.lobby is not None
        (table,) = server.lobby.tables.values()
        b = [seat.name for seat in table.seats].index("ben")

        def second_round_under_way() -> bool:
            state = table.state
            return state is not None and state.round_index >= 1 and bool(state.bids)

        await ana.wait_for("Your dice")
        await asyncio.gather(
            play_on(ana, second_round_under_way, calzone=True),
            play_on(ben, second_round_under_way, calzone=True),
        )
        # ben's connection dies mid-round; he logs in again and is back at his seat
        assert table.status == "playing" and table.state.counts[b] > 0
        assert ben.conn is not None
        ben.conn.abort()
        await until(lambda: table.seats[b].away, "ben's seat held")
        await ben_again.connect(server.port, "ben", ben_key)
        await ben_again.wait_for(lambda t: f"Table {table.id} · " in t)
        assert table.seats[b].sid is not None and not table.seats[b].away
        await asyncio.gather(play_on(ana, calzone=True), play_on(ben_again, calzone=True))
        await cyd.wait_for(lambda t: "Game over" in t)
        assert table.status == "over" and table.log is not None
        truth = truth_of(table.log)
        assert len(truth.results) >= 2

        # 1. the events
        assert events.faults == [], "\n".join(events.faults[:5])
        assert events.counts["player"] > 20 and events.counts["spectator"] > 10
        assert events.counts["in play"] > 20

        # 2. the screens: each terminal's every whole frame (the app marks where each frame
        # begins and ends; a frame cut where a read ended is not one the player sees)
        examined: Counter[str] = Counter()
        for term, me in ((ana, "ana"), (ben, "ben"), (ben_again, "ben"), (cyd, None)):
            assert SYNC_BEGIN in term.raw and SYNC_END in term.raw
            counts, faults = audit_frames(term, me, truth)
            assert faults == [], faults[0]
            assert counts["frames"] > 5 and counts["cups"] > 5, (me, counts)
            assert (counts["dice rows"] > 0) == (me is not None), (me, counts)
            examined += counts
        assert examined["revealed hands"] > 0
        assert (examined["cups with dice set aside"] > 0) == (preset == "club")

        # 3. the log, of the server's whole life: every session ended, the server stopped
        for term in terms:
            await term.close()
        await server.stop()
        stopped = True
        lines = server_log.getvalue().splitlines()
        logged = {json.loads(line)["event"] for line in lines}
        assert {"table_created", "game_started", "game_over", "session_ended"} <= logged
        assert {"seat_held", "seat_reclaimed"} <= logged
        assert log_leaks(lines, truth.all_hands()) == []
    finally:
        if not stopped:
            for term in terms:
                await term.close()
            await server.stop()
