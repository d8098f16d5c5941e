"""What a session is shown of the lobby and of its table: the lobby list (`LobbyState`, one
`TableSummary` a table) and the table as this session may see it (`TableState`, with its
seats, turn clock, automatic moves and rating changes). These are the state snapshots the
screens draw; `protocol.events` holds the one-off events beside them.
"""

from __future__ import annotations

from perudo_ssh.protocol.base import Message
from perudo_ssh.rules import GameView, Options


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
