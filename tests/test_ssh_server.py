"""Loopback tests of the SSH transport: a real server on a free port, asyncssh as client."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import stat
import sys
import weakref
import webbrowser
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from platformdirs import user_downloads_path
from textual.app import App, ComposeResult
from textual.css.query import NoMatches
from textual.widgets import Input, Label, Static

from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.ssh import driver as driver_module
from perudo_ssh.ssh.server import Login, start_server
from tests.sshterm import Guest, until

TIMEOUT = 10.0
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")


class HelloApp(App[None]):
    """Shows the login and reacts to a few keys; nothing focused so `q` reaches the app."""

    AUTO_FOCUS = None
    BINDINGS = [
        ("q", "quit"),
        ("escape", "escaped"),
        ("x", "crash"),
        ("f", "flood"),
        ("s", "screenshot"),
        ("o", "open_link"),
    ]

    def __init__(self, login: Login) -> None:
        super().__init__()
        self.login = login

    def compose(self) -> ComposeResult:
        yield Label(f"Hello {self.login.name}")
        yield Label(f"key={self.login.fingerprint or 'guest'}")
        yield Label(f"colors={self.console.color_system}")
        yield Label("", id="size")
        yield Label("ready", id="status")
        yield Input(id="input")
        yield Static("", id="flood")

    def on_mount(self) -> None:
        self._show_size(self.size.width, self.size.height)

    def on_resize(self, event: Any) -> None:
        self._show_size(event.size.width, event.size.height)

    def _show_size(self, width: int, height: int) -> None:
        try:
            self.query_one("#size", Label).update(f"size={width}x{height}")
        except NoMatches:
            pass

    def on_paste(self, event: Any) -> None:
        self.query_one("#status", Label).update(f"pasted={len(event.text)}")

    def action_escaped(self) -> None:
        self.query_one("#status", Label).update("escaped!")

    def action_open_link(self) -> None:
        self.open_url("https://example.com/")

    def action_crash(self) -> None:
        raise RuntimeError("boom")

    def action_flood(self) -> None:
        self.set_interval(0.005, self._flood_frame)

    def _flood_frame(self) -> None:
        self.query_one("#flood", Static).update(os.urandom(900).hex())


@dataclass
class Server:
    port: int
    host_key_dir: Path
    logins: list[Login] = field(default_factory=list)
    apps: list[weakref.ref[App[Any]]] = field(default_factory=list)


@dataclass
class Terminal:
    """One client session with a PTY, and the screen output seen so far."""

    conn: asyncssh.SSHClientConnection
    proc: asyncssh.SSHClientProcess[bytes]
    seen: str = ""
    searched: int = 0

    async def expect(self, text: str, timeout: float = TIMEOUT) -> None:
        """Read output until `text` appears (escape sequences ignored)."""

        async def readuntil() -> None:
            while True:
                plain = _ANSI.sub("", self.seen)
                found = plain.find(text, self.searched)
                if found >= 0:
                    self.searched = found + len(text)
                    return
                chunk = await self.proc.stdout.read(65536)
                if not chunk:
                    raise AssertionError(f"output ended before {text!r}: {plain[-500:]!r}")
                self.seen += chunk.decode("utf-8", "replace")

        await asyncio.wait_for(readuntil(), timeout)

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)


@pytest.fixture(scope="module")
def ssh_client_key() -> asyncssh.SSHKey:
    return asyncssh.generate_private_key("ssh-ed25519")


@pytest.fixture
async def ssh_server(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    """The server with `HelloApp`; with the limits given as the fixture's param, if any."""
    server = Server(port=0, host_key_dir=tmp_path / "host_keys")
    limits = getattr(request, "param", DEFAULT_LIMITS)

    def factory(login: Login) -> App[Any]:
        app = HelloApp(login)
        server.logins.append(login)
        server.apps.append(weakref.ref(app))
        return app

    acceptor = await start_server(factory, port=0, host_key_dir=server.host_key_dir, limits=limits)
    server.port = acceptor.get_port()
    yield server
    acceptor.close()
    await acceptor.wait_closed()
    # Every client has gone by now; let the apps finish before the loop closes.
    await until(lambda: all(ref() is None for ref in server.apps), "apps to end")


