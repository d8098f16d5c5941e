"""Review of issue 5 over real SSH: a defect found by attacking how a session ends. Each test
fails on the code as reviewed; its docstring says what is wrong."""

from __future__ import annotations

import asyncio
import logging
import signal

import asyncssh
import pytest

from perudo_ssh.serve import serve_forever
from screens.lobby import LobbyScreen
from tests.sshterm import Terminal

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # the quick loop: -m "not slow"


async def test_an_app_cancelled_after_its_client_left_still_leaves_the_lobby(
    game_server, monkeypatch
) -> None:
    """When a client leaves, its app gets `SHUTDOWN_GRACE` (5 s) to exit, then its task is
    cancelled (`AppSession._cancel_task`, logged `app_cancelled`). The lobby session is
    closed only by `PerudoApp.on_unmount`, which a cancelled app never reaches, and nothing
    else closes it (not `AppSession._run`, not the app factory in serve.py): the lobby keeps
    a ghost client for ever — online in every lobby list, its name taken (the player comes
    back as `ben-2`), and, if it was seated mid-game, its seat counted as a connected human:
    never held, never given to a bot, never taken back (with the turn timer off the table
    waits for it for ever). Here a screen slow to unmount stands for any app that does not
    exit within the grace (a loaded machine, a stuck worker)."""

    async def slow_unmount(self) -> None:
        await asyncio.sleep(30)

    monkeypatch.setattr(LobbyScreen, "on_unmount", slow_unmount, raising=False)
    ben = Terminal()
    await ben.connect(game_server.port, "ben", None)
    await ben.wait_for("welcome, ben")
    await ben.close()
    lobby = game_server.lobby
    async with asyncio.timeout(15):  # the grace (5 s), the cancel, the Disconnected
        while lobby._clients:
            await asyncio.sleep(0.1)


async def test_a_stopping_server_closes_the_connections_it_still_has(tmp_path, caplog) -> None:
    """`serve_forever` on SIGTERM closes the listener, stops the lobby (every app session
    gets its Goodbye), then `await acceptor.wait_closed()`. It never closes the SSH
    connections themselves: on Python 3.11 the process exit does; but from Python 3.12.1
    (`requires-python = ">=3.11"`) `asyncio.Server.wait_closed()` waits until every
    connection is closed, so one that stays open — an OpenSSH ControlMaster/ControlPersist
    connection whose session ended, a client that stopped reading, any authenticated
    connection without a channel — keeps `perudo-ssh serve` from ever exiting: the finished
    games are not drained, the store is not closed, and the supervisor's SIGKILL comes.
    (Seen with the real command under CPython 3.12.1: still running 20 s after SIGTERM, then
    exit 0 the moment the idle client went away.) Here, the server returns from
    `serve_forever` with the idle connection still open."""

    class Guest(asyncssh.SSHClient):
        def kbdint_auth_requested(self) -> str:
            return ""

        def kbdint_challenge_received(self, *args: object) -> list[str]:
            return []

    caplog.set_level(logging.INFO, logger="perudo_ssh")
    server = asyncio.create_task(
        serve_forever("127.0.0.1", 0, tmp_path / "keys", tmp_path / "p.db")
    )
    async with asyncio.timeout(10):
        while not [r for r in caplog.records if getattr(r, "event", None) == "listening"]:
            await asyncio.sleep(0.02)
    (listening,) = [r for r in caplog.records if getattr(r, "event", None) == "listening"]
    conn = await asyncssh.connect(
        "127.0.0.1",
        listening.fields["port"],
        username="idle",
        known_hosts=None,
        client_factory=Guest,
        client_keys=None,
        agent_path=None,
        preferred_auth="keyboard-interactive",
    )
    closed = asyncio.create_task(conn.wait_closed())
    try:
        signal.raise_signal(signal.SIGTERM)
        async with asyncio.timeout(15):
            await server
        await asyncio.sleep(0.2)
        assert closed.done(), "serve_forever returned with a client connection still open"
    finally:
        conn.close()
        await closed
        if not server.done():
            server.cancel()


async def test_a_running_app_leaves_the_servers_event_loop_as_it_was(game_server) -> None:
    """Found while running the test above under CPython 3.12.1: Textual's `App.run_async`
    sets `asyncio.eager_task_factory` on the running loop — the whole server's — as each app
    starts; from then on asyncssh never answered a key login (the client waited until the
    login timeout). The SSH session undoes it as the app makes its driver. (On Python 3.11
    there is no eager task factory: this passes either way.)"""
    loop = asyncio.get_running_loop()
    before = loop.get_task_factory()
    ana, ben = Terminal(), Terminal()
    await ana.connect(game_server.port, "ana", asyncssh.generate_private_key("ssh-ed25519"))
    await ana.wait_for("welcome, ana")
    assert loop.get_task_factory() is before
    async with asyncio.timeout(10):  # a second key login, while ana's app runs
        await ben.connect(game_server.port, "ben", asyncssh.generate_private_key("ssh-ed25519"))
    await ben.wait_for("welcome, ben")
    for term in (ana, ben):
        await term.close()
