"""The admin screen (issue 4, item 6): live sessions, tables, the audit log and the bans, and
the admin's actions on them.

Reached only by admins (`PerudoApp.action_admin`, offered when the lobby's `Welcome` says
the session is an admin's); the lobby checks every admin command again and refuses them from
anyone else, so this screen is a convenience, not the guard. While it is open the lobby sends
`AdminState` (`WatchAdmin`); the lists are updated row by row, keyed by id, their cells made
in `screens.adminrows`.

The actions work on the row under the cursor of the sessions list (kick, ban its key or its
address, mute, unmute, remove from its table), of the tables list (pause or resume, close),
or of the bans list (lift), with the reason and the duration typed in the two fields at the
bottom; `n` sends the reason field as an announcement to everyone. `/` goes to the reason
field (Tab goes through the three lists first). A focused field takes every printable key:
no admin key fires while the admin types. Kick, both bans, remove and close ask y/n first,
naming whom or what and the reason (issue 13: a stray `b` after a reason was written banned
at once). User text (names, reasons) is shown as it is, never as markup. Every text is in
the session's language.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from perudo_ssh import protocol
from perudo_ssh.bans import parse_duration
from perudo_ssh.i18n import N_, Translator, translator
from screens.adminrows import (
    AUDIT_KEYS,
    BAN_KEYS,
    SESSION_KEYS,
    TABLE_KEYS,
    Cell,
    audit_row,
    ban_row,
    session_row,
    short_key,
    table_row,
)
from screens.dialogs import ConfirmDialog, Question
from screens.footer import Footer
from screens.messages import Send
from screens.mounting import composed

DEFAULT_DURATION = "1h"


class AdminScreen(Screen[None]):
    """Sessions, tables and the audit log (or the bans), and the admin's actions."""

    DEFAULT_CSS = """
    AdminScreen { layout: vertical; }
    AdminScreen #admin-title { height: 1; text-style: bold; padding: 0 1; }
    AdminScreen DataTable { height: 1fr; }
    AdminScreen #admin-form { height: 3; }
    AdminScreen #admin-reason { width: 1fr; }
    AdminScreen #admin-duration { width: 22; }
    """

    # Moving between the lists and the fields is a priority binding: it happens before the
    # next key is handed to what has focus, so a burst of keys (a paste, a fast typist on a
    # slow link) lands where slow typing would.
    BINDINGS = [
        Binding("escape", "back", N_("Back"), key_display="Esc", priority=True),
        Binding("enter", "to_lists", N_("Back to the lists"), key_display="⏎", priority=True),
        Binding("tab", "app.focus_next", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", show=False, priority=True),
        Binding("slash", "write", N_("Reason"), key_display="/", priority=True),
        Binding("k", "kick", N_("Kick")),
        Binding("b", "ban('key')", N_("Ban key")),
        Binding("B", "ban('address')", N_("Ban address")),
        Binding("m", "mute", N_("Mute")),
        Binding("u", "unmute", N_("Unmute"), show=False),
        Binding("r", "remove", N_("Remove")),
        Binding("p", "pause", N_("Pause/resume")),
        Binding("x", "close_table", N_("Close table")),
        Binding("w", "watch", N_("Watch")),
        Binding("n", "announce", N_("Announce")),
        Binding("v", "toggle_log", N_("Audit/bans")),
        Binding("U", "unban", N_("Unban"), show=False),
    ]

    FOOTER_WHEN_ROOM = ("announce", "toggle_log")
    """Keys the footer shows only where the line has room (the help lists every key)."""
    SESSION_ACTIONS = frozenset({"kick", "ban", "mute", "unmute", "remove"})
    """Actions on the session under the cursor: in the footer while the sessions list has it."""
    TABLE_ACTIONS = frozenset({"pause", "close_table", "watch"})
    """Actions on the table under the cursor: in the footer while the tables list has it."""

    def __init__(self) -> None:
        super().__init__()
        self.state: protocol.AdminState | None = None
        self.showing_bans = False
        self._rows: dict[str, dict[str, tuple[Cell, ...]]] = {}

    @property
    def tr(self) -> Translator:
        """The app's translator (English outside a `PerudoApp`)."""
        return getattr(self.app, "tr", None) or translator("en")

    # ---- layout --------------------------------------------------------------------------

    def _headings(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each list's columns (key, heading), the bottom one as it shows now."""
        tr = self.tr
        sessions = (
            "#",
            tr.p_("admin", "Player"),
            tr.p_("admin", "Key"),
            tr.p_("admin", "Address"),
            tr.p_("admin", "Where"),
            tr.p_("admin", "Muted"),
        )
        tables = (
            "#",
            tr.p_("lobby column", "Table"),
            tr.p_("lobby column", "Preset"),
            tr.p_("lobby column", "Status"),
            tr.p_("admin", "Players"),
            tr.p_("lobby column", "Watch"),
        )
        bans = (
            "#",
            tr.p_("admin", "Ban"),
            tr.p_("admin", "Until"),
            tr.p_("admin", "Reason"),
            tr.p_("admin", "Key or address"),
        )
        audit = (
            tr.p_("admin", "When (UTC)"),
            tr.p_("admin", "Admin"),
            tr.p_("admin", "Action"),
            tr.p_("admin", "Why"),
            tr.p_("admin", "Whom"),
        )
        log = (
            zip(BAN_KEYS, bans, strict=True)
            if self.showing_bans
            else zip(AUDIT_KEYS, audit, strict=True)
        )
        return {
            "admin-sessions": tuple(zip(SESSION_KEYS, sessions, strict=True)),
            "admin-tables": tuple(zip(TABLE_KEYS, tables, strict=True)),
            "admin-log": tuple(log),
        }

    def _title(self) -> Text:
        tr, state = self.tr, self.state
        if state is None:
            return Text(tr._("Admin"))
        parts = [
            tr._("Admin"),
            tr.n_("{n} session", "{n} sessions", len(state.sessions)),
            tr.n_("{n} table", "{n} tables", len(state.tables)),
            tr.n_("{n} ban", "{n} bans", len(state.bans)),
        ]
        return Text(" · ".join(parts))

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="admin-title")
        for grid_id, columns in self._headings().items():
            grid: DataTable[Cell] = DataTable(id=grid_id, cursor_type="row", zebra_stripes=True)
            for key, label in columns:
                grid.add_column(label, key=key)
            yield grid
        with Horizontal(id="admin-form"):
            yield Input(placeholder=self._reason_hint(), id="admin-reason", max_length=200)
            yield Input(
                value=DEFAULT_DURATION, placeholder=self._duration_hint(), id="admin-duration"
            )
        yield Footer()

    def _reason_hint(self) -> str:
        return self.tr._("reason (or the announcement)")

    def _duration_hint(self) -> str:
        return self.tr._("10m, 1h, 1d, forever")

    def on_mount(self) -> None:
        if not composed(self):
            return
        self.query_one("#admin-sessions", DataTable).focus()
        self.post_message(Send(protocol.WatchAdmin(on=True)))
        if self.state is not None:
            self.show(self.state)

    def on_unmount(self) -> None:
        self.app.post_message(Send(protocol.WatchAdmin(on=False)))

    def retranslate(self) -> None:
        """Redraw every text in the app's new language (`PerudoApp.set_language`)."""
        if not composed(self):
            return
        self._rebuild_columns()
        self.query_one("#admin-reason", Input).placeholder = self._reason_hint()
        self.query_one("#admin-duration", Input).placeholder = self._duration_hint()

    def _rebuild_columns(self) -> None:
        for grid_id, columns in self._headings().items():
            grid = self.query_one(f"#{grid_id}", DataTable)
            grid.clear(columns=True)
            for key, label in columns:
                grid.add_column(label, key=key)
            self._rows.pop(grid_id, None)
        if self.state is not None:
            self.show(self.state)

    # ---- the lobby's state ---------------------------------------------------------------

    def show(self, state: protocol.AdminState) -> None:
        """Bring every list up to date with `state`, row by row."""
        self.state = state
        if not composed(self):
            return
        tr = self.tr
        self.query_one("#admin-title", Static).update(self._title())
        self._fill("admin-sessions", [(str(s.id), session_row(s, tr)) for s in state.sessions])
        self._fill("admin-tables", [(str(t.id), table_row(t, tr)) for t in state.tables])
        if self.showing_bans:
            self._fill("admin-log", [(str(b.id), ban_row(b, tr)) for b in state.bans])
        else:
            rows = [(f"{r.at}:{i}", audit_row(r, tr)) for i, r in enumerate(reversed(state.audit))]
            self._fill("admin-log", rows[::-1])

    def _fill(self, grid_id: str, rows: Sequence[tuple[str, tuple[Cell, ...]]]) -> None:
        """Make the list `grid_id` show `rows` (key, cells) in order, changing only what
        changed when the keys are the same and in the same order; the cursor keeps to its
        row's key while that key is listed."""
        grid = self.query_one(f"#{grid_id}", DataTable)
        old = self._rows.get(grid_id, {})
        keys = [key for key, _ in rows]
        columns = [c.key.value for c in grid.ordered_columns]
        if list(old) != keys:
            cursor = grid.cursor_row
            chosen = list(old)[cursor] if 0 <= cursor < len(old) else None
            grid.clear()
            for key, cells in rows:
                grid.add_row(*cells, key=key)
            if rows:
                # the cursor stays on its session (table, ban) while it is listed: a row gone
                # above it must not slide it onto someone else, who would then be kicked
                row = keys.index(chosen) if chosen in keys else min(cursor, len(rows) - 1)
                grid.move_cursor(row=row)
        else:
            for key, cells in rows:
                for column, cell, before in zip(columns, cells, old[key], strict=True):
                    if cell != before:  # the column widens to fit ("" -> "until 06-01 12:00")
                        grid.update_cell(
                            key,
                            column,  # type: ignore[arg-type]
                            cell,
                            update_width=True,
                        )
        self._rows[grid_id] = dict(rows)

    def _selected(self, grid_id: str) -> int | None:
        """The id in the row under the cursor of list `grid_id`, or None (told why)."""
        grid = self.query_one(f"#{grid_id}", DataTable)
        if grid.row_count == 0:
            self.notify(self.tr._("Nothing to choose in that list."), markup=False)
            return None
        key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        return int(key) if key is not None and key.isdigit() else None

    def _session(self) -> protocol.AdminSession | None:
        sid = self._selected("admin-sessions")
        if sid is None or self.state is None:
            return None
        return next((s for s in self.state.sessions if s.id == sid), None)

    def _reason(self, required: bool = True) -> str | None:
        """The reason typed, or None (told to write one) when it is `required` and empty."""
        field = self.query_one("#admin-reason", Input)
        reason = field.value.strip()
        if required and not reason:
            self.notify(self.tr._("Write a reason first."), severity="warning", markup=False)
            field.focus()
            return None
        return reason

    def _seconds(self) -> tuple[bool, int | None]:
        """(ok, the duration typed in seconds or None for ever); not ok is told why."""
        field = self.query_one("#admin-duration", Input)
        try:
            return True, parse_duration(field.value, forever=(self.tr._("forever"),))
        except ValueError:
            self.notify(
                self.tr._("A duration is like 10m, 1h, 1d or forever."),
                severity="warning",
                markup=False,
            )
            field.focus()
            return False, None

    def _send(self, command: protocol.Command) -> None:
        self.post_message(Send(command))
        self.query_one("#admin-reason", Input).value = ""

    # ---- actions -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter is the fields' own key (back to the lists); in a list it selects a row. `/`
        is the lists' key (to the reason field); in a field it is typed."""
        if action == "to_lists":
            return isinstance(self.focused, Input)
        if action == "write":  # in a field, / is a letter of the reason
            return not isinstance(self.focused, Input)
        return True

    def footer_shows(self, action: str) -> bool:
        """Whether the footer shows `action`'s key now (`screens.footer`): a session's keys
        while the sessions list has the cursor, a table's while the tables list has it, so
        that an 80-column line holds the keys of the list at hand. Every key works from any
        list, as the README says; the help lists them all."""
        name = action.split("(", 1)[0]
        where = self.focused.id if self.focused is not None else None
        if name in self.SESSION_ACTIONS:
            return where == "admin-sessions"
        if name in self.TABLE_ACTIONS:
            return where == "admin-tables"
        return True

    def on_descendant_focus(self) -> None:
        """Another list or field has the cursor: the footer's keys follow it."""
        self.refresh_bindings()

    def action_back(self) -> None:
        """Escape: from a field back to the lists; from the lists, close the screen."""
        if isinstance(self.focused, Input):
            self.action_to_lists()
        else:
            self.dismiss(None)

    def action_to_lists(self) -> None:
        """From a field back to the sessions list."""
        self.set_focus(self.query_one("#admin-sessions", DataTable))

    def action_write(self) -> None:
        """`/`: to the reason field, to type a reason or an announcement."""
        self.set_focus(self.query_one("#admin-reason", Input))

    def _confirm(self, question: Question, command: protocol.Command) -> None:
        """Ask `question` (y/n); send `command` on yes, nothing on no."""

        def answered(yes: bool | None) -> None:
            if yes:
                self._send(command)

        self.app.push_screen(ConfirmDialog(question), answered)

    @staticmethod
    def _span(tr: Translator, seconds: int | None, typed: str) -> str:
        """How long, as a question says it in `tr`'s language: `for 1h` (as `typed`), or
        `for ever`."""
        if seconds is None:
            return tr.p_("ban question", "for ever")
        return tr._("for {duration}", duration=typed.strip())

    def action_kick(self) -> None:
        session = self._session()
        if session is None or (reason := self._reason()) is None:
            return
        name = session.name
        self._confirm(
            lambda tr: tr._("Kick {name}? Reason: {reason}", name=name, reason=reason),
            protocol.Kick(session=session.id, reason=reason),
        )

    def action_ban(self, kind: str) -> None:
        session = self._session()
        if session is None or (reason := self._reason()) is None:
            return
        ok, seconds = self._seconds()
        if not ok:
            return
        ban_kind: Literal["key", "address"] = "key" if kind == "key" else "address"
        question = (
            N_("Ban the key of {name} ({key}) {span}? Reason: {reason}")
            if ban_kind == "key"
            else N_("Ban the address {address} ({name}) {span}? Reason: {reason}")
        )
        typed = self.query_one("#admin-duration", Input).value
        about = {
            "name": session.name,
            "key": short_key(session.fingerprint, self.tr),
            "address": session.address or "?",
            "reason": reason,
        }
        self._confirm(
            lambda tr: tr._(question, span=self._span(tr, seconds, typed), **about),
            protocol.Ban(kind=ban_kind, session=session.id, reason=reason, seconds=seconds),
        )

    def action_mute(self) -> None:
        session = self._session()
        if session is None or (reason := self._reason()) is None:
            return
        ok, seconds = self._seconds()
        if ok:
            self._send(protocol.Mute(session=session.id, reason=reason, seconds=seconds))

    def action_unmute(self) -> None:
        session = self._session()
        if session is not None:
            self._send(protocol.Unmute(session=session.id))

    def action_remove(self) -> None:
        session = self._session()
        if session is None:
            return
        if session.table is None:
            self.notify(self.tr._("{name} is not at a table.", name=session.name), markup=False)
            return
        reason = self._reason(required=False) or ""
        name, table = session.name, session.table
        question = (
            N_("Remove {name} from table {table}? Reason: {reason}")
            if reason
            else N_("Remove {name} from table {table}?")
        )
        self._confirm(
            lambda tr: tr._(question, name=name, table=table, reason=reason),
            protocol.RemovePlayer(session=session.id, reason=reason),
        )

    def action_pause(self) -> None:
        tid = self._selected("admin-tables")
        if tid is None or self.state is None:
            return
        table = next((t for t in self.state.tables if t.id == tid), None)
        if table is not None and table.paused:
            self._send(protocol.ResumeTable(table=tid))
        elif table is not None:
            self._send(protocol.PauseTable(table=tid, reason=self._reason(required=False) or ""))

    def action_close_table(self) -> None:
        tid = self._selected("admin-tables")
        if tid is None or self.state is None:
            return
        table = next((t for t in self.state.tables if t.id == tid), None)
        name = table.name if table is not None else ""
        reason = self._reason(required=False) or ""
        question = (
            N_(
                "Close table {table} ({name})? Everyone at it goes back to the lobby. "
                "Reason: {reason}"
            )
            if reason
            else N_("Close table {table} ({name})? Everyone at it goes back to the lobby.")
        )
        self._confirm(
            lambda tr: tr._(question, table=tid, name=name, reason=reason),
            protocol.CloseTable(table=tid, reason=reason),
        )

    def action_watch(self) -> None:
        """Watch the table under the cursor, private or not (only admins may watch a private
        table: it is in no one's lobby list)."""
        tid = self._selected("admin-tables")
        if tid is not None:
            self.post_message(Send(protocol.SpectateTable(table=tid)))

    def action_announce(self) -> None:
        text = self._reason()
        if text is not None:
            self._send(protocol.Announce(text=text))

    def action_toggle_log(self) -> None:
        """The bottom list shows the audit log, or the bans in force (`U` lifts one)."""
        self.showing_bans = not self.showing_bans
        self._rebuild_columns()
        self.query_one("#admin-title", Static).update(self._title())

    def action_unban(self) -> None:
        if not self.showing_bans:
            self.notify(self.tr._("Press v to see the bans first."), markup=False)
            return
        ban = self._selected("admin-log")
        if ban is not None:
            self._send(protocol.Unban(ban=ban))
