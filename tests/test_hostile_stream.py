"""Hostile bytes from a client's terminal (issue 5 "hostile input"): random bytes, escape
sequences of every kind with random parameters (CSI, OSC, DCS, Kitty keys, mouse reports with
huge coordinates, forged size reports), bracketed pastes huge, nested or never closed, all cut
at random places — first into `TerminalInput` and `SSHDriver.feed` directly, then over a real
SSH session in the lobby while another player is in a game, with resize storms.

Input parsing never raises nor crashes Textual's parser, yields at most about one event per
character, never a size the client typed, and pasted text without control characters. Over SSH
the session stays responsive (or is dropped for flooding), the other player and the server
are unharmed, and the lobby is exactly as it was: the streams are drawn so that they cannot
contain a key that asks for anything (see `harmless`)."""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from hypothesis import HealthCheck, Phase, assume, example, given, settings
from hypothesis import strategies as st
from textual import events, messages
from textual.binding import Binding
from textual.message import Message

from perudo_ssh import protocol
from perudo_ssh.lobby import Lobby
from perudo_ssh.serve import start_game_server
from perudo_ssh.ssh import driver as driver_module
from perudo_ssh.ssh import pacing as pacing_module
from perudo_ssh.ssh.driver import SSHDriver
from perudo_ssh.ssh.terminal_input import PASTE_END, PASTE_START, TerminalInput
from screens.app import PerudoApp
from screens.lobby import LobbyScreen
from tests.conftest import PLAYING_FAST
from tests.sshterm import Terminal

# ---- the streams ----------------------------------------------------------------------------

NUMBER = st.one_of(
    st.integers(0, 300).map(str),
    st.integers(0, 10**25).map(str),
    st.sampled_from(["", "-1", "0", "٣", "99999999999999999999999", "1:2:3", "2026", "48"]),
)
PARAMS = st.lists(NUMBER, max_size=5).map(";".join)
FINAL = st.sampled_from([*"ABCDEFGHIJKLMNOPQRSTUVWXYZ", *"~@`{|}", "u", "t", "y", "$y", "m", "M"])
TEXT = st.text(max_size=12)

SEQUENCES = st.one_of(
    st.builds(lambda p, f: f"\x1b[{p}{f}", PARAMS, FINAL),  # CSI, random parameters
    st.builds(lambda p, f: f"\x1b[?{p}{f}", PARAMS, st.sampled_from(["$y", "u", "c", "h", "l"])),
    st.builds(  # SGR mouse reports, coordinates huge, zero or negative
        lambda b, x, y, f: f"\x1b[<{b};{x};{y}{f}", NUMBER, NUMBER, NUMBER, st.sampled_from("Mm")
    ),
    st.builds(lambda raw: "\x1b[M" + raw, st.text(min_size=3, max_size=3)),  # X10 mouse
    st.builds(  # Kitty keys: code point, modifiers, event type, text
        lambda code, mods, kind: f"\x1b[{code};{mods}:{kind}u",
        st.one_of(st.integers(0, 0x10FFFF), st.integers(0x10FFFF, 10**20)),
        st.integers(0, 300),
        st.integers(0, 9),
    ),
    st.builds(lambda code: f"\x1b[{code}u", st.integers(0, 10**22)),
    st.builds(lambda p: f"\x1b[48;{p}t", PARAMS),  # in-band resize, forged
    st.builds(lambda t, end: f"\x1b]{t}{end}", TEXT, st.sampled_from(["\x07", "\x1b\\", ""])),
    st.builds(lambda t: f"\x1bP{t}\x1b\\", TEXT),  # DCS
    st.builds(lambda t: f"\x1b_{t}\x1b\\", TEXT),  # APC (Kitty graphics)
    st.sampled_from(
        ["\x1b", "\x1b[", "\x1bO", "\x1b[I", "\x1b[O", "\x1b[200~", "\x1b[201~", "\x1b\x1b",
         "\x1b[A", "\x1b[5~", "\x1bOP", "\x1b[15;5~", "\x1b[1;5D", "\x9b", "\x1b[27u"]
    ),
)  # fmt: skip
PASTE = st.builds(
    lambda body, end: PASTE_START + body + end,
    st.one_of(TEXT, st.lists(st.one_of(TEXT, SEQUENCES), max_size=6).map("".join)),
    st.sampled_from([PASTE_END, "", PASTE_START, PASTE_END + PASTE_END, "\x1b[201"]),
)
TOKENS = st.one_of(SEQUENCES, PASTE, TEXT)
STREAM = st.lists(
    st.one_of(TOKENS.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=24)),
    max_size=16,
).map(b"".join)

