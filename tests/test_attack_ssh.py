"""Attacks on the SSH transport: huge pastes, key floods, resize and packet storms, clients that
vanish at any moment. Real servers on port 0, real asyncssh clients with PTYs; the input pacing
itself is checked on an `AppSession` fed directly, with a stand-in driver."""

from __future__ import annotations

import asyncio
import gc
import logging
import random
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Label

from perudo_ssh.limits import DEFAULT_LIMITS
from perudo_ssh.lobby import Lobby
from perudo_ssh.serve import start_game_server
from perudo_ssh.ssh import driver as driver_module
from perudo_ssh.ssh import pacing as pacing_module
from perudo_ssh.ssh import session as session_module
from perudo_ssh.ssh.server import Login, start_server
from perudo_ssh.ssh.session import AppSession
from perudo_ssh.ssh.terminal_input import PASTE_END, PASTE_START, TerminalInput
from tests.sshterm import Guest, Terminal, until

TIMEOUT = 15.0


# ---- input pacing, on an AppSession fed directly -------------------------------------------


class _Driver:
    """Stands in for `SSHDriver`: parses for real, keeps the messages, never backs up."""

    backlog = 0

    def __init__(self) -> None:
        self.input = TerminalInput(max_paste=driver_module.MAX_PASTE)
        self.messages: list[Any] = []
        self.waiting: list[Any] = []

    @property
    def deferred(self) -> int:
        return len(self.waiting)

    def feed(self, data: bytes, most: int | None = None) -> tuple[int, int]:
        parsed = self.input.parsed
        messages = self.waiting + self.input.feed(data)
        most = len(messages) if most is None else most
        messages, self.waiting = messages[:most], messages[most:]
        self.messages += messages
        return self.input.parsed - parsed, len(messages)


def _pump_all(session: AppSession, driver: _Driver, data: bytes, packet: int = 16 * 1024) -> None:
    """Receive `data` in `packet`-byte packets (16 KiB: a paste's; a few bytes: keys, as a
    person's or a storm's come; one packet of `UNBRACKETED_PASTE` bytes or more with no
    escape is a paste), then pump until no more input is let through now."""
    for i in range(0, len(data), packet):
        session.data_received(data[i : i + packet], None)
    while True:
        before = (len(session._pending), driver.deferred, len(driver.messages))
        session._pump_input()
        if before == (len(session._pending), driver.deferred, len(driver.messages)):
            return


async def _paced_session() -> tuple[AppSession, _Driver]:
    session = AppSession(lambda login: None, "ana", None, "127.0.0.1:1")  # type: ignore[arg-type]
    driver = _Driver()
    session.attach(driver)  # type: ignore[arg-type]
    return session, driver


async def test_paste_beyond_the_limit_costs_no_input_rate() -> None:
    session, driver = await _paced_session()
    # 1 MB: before, all of it was paced at 16 KiB/s (a minute of dead keyboard).
    _pump_all(session, driver, (PASTE_START + "5x4" * 350_000 + PASTE_END).encode() + b"q")
    session.connection_lost(None)
    paste, key = driver.messages
    assert isinstance(paste, events.Paste) and len(paste.text) == driver_module.MAX_PASTE
    assert isinstance(key, events.Key) and key.key == "q"


async def test_one_byte_keys_are_paced_by_event_count() -> None:
    session, driver = await _paced_session()
    # 20 kB of keys, 32 a packet: within the byte rate, 20k app events
    _pump_all(session, driver, b"d" * 20_000, packet=32)
    session.connection_lost(None)
    assert len(driver.messages) <= DEFAULT_LIMITS.input_events_burst + 20


async def test_a_packet_of_text_without_an_escape_is_one_paste() -> None:
    """20 kB in one packet, no escape: a paste the terminal did not bracket, given to the app
    as one paste once no input came for `PASTE_IDLE` (here: its timer's callback called),
    not 20,000 keys; a key after it is a key."""
    session, driver = await _paced_session()
    _pump_all(session, driver, b"d" * 20_000, packet=20_000)
    assert session._unbracketed is not None and driver.messages == []  # still open
    _end_paste(session)
    session.data_received(b"q", None)
    _pump_all(session, driver, b"")
    session.connection_lost(None)
    assert [type(m) for m in driver.messages] == [events.Paste, events.Key]
    paste = driver.messages[0]
    assert isinstance(paste, events.Paste) and paste.text == "d" * 20_000


