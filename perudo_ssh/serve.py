"""The game server: one lobby actor, one SSH listener, one Textual app per connection.

This is the only module that joins the lobby (`perudo_ssh.lobby`), the SSH layer
(`perudo_ssh.ssh`) and the screens (`screens`).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import asyncssh

from perudo_ssh.lobby import Lobby
from perudo_ssh.ssh.server import Login, start_server

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 3.0
"""Seconds a stopping server gives its sessions to show the goodbye and close."""


async def start_game_server(
    host: str = "127.0.0.1",
    port: int = 2222,
    host_key_dir: Path = Path("host_keys"),
    lobby: Lobby | None = None,
) -> tuple[asyncssh.SSHAcceptor, Lobby]:
    """Start `lobby` (a new one by default) and an SSH listener on `host:port` whose
    sessions each run a `screens.app.PerudoApp` attached to it. Port 0 picks a free port
    (read it from `acceptor.get_port()`)."""
    from screens.app import make_app

    if lobby is None:
        lobby = Lobby()
    lobby.start()

    def app_factory(login: Login):
        return make_app(lobby.connect(login.name, login.fingerprint))

    acceptor = await start_server(app_factory, host=host, port=port, host_key_dir=host_key_dir)
    return acceptor, lobby


async def serve_forever(host: str, port: int, host_key_dir: Path) -> None:
    """Run the server until SIGINT or SIGTERM, then close sessions and stop cleanly."""
    acceptor, lobby = await start_game_server(host, port, host_key_dir)
    log.info(
        "perudo-ssh listening on %s:%d — connect with: ssh -p %d %s",
        host,
        acceptor.get_port(),
        acceptor.get_port(),
        host,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("stopping")
    acceptor.close()
    await lobby.stop()  # every session gets Goodbye("server stopping") and shows it
    await acceptor.wait_closed()
    # let the apps show the goodbye and close their channels; asyncio.run cancels the rest
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    if others:
        await asyncio.wait(others, timeout=SHUTDOWN_GRACE)