pytestmark = pytest.mark.slow  # the quick loop: -m "not slow"


def cut(data: bytes, cuts: list[int]) -> list[bytes]:
    """`data` cut at the positions `cuts` (any order, repeats allowed)."""
    points = [0, *sorted(min(c, len(data)) for c in cuts), len(data)]
    return [data[a:b] for a, b in zip(points, points[1:], strict=False)]


class ParserResets(logging.Handler):
    """Counts the times `TerminalInput` had to restart a crashed Textual parser."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "parser failed" in record.getMessage():
            self.count += 1


RESETS = ParserResets()
logging.getLogger("perudo_ssh.ssh.terminal_input").addHandler(RESETS)


def parse(chunks: list[bytes], max_paste: int = driver_module.MAX_PASTE) -> list[Message]:
    """Every message `TerminalInput` gives for `chunks`, then for the time running out (a
    lone Escape, a sequence cut short)."""
    terminal_input = TerminalInput(max_paste=max_paste)
    produced = [m for chunk in chunks for m in terminal_input.feed(chunk)]
    parser = terminal_input._parser
    if parser._timeout_time is not None:  # the escape delay has passed, without waiting it
        parser._timeout_time = 0.0
    return produced + terminal_input.tick()


def described(message: Message) -> tuple[Any, ...]:
    """What a message says, comparable."""
    if isinstance(message, events.Key):
        return ("key", message.key, message.character)
    if isinstance(message, events.Paste):
        return ("paste", message.text)
    if isinstance(message, events.MouseEvent):
        return (type(message).__name__, message.x, message.y, message.button)
    return (type(message).__name__,)


CONTROLS = {*range(0x00, 0x20), *range(0x7F, 0xA0)} - {0x09, 0x0A, 0x0D}


def check_messages(produced: list[Message], data: bytes, max_paste: int) -> None:
    assert len(produced) <= len(data) + 1  # at most about one event per byte
    for message in produced:
        assert not isinstance(message, events.Resize | messages.InBandWindowResize)
        if isinstance(message, events.Paste):
            assert len(message.text) <= max_paste
            assert not any(ord(c) in CONTROLS for c in message.text), repr(message.text)


# ---- unit level: TerminalInput and SSHDriver ------------------------------------------------


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STREAM, st.lists(st.integers(0, 2000), max_size=8), st.sampled_from([5, 64, 65536]))
def test_any_stream_in_any_pieces(data: bytes, cuts: list[int], max_paste: int) -> None:
    before = RESETS.count
    produced = parse(cut(data, cuts), max_paste)
    check_messages(produced, data, max_paste)
    assert RESETS.count == before, "Textual's parser crashed on this input"
    # where the stream is cut does not matter, but inside a paste (an escape sequence cut
    # in two there may leave some of its printable payload)
    if PASTE_START.encode() not in data:
        assert [described(m) for m in produced] == [described(m) for m in parse([data])]


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 300_000),
    st.text(max_size=3),
    st.sampled_from([PASTE_END, "", PASTE_START]),
    st.integers(500, 70_000),
)
def test_huge_pastes_are_cut_and_unclosed_ones_bounded(
    size: int, unit: str, end: str, chunk: int
) -> None:
    max_paste = 1000
    body = ((unit or "x") * size)[:size]
    data = (PASTE_START + body + end + "!").encode("utf-8", "surrogatepass")
    terminal_input = TerminalInput(max_paste=max_paste)
    produced = [m for piece in cut(data, list(range(chunk, len(data), chunk)))
                for m in terminal_input.feed(piece)]  # fmt: skip
    check_messages(produced, data, max_paste)
    # what reaches the parser is bounded by the limit, however long the paste
    assert terminal_input.parsed <= len(PASTE_START) + max_paste + len(PASTE_END) + 10
    pastes = [m for m in produced if isinstance(m, events.Paste)]
    if end == PASTE_END:
        assert len(pastes) == 1 and described(produced[-1]) == ("key", "exclamation_mark", "!")


class _App:
    """Stands in for the app an `SSHDriver` posts to."""

    message_queue_size = 0

    def __init__(self) -> None:
        self.posted: list[Message] = []

    def post_message(self, message: Message) -> bool:
        self.posted.append(message)
        return True


class _Session:
    """Stands in for the SSH session an `SSHDriver` draws on."""

    size = (80, 24)

    def __init__(self) -> None:
        self.sent = bytearray()

    def send(self, data: bytes) -> None:
        self.sent += data

    def attach(self, driver: SSHDriver) -> None:
        pass


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STREAM, min_size=1, max_size=8), st.integers(1, 50))
async def test_the_driver_keeps_its_state_bounded(streams: list[bytes], presses: int) -> None:
    app = _App()
    driver = SSHDriver(app, terminal=_Session())  # type: ignore[arg-type]
    driver.start_application_mode()
    (resize,) = app.posted
    data = b"".join(streams) + b"\x1b[<0;5;5M\x1b[<1;5;5M\x1b[<2;5;5M" * presses  # never released
    for stream in streams:
        driver.feed(stream)
    driver.feed(b"\x1b[<0;5;5M\x1b[<1;5;5M\x1b[<2;5;5M" * presses)
    driver.close()
    # Textual's base driver kept one entry per press report: a list growing for ever
    assert len(driver._down_buttons) <= 4
    posted = app.posted[1:]
    assert len(posted) <= len(data) + 2 * presses
    check_messages(posted, data, driver_module.MAX_PASTE)
    assert isinstance(resize, events.Resize) and resize.size == (80, 24)


def test_a_forged_size_report_does_not_crash_the_parser_on_the_next_click() -> None:
    """`ESC [ 48 ; 0 ; 0 ; 0 ; 0 t` switched Textual's parser to pixel mouse coordinates
    scaled by the forged sizes: the next mouse report divided by zero, and the parser
    restarted with a traceback in the log each time."""
    before = RESETS.count
    for forged in ("\x1b[48;0;0;0;0t", "\x1b[48;1;1;0;0t", "\x1b[48;24;80;1;99999t"):
        produced = parse([(forged + "\x1b[<0;5;5M").encode()])
        assert [described(m) for m in produced] == [("MouseDown", 4, 4, 1)]
    assert RESETS.count == before


# ---- end to end: a lobby session under hostile bytes, a game going on -----------------------


def _bound_keys() -> frozenset[str]:
    """Every key bound in the lobby and the app (their BINDINGS, read here so that a key
    added to either is never typed by a stream that must ask for nothing)."""
    keys = set()
    for binding in (*LobbyScreen.BINDINGS, *PerudoApp.BINDINGS):
        key = binding.key if isinstance(binding, Binding) else binding[0]
        keys |= {k.strip() for k in key.split(",")}
    return frozenset(keys)


COMMAND_KEYS = _bound_keys() | {"enter", "tab", "shift+tab", "ctrl+q", "ctrl+c"}
"""Every key bound in the lobby and the app, Enter (join), Tab (the chat box), Textual's own
quit keys, and `?` (the help, which the check after each stream opens itself)."""
_CONTROL = {"question_mark": "?", "enter": "\r\n", "tab": "\t", "ctrl+a": "\x01",
            "ctrl+c": "\x03", "ctrl+q": "\x11"}  # fmt: skip
COMMAND_CHARACTERS = "".join(
    _CONTROL.get(key, key) for key in sorted(COMMAND_KEYS) if len(key) == 1 or key in _CONTROL
)
"""What types those keys as one byte (ctrl+a, ctrl+c, ctrl+q included)."""


def harmless(data: bytes) -> bool:
    """True if `data`, as the server parses it, asks the lobby for nothing: none of the
    `COMMAND_KEYS`, no click anywhere on a screen of up to 500×250 cells (the buttons).
    Scrolling, arrows, other keys, focus reports and pastes (into the table list) are fine."""
    for message in parse([data]):
        if isinstance(message, events.Key) and set(message.aliases) & COMMAND_KEYS:
            return False  # (bindings match the key's name or aliases exactly: not shift+c)
        if isinstance(message, events.MouseDown | events.MouseUp):
            if message.x < 600 and message.y < 300:
                return False
    return True


E2E_STREAM = st.lists(
    st.one_of(
        SEQUENCES.map(lambda t: t.encode("utf-8", "surrogatepass")),
        PASTE.map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.binary(max_size=16).map(
            lambda b: bytes(c for c in b if chr(c) not in COMMAND_CHARACTERS)
        ),
        st.text(st.characters(exclude_characters=COMMAND_CHARACTERS), max_size=8).map(
            lambda t: t.encode("utf-8", "surrogatepass")
        ),
    ),
    max_size=10,
).map(b"".join)
SIZES = st.tuples(
    st.sampled_from([0, 1, 2, 10, 79, 80, 200, 500, 501, 65535, 2**32 - 1]),
    st.sampled_from([0, 1, 2, 5, 24, 25, 100, 250, 251, 65535, 2**32 - 1]),
)


def snapshot(lobby: Lobby) -> Any:
    """Everything about the lobby's tables, seats and games, comparable."""
    return [
        (
            t.id, t.name, t.options, t.size, t.status, t.epoch, t.state, t.creator,
            [asdict(seat) for seat in t.seats], list(t.spectators), sorted(t.ready),
        )
        for t in sorted(lobby.tables.values(), key=lambda t: t.id)
    ] + [sorted(lobby.paused), {k: list(v) for k, v in lobby._chat.items()}]  # fmt: skip


