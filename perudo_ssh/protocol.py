"""The messages between player sessions and the lobby actor.

Commands go from a session to the lobby; events come back, built per recipient (a player's
hidden dice reach that player alone, DEVELOPERS.md rule 3). Both are tagged msgspec Structs,
encoded with one module-level msgpack encoder and decoded with one decoder per direction.
Imports neither textual nor asyncssh.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Literal

import msgspec

from perudo_ssh.i18n import N_
from perudo_ssh.rules import GameView, Options


class Message(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shared settings of every command and event."""


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


# ---- admin commands (issue 4, item 6) -------------------------------------------------------
# The lobby carries them out for a session it knows is an admin (the server decides, from the
# key and the configuration: `Lobby.connect(admin=...)`); from anyone else each is refused as
# "not_admin" and changes nothing. A `session` is an `AdminSession.id`; `seconds` a duration
# (None: for ever); reasons and announcements are plain text, never markup.


class WatchAdmin(Message, frozen=True, tag=True):
    """Admins: send me `AdminState` now and whenever it changes (`on`), or no more."""

    on: bool = True


class Kick(Message, frozen=True, tag=True):
    """Admins: end session `session`; its `Goodbye` gives `reason` (required)."""

    session: int
    reason: str


class Ban(Message, frozen=True, tag=True):
    """Admins: ban a `kind` "key" or "address" for `seconds` (None: for ever) with `reason`
    (required), shown to the banned when they log in. The key or address is live session
    `session`'s, or `value` (a SHA256 fingerprint, an IP address) when `session` is None.
    Every live session of that key or address is ended."""

    kind: Literal["key", "address"]
    reason: str
    session: int | None = None
    value: str | None = None
    seconds: int | None = None


class Unban(Message, frozen=True, tag=True):
    """Admins: lift ban `ban` (a `BanRow.id`) now."""

    ban: int


class Mute(Message, frozen=True, tag=True):
    """Admins: mute session `session`'s chat for `seconds` (None: for ever) with `reason`
    (required). A key's mute is its account's and is stored; a guest's lasts the session."""

    session: int
    reason: str
    seconds: int | None = None


class Unmute(Message, frozen=True, tag=True):
    """Admins: lift every mute on session `session`'s chat."""

    session: int


class RemovePlayer(Message, frozen=True, tag=True):
    """Admins: send session `session` from its table back to the lobby, as if it left
    (RULES.md §6: mid-game a bot takes the seat)."""

    session: int
    reason: str = ""


class PauseTable(Message, frozen=True, tag=True):
    """Admins: pause table `table`: moves are refused and its timers (bots, the reveal) wait
    until `ResumeTable`."""

    table: int
    reason: str = ""


class ResumeTable(Message, frozen=True, tag=True):
    """Admins: table `table` plays on."""

    table: int


class CloseTable(Message, frozen=True, tag=True):
    """Admins: close table `table`; everyone at it goes back to the lobby, told why."""

    table: int
    reason: str = ""


class Announce(Message, frozen=True, tag=True):
    """Admins: tell every session `text` (an `Announcement`)."""

    text: str


AdminCommand = (
    WatchAdmin
    | Kick
    | Ban
    | Unban
    | Mute
    | Unmute
    | RemovePlayer
    | PauseTable
    | ResumeTable
    | CloseTable
    | Announce
)

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


# ---- events: lobby -> session --------------------------------------------------------------


class TableSummary(Message, frozen=True):
    """One table in the lobby list: `status` "waiting", "playing" or "over"; `players` the
    names seated (bots included); `free` seats still open; `options` the table's rules
    (RULES.md §7: shown to everyone; `custom` is True when they differ from the preset's;
    None only from a sender that does not say)."""

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
    options: Options | None = None
    custom: bool = False
    turn_seconds: int = 0
    away: int = 0
    """Seats whose player is disconnected (held for them, or played by a bot until they are
    back)."""


class Welcome(Message, frozen=True, tag=True):
    """Sent once on connect: the unique name this session plays under, and whether it is an
    admin (the server decided it from the key; the admin screen is offered then)."""

    name: str
    admin: bool = False


