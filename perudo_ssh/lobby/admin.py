"""The admin commands, carried out inside the lobby actor (issue 4, item 6).

`AdminCommands` is part of the lobby actor, split out of `perudo_ssh.lobby` to keep that
module to its one job: it runs only inside the actor, on the lobby's own clients and tables,
and moves them with the lobby's own methods (a removed player leaves as anyone leaves, a
closed table closes as a deserted one does). Whether a session is an admin was decided by the
server at connect (`Lobby.connect(admin=...)`), never by the client: every admin command from
anyone else is refused as "not_admin" and changes nothing. Every action is written to the
audit log (`Moderation.audit`); admins watching (`WatchAdmin`) get `AdminState` at the end of
each batch that changed it. Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from perudo_ssh import protocol
from perudo_ssh.bans import MAX_ANNOUNCEMENT, MAX_SECONDS, clean_text, normal_address
from perudo_ssh.config import is_fingerprint
from perudo_ssh.i18n import N_
from perudo_ssh.lobby.moderation import Moderation
from perudo_ssh.lobby.table import Refusal, Table
from perudo_ssh.logs import log_event

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby
    from perudo_ssh.lobby.clients import Client

log = logging.getLogger(__name__)

ADMIN_COMMANDS = (
    protocol.WatchAdmin,
    protocol.Kick,
    protocol.Ban,
    protocol.Unban,
    protocol.Mute,
    protocol.Unmute,
    protocol.RemovePlayer,
    protocol.PauseTable,
    protocol.ResumeTable,
    protocol.CloseTable,
    protocol.Announce,
)
"""Every command only an admin may send."""


class AdminCommands:
    """The admin commands of `lobby` (see the module docstring). `handle` raises `Refusal`
    (then nothing changed); `flush` sends `AdminState` to the admins watching."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self._sent: protocol.AdminState | None = None
        self._new_watchers: set[int] = set()

    @property
    def moderation(self) -> Moderation:
        """The lobby's moderation state."""
        return self.lobby.moderation

    # ---- commands ------------------------------------------------------------------------

    def handle(self, client: Client, command: protocol.AdminCommand) -> None:
        """Carry out `command` from `client`: refused unless `client` is an admin's."""
        if not client.admin:
            # its name only: what a non-admin sent (a reason, an announcement) is not logged
            what = type(command).__name__
            log.warning("%s (%s) sent an admin command: %s", client.name, _key(client), what)
            raise Refusal("not_admin", N_("only an admin may do that"))
        match command:
            case protocol.WatchAdmin(on=on):
                client.watching_admin = on
                if on:
                    self._new_watchers.add(client.id)
            case protocol.Kick(session=sid, reason=reason):
                self._kick(client, self._target(client, sid), _reason(reason))
            case protocol.Ban():
                self._ban(client, command)
            case protocol.Unban(ban=ban_id):
                lifted = self.moderation.lift_ban(ban_id)
                if lifted is None:
                    raise Refusal("bad_command", N_("there is no such ban in force"))
                self._audit(client, "unban", f"{lifted.kind} {lifted.value}")
            case protocol.Mute(session=sid, reason=reason, seconds=seconds):
                self._mute(client, self._target(client, sid), _reason(reason), seconds)
            case protocol.Unmute(session=sid):
                target = self._target(client, sid, admins_too=True)
                if not self.moderation.unmute(target.account_id, target.id):
                    raise Refusal("bad_command", N_("that player is not muted"))
                self.lobby.tell(target, protocol.Notice(text=N_("an admin lifted your chat mute")))
                self._audit(client, "unmute", _who(target))
            case protocol.RemovePlayer(session=sid, reason=reason):
                self.remove_client(client, self._target(client, sid), clean_text(reason))
            case protocol.PauseTable(table=tid, reason=reason):
                self._pause(client, self._table(tid), clean_text(reason))
            case protocol.ResumeTable(table=tid):
                table = self._table(tid)
                if tid not in self.lobby.paused:
                    raise Refusal("bad_command", N_("that table is not paused"))
                self.lobby.paused.discard(tid)
                self.lobby.notice(table, N_("an admin resumed the table"))
                self.lobby.after_change(table)
                self._audit(client, "resume", _where(table))
            case protocol.CloseTable(table=tid, reason=reason):
                table, why = self._table(tid), clean_text(reason)
                if why:
                    text = N_("an admin closed table {table}: {reason}")
                    self.lobby.close_table(table, text, reason=why)
                else:
                    self.lobby.close_table(table, N_("an admin closed table {table}"))
                self._audit(client, "close", _where(table), why)
            case protocol.Announce(text=text):
                self._announce(client, clean_text(text, MAX_ANNOUNCEMENT))

    def _kick(self, admin: Client, target: Client, reason: str) -> None:
        self._end(target, N_("an admin ended your session: {reason}"), reason)
        self._audit(admin, "kick", _who(target), reason)

    def _ban(self, admin: Client, command: protocol.Ban) -> None:
        reason = _reason(command.reason)
        if command.session is not None:
            target = self._target(admin, command.session)
            value = target.session.fingerprint if command.kind == "key" else target.address
            if value is None:
                raise Refusal(
                    "bad_command",
                    N_("a guest has no key to ban: ban the address")
                    if command.kind == "key"
                    else N_("that session's address is not known"),
                )
        elif command.kind == "key" and command.value and is_fingerprint(command.value):
            value = command.value
        elif command.kind == "address" and command.value and normal_address(command.value):
            value = normal_address(command.value)
        else:
            raise Refusal("bad_command", N_("name a session, a key fingerprint or an address"))
        assert value is not None
        hit = [c for c in self._live() if _matches(c, command.kind, value)]
        if command.kind == "key":
            # a key ban covers its account (the server refuses its other keys): every live
            # session of the accounts that key signs in as ends too
            accounts = {c.account_id for c in hit} - {None}
            ids = {c.id for c in hit}
            hit += [c for c in self._live() if c.account_id in accounts and c.id not in ids]
        if any(c.admin for c in hit):
            raise Refusal("bad_command", N_("that would ban an admin"))
        until = self._until(command.seconds)
        self.moderation.ban(command.kind, value, reason, until, admin.account_id)
        for client in hit:
            self._end(client, N_("you are banned from this server: {reason}"), reason)
        ended = ", ".join(c.name for c in hit)
        detail = f"until {until:.0f}" if until is not None else "for ever"
        if ended:
            detail += f"; ended: {ended}"
        self._audit(admin, "ban", f"{command.kind} {value}", reason, detail)

    def _mute(self, admin: Client, target: Client, reason: str, seconds: int | None) -> None:
        until = self._until(seconds)
        self.moderation.mute(target.account_id, target.id, reason, until, admin.account_id)
        # the player is told until when (issue 13), as UTC: the lobby has no client's zone
        args: dict[str, str | int] = {"reason": reason}
        if until is None:
            text = N_("an admin muted your chat for ever: {reason}")
        else:
            text = N_("an admin muted your chat until {until} UTC: {reason}")
            args["until"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime(until))
        self.lobby.tell(target, protocol.Notice(text=text, args=args))
        detail = f"until {until:.0f}" if until is not None else "for ever"
        self._audit(admin, "mute", _who(target), reason, detail)

    def remove_client(self, admin: Client, target: Client, reason: str) -> None:
        if target.table is None:
            raise Refusal("not_seated", N_("that player is not at a table"))
        table = self.lobby.tables[target.table]
        self.lobby.leave_table(target)  # as if they left: RULES.md §6, a bot takes the seat
        if reason:
            text, args = N_("an admin removed you from table {table}: {reason}"), {"reason": reason}
        else:
            text, args = N_("an admin removed you from table {table}"), {}
        self.lobby.tell(target, protocol.Notice(text=text, args={"table": table.name, **args}))
        self._audit(admin, "remove", _who(target), reason, _where(table))

    def _pause(self, admin: Client, table: Table, reason: str) -> None:
        if table.id in self.lobby.paused:
            raise Refusal("bad_command", N_("that table is already paused"))
        self.lobby.paused.add(table.id)
        self.lobby.cancel_timer(table.id)  # the bots and the reveal wait
        if reason:
            self.lobby.notice(table, N_("an admin paused the table: {reason}"), reason=reason)
        else:
            self.lobby.notice(table, N_("an admin paused the table"))
        self.lobby.mark_changed(table)
        self._audit(admin, "pause", _where(table), reason)

    def _announce(self, admin: Client, text: str) -> None:
        if not text:
            raise Refusal("bad_command", N_("an announcement needs some text"))
        data = protocol.encode(protocol.Announcement(text=text, by=admin.name))
        for client in self._live():
            self.lobby.deliver(client, data)
        self._audit(admin, "announce", "everyone", detail=text)

    # ---- helpers -------------------------------------------------------------------------

    def _live(self) -> list[Client]:
        return self.lobby.live_clients()

    def _target(self, admin: Client, sid: int, admins_too: bool = False) -> Client:
        """The live session `sid`; an admin's (the acting one's included) is refused unless
        `admins_too`: admins are made and unmade in the configuration file."""
        target = self.lobby.client(sid)
        if target is None or target.dropped:
            raise Refusal("no_session", N_("there is no such session"))
        if target.admin and not admins_too:
            raise Refusal("bad_command", N_("that is an admin's session"))
        return target

    def _table(self, tid: int) -> Table:
        table = self.lobby.tables.get(tid)
        if table is None:
            raise Refusal("no_table", N_("there is no such table"))
        return table

    def _until(self, seconds: int | None) -> float | None:
        if seconds is None:
            return None
        if not 0 < seconds <= MAX_SECONDS:
            raise Refusal("bad_command", N_("a duration is from 1 second to 10 years, or for ever"))
        return self.moderation.clock() + seconds

    def _end(self, client: Client, reason: str, why: str) -> None:
        """End `client`'s session now (`Goodbye` with `reason` filled with `why`); it leaves
        its table as a player who leaves does (a bot takes a seat mid-game: an admin ended
        this session, so the seat is not held for its return)."""
        client.dropped = True
        client.session.end(reason, {"reason": why})
        if client.table is not None:
            self.lobby.leave_table(client)
        self.lobby.remove_client(client)

    def _audit(
        self, admin: Client, action: str, target: str, reason: str = "", detail: str = ""
    ) -> None:
        self.moderation.audit(f"{admin.name} ({_key(admin)})", action, target, reason, detail)
        log_event(
            log, "admin_action", admin=admin.name, action=action, target=target, reason=reason
        )

    # ---- the admin screen's state --------------------------------------------------------

    def state(self) -> protocol.AdminState:
        """Every live session, every table, the audit log and the bans, as admins see them."""
        sessions = []
        for client in sorted(self._live(), key=lambda c: c.id):
            table = self.lobby.tables.get(client.table) if client.table is not None else None
            place = "lobby"
            if table is not None:
                place = "seated" if table.seat_of(client.id) is not None else "watching"
            mute = self.moderation.muted(client.account_id, client.id)
            sessions.append(
                protocol.AdminSession(
                    id=client.id,
                    name=client.name,
                    fingerprint=client.session.fingerprint,
                    address=client.address,
                    table=client.table,
                    place=place,
                    admin=client.admin,
                    muted=None if mute is None else mute.reason,
                    muted_until=None if mute is None else mute.until,
                    bot_account=client.bot_account,
                )
            )
        tables = tuple(
            protocol.AdminTable(
                id=t.id,
                name=t.name,
                preset=t.options.preset,
                status=t.status,
                paused=t.id in self.lobby.paused,
                players=tuple(seat.name for seat in t.seats),
                spectators=len(t.spectators),
                unsaved=t.id in self.lobby.unsaved,
                private=t.code is not None,
            )
            for t in sorted(self.lobby.tables.values(), key=lambda t: t.id)
        )
        return protocol.AdminState(
            sessions=tuple(sessions),
            tables=tables,
            audit=self.moderation.audit_rows(),
            bans=self.moderation.bans(),
        )

    def flush(self) -> None:
        """At the end of a batch: `AdminState` to every watching admin if it changed, else
        to those that just asked for it."""
        watchers = [c for c in self._live() if c.watching_admin]
        if not watchers:
            self._sent = None
            self._new_watchers.clear()
            return
        state = self.state()
        if state != self._sent:
            targets = watchers
        else:
            targets = [c for c in watchers if c.id in self._new_watchers]
        self._sent = state
        self._new_watchers.clear()
        if targets:
            data = protocol.encode(state)
            for client in targets:
                self.lobby.deliver(client, data)


def _reason(text: str) -> str:
    reason = clean_text(text)
    if not reason:
        raise Refusal("bad_command", N_("give a reason"))
    return reason


def _matches(client: Client, kind: str, value: str) -> bool:
    if kind == "key":
        return client.session.fingerprint == value
    return client.address == value


def _key(client: Client) -> str:
    return client.session.fingerprint or "guest"


def _who(client: Client) -> str:
    """A session as the audit log names it: name, key, address."""
    return f"{client.name} ({_key(client)}, {client.address or 'no address'})"


def _where(table: Table) -> str:
    return f"table {table.id} ({table.name})"
