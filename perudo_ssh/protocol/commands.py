"""The commands a player's session sends to the lobby (session -> lobby): sitting down,
playing a move (RULES.md §2–§5), chat, and the limits the lobby checks them against. Admin
commands live in `protocol.admin`; `Command` is the union of both, the type the lobby decodes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from perudo_ssh.protocol.admin import AdminCommand
from perudo_ssh.protocol.base import Message

# ---- commands: session -> lobby ------------------------------------------------------------


class CreateTable(Message, frozen=True, tag=True):
    """Create a table and sit at its first seat (RULES.md §7: a preset, every option may be
    overridden per table).

    `seats` 2–6 in all, `bots` of them filled by bots at once (0 to seats−1); `options`
    overrides the preset's options by RULES.md option name (`{"calza": "on-turn",
    "stake": 5}`; rules/options.py `options_for`, checked again by the lobby, refused as
    "bad_options"); `name` is shown in the lobby (defaults to the creator's name); `rated`:
    its finished games update the ratings of the account holders who played
    (`perudo_ssh.ratings.is_rated`; issue 4, not a rule of RULES.md).

    Not rules either (issue 5): `turn_seconds`, the turn timer — a player who has not moved
    that long after their turn began gets an automatic move (`TURN_SECONDS`; 0: no timer);
    `grace_seconds`, how long a disconnected player's seat is held for them before a bot
    plays it (`GRACE_SECONDS`). Out of range: refused as "bad_command"."""

    preset: str = "classic"
    seats: int = 4
    bots: int = 2
    options: dict[str, str | int | bool] = msgspec.field(default_factory=dict)
    name: str | None = None
    rated: bool = True
    turn_seconds: int = 60
    grace_seconds: int = 120
    private: bool = False
    """Not listed in the lobby: joined with its invite code (`JoinPrivate`; issue 13)."""
    bot_level: str = "medium"
    """The level of the bots seated now (`perudo_ssh.bots.LEVELS`; issue 14); anything else
    is refused as "bad_command"."""


TURN_SECONDS = (0, 10, 600)
"""The turn timer: 0 (off), or from 10 to 600 seconds (`CreateTable.turn_seconds`)."""

GRACE_SECONDS = (0, 3600)
"""A disconnected player's seat is held 0 to 3600 seconds (`CreateTable.grace_seconds`)."""


class JoinTable(Message, frozen=True, tag=True):
    """Sit at a free seat of table `table` (waiting tables only)."""

    table: int


class JoinPrivate(Message, frozen=True, tag=True):
    """Sit at the private table whose invite code is `code` (any case; issue 13)."""

    code: str


class Challenge(Message, frozen=True, tag=True):
    """Challenge the player online as `name` to a game of `preset` (issue 13): a private
    table of two seats opens with the challenger at it, and `name` gets a `Challenged`."""

    name: str
    preset: str = "classic"


class DeclineChallenge(Message, frozen=True, tag=True):
    """Say no to the challenge of the private table with invite code `code`: its
    challenger is told."""

    code: str


QUICK_WAITS = (15, 30, 60, 120)
"""The waits a quick play offers before bots take the free seats, in seconds."""


class QuickPlay(Message, frozen=True, tag=True):
    """Seat me at the best open table (issue 13): of the waiting tables with a free seat,
    of `preset` if given (None: any), the one with the most people seated (then the oldest);
    if there is none, a new table of four seats of `preset` (classic if None) where bots take
    the seats still free `wait_seconds` after it opened (one of `QUICK_WAITS`; anything else
    is refused as "bad_command"), unless players fill them first."""

    preset: str | None = None
    wait_seconds: int = 30


class SpectateTable(Message, frozen=True, tag=True):
    """Watch table `table` without a seat; spectators never see hidden dice."""

    table: int


class LeaveTable(Message, frozen=True, tag=True):
    """Back to the lobby. Mid-game, a bot takes the seat so the game goes on; at a club
    table the cup stays until the round ends, then the player is out (RULES.md §6)."""


class StartGame(Message, frozen=True, tag=True):
    """The creator starts the table now with the players seated (at least 2)."""


class AddBot(Message, frozen=True, tag=True):
    """The creator fills one free seat of a waiting table with a bot of `level`
    (`perudo_ssh.bots.LEVELS`; None: the level the table was created with; issue 14)."""

    level: str | None = None


class PlayAgain(Message, frozen=True, tag=True):
    """After game over: this player wants another game at the same table."""


class Ready(Message, frozen=True, tag=True):
    """This player has seen the reveal of round `round` and may go on."""

    round: int


class MakeBid(Message, frozen=True, tag=True):
    """Bid `count` dice showing `face` (RULES.md §3)."""

    count: int
    face: int


class MakeCall(Message, frozen=True, tag=True):
    """Call dudo, calza or jonti on the last bid (RULES.md §2.5, §5)."""

    call: Literal["dudo", "calza", "jonti"]


class DeclareCalzone(Message, frozen=True, tag=True):
    """Declare a calzone round (RULES.md §4, club)."""


class ShowAndReroll(Message, frozen=True, tag=True):
    """Set `reveal` (faces of my hidden dice) aside face up; the lobby re-rolls the rest."""

    reveal: tuple[int, ...]


class Say(Message, frozen=True, tag=True):
    """Say `text` in the chat where this session is: its table's (players and spectators)
    or, away from a table, the lobby's. The lobby cleans it (`perudo_ssh.chat.clean_chat`:
    no control character or escape sequence survives) and refuses, changing nothing: "muted",
    "chat_empty" (nothing printable), "chat_too_long" (over `chat.MAX_CHAT_LENGTH`
    characters once cleaned), "chat_rate" (over `chat.RATE_LINES` lines every
    `chat.RATE_SECONDS` seconds)."""

    text: str


Command = (
    CreateTable
    | JoinTable
    | QuickPlay
    | JoinPrivate
    | Challenge
    | DeclineChallenge
    | SpectateTable
    | LeaveTable
    | StartGame
    | AddBot
    | PlayAgain
    | Ready
    | MakeBid
    | MakeCall
    | DeclareCalzone
    | ShowAndReroll
    | Say
    | AdminCommand
)
"""Every command a session may send the lobby (`codec.decode_command` decodes one)."""
