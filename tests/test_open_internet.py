"""Safe on the open internet (issue 11), each attack as a stranger makes it over real SSH on a
loopback port: what the server offers in its key exchange (no SHA-1, no small group, no
compression), `env` requests by the thousand (only the few the server uses are stored, small),
and a session channel opened and never made a shell or a command (closed with its connection
after the login timeout). And the dice: from the operating system's CSPRNG, a stream apart
from the bots'."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import random
import secrets
import struct
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.lobby import Lobby
from perudo_ssh.ssh.hardening import MAX_ENV, MAX_ENV_BYTES, GuardedChannel, env_accepted
from tests.sshterm import Terminal, until
from tests.test_limits import events_named, guest, hello_server_with
from tests.test_lobby_support import connected, play_randomly, running_lobby

pytestmark = pytest.mark.timeout(30)

KEXINIT_LISTS = (
    "kex",
    "host_key",
    "cipher_c2s",
    "cipher_s2c",
    "mac_c2s",
    "mac_s2c",
    "compression_c2s",
    "compression_s2c",
)


async def server_kexinit(port: int) -> dict[str, list[str]]:
    """The name-lists of the server's SSH_MSG_KEXINIT (RFC 4253 §7.1), read off the wire by a
    client that only sends its version."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"SSH-2.0-probe\r\n")
        while not (await asyncio.wait_for(reader.readline(), 5)).startswith(b"SSH-2.0-"):
            pass
        length = struct.unpack(">I", await asyncio.wait_for(reader.readexactly(4), 5))[0]
        packet = await asyncio.wait_for(reader.readexactly(length), 5)
    finally:
        writer.close()
    payload = packet[1 : length - packet[0]]
    assert payload[0] == 20  # SSH_MSG_KEXINIT
    at, lists = 17, {}  # after the message number and the 16-byte cookie
    for name in KEXINIT_LISTS:
        size = struct.unpack(">I", payload[at : at + 4])[0]
        lists[name] = payload[at + 4 : at + 4 + size].decode().split(",")
        at += 4 + size
    return lists


async def test_the_server_offers_only_modern_algorithms(tmp_path: Path) -> None:
    async with hello_server_with(tmp_path, DEFAULT_LIMITS) as (port, _, _):
        offered = await server_kexinit(port)
    everything = [name for names in offered.values() for name in names]
    assert not [n for n in everything if "sha1" in n or n.endswith("-sha1")]
    assert not [n for n in offered["kex"] if "group-exchange" in n or "group1-" in n]
    assert "diffie-hellman-group18-sha512" not in offered["kex"]
    assert offered["kex"][:2] == ["mlkem768x25519-sha256", "curve25519-sha256"]
    # kex-strict (the Terrapin fix) and ext-info are asyncssh's markers, not algorithms
    assert {n for n in offered["kex"] if "@" in n and n.startswith(("kex-strict", "ext-info"))}
    assert offered["host_key"] == ["ssh-ed25519"]
    assert offered["cipher_c2s"] == offered["cipher_s2c"] == [
        "aes256-gcm@openssh.com", "aes128-gcm@openssh.com", "aes256-ctr", "aes192-ctr",
        "aes128-ctr",
    ]  # fmt: skip
    assert (
        offered["mac_c2s"]
        == offered["mac_s2c"]
        == [
            "hmac-sha2-256-etm@openssh.com",
            "hmac-sha2-512-etm@openssh.com",
        ]
    )
    assert offered["compression_c2s"] == offered["compression_s2c"] == ["none"]


