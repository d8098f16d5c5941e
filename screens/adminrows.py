"""The cells of the admin screen's lists (issue 4, item 6): a session's, a table's, an audit
row's and a ban's, each a row of `Cell`s in its list's column order (`SESSION_KEYS`,
`TABLE_KEYS`, `AUDIT_KEYS`, `BAN_KEYS`), in the session's language.

Pure functions of the lobby's `AdminState` parts and a translator, apart from the screen
(`screens.admin.AdminScreen`, which lays the lists out and acts on them) so that what a row
says can be read and tested without a running app. User text (names, reasons, addresses) is
a `rich.text.Text` cell, never read as markup.
"""

from __future__ import annotations

import time

from rich.text import Text

from perudo_ssh import protocol
from perudo_ssh.i18n import Translator
from screens.wording import marked

Cell = str | Text
SESSION_KEYS = ("id", "name", "key", "address", "where", "muted")
TABLE_KEYS = ("id", "name", "preset", "status", "players", "watch")
AUDIT_KEYS = ("at", "admin", "action", "reason", "target")  # why before whom: it is shorter
BAN_KEYS = ("id", "kind", "until", "reason", "value")  # a whole fingerprint last, as whom


def short_key(fingerprint: str | None, tr: Translator) -> str:
    """A key fingerprint cut to fit a column (`SHA256:47DEQpj8…`), or "guest"."""
    if fingerprint is None:
        return tr.p_("admin", "guest")
    return fingerprint[:15] + "…" if len(fingerprint) > 16 else fingerprint


def when(at: float | None, tr: Translator, forever: bool = False) -> str:
    """Unix seconds as `06-01 12:00` (UTC); None as "for ever" when `forever`, else ""."""
    if at is None:
        return tr._("for ever") if forever else ""
    return time.strftime("%m-%d %H:%M", time.gmtime(at))


def session_row(session: protocol.AdminSession, tr: Translator) -> tuple[Cell, ...]:
    """The cells of a session's row, in `SESSION_KEYS` order."""
    if session.table is None:
        where = tr.p_("admin", "lobby")
    elif session.place == "seated":
        where = tr._("table {table}", table=session.table)
    else:
        where = tr._("watching {table}", table=session.table)
    name = Text(marked(session.name, session.bot_account), style="bold" if session.admin else "")
    muted = ""
    if session.muted is not None:
        muted = tr._("until {when}", when=when(session.muted_until, tr, forever=True))
    return (
        str(session.id),
        name,
        short_key(session.fingerprint, tr),
        Text(session.address or "?"),
        where,
        muted,
    )


def table_row(table: protocol.AdminTable, tr: Translator) -> tuple[Cell, ...]:
    """The cells of a table's row, in `TABLE_KEYS` order."""
    status = {
        "waiting": tr.p_("table status", "waiting"),
        "playing": tr.p_("table status", "playing"),
        "over": tr.p_("table status", "over"),
    }.get(table.status, table.status)
    if table.paused:
        status = tr._("{status}, paused", status=status)
    if table.unsaved:
        status = tr._("{status}, cannot be saved", status=status)
    if table.private:
        status = tr._("{status}, private", status=status)
    return (
        str(table.id),
        Text(table.name),
        table.preset,
        status,
        Text(", ".join(table.players)),
        str(table.spectators),
    )


def audit_row(row: protocol.AuditRow, tr: Translator) -> tuple[Cell, ...]:
    """The cells of an audit row, in `AUDIT_KEYS` order (the admin's name without the key);
    a ban's or a mute's reason followed by how long (issue 13): `spam · until 06-01 12:00`,
    `spam · for ever` (the lobby's detail says `until <unix seconds>` or `for ever`)."""
    why = row.reason or row.detail
    if row.action in ("ban", "mute") and row.reason:
        span = row.detail.split(";", 1)[0].strip()
        if span == "for ever":
            why = f"{row.reason} · {tr.p_('ban question', 'for ever')}"
        elif span.startswith("until ") and span[6:].replace(".", "", 1).isdigit():
            until = when(float(span[6:]), tr)
            why = f"{row.reason} · {tr._('until {when}', when=until)}"
    return (
        when(row.at, tr),
        Text(row.admin.split(" (", 1)[0]),
        row.action,
        Text(why),
        Text(row.target),
    )


def ban_row(ban: protocol.BanRow, tr: Translator) -> tuple[Cell, ...]:
    """The cells of a ban's row, in `BAN_KEYS` order."""
    kind = tr.p_("ban", "key") if ban.kind == "key" else tr.p_("ban", "address")
    return (str(ban.id), kind, when(ban.until, tr, forever=True), Text(ban.reason), Text(ban.value))
