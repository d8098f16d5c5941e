"""The server's name and message of the day, as the operator writes them in perudo.toml
(`[server] name`, `motd`; issue 15, item 5), kept up to date in the lobby.

`watch_notes` reads the file at the start and again whenever it changes (looked at every
`WATCH_EVERY` seconds), so `perudo-ssh admin motd "…"` or an edit by hand reaches every
player in the lobby within seconds, without a restart. A file that became malformed keeps
the notes as they were (logged); a removed file means none. Imports neither textual nor
asyncssh.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from perudo_ssh import config as configuration

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)

WATCH_EVERY = 2.0
"""Seconds between two looks at the configuration file."""


def read_notes(path: Path) -> tuple[str, str]:
    """The (name, motd) of the configuration file at `path` ("" for each one not set).
    Raises `ConfigError` for a malformed file."""
    server = configuration.load_config(path).server
    return server.name or "", server.motd or ""


async def watch_notes(lobby: Lobby, path: Path, every: float = WATCH_EVERY) -> None:
    """Give `lobby` the notes of the file at `path` (`Lobby.set_notes`) now and after each
    change of the file, until cancelled."""
    seen: object = ()
    while True:
        signature = configuration.file_signature(path)
        if signature != seen:
            seen = signature
            try:
                lobby.set_notes(*read_notes(path))
            except configuration.ConfigError as exc:
                log.error("server name and message of the day kept as they were: %s", exc)
        await asyncio.sleep(every)