def _end_paste(session: AppSession) -> None:
    """As `PASTE_IDLE` without input would: the paste the terminal did not bracket ends."""
    assert session._unbracketed is not None
    session._unbracketed.cancel()
    session._end_unbracketed()


async def test_an_unbracketed_paste_in_many_packets_is_one_paste_of_whole_characters() -> None:
    """A long paste reaches the SSH client in several reads: its packets after the first,
    however short, go on with it (a Cyrillic letter's two bytes parted between two packets
    stay one letter; its last short packet is not typed as keys), and a packet with an
    escape (an arrow key) ends it at once."""
    session, driver = await _paced_session()
    text = "привет, мир; " * 20
    data = text.encode()
    assert data[71:72] != data[72:73]  # packet 1 ends inside a letter: 0xd0 | 0xb8
    _pump_all(session, driver, data[:72], packet=72)
    _pump_all(session, driver, data[72:-5], packet=100)
    _pump_all(session, driver, data[-5:])  # the last 5 bytes: not keys
    _pump_all(session, driver, b"\x1b[A")  # an arrow key: the paste ends before it
    session.connection_lost(None)
    assert [type(m) for m in driver.messages] == [events.Paste, events.Key]
    paste, key = driver.messages
    assert paste.text == text and key.key == "up"


async def test_a_paste_marker_parted_between_packets_is_still_the_clients_paste() -> None:
    """The client's own paste whose start marker is parted between two packets: the second
    (no escape in it, 83 bytes) is not taken for a paste of ours, so no end marker of ours
    closes the client's paste early and its `q`s stay pasted text, not keys."""
    session, driver = await _paced_session()
    for packet in (b"\x1b[2", b"00~" + b"a" * 80, b"q" * 80 + PASTE_END.encode()):
        session.data_received(packet, None)
    _pump_all(session, driver, b"")
    session.connection_lost(None)
    assert session._unbracketed is None
    assert [type(m) for m in driver.messages] == [events.Paste]
    assert driver.messages[0].text == "a" * 80 + "q" * 80


async def test_a_key_storm_is_held_to_the_event_budget_then_ended_as_a_flood(caplog) -> None:
    """Issue 11: opening and closing the help at 250 keys a second took a core. The keys past
    `input_events_per_second` wait (none is lost while the session lives), and a storm that
    keeps them waiting for `input_flood_seconds` ends the session, logged with its reason."""
    from perudo_ssh.limits import Limits

    limits = Limits(input_events_per_second=20, input_events_burst=60, input_flood_seconds=0.5)
    session = AppSession(lambda login: None, "ana", None, "127.0.0.1:1", limits=limits)  # type: ignore[arg-type]
    driver = _Driver()
    session.attach(driver)  # type: ignore[arg-type]
    _pump_all(session, driver, b"?" * 250, packet=5)
    assert len(driver.messages) == 60  # the burst, the rest held back
    assert len(session._pending) + driver.deferred == 190
    with caplog.at_level(logging.WARNING, logger="perudo_ssh"):
        while not session.closed:  # 250 keys a second, in packets of 5
            session.data_received(b"?????", None)
            await asyncio.sleep(0.02)
    (record,) = [r for r in caplog.records if getattr(r, "event", None) == "client_dropped"]
    assert record.fields["reason"] == "input_flood"
    assert (record.fields["rate"], record.fields["seconds"]) == (20, 0.5)
    # meanwhile its app got keys at the budget's pace, not the storm's
    assert len(driver.messages) < 60 + 20 * 2


class _WritableChannel:
    """Takes output, never backs up."""

    def write(self, data: bytes) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str) -> None:
        return None


