"""The lobby: the one actor that owns every table, seat and game, and what serves it.

- `actor` — the `Lobby` actor itself (STYLE.md item 4).
- `host` — the lobby's side of the bus (issue 12): the sessions of front processes attached
  to the actor, their events batched per front.

Imports neither textual nor asyncssh.
"""

from perudo_ssh.lobby.actor import BATCH, Lobby

__all__ = ["BATCH", "Lobby"]