@pytest.mark.parametrize(
    "option",
    [
        {"compression_algs": ["zlib@openssh.com"]},
        {"kex_algs": ["diffie-hellman-group14-sha1"]},
        {"kex_algs": ["diffie-hellman-group-exchange-sha256"]},
        {"mac_algs": ["hmac-sha1"], "encryption_algs": ["aes128-ctr"]},
    ],
)
async def test_a_client_that_insists_on_an_old_algorithm_is_refused(
    tmp_path: Path, option: dict[str, list[str]]
) -> None:
    async with hello_server_with(tmp_path, DEFAULT_LIMITS) as (port, _, _):
        with pytest.raises((asyncssh.KeyExchangeFailed, asyncssh.DisconnectError)):
            await asyncssh.connect(
                "127.0.0.1", port, username="mallory", known_hosts=None, config=None,
                client_keys=None, agent_path=None, preferred_auth="keyboard-interactive",
                **option,
            )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value", "stored", "accepted"),
    [
        (b"LANG", b"fr_FR.UTF-8", 0, True),
        (b"LC_ALL", b"ru_RU.UTF-8", 3, True),
        (b"LC_TIME", b"C", 0, True),
        (b"TERM", b"xterm", 0, True),
        (b"COLORTERM", b"truecolor", 0, True),
        (b"LANG", b"x" * MAX_ENV_BYTES, 0, True),
        (b"LANG", b"x" * (MAX_ENV_BYTES + 1), 0, False),
        (b"LANG", b"fr", MAX_ENV, False),
        (b"PATH", b"/bin", 0, False),
        (b"LC_", b"C", 0, False),
        (b"LC_\xff", b"C", 0, False),
        (b"LD_PRELOAD", b"/tmp/x.so", 0, False),
    ],
)
def test_only_the_environment_the_server_uses_is_stored(
    name: bytes, value: bytes, stored: int, accepted: bool
) -> None:
    assert env_accepted(name, value, stored) is accepted


def _guarded_channels() -> list[GuardedChannel]:
    return [o for o in gc.get_objects() if isinstance(o, GuardedChannel)]


@pytest.mark.slow
async def test_thousands_of_env_requests_store_nothing_but_the_locale(tmp_path: Path) -> None:
    """A guest's channel sends 2,000 `env` requests of 16 KB each (32 MB), and LANG: the
    session starts in the client's language, and the channel holds LANG only."""
    bomb = {f"X{i}": "y" * 16_384 for i in range(2_000)}
    async with hello_server_with(tmp_path, DEFAULT_LIMITS) as (port, counts, _):
        conn, _ = await guest(port, "mallory")
        async with conn:
            process = await conn.create_process(
                term_type="xterm", term_size=(80, 24), env={**bomb, "LANG": "fr_FR.UTF-8"}
            )
            await until(lambda: counts.total == 1, "the session to start", timeout=10)
            output = ""
            while "Hello mallory" not in output:
                output += await asyncio.wait_for(process.stdout.read(4096), 10)
            (chan,) = [c for c in _guarded_channels() if not c.is_closing()]
            assert dict(chan.get_environment()) == {"LANG": "fr_FR.UTF-8"}
            stored = sum(len(k) + len(v) for k, v in chan._env.items())
            assert stored <= MAX_ENV * 2 * MAX_ENV_BYTES
            process.stdin.write("q")
            await asyncio.wait_for(process.wait(), 10)