async def test_keys_wait_while_the_app_draws_more_screens_than_its_budget() -> None:
    """Issue 11: each open or close of the help redraws the whole screen (~10 ms of CPU): a
    session whose app has drawn `SCREENS_BURST` screens at once gets no more input until its
    `input_screens_per_second` budget comes back, and then only as many keys at once as
    whole screens are left, none lost."""
    from perudo_ssh.limits import Limits

    limits = Limits(input_screens_per_second=8.0)
    session = AppSession(lambda login: None, "ana", None, "127.0.0.1:1", limits=limits)  # type: ignore[arg-type]
    session._chan = _WritableChannel()  # type: ignore[assignment]
    width, height = session.size
    screen = b"x" * (pacing_module.CELL_BYTES * width * height)
    feeds: list[tuple[int, int]] = []  # (keys posted, whole screens left in the budget)

    class Drawing(_Driver):
        def feed(self, data: bytes, most: int | None = None) -> tuple[int, int]:
            whole = int(session._screens.left(session._loop.time()))
            parsed, posted = super().feed(data, most)
            feeds.append((posted, whole))
            for _ in range(posted):
                session.send(screen)  # each key redraws the whole screen, as the help does
            return parsed, posted

    driver = Drawing()
    session.attach(driver)  # type: ignore[arg-type]
    session._answered_until = session._loop.time() + 60  # all of it drawn for its keys
    for _ in range(int(pacing_module.SCREENS_BURST)):
        session.send(screen)  # eight full repaints already
    _pump_all(session, driver, b"????")
    assert driver.messages == []  # held back, not lost
    await until(lambda: len(driver.messages) == 4, "the keys, as the budget comes back", TIMEOUT)
    # never more keys at once than whole screens were left (one at a time on a quick
    # machine; a slow one may have two screens back by the time a pump runs)
    assert sum(posted for posted, _ in feeds) == 4
    assert all(posted <= max(1, whole) for posted, whole in feeds), feeds
    # however much is drawn, the debt stops at SCREENS_DEBT: no key waits for long
    session.send(screen * 50)
    assert session._screens.left(session._loop.time()) == pytest.approx(
        -pacing_module.SCREENS_DEBT, abs=0.05
    )
    # and output that answers no key (a table's moves, the lobby's updates) costs nothing
    session._answered_until = 0.0
    session._screens.give_back(10)
    left = session._screens.left(session._loop.time())
    session.send(screen * 4)
    assert session._screens.left(session._loop.time()) >= left  # only refilled
    session.connection_lost(None)


async def test_typing_and_key_repeat_are_within_the_budget() -> None:
    session, driver = await _paced_session()
    _pump_all(session, driver, b"5x4 is what I bid, and I mean it: dudo if you dare!")
    assert len(driver.messages) == 51 and not session._pending
    session.connection_lost(None)


class _FakeChannel:
    def get_terminal_type(self) -> str:
        return "xterm"

    def get_environment(self) -> dict[str, str]:
        return {}

    def is_closing(self) -> bool:
        return True


async def test_client_gone_before_its_app_starts_gets_no_app() -> None:
    made: list[Login] = []

    def factory(login: Login) -> App[Any]:
        made.append(login)
        raise AssertionError("no app should be made")

    session = AppSession(factory, "ana", None, "127.0.0.1:1")
    session.connection_made(_FakeChannel())  # type: ignore[arg-type]
    session.pty_requested("xterm", (80, 24, 0, 0), {})
    session.session_started()
    session.connection_lost(None)  # in the same loop step as the shell request
    assert session._task is not None
    await session._task
    assert made == []


# ---- storms, against a real server ---------------------------------------------------------