async def _connect(
    server: Server, key: asyncssh.SSHKey | None, username: str = "alice", **options: Any
) -> asyncssh.SSHClientConnection:
    if key is None:
        options.update(client_keys=None, client_factory=Guest)
    else:
        options.update(client_keys=[key])
    options.setdefault("agent_path", None)
    return await asyncssh.connect(
        "127.0.0.1",
        server.port,
        username=username,
        known_hosts=None,
        config=None,
        **options,
    )


async def _open_terminal(
    server: Server,
    key: asyncssh.SSHKey | None,
    username: str = "alice",
    size: tuple[int, int] = (80, 24),
    env: dict[str, str] | None = None,
    term_type: str = "xterm-256color",
) -> Terminal:
    conn = await _connect(server, key, username)
    proc = await conn.create_process(
        term_type=term_type, term_size=size, encoding=None, env=env or {}
    )
    return Terminal(conn, proc)


async def _close(terminal: Terminal) -> None:
    terminal.conn.close()
    await terminal.conn.wait_closed()


async def _finish(terminal: Terminal) -> asyncssh.SSHCompletedProcess:
    """Wait for the session to end; the result holds the rest of its output."""
    return await asyncio.wait_for(terminal.proc.wait(), TIMEOUT)


async def test_key_login_shows_clean_name_and_fingerprint(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey
) -> None:
    terminal = await _open_terminal(
        ssh_server, ssh_client_key, username="Zoë <script>!", env={"LANG": "fr_FR.UTF-8"}
    )
    await terminal.expect("Hello Zoëscript")
    fingerprint = ssh_client_key.get_fingerprint("sha256")
    await terminal.expect(f"key={fingerprint}")
    (login,) = ssh_server.logins
    assert login.username == "Zoë <script>!"
    assert login.name == "Zoëscript"
    assert login.fingerprint == fingerprint
    assert login.term == "xterm-256color"
    assert login.lang == "fr_FR.UTF-8"
    assert login.colorterm is None
    assert login.size == (80, 24)
    assert re.fullmatch(r"127\.0\.0\.1:\d+", login.peer)
    await _close(terminal)


@pytest.mark.parametrize(
    ("term_type", "env", "expected"),
    [
        ("xterm-256color", {}, "colors=256"),
        ("xterm-256color", {"COLORTERM": "truecolor"}, "colors=truecolor"),
        ("xterm", {}, "colors=standard"),
    ],
)
@pytest.mark.slow
async def test_colour_depth_follows_the_client(
    ssh_server: Server,
    ssh_client_key: asyncssh.SSHKey,
    term_type: str,
    env: dict[str, str],
    expected: str,
) -> None:
    terminal = await _open_terminal(ssh_server, ssh_client_key, env=env, term_type=term_type)
    await terminal.expect(expected)
    await _close(terminal)


async def test_no_server_side_effects(
    ssh_server: Server,
    ssh_client_key: asyncssh.SSHKey,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *args, **kwargs: opened.append(url))
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    downloads = user_downloads_path()
    before = set(downloads.glob("*.svg")) if downloads.is_dir() else set()
    streams = (sys.stdout, sys.stderr)
    terminal = await _open_terminal(ssh_server, ssh_client_key)
    await terminal.expect("ready")
    assert (sys.stdout, sys.stderr) == streams  # the app did not take the process's streams
    terminal.send(b"o")
    await terminal.expect("Opening links")
    terminal.send(b"s")
    await terminal.expect("Saving files")
    assert opened == []
    assert list(work.iterdir()) == []
    assert (set(downloads.glob("*.svg")) if downloads.is_dir() else set()) == before
    await _close(terminal)


async def test_guest_login_by_keyboard_interactive(ssh_server: Server) -> None:
    terminal = await _open_terminal(ssh_server, None, username="bob")
    await terminal.expect("Hello bob")
    await terminal.expect("key=guest")
    assert ssh_server.logins[0].fingerprint is None
    await _close(terminal)


async def test_password_only_client_is_refused(ssh_server: Server) -> None:
    with pytest.raises(asyncssh.PermissionDenied):
        await _connect(
            ssh_server, None, password="secret", preferred_auth="password", client_factory=None
        )


async def test_q_exits_with_status_zero(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey
) -> None:
    terminal = await _open_terminal(ssh_server, ssh_client_key)
    await terminal.expect("Hello alice")
    terminal.send(b"q")
    completed = await _finish(terminal)
    assert completed.exit_status == 0
    assert b"\x1b[?1049l" in completed.stdout  # the alternate screen was left
    await _close(terminal)