class LobbyState(Message, frozen=True, tag=True):
    """The lobby: every table and who is online (names, sorted).

    `ratings`: beside `online`, name for name, each one's rating in points
    (`perudo_ssh.ratings.ordinal`, rounded; None for a guest, who has no account); empty
    from a sender that does not say (issue 13)."""

    tables: tuple[TableSummary, ...]
    online: tuple[str, ...]
    ratings: tuple[int | None, ...] = ()
    bot_accounts: tuple[str, ...] = ()
    """The names of `online` that are bot accounts (programs, marked BOT; issue 14)."""


class SeatInfo(Message, frozen=True):
    """A seat of a table: the player's name, and whether a bot plays it (a bot took over the
    seat of a human who left mid-game keeps that human's name).

    `away`: the seat's player is disconnected and may come back (issue 5): the seat is held
    for them (`grace` seconds left when this was sent, counting down) or, once that is over,
    a bot plays it (`bot` True, `grace` None) until they are back."""

    name: str
    bot: bool
    away: bool = False
    grace: float | None = None
    level: str | None = None
    """A bot seated as such: its level (`perudo_ssh.bots.LEVELS`; issue 14); None for a
    human's seat (a bot playing a human's seat included)."""
    rating: int | None = None
    """The seated account's rating in points (`perudo_ssh.ratings.ordinal`, rounded; 1000
    before its first rated game); None for a bot or a guest (issue 13)."""
    bot_account: bool = False
    """The seated account is a bot account: a program playing through the bot API
    (`perudo_ssh.botapi`), marked BOT (issue 14)."""


class RatingChange(Message, frozen=True):
    """What a rated game did to one player's rating, in points (issue 13): `before` and
    `after` rounded as shown, so `after - before` is the change shown (+14, −9)."""

    name: str
    before: int
    after: int


class TurnClock(Message, frozen=True):
    """The turn timer (issue 5): `seat` has `left` seconds (when this was sent) of its
    `seconds` to move before an automatic move is made for it."""

    seat: int
    seconds: int
    left: float


class AutoMove(Message, frozen=True):
    """A move the server made for a player whose turn timer ran out (issue 5): in round
    `round` (`GameView.round_index`), by `seat`, after `bids` bids of that round — so a
    bid is the round's bid number `bids` (0-based), and a call ends the round after `bids`
    bids. `call` is "dudo" for a call, None for a bid."""

    round: int
    seat: int
    bids: int
    call: str | None = None


class TableState(Message, frozen=True, tag=True):
    """The table this session sits at or watches, as this session may see it.

    `me` is this session's seat (None for a spectator); `creator` the seat that may start;
    `game` the per-recipient `GameView` (None before the first game); `opening` the opening
    rolls of this game, one tuple of totals per roll-off (RULES.md §2.2); `waiting_for` the
    names whose reveal confirmation the table waits for; `options` the table's rules (RULES.md
    §7: every player and spectator sees them, before the first game too; None only from a
    sender that does not say)."""

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
    options: Options | None = None
    paused: bool = False
    """An admin holds the table: no move is taken and no bot acts until it resumes."""
    clock: TurnClock | None = None
    """The turn timer of the seat to move, or None (no timer, or nobody's turn)."""
    automatic: tuple[AutoMove, ...] = ()
    """The moves of this game the server made for players whose time ran out."""
    turn_seconds: int = 0
    grace_seconds: int = 0
    """The table's turn timer (0: none) and disconnect grace, in seconds."""
    code: str | None = None
    """A private table's invite code, sent to those seated at it (None: a listed table;
    issue 13)."""
    fill_in: float | None = None
    """A quick-play table waiting (`QuickPlay`): the seconds left, when this was sent, until
    bots take the free seats; None otherwise."""
    rating_changes: tuple[RatingChange, ...] = ()
    """Once the game just over is rated: each account holder's rating before and after it
    (issue 13); empty while it is being rated, for an unrated game, and once the next game
    is set up."""
    unsaved: bool = False
    """The table's last changes could not be saved, so it takes no move until they are
    (issue 11). Never sent so: the lobby sends nothing of a table it could not save. The
    receiving app sets it on the last table it got when `SAVE_PAUSED` comes."""


