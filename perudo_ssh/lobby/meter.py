"""What the lobby actor counts for the operator (issue 15, item 3): the `Meter` it calls on
its turn, and the `census` of its sessions and tables read between its turns.

The lobby knows no metrics library: `perudo_ssh.metrics` gives it a `Meter` that feeds
Prometheus; the default, `NO_METER`, counts nothing. Imports neither textual nor asyncssh.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

LOCAL_FRONT = "local"
"""The front of a session of the lobby's own process (`perudo-ssh serve`)."""

PLACES = ("lobby", "table", "spectating")
"""Where a session is: in the lobby list, seated at a table, watching one."""


class Meter(Protocol):
    """The actor's counters, each called on its turn (so never concurrently)."""

    def moved(self, by: str) -> None:
        """A move was taken at a table; `by` is "player", "bot" or "timeout" (a turn timer's
        automatic move)."""

    def broadcast(self, seconds: float) -> None:
        """A player's move reached the lobby `seconds` before the events it made were handed
        to every session (its outbox, or the bus to its front), saving included."""

    def saved(self, ok: bool) -> None:
        """A save of the tables in play was written (`ok`) or failed (`saving.save`)."""

    def game_finished(self) -> None:
        """A game was played to its end."""

    def dropped(self, reason: str) -> None:
        """The lobby dropped a session (`reason`: "outbox_full", too slow to read)."""


class _NoMeter:
    def moved(self, by: str) -> None:
        pass

    def broadcast(self, seconds: float) -> None:
        pass

    def saved(self, ok: bool) -> None:
        pass

    def game_finished(self) -> None:
        pass

    def dropped(self, reason: str) -> None:
        pass


NO_METER: Meter = _NoMeter()
"""The meter of a lobby nobody measures."""


class Census(NamedTuple):
    """The lobby's sessions counted by (front, place) — front: the front process's id
    (`LOCAL_FRONT` for this process's own), place: one of `PLACES` — and its tables by
    status ("waiting", "playing", "over")."""

    sessions: Counter[tuple[str, str]]
    tables: Counter[str]


def census(lobby: Lobby) -> Census:
    """Count `lobby`'s live sessions and its tables (`Census`). Only reads; called between
    the actor's turns on its own event loop, so it sees one consistent state."""
    sessions: Counter[tuple[str, str]] = Counter()
    spectating = {sid for table in lobby.tables.values() for sid in table.spectators}
    for client in lobby.live_clients():
        front = getattr(client.session, "front", None) or LOCAL_FRONT
        if client.table is None:
            place = "lobby"
        elif client.id in spectating:
            place = "spectating"
        else:
            place = "table"
        sessions[(str(front), place)] += 1
    tables = Counter(table.status for table in lobby.tables.values())
    return Census(sessions, tables)