async def test_lone_escape_reaches_the_app(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey
) -> None:
    terminal = await _open_terminal(ssh_server, ssh_client_key)
    await terminal.expect("ready")
    terminal.send(b"\x1b")
    await terminal.expect("escaped!")
    await _close(terminal)


async def test_resize_reaches_the_app(ssh_server: Server, ssh_client_key: asyncssh.SSHKey) -> None:
    terminal = await _open_terminal(ssh_server, ssh_client_key)
    await terminal.expect("size=80x24")
    terminal.proc.change_terminal_size(100, 30)
    await terminal.expect("size=100x30")
    await _close(terminal)


async def test_no_pty_is_refused(ssh_server: Server, ssh_client_key: asyncssh.SSHKey) -> None:
    conn = await _connect(ssh_server, ssh_client_key)
    async with conn:
        proc = await conn.create_process(encoding=None)
        completed = await asyncio.wait_for(proc.wait(), TIMEOUT)
        assert completed.exit_status == 1
        assert b"needs an interactive terminal" in completed.stderr
    assert ssh_server.logins == []


async def test_exec_is_refused(ssh_server: Server, ssh_client_key: asyncssh.SSHKey) -> None:
    conn = await _connect(ssh_server, ssh_client_key)
    async with conn:
        for term_type in (None, "xterm"):
            completed = await asyncio.wait_for(
                conn.run("touch /tmp/perudo-pwned", term_type=term_type, encoding=None), TIMEOUT
            )
            assert completed.exit_status == 1
            output = completed.stdout + (completed.stderr or b"")
            assert b"does not run commands" in output
    assert ssh_server.logins == []
    assert not Path("/tmp/perudo-pwned").exists()


async def test_forwarding_and_sftp_are_refused(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey, caplog: pytest.LogCaptureFixture
) -> None:
    conn = await _connect(
        ssh_server, ssh_client_key, agent_forwarding=True, agent_path="/nonexistent/agent"
    )
    async with conn:
        with pytest.raises(asyncssh.ChannelOpenError):
            await conn.open_connection("127.0.0.1", ssh_server.port)
        with pytest.raises(asyncssh.ChannelListenError):
            await conn.forward_remote_port("127.0.0.1", 0, "127.0.0.1", 9)
        with pytest.raises((asyncssh.ChannelOpenError, asyncssh.SFTPError)):
            await conn.start_sftp_client()
        # The connection itself survives the refusals; its session asked for the agent.
        with caplog.at_level(logging.INFO, logger="asyncssh"):
            proc = await conn.create_process(term_type="xterm", term_size=(80, 24), encoding=None)
            await Terminal(conn, proc).expect("Hello alice")
    assert any("Agent forwarding request denied" in r.message for r in caplog.records)


async def test_host_key_is_private_and_reused(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey
) -> None:
    key_file = ssh_server.host_key_dir / "ssh_host_ed25519_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    conn = await _connect(ssh_server, ssh_client_key)
    async with conn:
        first = conn.get_server_host_key()
    assert first is not None

    def factory(login: Login) -> App[Any]:
        return HelloApp(login)

    second_server = await start_server(factory, port=0, host_key_dir=ssh_server.host_key_dir)
    try:
        restarted = Server(port=second_server.get_port(), host_key_dir=ssh_server.host_key_dir)
        conn = await _connect(restarted, ssh_client_key)
        async with conn:
            second = conn.get_server_host_key()
    finally:
        second_server.close()
        await second_server.wait_closed()
    assert second is not None
    assert second.get_fingerprint() == first.get_fingerprint()


async def test_disconnect_frees_the_app(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey
) -> None:
    terminal = await _open_terminal(ssh_server, ssh_client_key)
    await terminal.expect("Hello alice")
    terminal.send(b"\x1b[27;5u\x1b[<0;3;4M")  # a Kitty key and a mouse click for the caches
    (app_ref,) = ssh_server.apps
    assert app_ref() is not None
    terminal.conn.abort()
    await until(lambda: app_ref() is None, "the app to be garbage-collected")


