"""Moderation state: bans, chat mutes and the audit log, kept in memory and in the store
(issue 4, item 6), and the admin list. The helpers shared with the SSH layer and the screens
(texts, durations, the bans among rows) are `perudo_ssh.bans`.

`Moderation` is what the lobby actor and the SSH server's authentication share: the actor
changes it (`ban`, `mute`, `audit`, … — synchronous, never waiting), authentication reads it
(`active_ban`). Both run on the one event loop and neither awaits between reading and acting,
so it needs no lock. Every change is also written to the store, when there is one, by a task
the actor does not wait for (failures are logged); `load()` reads back, at start, the bans and
mutes in force and the last audit rows. Without a store everything lasts as long as the server.

Times are unix seconds from the `clock` given (time.time by default). Imports neither textual
nor asyncssh.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from perudo_ssh import config as configuration
from perudo_ssh import protocol
from perudo_ssh.bans import (
    active_ban_among,
    banned_keys_among,
    holds,
)

if TYPE_CHECKING:
    from perudo_ssh.store import Store

log = logging.getLogger(__name__)

AUDIT_SHOWN = 50
"""How many of the last audit rows the admin screen shows."""


# ---- the admins ------------------------------------------------------------------------------


class AdminList:
    """The admins: key fingerprints from the configuration file at `path` (`[admins]`,
    perudo_ssh.config), read again whenever the file changes, so `perudo-ssh admin add`
    takes effect at the admin's next login without a restart. A file that became malformed
    or unreadable keeps the last good list (logged); a removed file means no admins.
    `admins` is the list when `path` is None. Raises `ConfigError` when the file is
    malformed at the start."""

    def __init__(self, path: Path | None = None, admins: Mapping[str, str] | None = None):
        self.path = path
        self._seen = self._signature()
        if path is not None:
            self._admins = dict(configuration.load_config(path).admins)
        else:
            self._admins = dict(admins or {})

    def _signature(self) -> tuple[int, int] | None:
        return None if self.path is None else configuration.file_signature(self.path)

    def _reload(self) -> None:
        signature = self._signature()
        if self.path is None or signature == self._seen:
            return
        self._seen = signature
        try:
            self._admins = dict(configuration.load_config(self.path).admins)
        except configuration.ConfigError as exc:
            log.error("admins kept as they were: %s", exc)

    def is_admin(self, fingerprint: str | None) -> bool:
        """Whether the key `fingerprint` is an admin's now; a guest (None) never is."""
        self._reload()
        return fingerprint is not None and fingerprint in self._admins


# ---- moderation state ------------------------------------------------------------------------


@dataclass(slots=True)
class _Ban:
    """A ban in force, with its id in the store: known (`store_id`), or to come from the
    task writing it (`stored`); neither without a store."""

    row: protocol.BanRow
    store_id: int | None = None
    stored: asyncio.Task[int | None] | None = None


@dataclass(frozen=True, slots=True)
class MuteInForce:
    """A chat mute: its `reason` and `until` (unix seconds; None: for ever)."""

    reason: str
    until: float | None


