"""A connected session as the lobby actor knows it (`Client`), and the small vocabulary the
actor's modules share. Imports neither textual nor asyncssh."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from perudo_ssh import protocol
from perudo_ssh.chat import RateLimit
from perudo_ssh.session import LobbySession

MOVES = (
    protocol.StartGame,
    protocol.AddBot,
    protocol.PlayAgain,
    protocol.Ready,
    protocol.MakeBid,
    protocol.MakeCall,
    protocol.DeclareCalzone,
    protocol.ShowAndReroll,
)
"""Commands that move a table on: refused while an admin has it paused."""


@dataclass(eq=False, slots=True)
class Client:
    """A connected session as the actor knows it: its unique name, its table (or None)."""

    session: LobbySession
    name: str
    table: int | None = None
    dropped: bool = False
    chat: RateLimit = field(default_factory=RateLimit)  # how fast it may chat
    # decided by the server at connect (the key, the configuration), never by the client
    admin: bool = False
    address: str | None = None  # the client's IP address
    account_id: int | None = None  # the key's account (None: a guest, or no store)
    bot_account: bool = False  # a bot account's session: a program, marked BOT (issue 14)
    wanted: str = ""  # the name asked for (`name` is it, or it with a suffix: `ben-2`)
    watching_admin: bool = False  # an admin with the admin screen open

    @property
    def owner(self) -> str | None:
        """Who this is across connections (a disconnected player's seat waits for it):
        the account, else the key; None for a guest, who cannot come back."""
        if self.account_id is not None:
            return f"account:{self.account_id}"
        if self.session.fingerprint is not None:
            return f"key:{self.session.fingerprint}"
        return None

    @property
    def id(self) -> int:
        """The session id, unique for the lobby's life."""
        return self.session.id


CODE_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
"""The letters of an invite code (issue 13): none that reads as another."""


@dataclass(frozen=True, slots=True)
class TimerFired:
    """A timer went off for table `table` in `slot`: "move" (a bot's pause, key ("bot",
    epoch), or the reveal timeout, ("reveal", round_index)), "turn" (the turn timer, key
    ("turn", seat, round, actions)) or "grace" + seat (a disconnected player's grace).
    Stale when the slot's current timer has another key."""

    table: int
    slot: str
    key: tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Connecting:
    """A session connecting (`Lobby.connect`): what the server decided of it."""

    session: LobbySession
    admin: bool = False
    address: str | None = None
    account_id: int | None = None
    bot_account: bool = False


@dataclass(frozen=True, slots=True)
class Rated:
    """A game of table `table` was rated: `changes` each account's (name, before, after)
    in shown points, by account id (`Lobby.rated`)."""

    table: int
    changes: Mapping[int, tuple[str, int, int]]
