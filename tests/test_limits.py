"""The server's limits (issue 5, item 4): the settings and their `[limits]` table, the session
counts over real SSH (the excess is refused with a message in the client's terminal, and a
place is given back when a session ends, however it ends), the connections per address (the
excess closed before it logs in, saying why), the login timeout, a logged-in connection with
no session closed, and the lobby idle timeout (a pilot test on a fake clock, and once over
SSH)."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Label

from perudo_ssh import protocol as P
from perudo_ssh.admission import (
    Admission,
    Connections,
    SessionCounts,
    SessionRefusal,
    address_group,
)
from perudo_ssh.config import ConfigError, parse_config
from perudo_ssh.i18n import translator
from perudo_ssh.limits import DEFAULT_LIMITS, Limits, limit_error, startups
from perudo_ssh.lobby import Lobby
from perudo_ssh.serve import start_game_server
from perudo_ssh.ssh.server import Login, start_server
from screens.app import IDLE, PerudoApp, idle_farewell
from tests.clocks import Clock
from tests.sshterm import Terminal, until
from tests.test_screens_fakes import FakeSession, lobby_state, table_state, wait_until

pytestmark = pytest.mark.timeout(30)

ANA = asyncssh.generate_private_key("ssh-ed25519")
BEN = asyncssh.generate_private_key("ssh-ed25519")
ANA_FP = ANA.get_fingerprint("sha256")

# ---- the settings ------------------------------------------------------------------------


def test_the_defaults() -> None:
    assert DEFAULT_LIMITS == Limits(
        max_sessions=200,
        max_sessions_per_address=10,
        max_sessions_per_key=4,
        max_connections_per_address=20,
        max_startups="10:30:100",
        connection_rate_per_address=2.0,
        connection_burst_per_address=20,
        input_events_per_second=20,
        input_events_burst=60,
        input_screens_per_second=1.0,
        input_flood_seconds=30.0,
        login_timeout=30.0,
        keepalive_interval=30.0,
        keepalive_count_max=3,
        lobby_idle_timeout=1800.0,
        input_bytes_per_second=16384,
        max_paste=65536,
        output_queue_events=256,
        output_buffer_bytes=1048576,
    )
    for name in Limits.__struct_fields__:  # each documented: unit and meaning
        assert name in (Path(__file__).parents[1] / "README.md").read_text()


WHOLE = "{} must be a whole number of at least {}, not {}"
SECONDS = "{} must be a number of seconds of at least 0, not {}"
STARTUPS = (
    'max_startups must be "start:rate:full" (whole numbers, start <= full, rate at most 100)'
    ' or "0", not {}'
)


def test_max_startups_reads_as_openssh_does() -> None:
    assert startups("10:30:100") == (10, 30, 100)
    assert startups("20") == (20, 100, 20)
    assert startups("0") == (0, 0, 0)
    assert startups("0:30:100") is None and startups("") is None and startups("a:b:c") is None


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("max_sessions", -1, WHOLE.format("max_sessions", 0, -1)),
        ("max_connections_per_address", 2.0,
         WHOLE.format("max_connections_per_address", 0, 2.0)),
        ("max_paste", 1.5, WHOLE.format("max_paste", 0, 1.5)),
        ("max_sessions_per_key", True, WHOLE.format("max_sessions_per_key", 0, True)),
        ("output_queue_events", 0, WHOLE.format("output_queue_events", 1, 0)),
        ("keepalive_count_max", 0, WHOLE.format("keepalive_count_max", 1, 0)),
        ("login_timeout", -0.5, SECONDS.format("login_timeout", -0.5)),
        ("lobby_idle_timeout", "1h", SECONDS.format("lobby_idle_timeout", "'1h'")),
        ("lobby_idle_timeout", float("inf"),
         "lobby_idle_timeout must be a finite number of seconds (0: no limit), not inf"),
        ("connection_rate_per_address", -1,
         "connection_rate_per_address must be a number (connections a second) of at least 0,"
         " not -1"),
        ("connection_burst_per_address", 0, WHOLE.format("connection_burst_per_address", 1, 0)),
        ("max_startups", "10:30", STARTUPS.format("'10:30'")),
        ("max_startups", "20:30:10", STARTUPS.format("'20:30:10'")),
        ("max_startups", "1:101:10", STARTUPS.format("'1:101:10'")),
        ("max_startups", 10, STARTUPS.format("10")),
        ("max_startups", "１０", STARTUPS.format("'１０'")),
        ("max_players", 3,
         f"unknown setting 'max_players' (known: {', '.join(Limits.__struct_fields__)})"),
    ],
)  # fmt: skip
def test_a_bad_limit_is_refused_naming_it(name: str, value: Any, error: str) -> None:
    assert limit_error(name, value) == error
    if name in Limits.__struct_fields__:
        with pytest.raises(ValueError, match=f"^{error[:30]}"):
            Limits(**{name: value})


def test_the_limits_table_of_the_config_file(tmp_path: Path) -> None:
    text = (
        "[server]\nport = 2022\n\n[limits]\nmax_sessions = 50\nlobby_idle_timeout = 600\n"
        "max_connections_per_address = 0\n"
    )
    config = parse_config(text, tmp_path / "perudo.toml")
    assert config.limits == Limits(
        max_sessions=50, lobby_idle_timeout=600.0, max_connections_per_address=0
    )
    assert isinstance(config.limits.lobby_idle_timeout, float)
    assert parse_config("[server]\n").limits == DEFAULT_LIMITS


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("[limits]\nmax_sessions = -3\n", 2, WHOLE.format("max_sessions", 0, -3)),
        ("# x\n[limits]\nmax_paste = 1\nmax_pastes = 2\n", 4,
         "unknown setting 'max_pastes' (known: "),
        ('[limits]\nlogin_timeout = "30s"\n', 2, SECONDS.format("login_timeout", "'30s'")),
        ("[limits]\nmax_sessions_per_key = false\n", 2,
         WHOLE.format("max_sessions_per_key", 0, False)),
        ("limits = 3\n", 1, "limits must be a table: [limits]"),
    ],
)  # fmt: skip
def test_a_malformed_limits_table_names_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, Path("p.toml"))
    assert str(caught.value).startswith(f"p.toml, line {line}: {message}")


# ---- the counts --------------------------------------------------------------------------


def test_counts_refuse_past_each_limit_and_release_once() -> None:
    counts = SessionCounts(
        Limits(max_sessions=4, max_sessions_per_address=2, max_sessions_per_key=1)
    )
    first = counts.admit("10.0.0.1", "SHA256:a")
    assert isinstance(first, Admission)
    assert counts.admit("10.0.0.2", "SHA256:a") == SessionRefusal(
        "key_full",
        "perudo-ssh: too many sessions with this key (limit: {limit}); close one and try again.",
        {"limit": 1},
    )
    assert isinstance(counts.admit("10.0.0.1", None), Admission)  # a guest: by address only
    refused = counts.admit("10.0.0.1", "SHA256:b")
    assert isinstance(refused, SessionRefusal) and refused.reason == "address_full"
    assert refused.args == {"limit": 2}
    assert isinstance(counts.admit("10.0.0.2", None), Admission)
    assert isinstance(counts.admit(None, None), Admission)  # an unknown address: total only
    full = counts.admit("10.0.0.3", None)
    assert isinstance(full, SessionRefusal) and full.reason == "server_full"
    assert (counts.total, counts.of_address("10.0.0.1"), counts.of_key("SHA256:a")) == (4, 2, 1)
    first.release()
    first.release()  # a second release gives nothing more back
    assert (counts.total, counts.of_address("10.0.0.1"), counts.of_key("SHA256:a")) == (3, 1, 0)
    assert isinstance(counts.admit("10.0.0.1", "SHA256:a"), Admission)


def test_an_ipv6_client_is_counted_by_its_64() -> None:
    assert address_group("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert address_group("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_group("192.0.2.7") == "192.0.2.7"
    assert address_group(None) is None
    counts = SessionCounts(Limits(max_sessions_per_address=2))
    assert isinstance(counts.admit("2001:db8:1:2::1", None), Admission)
    assert isinstance(counts.admit("2001:db8:1:2::ffff", None), Admission)
    assert isinstance(counts.admit("2001:db8:1:2:3::9", None), SessionRefusal)
    assert isinstance(counts.admit("2001:db8:1:3::1", None), Admission)  # another /64


def test_zero_means_no_limit() -> None:
    counts = SessionCounts(
        Limits(max_sessions=0, max_sessions_per_address=0, max_sessions_per_key=0)
    )
    admitted = [counts.admit("10.0.0.1", "SHA256:a") for _ in range(500)]
    assert all(isinstance(a, Admission) for a in admitted)


def test_a_thousand_sessions_come_and_go_and_leave_nothing_counted() -> None:
    counts = SessionCounts(
        Limits(max_sessions=50, max_sessions_per_address=3, max_sessions_per_key=2)
    )
    rng = random.Random(5)
    live: list[Admission] = []
    refused = 0
    for _ in range(1000):
        address, key = (
            f"10.0.0.{rng.randint(1, 40)}",
            rng.choice([None, *[f"k{i}" for i in range(30)]]),
        )
        admitted = counts.admit(address, key)
        if isinstance(admitted, Admission):
            live.append(admitted)
        else:
            refused += 1
        if live and rng.random() < 0.45:
            live.pop(rng.randrange(len(live))).release()
    assert refused > 50 and counts.total == len(live) <= 50
    for admission in live:
        admission.release()
    assert (counts.total, counts.tracked) == (0, 0)


class FakeConnection:
    """Stands for an asyncssh connection: `close()` is counted, `wait_closed()` returns once
    closed."""

    def __init__(self) -> None:
        self.closes = 0
        self._closed = asyncio.Event()

    def close(self) -> None:
        self.closes += 1
        self._closed.set()

    async def wait_closed(self) -> None:
        await self._closed.wait()


async def test_connections_are_counted_by_address_and_released_once() -> None:
    conns = Connections(Limits(max_connections_per_address=2))
    a, b, c, d, e = (FakeConnection() for _ in range(5))
    assert conns.admit(a, "10.0.0.1") is None and conns.admit(b, "10.0.0.1") is None
    assert conns.admit(b, "10.0.0.1") is None  # the same one again: counted once
    refused = conns.admit(c, "10.0.0.1")  # the third from one address
    assert refused is not None and (refused.reason, refused.limit) == ("address_full", 2)
    assert refused.message == "too many connections from your address (limit: 2)"
    assert conns.admit(c, "10.0.0.2") is None
    assert conns.admit(d, None) is None  # unknown: not per address
    assert conns.admit(e, "::ffff:10.0.0.1") is not None  # the same address, IPv4-mapped
    assert (len(conns), conns.of_address("10.0.0.1"), conns.tracked) == (4, 2, 2)
    conns.release(a)
    conns.release(a)  # a second release gives nothing more back
    conns.release(e)  # never counted: nothing
    assert (len(conns), conns.of_address("10.0.0.1")) == (3, 1)
    assert conns.admit(e, "10.0.0.1") is None
    assert conns.close_all() == 4
    assert [x.closes for x in (a, b, c, d, e)] == [0, 1, 1, 1, 1]
    assert await conns.wait_closed(5) is True
    for x in (b, c, d, e):
        conns.release(x)
    assert (len(conns), conns.tracked) == (0, 0)
    kept = [FakeConnection() for _ in range(100)]
    unlimited_rate = Connections(
        Limits(max_connections_per_address=0, connection_rate_per_address=0, max_startups="0")
    )
    assert all(unlimited_rate.admit(c, "10.0.0.1") is None for c in kept)


def test_new_connections_per_address_are_rate_limited_with_a_burst() -> None:
    now = [100.0]
    limits = Limits(
        max_connections_per_address=0, connection_rate_per_address=2.0,
        connection_burst_per_address=3, max_startups="0",
    )  # fmt: skip
    conns = Connections(limits, clock=lambda: now[0])
    kept = [FakeConnection() for _ in range(20)]
    assert [conns.admit(c, "10.0.0.1") for c in kept[:3]] == [None] * 3  # the burst
    refused = conns.admit(kept[3], "10.0.0.1")
    assert refused is not None and (refused.reason, refused.limit) == ("address_rate", 2.0)
    assert refused.message == "too many new connections from your address; wait a moment"
    assert conns.admit(kept[4], "10.0.0.2") is None  # another address: its own bucket
    assert conns.admit(kept[5], "2001:db8::1") is None
    now[0] += 0.25  # half a token back: still refused, and the refusal takes none
    assert conns.admit(kept[6], "10.0.0.1") is not None
    now[0] += 0.25
    assert conns.admit(kept[7], "10.0.0.1") is None  # one token after 0.5 s
    assert conns.admit(kept[8], "10.0.0.1") is not None
    now[0] += 60  # refilled up to the burst, never above it
    assert [conns.admit(c, "10.0.0.1") for c in kept[9:13]] == [None, None, None, refused]


def test_max_startups_drops_at_random_past_start_and_one_address_cannot_keep_others_out() -> None:
    import random as random_module

    limits = Limits(max_connections_per_address=0, connection_rate_per_address=0,
                    max_startups="4:50:8")  # fmt: skip
    conns = Connections(limits, rng=random_module.Random(3))
    kept = [FakeConnection() for _ in range(400)]
    flood = iter(kept)
    # from one address: the first 4 always, then some refused at random, never past 8
    verdicts = [conns.admit(next(flood), "10.0.0.1") for _ in range(200)]
    assert verdicts[:4] == [None] * 4
    admitted = sum(v is None for v in verdicts)
    assert conns.starting == admitted == 8
    (reason,) = {v.reason for v in verdicts if v is not None}
    assert reason == "startups"
    refused = next(v for v in verdicts if v is not None)
    assert refused.message == "the server is busy with logins; try again in a moment"
    # past start, each one is refused with a chance of at least 50 %
    between = verdicts[4:]
    assert sum(v is not None for v in between[:8]) >= 1
    # a login from another address still gets in: the flood's oldest makes room for it
    evicted: list[FakeConnection] = []
    newcomer = next(flood)
    assert conns.admit(newcomer, "10.0.0.2", evicted.append) is None
    flood_admitted = [c for c, v in zip(kept[:200], verdicts, strict=True) if v is None]
    assert evicted == [flood_admitted[0]]
    assert conns.starting == 8
    # logged in: it no longer counts, and the flood gets one more place (or not, at random)
    conns.logged_in(newcomer)
    assert conns.starting == 7
    # a second one from that address is no first: no eviction for it at full
    conns.admit(next(flood), "10.0.0.1")
    second = next(flood)
    while conns.starting < 8:
        conns.admit(second, "10.0.0.1")
        second = next(flood)
    assert conns.admit(next(flood), "10.0.0.2") is None  # none starting from there again
    assert conns.admit(next(flood), "10.0.0.2") is not None  # at full, and not a first
    # every release gives its place back
    for c in kept:
        conns.release(c)
    conns.release(newcomer)
    assert (len(conns), conns.starting) == (0, 0)


async def test_waiting_for_connections_is_bounded() -> None:
    conns = Connections(DEFAULT_LIMITS)
    stuck = FakeConnection()
    conns.admit(stuck, "10.0.0.1")
    assert await conns.wait_closed(0.05) is False  # never closed: the wait gives up
    assert await Connections(DEFAULT_LIMITS).wait_closed(5) is True


def test_a_connection_freed_without_a_release_gives_its_place_back() -> None:
    conns = Connections(Limits(max_connections_per_address=1))
    conns.admit(FakeConnection(), "10.0.0.1")  # no reference kept: freed at once
    assert (len(conns), conns.tracked, conns.starting) == (0, 0, 0)
    assert conns.admit(FakeConnection(), "10.0.0.1") is None


# ---- over real SSH -----------------------------------------------------------------------


class HelloApp(App[None]):
    """Says hello, and how long a paste was; `q` quits."""

    BINDINGS = [("q", "quit")]

    def __init__(self, login: Login) -> None:
        super().__init__()
        self.login = login

    def compose(self) -> ComposeResult:
        yield Label(f"Hello {self.login.username}")
        yield Label("", id="pasted")

    def on_paste(self, event: events.Paste) -> None:
        self.query_one("#pasted", Label).update(f"pasted={len(event.text)}")


@asynccontextmanager
async def hello_server(tmp_path: Path, limits: Limits) -> AsyncIterator[tuple[int, SessionCounts]]:
    async with hello_server_with(tmp_path, limits) as (port, counts, _):
        yield port, counts


@asynccontextmanager
async def hello_server_with(
    tmp_path: Path, limits: Limits
) -> AsyncIterator[tuple[int, SessionCounts, Connections]]:
    """`hello_server`, and its connections."""
    counts, conns = SessionCounts(limits), Connections(limits)
    acceptor = await start_server(
        HelloApp,
        port=0,
        host_key_dir=tmp_path / "keys",
        limits=limits,
        sessions=counts,
        connections=conns,
    )
    try:
        yield acceptor.get_port(), counts, conns
    finally:
        acceptor.close()
        conns.close_all()
        await conns.wait_closed(5)
        await acceptor.wait_closed()


class Guest(asyncssh.SSHClient):
    """Logs in as a guest (keyboard-interactive, no prompts); remembers why it was closed."""

    def __init__(self) -> None:
        self.lost: Exception | None = None

    def kbdint_auth_requested(self) -> str:
        return ""

    def kbdint_challenge_received(self, *args: object) -> list[str]:
        return []

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc


async def guest(port: int, name: str) -> tuple[asyncssh.SSHClientConnection, Guest]:
    """A logged-in guest connection with no channel open, and its client."""
    conn, client = await asyncssh.create_connection(
        Guest, "127.0.0.1", port, username=name, known_hosts=None, config=None,
        client_keys=None, agent_path=None, preferred_auth="keyboard-interactive",
    )  # fmt: skip
    return conn, client


def events_named(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "event", None) == event]


async def session(port: int, name: str, key: asyncssh.SSHKey | None = None) -> Terminal:
    """A session that got in: its app says hello."""
    term = Terminal()
    await term.connect(port, name, key)
    await term.wait_for(f"Hello {name}", timeout=10)
    return term


async def refused_session(port: int, name: str, key: asyncssh.SSHKey | None = None) -> str:
    """A session that was refused: what its terminal showed (exit status 1)."""
    term = Terminal()
    await term.connect(port, name, key)
    assert await term.ended() == 1
    await term.close()
    return term.raw.decode()


async def test_the_third_session_from_one_address_is_told_and_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with hello_server(tmp_path, Limits(max_sessions_per_address=2)) as (port, counts):
        ana, ben = await session(port, "ana", ANA), await session(port, "ben")
        assert (counts.total, counts.of_address("127.0.0.1")) == (2, 2)
        with caplog.at_level(logging.INFO, logger="perudo_ssh"):
            shown = await refused_session(port, "cyd", BEN)
        assert shown == (
            "perudo-ssh: too many sessions from your address (limit: 2); "
            "close one and try again.\r\n"
        )
        (record,) = [r for r in caplog.records if getattr(r, "event", None) == "session_refused"]
        assert record.fields["reason"] == "address_full" and record.fields["limit"] == 2
        assert record.fields["fingerprint"] == BEN.get_fingerprint("sha256")
        assert counts.total == 2
        await ben.close()  # gone: its place is given back, and the next one gets in
        await until(lambda: counts.total == 1, "ben's place to be given back", timeout=5)
        cyd = await session(port, "cyd", BEN)
        for term in (ana, cyd):
            await term.close()
        await until(lambda: counts.total == 0, "every place to be given back", timeout=5)
        assert counts.tracked == 0


async def test_a_key_has_its_own_limit(tmp_path: Path) -> None:
    limits = Limits(max_sessions_per_address=0, max_sessions_per_key=2)
    async with hello_server(tmp_path, limits) as (port, counts):
        terms = [await session(port, "ana", ANA), await session(port, "ana2", ANA)]
        assert await refused_session(port, "ana3", ANA) == (
            "perudo-ssh: too many sessions with this key (limit: 2); close one and try again.\r\n"
        )
        terms += [await session(port, "ben", BEN), await session(port, "guest")]
        assert (counts.total, counts.of_key(ANA_FP)) == (4, 2)
        terms[0].send("q")  # a session that ends by itself gives its place back too
        assert await terms[0].ended() == 0
        await until(lambda: counts.of_key(ANA_FP) == 1, "ana's place to be given back", timeout=5)
        terms.append(await session(port, "ana3", ANA))
        for term in terms:
            await term.close()


async def test_a_full_server_says_so(tmp_path: Path) -> None:
    limits = Limits(max_sessions=2, max_sessions_per_address=0)
    async with hello_server(tmp_path, limits) as (port, counts):
        ana, ben = await session(port, "ana", ANA), await session(port, "ben", BEN)
        assert await refused_session(port, "cyd") == (
            "perudo-ssh: the server is full (limit: 2); try again later.\r\n"
        )
        await ana.close()
        await until(lambda: counts.total == 1, "ana's place to be given back", timeout=5)
        cyd = await session(port, "cyd")
        for term in (ben, cyd):
            await term.close()


async def test_clients_vanishing_at_any_moment_give_their_places_back(tmp_path: Path) -> None:
    limits = Limits(max_sessions=3, max_sessions_per_address=3, connection_rate_per_address=0)
    async with hello_server(tmp_path, limits) as (port, counts):
        for cycle in range(24):
            conn = await asyncssh.connect(
                "127.0.0.1", port, username=f"u{cycle}", known_hosts=None, config=None,
                client_keys=[ANA], agent_path=None,
            )  # fmt: skip
            process = await conn.create_process(term_type="xterm", term_size=(80, 24))
            if cycle % 3 == 1:  # let the app start first
                await until(lambda: counts.total >= 1, "the session to be counted", timeout=5)
                await asyncio.wait_for(process.stdout.read(1), 5)
            if cycle % 3 == 2:
                conn.close()
            else:
                conn.abort()
            await conn.wait_closed()
        await until(lambda: counts.total == 0, "every place to be given back", timeout=10)
        assert counts.tracked == 0
        last = await session(port, "last", ANA)  # and the server takes sessions still
        await last.close()


async def test_the_largest_paste_is_a_setting(tmp_path: Path) -> None:
    async with hello_server(tmp_path, Limits(max_paste=100)) as (port, _):
        ana = await session(port, "ana", ANA)
        ana.send("\x1b[200~" + "x" * 5000 + "\x1b[201~")
        await ana.wait_for("pasted=100")
        await ana.close()


async def test_a_paste_the_terminal_did_not_bracket_is_one_paste_not_a_flood_of_keys(
    tmp_path: Path,
) -> None:
    """5,000 characters in one packet with no escape (a terminal without bracketed paste, or
    `tmux send-keys -l`): one paste, cut to `max_paste`, at once; not 5,000 keys waiting on
    the event budget (20 a second) until the session ends as a flood. A short write of
    keys stays keys: `q` quits."""
    limits = Limits(max_paste=100, input_events_per_second=20, input_flood_seconds=2.0)
    async with hello_server(tmp_path, limits) as (port, _):
        ana = await session(port, "ana", ANA)
        ana.send("y" * 5000)
        await ana.wait_for("pasted=100")
        ana.send("q")
        assert await ana.ended(5) == 0
        await ana.close()


async def test_a_client_that_does_not_log_in_is_cut_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with hello_server(tmp_path, Limits(login_timeout=0.3)) as (port, _):
        with caplog.at_level(logging.INFO, logger="perudo_ssh"):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            banner = await asyncio.wait_for(reader.readline(), 5)
            assert banner.startswith(b"SSH-2.0-")
            # say nothing more: the server hangs up after the login timeout
            assert await asyncio.wait_for(reader.read(), 5) is not None
            writer.close()
            await until(
                lambda: any(getattr(r, "event", None) == "login_timeout" for r in caplog.records),
                "the login timeout to be logged",
                timeout=5,
            )
    (record,) = [r for r in caplog.records if getattr(r, "event", None) == "login_timeout"]
    assert record.fields["seconds"] == 0.3


async def test_the_21st_connection_from_one_address_is_closed_before_it_logs_in(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="perudo_ssh")
    limits = Limits(connection_rate_per_address=0)  # (its own test, below)
    async with hello_server_with(tmp_path, limits) as (port, counts, conns):
        opened = [await guest(port, f"g{i}") for i in range(20)]  # logged in, no channel
        assert (len(conns), conns.of_address("127.0.0.1")) == (20, 20)
        with pytest.raises(asyncssh.DisconnectError) as refused:
            await guest(port, "g20")
        assert refused.value.code == asyncssh.DISC_TOO_MANY_CONNECTIONS
        assert str(refused.value).startswith("too many connections from your address (limit: 20)")
        (record,) = events_named(caplog, "connection_refused")
        assert record.fields == {
            "peer": record.fields["peer"],
            "reason": "address_full",
            "limit": 20,
        }
        assert len(events_named(caplog, "login_ok")) == 20  # it never got to log in
        assert len(conns) == 20
        conn, _ = opened.pop()
        conn.close()  # gone: its place is given back, and the next one gets in
        await conn.wait_closed()
        await until(lambda: len(conns) == 19, "the place to be given back", timeout=5)
        opened.append(await guest(port, "g21"))
        for conn, _ in opened:
            conn.close()
            await conn.wait_closed()
        await until(lambda: len(conns) == 0, "every place to be given back", timeout=5)
        assert (conns.tracked, counts.total) == (0, 0)


@pytest.mark.slow
async def test_a_logged_in_connection_without_a_session_is_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="perudo_ssh")
    async with hello_server_with(tmp_path, Limits(login_timeout=0.5)) as (port, counts, conns):
        # ana plays: her connection stays open for as long as her session does
        ana = await asyncssh.connect(
            "127.0.0.1", port, username="ana", known_hosts=None, config=None,
            client_keys=[ANA], agent_path=None,
        )  # fmt: skip
        process = await ana.create_process(term_type="xterm", term_size=(80, 24))
        await until(lambda: counts.total == 1, "ana's session to start", timeout=5)
        # ben only logs in, after ana's session started: he is closed after the timeout
        ben, ben_client = await guest(port, "ben")
        await asyncio.wait_for(ben.wait_closed(), 5)
        assert ben_client.lost is None  # a clean disconnect ("by application")
        (record,) = events_named(caplog, "connection_idle")
        assert record.fields["seconds"] == 0.5 and record.fields["fingerprint"] is None
        assert not ana.is_closed()  # her session was open all along
        process.stdin.write("q")  # her session ends; then so does her connection
        assert (await asyncio.wait_for(process.wait(), 5)).exit_status == 0
        await asyncio.wait_for(ana.wait_closed(), 5)
        idle = events_named(caplog, "connection_idle")
        assert [r.fields["fingerprint"] for r in idle] == [None, ANA_FP]
        await until(lambda: len(conns) == 0, "every connection to be released", timeout=5)
        assert (conns.tracked, counts.total) == (0, 0)


async def test_no_idle_connection_timeout_when_the_login_timeout_is_off(tmp_path: Path) -> None:
    async with hello_server_with(tmp_path, Limits(login_timeout=0)) as (port, _, conns):
        ben, _ = await guest(port, "ben")
        # a command's channel comes and goes; the connection stays (nothing closes it)
        result = await ben.run("records", timeout=5)
        assert result.exit_status == 1
        assert not ben.is_closed() and len(conns) == 1
        ben.close()
        await ben.wait_closed()


# ---- the lobby idle timeout --------------------------------------------------------------


def test_the_idle_farewell_says_how_long() -> None:
    en = translator("en")
    assert idle_farewell(en, 1800) == "You were idle in the lobby for 30 minutes."
    assert idle_farewell(en, 60) == "You were idle in the lobby for 1 minute."
    assert idle_farewell(en, 1) == "You were idle in the lobby for 1 second."
    assert idle_farewell(en, 5) == "You were idle in the lobby for 5 seconds."


async def test_an_idle_session_in_the_lobby_is_ended_with_a_farewell() -> None:
    clock = Clock()
    session = FakeSession("ana")
    app = PerudoApp(session, lobby_idle_timeout=1800.0, clock=clock)
    check: Callable[[], bool] = app.check_lobby_idle
    async with app.run_test(size=(80, 24)) as pilot:
        session.feed(P.Welcome(name="ana"), lobby_state())
        await wait_until(pilot, lambda: app.lobby is not None)
        clock.now += 1799
        assert check() is False
        await pilot.press("down")  # a key: not idle
        clock.now += 1799
        assert check() is False
        # the mouse, as the SSH driver posts it: not idle either
        app.post_message(events.MouseMove(None, 10, 5, 1, 0, 0, False, False, False))
        await pilot.pause()
        clock.now += 1000
        assert check() is False
        session.feed(table_state(None, status="waiting"))  # at a table: never idle
        await wait_until(pilot, lambda: app.table is not None)
        clock.now += 7200
        assert check() is False
        session.feed(P.LeftTable())  # back in the lobby: counted from there
        await wait_until(pilot, lambda: app.table is None)
        clock.now += 1799
        assert check() is False
        clock.now += 1
        assert check() is True
        assert app.farewell == "You were idle in the lobby for 30 minutes."
        await wait_until(pilot, lambda: app.return_value == IDLE)
    assert session.closed


async def test_no_idle_timeout_when_it_is_off() -> None:
    clock = Clock()
    app = PerudoApp(FakeSession("ana"), clock=clock)  # lobby_idle_timeout 0: never
    async with app.run_test(size=(80, 24)):
        clock.now += 10**9
        assert app.check_lobby_idle() is False
        assert app.farewell is None


@pytest.mark.slow
async def test_the_server_ends_an_idle_session_and_says_why(tmp_path: Path) -> None:
    limits = Limits(lobby_idle_timeout=1.0, output_queue_events=7)
    lobby = Lobby(bot_delay=(0, 0), rng=random.Random(7))
    acceptor, _ = await start_game_server("127.0.0.1", 0, tmp_path / "keys", lobby, limits=limits)
    try:
        ana = Terminal()
        await ana.connect(acceptor.get_port(), "ana", None)
        await ana.wait_for("welcome, ana")
        assert await ana.ended(timeout=10) == 0
        assert "perudo-ssh: You were idle in the lobby for 1 second.\r\n" in ana.raw.decode()
        await ana.close()
    finally:
        acceptor.close()
        await lobby.stop()
        await acceptor.wait_closed()
    own, made = await start_game_server("127.0.0.1", 0, tmp_path / "keys", limits=limits)
    try:
        assert made.outbox_size == 7  # a lobby made by the server gets the limit
    finally:
        own.close()
        await made.stop()
        await own.wait_closed()