class Drops(logging.Handler):
    """The clients the server dropped (structured `client_dropped` records), by reason."""

    def __init__(self) -> None:
        super().__init__()
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "event", None) == "client_dropped":
            self.reasons.append(record.fields["reason"])  # type: ignore[attr-defined]


class World:
    """The server, a player (`pat`) in a game against bots, a guest (`lou`) in the lobby."""

    def __init__(self, lobby: Lobby, port: int) -> None:
        self.lobby, self.port = lobby, port
        self.pat = Terminal()
        self.lou = Terminal()
        self.guests = 0
        self.sent: dict[str, list[protocol.Command]] = {}
        self.drops = Drops()
        connect = lobby.connect

        def recording_connect(name: str, *args: Any, **kwargs: Any) -> Any:
            session = connect(name, *args, **kwargs)
            sent, send = self.sent.setdefault(name, []), session.send

            def send_recorded(command: protocol.Command) -> None:
                sent.append(command)
                send(command)

            session.send = send_recorded  # type: ignore[method-assign]
            return session

        lobby.connect = recording_connect  # type: ignore[method-assign]

    async def seat_pat(self) -> None:
        pat = self.pat
        await pat.connect(self.port, "pat", asyncssh.generate_private_key("ssh-ed25519"))
        await pat.wait_for("welcome, pat")
        pat.send("c")
        await pat.wait_for("Cancel")
        pat.send("\x13")  # ctrl+s: create (bots take the free seats at the start)
        await pat.wait_for("Leave")
        pat.send("s")
        await pat.wait_for("Your turn")

    async def new_lou(self) -> None:
        """A fresh guest in the lobby, the table of the game in its list."""
        self.guests += 1
        self.lou = Terminal()
        await self.lou.connect(self.port, f"lou{self.guests}", None)
        await self.lou.wait_for(lambda t: "welcome, lou" in t and "playing" in t)

    async def settled(self) -> None:
        """Until the lobby actor has handled every command sent so far."""
        for _ in range(20):
            await asyncio.sleep(0)
        while not self.lobby._inbox.empty():
            await asyncio.sleep(0.01)

    async def answers(self, what: str | Callable[[str], bool]) -> bool:
        """Wait until lou's screen shows `what` (True), or lou is disconnected (False)."""
        assert self.lou.conn is not None
        shown = asyncio.create_task(self.lou.wait_for(what))
        closed = asyncio.create_task(self.lou.conn.wait_closed())
        await asyncio.wait({shown, closed}, return_when=asyncio.FIRST_COMPLETED)
        closed.cancel()
        if shown.done():
            return bool(shown.result())  # raises if the wait failed
        shown.cancel()
        return False

    async def hostile(self, data: bytes, cuts: list[int], sizes: list[tuple[int, int]]) -> None:
        """Send `data` in pieces to lou, a resize between pieces while `sizes` last; then
        check that lou answers (or was dropped for flooding) and nothing else changed."""
        await self.settled()
        before = snapshot(self.lobby)
        name = f"lou{self.guests}"
        commands = len(self.sent.get(name, []))
        lou = self.lou
        assert lou.process is not None
        pieces = cut(data, cuts)
        for i, piece in enumerate(pieces):
            lou.process.stdin.write(piece)
            for width, height in sizes[i :: len(pieces)]:
                lou.process.change_terminal_size(width, height)
        if sizes:
            lou.process.change_terminal_size(80, 24)  # what the pyte screen shows
        # close a paste left open, end a sequence cut short; then Escape (Kitty's form: no
        # wait to tell it from a sequence) and ? must open the help, Escape close it
        lou.process.stdin.write(f"{PASTE_END}\x1b[27u?".encode())
        if await self.answers("choose a table"):
            lou.process.stdin.write(b"\x1b[27u")
            assert await self.answers(
                lambda t: "choose a table" not in t and "welcome, lou" in t
            ), "dropped after the stream"
        else:
            assert self.drops.reasons[-1:] == ["flood"], self.drops.reasons
            await lou.close()
            await self.new_lou()
        await self.settled()
        assert self.sent.get(name, [])[commands:] == []
        assert snapshot(self.lobby) == before
        assert not self.pat.closed and "Your turn" in self.pat.text