class Moderation:
    """Bans, mutes and the audit log of one server (see the module docstring).

    `store` (None: memory only) may be set after construction, before `load()`; `clock`
    gives unix seconds."""

    def __init__(
        self, store: Store | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.clock = clock
        self._bans: dict[int, _Ban] = {}  # by our own id, shown to admins (`BanRow.id`)
        self._ban_ids = itertools.count(1)
        self._account_mutes: dict[int, MuteInForce] = {}
        self._session_mutes: dict[int, MuteInForce] = {}  # guests: by lobby session id
        self._audit: deque[protocol.AuditRow] = deque(maxlen=AUDIT_SHOWN)
        self._pending: set[asyncio.Task[Any]] = set()

    async def load(self) -> None:
        """Read the bans and mutes in force and the last audit rows from the store (nothing
        without one). Raises what the store raises (`StoreError`, `sqlite3.Error`)."""
        if self.store is None:
            return
        now = self.clock()
        for ban in reversed(await self.store.bans(now=now)):  # oldest first
            row = protocol.BanRow(
                id=next(self._ban_ids),
                kind=ban.kind,
                value=ban.value,
                reason=ban.reason,
                until=ban.until,
            )
            self._bans[row.id] = _Ban(row, store_id=ban.id)
        for mute in await self.store.active_mutes(now=now):
            self._account_mutes[mute.account_id] = _longer(
                self._account_mutes.get(mute.account_id), MuteInForce(mute.reason, mute.until)
            )
        rows = await self.store.list_audit(AUDIT_SHOWN)
        self._audit.extend(
            protocol.AuditRow(
                at=r.at,
                admin=r.admin,
                action=r.action,
                target=r.target,
                reason=r.reason,
                detail=r.detail,
            )
            for r in rows
        )

    # ---- bans ----------------------------------------------------------------------------

    def ban(
        self,
        kind: Literal["key", "address"],
        value: str,
        reason: str,
        until: float | None,
        by_account: int | None = None,
    ) -> protocol.BanRow:
        """Ban key fingerprint or IP address `value` until `until` (None: for ever), in force
        at once; stored in the background."""
        row = protocol.BanRow(
            id=next(self._ban_ids), kind=kind, value=value, reason=reason, until=until
        )
        stored = None
        if self.store is not None:
            store = self.store

            async def add() -> int | None:
                return (await store.add_ban(kind, value, reason, until, by_account)).id

            stored = self._spawn(add(), "ban")
        self._bans[row.id] = _Ban(row, stored=stored)
        return row

    def lift_ban(self, ban_id: int) -> protocol.BanRow | None:
        """Lift ban `ban_id` (a `BanRow.id`) at once; the ban lifted, or None if there was
        none in force with that id."""
        ban = self._bans.pop(ban_id, None)
        if ban is None or not self._in_force(ban.row.until):
            return None
        if self.store is not None and (ban.store_id is not None or ban.stored is not None):
            store, known, stored = self.store, ban.store_id, ban.stored

            async def lift() -> None:
                store_id = known if stored is None else await stored
                if store_id is not None:
                    await store.lift_ban(store_id)

            self._spawn(lift(), "lift a ban")
        return ban.row

    def bans(self) -> tuple[protocol.BanRow, ...]:
        """The bans in force, newest first."""
        return tuple(b.row for b in reversed(self._bans.values()) if self._in_force(b.row.until))

    def active_ban(
        self, fingerprint: str | None, address: str | None, linked: Collection[str] = ()
    ) -> protocol.BanRow | None:
        """The ban in force on key `fingerprint`, on any of the `linked` keys (the other keys
        of its account: a key ban covers the account) or on IP `address` (the longest), or
        None."""
        return active_ban_among(
            (b.row for b in self._bans.values()), fingerprint, address, linked, self.clock()
        )

    def banned_keys(self) -> frozenset[str]:
        """The key fingerprints under a ban in force."""
        return banned_keys_among((b.row for b in self._bans.values()), self.clock())

    # ---- mutes ---------------------------------------------------------------------------

    def mute(
        self,
        account_id: int | None,
        sid: int,
        reason: str,
        until: float | None,
        by_account: int | None = None,
    ) -> None:
        """Mute the chat of account `account_id` (stored; every session of it), or of the
        guest session `sid` when `account_id` is None (for that session's life)."""
        mute = MuteInForce(reason, until)
        if account_id is None:
            self._session_mutes[sid] = mute
            return
        self._account_mutes[account_id] = mute
        if self.store is not None:
            self._spawn(self.store.add_mute(account_id, reason, until, by_account), "mute")

    def unmute(self, account_id: int | None, sid: int) -> bool:
        """Lift the mutes on account `account_id` (or guest session `sid`); False if there
        was none in force."""
        mute = (
            self._session_mutes.pop(sid, None)
            if account_id is None
            else self._account_mutes.pop(account_id, None)
        )
        if account_id is not None and self.store is not None:
            self._spawn(self.store.lift_mute(account_id), "lift a mute")
        return mute is not None and self._in_force(mute.until)

    def muted(self, account_id: int | None, sid: int) -> MuteInForce | None:
        """The mute in force on account `account_id` or session `sid`, or None."""
        for mute in (
            self._account_mutes.get(account_id) if account_id is not None else None,
            self._session_mutes.get(sid),
        ):
            if mute is not None and self._in_force(mute.until):
                return mute
        return None

    def forget_session(self, sid: int) -> None:
        """Session `sid` is gone: its guest mute goes with it."""
        self._session_mutes.pop(sid, None)

    # ---- the audit log -------------------------------------------------------------------

    def audit(
        self, admin: str, action: str, target: str, reason: str = "", detail: str = ""
    ) -> protocol.AuditRow:
        """Log one admin action — who, what, whom, why, now — in memory and in the store."""
        row = protocol.AuditRow(
            at=self.clock(), admin=admin, action=action, target=target, reason=reason, detail=detail
        )
        self._audit.appendleft(row)
        if self.store is not None:
            self._spawn(
                self.store.add_audit(admin, action, target, reason, detail, now=row.at), "audit"
            )
        return row

    def audit_rows(self) -> tuple[protocol.AuditRow, ...]:
        """The last `AUDIT_SHOWN` admin actions, newest first."""
        return tuple(self._audit)

    # ---- the store -----------------------------------------------------------------------

    def _in_force(self, until: float | None) -> bool:
        return holds(until, self.clock())

    def _spawn(self, work: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Write to the store in a task nobody waits for; a failure is logged."""
        task = asyncio.get_running_loop().create_task(work, name=f"moderation: {what}")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        task.add_done_callback(lambda t: _log_failure(t, what))
        return task

    async def drain(self) -> None:
        """Wait until every store write started so far is done (or failed, logged)."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)


def _longer(old: MuteInForce | None, new: MuteInForce) -> MuteInForce:
    """Of two mutes on one account, the one that lasts longer (for ever is longest)."""
    if old is None:
        return new
    if old.until is None:
        return old
    return new if new.until is None or new.until > old.until else old


def _log_failure(task: asyncio.Task[Any], what: str) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("moderation: could not store (%s)", what, exc_info=task.exception())