async def test_crash_ends_only_that_session(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey, caplog: pytest.LogCaptureFixture
) -> None:
    crashing = await _open_terminal(ssh_server, ssh_client_key, username="crash")
    other = await _open_terminal(ssh_server, ssh_client_key, username="other")
    await crashing.expect("Hello crash")
    await other.expect("Hello other")
    with caplog.at_level(logging.ERROR, logger="perudo_ssh"):
        crashing.send(b"x")
        completed = await _finish(crashing)
    assert completed.exit_status == 1
    assert b"something went wrong" in completed.stderr
    assert any(
        getattr(r, "event", None) == "session_crashed" and "RuntimeError: boom" in r.fields["exc"]
        for r in caplog.records
    )
    other.proc.change_terminal_size(90, 20)
    await other.expect("size=90x20")
    other.send(b"q")
    assert (await _finish(other)).exit_status == 0
    await _close(crashing)
    await _close(other)


async def test_factory_error_ends_only_that_session(
    tmp_path: Path, ssh_client_key: asyncssh.SSHKey
) -> None:
    def factory(login: Login) -> App[Any]:
        if login.username == "bad":
            raise ValueError("no app for you")
        return HelloApp(login)

    acceptor = await start_server(factory, port=0, host_key_dir=tmp_path)
    try:
        server = Server(port=acceptor.get_port(), host_key_dir=tmp_path)
        bad = await _open_terminal(server, ssh_client_key, username="bad")
        assert (await _finish(bad)).exit_status == 1
        await _close(bad)
        good = await _open_terminal(server, ssh_client_key, username="good")
        await good.expect("Hello good")
        good.send(b"q")
        assert (await _finish(good)).exit_status == 0
        await _close(good)
    finally:
        acceptor.close()
        await acceptor.wait_closed()


async def test_hostile_input_leaves_the_session_working(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey
) -> None:
    terminal = await _open_terminal(ssh_server, ssh_client_key)
    await terminal.expect("ready")
    # A sequence that kills Textual's own parser, invalid UTF-8, a forged huge
    # in-band resize, then a paste far beyond the limit.
    terminal.send(b"\x1b[99999999999999999999u\xff\xfe\xc3\x1b[48;9999;9999;1;1t")
    terminal.send(b"\x1b[200~" + b"A" * 100_000 + b"\x1b[201~")
    await terminal.expect(f"pasted={driver_module.MAX_PASTE}", timeout=30)
    terminal.proc.change_terminal_size(81, 25)
    await terminal.expect("size=81x25")
    assert "9999" not in _ANSI.sub("", terminal.seen)
    terminal.send(b"q")
    assert (await _finish(terminal)).exit_status == 0
    await _close(terminal)


async def test_random_garbage_does_not_hurt_other_sessions(
    ssh_server: Server, ssh_client_key: asyncssh.SSHKey
) -> None:
    terminal = await _open_terminal(ssh_server, ssh_client_key)
    await terminal.expect("ready")
    # Random bytes include Ctrl+Q, Ctrl+P...: that session may end (even crash
    # inside Textual's widgets), but the server and other sessions carry on.
    terminal.send(random.Random(7).randbytes(50_000))
    other = await _open_terminal(ssh_server, ssh_client_key, username="other")
    await other.expect("Hello other")
    other.send(b"q")
    assert (await _finish(other)).exit_status == 0
    await _close(other)
    await _close(terminal)


@pytest.mark.parametrize("ssh_server", [Limits(output_buffer_bytes=64 * 1024)], indirect=True)
@pytest.mark.slow
async def test_client_that_stops_reading_is_dropped(
    ssh_server: Server,
    ssh_client_key: asyncssh.SSHKey,
    caplog: pytest.LogCaptureFixture,
) -> None:
    conn = await _connect(ssh_server, ssh_client_key)
    proc = await conn.create_process(
        term_type="xterm", term_size=(80, 24), encoding=None, window=16 * 1024
    )
    terminal = Terminal(conn, proc)
    await terminal.expect("Hello alice")
    proc.channel.pause_reading()  # never read again, never open the window again
    with caplog.at_level(logging.WARNING, logger="perudo_ssh"):
        terminal.send(b"f")
        await asyncio.wait_for(conn.wait_closed(), TIMEOUT)
    assert any(
        getattr(r, "event", None) == "client_dropped"
        and r.fields["reason"] == "output_unread"
        and r.fields["limit"] == 64 * 1024
        for r in caplog.records
    )
    (app_ref,) = ssh_server.apps
    await until(lambda: app_ref() is None, "the flooding app to end")