@pytest.mark.timeout(120)
async def test_hostile_streams_to_a_lobby_session_change_nothing(tmp_path: Path) -> None:
    # timer_scale: the turn timer (60 s by default) would move for pat during the test
    lobby = Lobby(bot_delay=(0, 0), reveal_timeout=600, rng=random.Random(7), timer_scale=1000)
    acceptor, _ = await start_game_server(
        "127.0.0.1", 0, tmp_path / "keys", lobby, limits=PLAYING_FAST
    )
    world = World(lobby, acceptor.get_port())
    logging.getLogger("perudo_ssh").addHandler(world.drops)
    loop = asyncio.get_running_loop()
    try:
        await world.seat_pat()
        await world.new_lou()

        @settings(
            max_examples=25,
            deadline=None,
            derandomize=True,
            database=None,
            # no shrinking: one example over SSH takes up to a minute, and a failure is
            # worth more reported at once, with its screens, than shrunk past the timeout
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        @given(E2E_STREAM, st.lists(st.integers(0, 5000), max_size=6), st.lists(SIZES, max_size=8))
        @example(  # a paste far over the limit, then one never closed
            (PASTE_START + "x" * 100_000 + PASTE_END + PASTE_START + "é" * 3000).encode(), [7], []
        )
        @example(b"\x1b[<0;99999999999999999;99999999999999999M\x1b[48;0;0;0;0t", [3, 30], [])
        @example(b"", [], [(500, 250)] * 3 * pacing_module.MESSAGE_BURST)  # dropped: flood
        def hostile(data: bytes, cuts: list[int], sizes: list[tuple[int, int]]) -> None:
            assume(harmless(data))
            future = asyncio.run_coroutine_threadsafe(world.hostile(data, cuts, sizes), loop)
            try:
                future.result(timeout=60)
            except BaseException as exc:  # what the screens showed, in the report
                exc.add_note(f"lou's screen:\n{world.lou.text}\npat's screen:\n{world.pat.text}")
                raise

        await asyncio.to_thread(hostile)
        assert "flood" in world.drops.reasons  # the storm example was dropped, cleanly

        # the game goes on: pat moves, and the lobby sees it. Not "until pat's turn is over on
        # the screen": the bots answer at once, so pat's next turn may come in the same frame
        epoch = next(iter(lobby.tables.values())).epoch
        offered = re.search(r"Your bid ▸\s+(\S+)", world.pat.text)
        assert offered is not None, world.pat.text
        world.pat.send("enter")  # the bid the composer offers
        made = re.compile(rf"▏ pat +{re.escape(offered[1])}\b")
        await world.pat.wait_for(lambda t: made.search(t) is not None)
        await world.settled()
        assert next(iter(lobby.tables.values())).epoch > epoch
    finally:
        logging.getLogger("perudo_ssh").removeHandler(world.drops)
        for term in (world.pat, world.lou):
            await term.close()
        acceptor.close()
        await lobby.stop()
        await acceptor.wait_closed()