Args = dict[str, str | int]
"""Named arguments of a server message id (`str.format` fields), filled in after translation."""


class Refused(Message, frozen=True, tag=True):
    """A command was refused and changed nothing. `code` is a RECORD.md rule error code or a
    lobby code ("no_table", "table_full", "not_creator", "not_seated", "bad_command",
    "bad_options": rules that cannot be played, RULES.md §7; "not_admin": an admin command
    from anyone else, "no_session", "paused": the table is paused); `message` says why: an
    English message id (perudo_ssh.i18n) with `args`, translated by the receiving session."""

    code: str
    message: str
    args: Args = msgspec.field(default_factory=dict)


class Notice(Message, frozen=True, tag=True):
    """Something to tell the player (a bot took a seat, a player left, the table closed):
    `text` is an English message id with `args`, translated by the receiving session.
    `SAVE_PAUSED` stays on screen until `SAVE_RESUMED` comes."""

    text: str
    args: Args = msgspec.field(default_factory=dict)


class Challenged(Message, frozen=True, tag=True):
    """`by` challenges this player to a game of `preset` at private table `table`: accept
    with `JoinPrivate(code)`, say no with `DeclineChallenge(code)` (issue 13)."""

    by: str
    table: int
    code: str
    preset: str
    bot_account: bool = False
    """`by` is a bot account: a program (marked BOT; issue 14)."""


SAVE_PAUSED = N_("the server cannot save this game right now; it is paused")
"""The `Notice` to everyone at a table whose changes could not be saved (issue 11): it takes
no move until a save works, then `SAVE_RESUMED`."""
SAVE_RESUMED = N_("the server can save again; the game goes on")
"""The `Notice` to everyone at a table paused by `SAVE_PAUSED` once its game is saved."""


class ChatLine(Message, frozen=True, tag=True):
    """A chat line: `name` said `text` (cleaned plain text: shown as it is, never read as
    markup) in `scope` "lobby" or "table" (then at table `table`). `id` grows with every line
    said anywhere, so a session can tell a line it already shows."""

    id: int
    scope: Literal["lobby", "table"]
    name: str
    text: str
    table: int | None = None
    bot_account: bool = False
    """`name` is a bot account's: a program (marked BOT; issue 14)."""


class ChatHistory(Message, frozen=True, tag=True):
    """The last chat lines of `scope` (at table `table`), oldest first, sent on arriving
    there: in the lobby (connecting, or back from a table) or at a table (sitting or
    watching). Only the lines of the last `chat.HISTORY`; never sent empty."""

    scope: Literal["lobby", "table"]
    lines: tuple[ChatLine, ...]
    table: int | None = None


class LeftTable(Message, frozen=True, tag=True):
    """This session is back in the lobby (it left, or its table closed)."""


class Goodbye(Message, frozen=True, tag=True):
    """The lobby ends this session (dropped for not reading, or the server stops): `reason`
    is an English message id with `args`, translated by the receiving session."""

    reason: str
    args: Args = msgspec.field(default_factory=dict)


class Announcement(Message, frozen=True, tag=True):
    """An admin's announcement to every session: `text` (plain text, shown as it is, never
    translated nor read as markup) and the admin's name `by`."""

    text: str
    by: str


class AdminSession(Message, frozen=True):
    """A live session as admins see it: `id` (the target of admin commands), `name`, key
    `fingerprint` (None: a guest), `address` (the client's IP address), `table` it sits at or
    watches (None: the lobby) and `place` there ("lobby", "seated", "watching"), whether it is
    an `admin`, and its chat mute: `muted` reason and `muted_until` (unix seconds; None with a
    reason: for ever)."""

    id: int
    name: str
    fingerprint: str | None
    address: str | None
    table: int | None
    place: str
    admin: bool = False
    muted: str | None = None
    muted_until: float | None = None
    bot_account: bool = False
    """A bot account's session (a program, or its player at a terminal; issue 14)."""