class _SizeApp(App[None]):
    """Shows its size and counts the resizes it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.resizes = 0

    def compose(self) -> ComposeResult:
        yield Label("", id="size")

    def on_resize(self, event: events.Resize) -> None:
        self.resizes += 1
        self.query_one("#size", Label).update(f"size={event.size.width}x{event.size.height}")

    def on_key(self, event: events.Key) -> None:
        self.query_one("#size", Label).update(f"key={event.key}")


@pytest.fixture
async def size_server(tmp_path: Path):
    apps: list[_SizeApp] = []

    def factory(login: Login) -> App[Any]:
        apps.append(_SizeApp())
        return apps[-1]

    acceptor = await start_server(factory, port=0, host_key_dir=tmp_path / "keys")
    yield acceptor.get_port(), apps
    acceptor.close()
    await acceptor.wait_closed()


async def test_resize_storm_is_throttled(size_server) -> None:
    port, apps = size_server
    term = Terminal((80, 24))
    await term.connect(port, "ana", None)
    await term.wait_for("size=80x24")
    assert term.process is not None
    loop = asyncio.get_running_loop()
    start, before = loop.time(), apps[0].resizes
    for i in range(40):  # spaced out, so that Textual's own queue does not merge them
        term.process.change_terminal_size(100 + i, 30 + i % 5)
        await asyncio.sleep(0.01)
    term.process.change_terminal_size(90, 20)
    await term.wait_for("size=90x20")
    elapsed = loop.time() - start
    # Each resize lays out and paints the whole screen: one per RESIZE_INTERVAL at most.
    assert apps[0].resizes - before <= 2 + elapsed / session_module.RESIZE_INTERVAL
    await term.close()


async def test_packet_flood_drops_that_client_only(size_server, caplog) -> None:
    port, apps = size_server
    flooder, other = Terminal((80, 24)), Terminal((80, 24))
    await flooder.connect(port, "flooder", None)
    await other.connect(port, "other", None)
    await flooder.wait_for("size=80x24")
    await other.wait_for("size=80x24")
    assert flooder.process is not None
    with caplog.at_level(logging.WARNING, logger="perudo_ssh"):
        for _ in range(3 * pacing_module.MESSAGE_BURST):
            flooder.process.change_terminal_size(80, 24)  # each an SSH request to decrypt
        assert flooder.conn is not None
        await asyncio.wait_for(flooder.conn.wait_closed(), TIMEOUT)
    assert any(
        getattr(r, "event", None) == "client_dropped" and r.fields["reason"] == "flood"
        for r in caplog.records
    )
    other.send("x")
    await other.wait_for("key=x")
    await flooder.close()
    await other.close()


# ---- the game server: vanishing clients leave nothing behind -------------------------------


@pytest.mark.slow
async def test_clients_vanishing_anywhere_leave_no_ghosts_tasks_or_apps(tmp_path: Path) -> None:
    from screens.app import PerudoApp

    lobby = Lobby(bot_delay=(0.0, 0.0), reveal_timeout=60, rng=random.Random(3))
    acceptor, lobby = await start_game_server("127.0.0.1", 0, tmp_path / "keys", lobby)
    port = acceptor.get_port()
    terms = [Terminal((80, 24)) for _ in range(6)]
    await asyncio.gather(*(t.connect(port, f"p{i}", None) for i, t in enumerate(terms)))
    await asyncio.gather(*(t.wait_for("Create table") for t in terms))
    assert len(lobby._clients) == 6
    for i, term in enumerate(terms[2:]):  # four create a table; two of them start it
        term.send("c")
        await term.wait_for("Cancel")
        term.send("\x13")  # ctrl+s: create
        await term.wait_for("Leave")
        if i % 2:
            term.send("s")
            await term.wait_for("dice in play")
    assert len(lobby.tables) == 4
    for term in terms:  # in the lobby, at waiting tables, mid-game
        assert term.conn is not None
        term.conn.abort()
    await until(lambda: not lobby._clients and not lobby.tables, "the lobby to empty")
    await until(
        lambda: not any(t.get_name().startswith("perudo-ssh") for t in asyncio.all_tasks()),
        "session tasks to end",
    )
    await until(
        lambda: not any(isinstance(o, PerudoApp) for o in gc.get_objects()), "apps to be freed"
    )
    for term in terms:
        await term.close()
    acceptor.close()
    await lobby.stop()
    await acceptor.wait_closed()


async def test_huge_terminal_on_a_slow_link_survives_its_first_screen(tmp_path: Path) -> None:
    from screens.app import PerudoApp

    lobby = Lobby(rng=random.Random(3))
    acceptor, lobby = await start_game_server("127.0.0.1", 0, tmp_path / "keys", lobby)
    conn = await asyncssh.connect(
        "127.0.0.1",
        acceptor.get_port(),
        username="wide",
        known_hosts=None,
        config=None,
        client_keys=None,
        client_factory=Guest,
        agent_path=None,
    )
    proc = await conn.create_process(
        term_type="xterm-256color", term_size=(3000, 1000), encoding=None, window=16 * 1024
    )
    proc.channel.pause_reading()  # a slow link: the whole first screen waits on the server

    def buffered() -> int:
        # this connection's app: an earlier test's closed app may not be collected yet
        apps = [
            o
            for o in gc.get_objects()
            if isinstance(o, PerudoApp) and not o._closed and o._driver is not None
        ]
        chan = apps[0]._driver._terminal._chan if apps and apps[0]._driver else None
        return chan.get_write_buffer_size() if chan is not None else 0

    await until(lambda: buffered() > 100_000 or conn.is_closed(), "the first screen")
    assert not conn.is_closed()
    proc.channel.resume_reading()
    seen = b""
    async with asyncio.timeout(TIMEOUT):
        while b"Create table" not in seen:
            chunk = await proc.stdout.read(65536)
            assert chunk, "dropped on its first screen"
            seen += chunk
    conn.close()
    await conn.wait_closed()
    acceptor.close()
    await lobby.stop()
    await acceptor.wait_closed()
