"""The events the lobby sends a session (lobby -> session), built per recipient (a player's
hidden dice reach that player alone, DEVELOPERS.md rule 3): welcome, refusals and notices
(English message ids translated by the receiving session), challenges, chat, leaving, goodbye
and announcements. `Event` is the union of these, of the views (`protocol.views`) and of
`AdminState`: the type a session decodes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from perudo_ssh.i18n import N_
from perudo_ssh.protocol.admin import AdminState
from perudo_ssh.protocol.base import Message
from perudo_ssh.protocol.views import LobbyState, TableState


class Welcome(Message, frozen=True, tag=True):
    """Sent once on connect: the unique name this session plays under, and whether it is an
    admin (the server decided it from the key; the admin screen is offered then)."""

    name: str
    admin: bool = False


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


class ServerNotes(Message, frozen=True, tag=True):
    """What the operator says of the server (issue 15, item 5; perudo.toml `[server]`):
    its `name` ("" when none is set: the lobby says "perudo-ssh") and the message of the
    day `motd` ("" for none), plain text shown as it is. Sent on connect when either is set
    (`changed` False), and to everyone whenever the operator changes them (`changed` True:
    the screens say the new message once)."""

    name: str = ""
    motd: str = ""
    changed: bool = False


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
    | ServerNotes
)
"""Every event the lobby may send a session (`codec.decode_event` decodes one)."""