async def test_a_channel_that_never_starts_closes_its_connection(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Twenty guests each open a session channel and ask for nothing on it (no PTY, no shell,
    no command): each connection is closed once the login timeout has passed, logged."""
    caplog.set_level(logging.INFO, logger="perudo_ssh")
    limits = Limits(login_timeout=0.5)
    async with hello_server_with(tmp_path, limits) as (port, counts, conns):
        guests = [await guest(port, f"g{i}") for i in range(20)]
        for conn, _ in guests:
            loop = asyncio.get_running_loop()
            chan = asyncssh.SSHClientChannel(conn, loop, "strict", None, "strict", 2**21, 32768)
            await chan._open(b"session")  # opened, and nothing asked of it
        assert len(conns) == 20
        for conn, client in guests:
            await asyncio.wait_for(conn.wait_closed(), 5.5)
            assert client.lost is None  # a clean disconnect, saying why
        closed = events_named(caplog, "connection_idle") + events_named(caplog, "channel_idle")
        assert len(closed) == 20
        await until(lambda: len(conns) == 0, "every connection released", timeout=5)
        assert counts.total == 0


async def test_a_channel_left_unstarted_beside_a_game_is_not_a_way_to_linger(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A second channel opened and left empty beside a running session: once the login
    timeout has passed, the connection is closed (a started session no longer keeps an
    unstarted channel alive), logged as channel_idle."""
    caplog.set_level(logging.INFO, logger="perudo_ssh")
    limits = Limits(login_timeout=0.5)
    async with hello_server_with(tmp_path, limits) as (port, counts, conns):
        conn, _ = await guest(port, "mallory")
        process = await conn.create_process(term_type="xterm", term_size=(80, 24))
        await until(lambda: counts.total == 1, "the session to start", timeout=5)
        loop = asyncio.get_running_loop()
        chan = asyncssh.SSHClientChannel(conn, loop, "strict", None, "strict", 2**21, 32768)
        await chan._open(b"session")
        await asyncio.wait_for(conn.wait_closed(), 5.5)
        await asyncio.wait_for(process.wait_closed(), 5)  # the game's channel went with it
        (record,) = events_named(caplog, "channel_idle")
        assert record.fields["seconds"] == 0.5
        await until(lambda: len(conns) == 0 and counts.total == 0, "all released", timeout=5)


# ---- dice from the operating system's CSPRNG ---------------------------------------------


class CountingDice(random.Random):
    """A dice stream that counts the dice drawn from it (`randint` calls)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.drawn = 0

    def randint(self, a: int, b: int) -> int:
        self.drawn += 1
        return super().randint(a, b)


class NoDice(random.Random):
    """The bots' stream: a die drawn from it is a failure."""

    def randint(self, a: int, b: int) -> int:
        raise AssertionError("a die came from the bots' stream")


def test_a_server_lobby_rolls_with_the_csprng_apart_from_the_bots() -> None:
    lobby = Lobby()
    assert isinstance(lobby.dice, secrets.SystemRandom)
    assert type(lobby.rng) is random.Random and lobby.rng is not lobby.dice


async def test_every_die_of_a_game_comes_from_the_dice_stream() -> None:
    """A whole game against a bot (opening roll, every round's roll, every reroll): the dice
    all come from `dice`; the bots' stream, which decides their moves, never rolls one."""
    dice = CountingDice(3)
    async with running_lobby(rng=NoDice(5), dice=dice) as lobby:
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset="classic", seats=2, bots=1))
        state = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert dice.drawn >= 2 * 2 + 10  # an opening roll of two dice each, then 5 + 5 dice
        over = await play_randomly(ana, random.Random(11), start=state)
        assert over.status == "over"
        assert dice.drawn >= 2 * 2 + 10 + 9  # every round after the first rolls 9 dice or more


# ---- pastes: cut, never a disconnect ------------------------------------------------------


@pytest.mark.slow
async def test_a_big_paste_in_small_packets_is_cut_and_the_session_lives(tmp_path: Path) -> None:
    """A 1.5 MB paste sent as OpenSSH sends one from tmux, in 1 KB packets (1,500 of them, past
    the packet rate's burst): held back, never dropped; the app gets the paste cut to
    `max_paste`, and a key typed after it."""
    async with hello_server_with(tmp_path, Limits(max_paste=1000)) as (port, counts, _):
        term = Terminal()
        await term.connect(port, "ana", None)
        await term.wait_for("Hello ana")
        assert term.process is not None
        term.process.channel._send_pktsize = 1024  # type: ignore[attr-defined]
        term.send("\x1b[200~" + "x" * 1_500_000 + "\x1b[201~")
        await term.wait_for("pasted=1000", timeout=25)
        term.send("q")
        assert await term.ended(10) == 0
        await term.close()
        await until(lambda: counts.total == 0, "the session to end", timeout=5)


# ---- connections before login: a rate per address, a server-wide cap ---------------------------


async def _guest_from(port: int, name: str, address: str) -> asyncssh.SSHClientConnection:
    """A guest logged in from the loopback `address` (127.0.0.0/8 is all this machine's)."""
    from tests.test_limits import Guest

    conn, _ = await asyncssh.create_connection(
        Guest, "127.0.0.1", port, username=name, known_hosts=None, config=None,
        client_keys=None, agent_path=None, preferred_auth="keyboard-interactive",
        local_addr=(address, 0),
    )  # fmt: skip
    return conn