class AdminTable(Message, frozen=True):
    """A table as admins see it: its `status` ("waiting", "playing", "over"), whether an
    admin `paused` it, the `players` seated (bots included) and how many `spectators`;
    `unsaved`: its last changes could not be saved, so it is paused until a save works
    (issue 11)."""

    id: int
    name: str
    preset: str
    status: str
    paused: bool
    players: tuple[str, ...]
    spectators: int
    unsaved: bool = False


class AuditRow(Message, frozen=True):
    """One admin action: `at` (unix seconds), `admin` (who), `action` (what: "kick", "ban",
    …), `target` (whom or which table), `reason` (why), `detail` (anything more)."""

    at: float
    admin: str
    action: str
    target: str
    reason: str = ""
    detail: str = ""


class BanRow(Message, frozen=True):
    """A ban in force: `id` (for `Unban`), `kind` "key" or "address", `value` (fingerprint or
    IP address), `reason`, `until` (unix seconds; None: for ever)."""

    id: int
    kind: str
    value: str
    reason: str
    until: float | None


class AdminState(Message, frozen=True, tag=True):
    """Sent to admins only, while they watch (`WatchAdmin`): every live session, every
    table, the last admin actions (newest first) and the bans in force (newest first)."""

    sessions: tuple[AdminSession, ...]
    tables: tuple[AdminTable, ...]
    audit: tuple[AuditRow, ...]
    bans: tuple[BanRow, ...] = ()


Event = (
    Welcome
    | LobbyState
    | TableState
    | Refused
    | Notice
    | ChatLine
    | ChatHistory
    | LeftTable
    | Goodbye
    | Announcement
    | AdminState
    | Challenged
)

_encoder = msgspec.msgpack.Encoder()
_event_decoder = msgspec.msgpack.Decoder(Event)
_command_decoder = msgspec.msgpack.Decoder(Command)


def encode(message: Command | Event) -> bytes:
    """msgpack bytes of a command or an event."""
    return _encoder.encode(message)


DECODED_EVENTS = 32
"""How many of the latest distinct event encodings `decode_event` keeps decoded."""
_decoded: OrderedDict[bytes, Event] = OrderedDict()


_summaries: OrderedDict[TableSummary, TableSummary] = OrderedDict()
SUMMARIES_KEPT = 2048
"""How many distinct table lines `_same_summaries` keeps (more than a lobby list holds)."""


def _same_summaries(tables: tuple[TableSummary, ...]) -> tuple[TableSummary, ...]:
    """`tables` with each line that a lobby list decoded before also held replaced by that
    line's object: a lobby screen tells the lines it shows already by identity (one table in
    a hundred changes in most lists; comparing each line field by field in every lobby screen
    was ~1 % of a loaded server, issue 10)."""
    same = []
    for table in tables:
        kept = _summaries.get(table)
        if kept is None:
            kept = _summaries[table] = table
            if len(_summaries) > SUMMARIES_KEPT:
                _summaries.popitem(last=False)
        else:
            _summaries.move_to_end(table)
        same.append(kept)
    return tuple(same)


def decode_event(data: bytes) -> Event:
    """The event in `data`; raises msgspec.DecodeError/ValidationError if it is not one.

    The lobby encodes a broadcast once and puts the same bytes in every recipient's outbox
    (the lobby list to everyone in the lobby, a notice or chat line to a whole table), so the
    last `DECODED_EVENTS` distinct encodings are kept decoded and each is decoded once per
    process, not once per session (issue 10: decoding the lobby list was 4.5 % of the
    server's CPU at 300 sessions). Events are frozen structs and their receivers only read
    them (their `args` / `options` dicts too): one decoded event is shared."""
    event = _decoded.get(data)
    if event is None:
        event = _event_decoder.decode(data)
        if isinstance(event, LobbyState):
            event = msgspec.structs.replace(event, tables=_same_summaries(event.tables))
        _decoded[data] = event
        if len(_decoded) > DECODED_EVENTS:
            _decoded.popitem(last=False)
    else:
        _decoded.move_to_end(data)
    return event


def decode_command(data: bytes) -> Command:
    """The command in `data`; raises msgspec.DecodeError/ValidationError if it is not one."""
    return _command_decoder.decode(data)
