"""What passes between an admin's session and the lobby (issue 4, item 6): the admin commands
(kick, ban, mute, pause, close, announce) and `AdminState`, the live view of sessions, tables,
audit log and bans sent to admins who watch. Apart from a player's messages because only
an admin's session sends or receives them.
"""

from __future__ import annotations

from typing import Literal

from perudo_ssh.protocol.base import Message

# ---- admin commands: admin session -> lobby (issue 4, item 6) -------------------------------
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
"""Every admin command (the lobby refuses each as "not_admin" from anyone but an admin)."""


# ---- what admins see: lobby -> admin session -------------------------------------------------


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
    (issue 11); `private`: seated only by its invite code and listed to nobody, though
    admins may watch it (`SpectateTable`)."""

    id: int
    name: str
    preset: str
    status: str
    paused: bool
    players: tuple[str, ...]
    spectators: int
    unsaved: bool = False
    private: bool = False


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