async def _waiting(port: int, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection from `address` that reads the server's version and says nothing: it
    holds a place before login (until the login timeout)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
    assert (await asyncio.wait_for(reader.readline(), 5)).startswith(b"SSH-2.0-")
    return reader, writer


async def test_new_connections_from_one_address_are_held_to_a_rate(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="perudo_ssh")
    limits = Limits(connection_burst_per_address=3, connection_rate_per_address=0.01)
    async with hello_server_with(tmp_path, limits) as (port, _counts, conns):
        opened = [await _guest_from(port, f"g{i}", "127.0.0.1") for i in range(3)]
        with pytest.raises(asyncssh.DisconnectError) as refused:
            await _guest_from(port, "g3", "127.0.0.1")
        assert refused.value.code == asyncssh.DISC_TOO_MANY_CONNECTIONS
        assert str(refused.value).startswith("too many new connections from your address")
        (record,) = events_named(caplog, "connection_refused")
        assert (record.fields["reason"], record.fields["limit"]) == ("address_rate", 0.01)
        opened.append(await _guest_from(port, "other", "127.0.0.2"))  # its own rate
        assert len(conns) == 4
        for conn in opened:
            conn.close()
            await conn.wait_closed()


@pytest.mark.slow
async def test_a_flood_of_waiting_connections_cannot_keep_a_player_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="perudo_ssh")
    limits = Limits(max_startups="2:100:4", connection_rate_per_address=0)
    async with hello_server_with(tmp_path, limits) as (port, _counts, conns):
        # four wait before login: two from one address (under start), then one from each of
        # two others (past start, only an address's first is let in): the cap is full
        flood = [await _waiting(port, f"127.0.0.{n}") for n in (2, 2, 3, 4)]
        assert conns.starting == 4
        # one more from a flooding address: refused (past start: at 100 %)
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, local_addr=("127.0.0.2", 0)
        )
        assert await asyncio.wait_for(reader.read(), 5) is not None  # closed by the server
        writer.close()
        (refused,) = events_named(caplog, "connection_refused")
        assert (refused.fields["reason"], refused.fields["limit"]) == ("startups", "2:100:4")
        # a player from another address gets in: the oldest of the address holding most goes
        player = await _guest_from(port, "ana", "127.0.0.9")
        (evicted,) = events_named(caplog, "connection_evicted")
        assert evicted.fields["peer"].startswith("127.0.0.2:")  # the address holding most
        closed = []
        for reader, writer in flood:
            try:
                data = await asyncio.wait_for(reader.read(65536), 0.5)
            except TimeoutError:
                continue
            while data:
                data = await asyncio.wait_for(reader.read(65536), 5)
            closed.append(writer)
        assert len(closed) == 1
        assert conns.starting == 3  # ana logged in: she holds no place before login
        player.close()
        await player.wait_closed()
        for _, writer in flood:
            writer.close()
        await until(lambda: len(conns) == 0, "every place to be given back", timeout=5)
        assert conns.starting == 0


# ---- one session's CPU budget ------------------------------------------------------------------


@pytest.mark.slow
async def test_a_key_storm_over_ssh_is_slowed_then_ended_saying_why_and_others_play_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.sshterm import Guest

    class Watched(Guest):
        closed = False

        def connection_lost(self, exc: Exception | None) -> None:
            self.closed = True

    caplog.set_level(logging.INFO, logger="perudo_ssh")
    limits = Limits(input_events_per_second=10, input_events_burst=10, input_flood_seconds=1.0)
    async with hello_server_with(tmp_path, limits) as (port, _counts, _conns):
        calm = Terminal()
        await calm.connect(port, "calm", None)
        await calm.wait_for("Hello calm")
        conn, client = await asyncssh.create_connection(
            Watched, "127.0.0.1", port, username="storm", known_hosts=None, config=None,
            client_keys=None, agent_path=None, preferred_auth="keyboard-interactive",
        )  # fmt: skip
        process = await conn.create_process(term_type="xterm", term_size=(80, 24))
        with contextlib.suppress(BrokenPipeError):
            while process.exit_status is None:  # 500 keys a second until the server ends it
                process.stdin.write("?" * 10)
                await asyncio.sleep(0.02)
        # its app ended, and the reason is left on the terminal after the screen is restored
        output = await asyncio.wait_for(process.stdout.read(), 10)
        assert "perudo-ssh: too much input: 10 keys or mouse events a second for 1 s" in output
        conn.close()
        (record,) = [
            r for r in events_named(caplog, "client_dropped") if r.fields["reason"] == "input_flood"
        ]
        assert (record.fields["rate"], record.fields["seconds"]) == (10, 1.0)
        # the calm session was never touched
        calm.send("q")
        await until(lambda: calm.closed, "the calm session to quit by its own key", timeout=10)
