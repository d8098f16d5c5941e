"""The messages between player sessions and the lobby actor.

Commands go from a session to the lobby; events come back, built per recipient (a player's
hidden dice reach that player alone, DEVELOPERS.md rule 3). Both are tagged msgspec Structs,
encoded with one module-level msgpack encoder and decoded with one decoder per direction.
Imports neither textual nor asyncssh.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from perudo_ssh.rules import GameView


class Message(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shared settings of every command and event."""


# ---- commands: session -> lobby ------------------------------------------------------------


class CreateTable(Message, frozen=True, tag=True):
    """Create a table and sit at its first seat (RULES.md §7 presets).

    `seats` 2–6 in all, `bots` of them filled by bots at once (0 to seats−1); `calza`
    overrides the preset's calza mode ("off", "on-turn", "anytime") or keeps it when None;
    `name` is shown in the lobby (defaults to the creator's name)."""

    preset: str = "classic"
    seats: int = 4
    bots: int = 2
    calza: str | None = None
    name: str | None = None


class JoinTable(Message, frozen=True, tag=True):
    """Sit at a free seat of table `table` (waiting tables only)."""

    table: int


class SpectateTable(Message, frozen=True, tag=True):
    """Watch table `table` without a seat; spectators never see hidden dice."""

    table: int


class LeaveTable(Message, frozen=True, tag=True):
    """Back to the lobby. Mid-game, a bot takes the seat so the game goes on."""


class StartGame(Message, frozen=True, tag=True):
    """The creator starts the table now with the players seated (at least 2)."""


class AddBot(Message, frozen=True, tag=True):
    """The creator fills one free seat of a waiting table with a bot."""


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


Command = (
    CreateTable
    | JoinTable
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
)


# ---- events: lobby -> session --------------------------------------------------------------


class TableSummary(Message, frozen=True):
    """One table in the lobby list: `status` "waiting", "playing" or "over"; `players` the
    names seated (bots included); `free` seats still open."""

    id: int
    name: str
    preset: str
    calza: str
    status: str
    seats: int
    players: tuple[str, ...]
    bots: int
    free: int
    spectators: int


class Welcome(Message, frozen=True, tag=True):
    """Sent once on connect: the unique name this session plays under."""

    name: str


class LobbyState(Message, frozen=True, tag=True):
    """The lobby: every table and who is online (names, sorted)."""

    tables: tuple[TableSummary, ...]
    online: tuple[str, ...]


class SeatInfo(Message, frozen=True):
    """A seat of a table: the player's name, and whether a bot plays it (a bot took over the
    seat of a human who left mid-game keeps that human's name)."""

    name: str
    bot: bool


class TableState(Message, frozen=True, tag=True):
    """The table this session sits at or watches, as this session may see it.

    `me` is this session's seat (None for a spectator); `creator` the seat that may start;
    `game` the per-recipient `GameView` (None before the first game); `opening` the opening
    rolls of this game, one tuple of totals per roll-off (RULES.md §2.2); `waiting_for` the
    names whose reveal confirmation the table waits for."""

    id: int
    name: str
    status: str
    seats: tuple[SeatInfo, ...]
    size: int
    me: int | None
    creator: int | None
    spectators: tuple[str, ...]
    game: GameView | None
    opening: tuple[tuple[int | None, ...], ...] = ()
    play_again: tuple[str, ...] = ()
    waiting_for: tuple[str, ...] = ()


Args = dict[str, str | int]
"""Named arguments of a server message id (`str.format` fields), filled in after translation."""


class Refused(Message, frozen=True, tag=True):
    """A command was refused and changed nothing. `code` is a RECORD.md rule error code or a
    lobby code ("no_table", "table_full", "not_creator", "not_seated", "bad_command");
    `message` says why: an English message id (perudo_ssh.i18n) with `args`, translated by
    the receiving session."""

    code: str
    message: str
    args: Args = msgspec.field(default_factory=dict)


class Notice(Message, frozen=True, tag=True):
    """Something to tell the player (a bot took a seat, a player left, the table closed):
    `text` is an English message id with `args`, translated by the receiving session."""

    text: str
    args: Args = msgspec.field(default_factory=dict)


class LeftTable(Message, frozen=True, tag=True):
    """This session is back in the lobby (it left, or its table closed)."""


class Goodbye(Message, frozen=True, tag=True):
    """The lobby ends this session (dropped for not reading, or the server stops): `reason`
    is an English message id with `args`, translated by the receiving session."""

    reason: str
    args: Args = msgspec.field(default_factory=dict)


Event = Welcome | LobbyState | TableState | Refused | Notice | LeftTable | Goodbye

_encoder = msgspec.msgpack.Encoder()
_event_decoder = msgspec.msgpack.Decoder(Event)
_command_decoder = msgspec.msgpack.Decoder(Command)


def encode(message: Command | Event) -> bytes:
    """msgpack bytes of a command or an event."""
    return _encoder.encode(message)


def decode_event(data: bytes) -> Event:
    """The event in `data`; raises msgspec.DecodeError/ValidationError if it is not one."""
    return _event_decoder.decode(data)


def decode_command(data: bytes) -> Command:
    """The command in `data`; raises msgspec.DecodeError/ValidationError if it is not one."""
    return _command_decoder.decode(data)
