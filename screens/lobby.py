"""The lobby screen: every table, who is online; create, join or watch a table.

The table list is updated cell by cell from each `LobbyState` (rows are keyed by table id),
never rebuilt (TEXTUAL-OVER-SSH.md). Every text is in the session's language (`app.tr`);
`retranslate` redraws them all after a language switch.
"""

from __future__ import annotations

from functools import lru_cache

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.widgets.data_table import CellDoesNotExist

from perudo_ssh import protocol
from perudo_ssh.i18n import N_, Translator, translator
from screens.account import AccountScreen
from screens.chat import ChatPane
from screens.create import CreateTableDialog
from screens.footer import Footer
from screens.history import HistoryScreen
from screens.invite import ChallengeDialog, InviteCodeDialog
from screens.keys import at_once
from screens.leaderboard import LeaderboardScreen
from screens.messages import Send
from screens.mounting import composed
from screens.profile import ProfileScreen
from screens.quickplay import QuickPlayDialog
from screens.shared import SHARED_CACHES, SharedLines
from screens.sharedgrid import SharedGrid
from screens.tableview import status_word
from screens.widgets import DrawnTexts
from screens.wording import duration, marked

COLUMN_KEYS = ("id", "name", "preset", "seats", "status", "spectators")
MAX_ONLINE_LINES = 250
"""Names drawn in the online column at most: the tallest terminal served
(`perudo_ssh.ssh.session.MAX_SIZE`) shows fewer; drawing all of a thousand players' names on
every arrival would cost each lobby screen for nothing."""
# with these, the list and the online column fit 80 columns (the title shows the full name)
NAME_WIDTH = 17


def online_line(name: str, rating: int | None, width: int) -> str:
    """A line of the online column, `width` columns: `ana        1014`, the rating at the
    right when the name leaves room for it (a guest's or a long name alone; issue 13)."""
    if rating is None or len(name) + 1 + len(str(rating)) > width:
        return name
    return f"{name:<{width - len(str(rating))}}{rating}"


def column_labels(tr: Translator) -> tuple[str, ...]:
    """The headings of the table list, in `COLUMN_KEYS` order."""
    return (
        "#",
        tr.p_("lobby column", "Table"),
        tr.p_("lobby column", "Preset"),
        tr.p_("lobby column", "Seats"),
        tr.p_("lobby column", "Status"),
        tr.p_("lobby column", "Watch"),  # how many watch the table
    )


def table_row(table: protocol.TableSummary, tr: Translator | None = None) -> tuple[Text, ...]:
    """The cells of one table's row, in `COLUMN_KEYS` order, as plain text (no markup); the
    status in `tr`'s language (English by default). Preset names are the RULES.md §7 names
    in every language, as the create dialog and the help show them.

    Each cell is a one-line `Text` (as the table list draws a `str` cell), so the list does
    not parse a `str` as markup for each new row in every lobby screen (issue 10: a row added
    to ~75 lobby screens at once, 2.8 % of a loaded server's CPU); the same cell is the same
    `Text` in every lobby screen of the process (`plain_cell`)."""
    tr = tr if tr is not None else translator("en")
    taken = table.seats - table.free
    name = table.name if len(table.name) <= NAME_WIDTH else table.name[: NAME_WIDTH - 1] + "…"
    cells = (
        str(table.id),
        name,
        table.preset,
        f"{taken}/{table.seats}",
        status_word(tr, table.status),
        str(table.spectators),
    )
    return tuple(plain_cell(cell) for cell in cells)


@lru_cache(maxsize=4096)
def plain_cell(cell: str) -> Text:
    """`cell` as a one-line `Text` with no markup, one object for each text in the process.

    A `Text` is three objects for the garbage collector to walk (itself, its list of
    strings, its list of spans) where a `str` is none: made for each cell of each lobby
    screen they were 290,000 of the 3 million objects a loaded server walks in each full
    collection (issue 10). Shared, it must never be changed in place, and nothing does:
    `DataTable` draws it through Rich, which copies a `Text` before cutting or styling it."""
    return Text(cell, no_wrap=True, end="")


def table_detail(table: protocol.TableSummary, tr: Translator | None = None) -> Text:
    """The line under the list about the chosen table: its whole name, its turn timer and
    how many of its players are disconnected (issue 5), e.g. `Table 2 · ana's table · turn
    timer 60 s · 1 player disconnected` (the name as plain text, no markup; "Table 2", not a
    bare number, as games kept have numbers of their own, issue 13)."""
    tr = tr if tr is not None else translator("en")
    if table.turn_seconds:
        timer = tr._("turn timer {time}", time=duration(tr, table.turn_seconds))
    else:
        timer = tr._("no turn timer")
    line = Text(" · ".join((tr._("Table {id}", id=table.id), table.name, timer)))
    if table.away:
        away = tr.n_("{n} player disconnected", "{n} players disconnected", table.away)
        line.append(" · ")
        line.append(away, style="bold")
    return line


ONLINE_COLUMNS: LRUCache[tuple[object, ...], Content] = LRUCache(64)
"""The online column's content, by language, names, ratings, bot accounts and size: every
lobby screen of the process shows the same on each arrival or departure, made once (issue 10).
The names are the lobby list's tuple as decoded, shared by every session."""
SHARED_CACHES.append(ONLINE_COLUMNS)


class OnlineColumn(SharedLines, Static):
    """Who is online, beside the table list: drawn by its `LobbyScreen` with as many names
    as it has rows for, and again when its size changes; drawn once for all the lobby screens
    of the process that show the same names at the same size (`SharedLines`)."""

    def on_resize(self) -> None:
        screen = self.screen
        if isinstance(screen, LobbyScreen):
            screen.show_online()


class LobbyScreen(Screen[None]):
    """Where a player arrives: the tables of the lobby and the players online."""

    BINDINGS = [
        Binding("c", "create", N_("Create table")),
        Binding("g", "quick_play", N_("Quick play")),
        Binding("j", "join", N_("Join"), key_display="j/⏎"),
        Binding("s", "spectate", N_("Watch")),
        # your games, the best players, you, your keys (issue 4); the footer shows the last
        # three where it has room for them (not at 80 columns in English: the history
        # screen's footer shows them too)
        Binding("h", "history", N_("History")),
        Binding("l", "leaderboard", N_("Leaders")),
        Binding("p", "profile", N_("Profile")),
        Binding("k", "account", N_("Account")),
        # private tables and challenges (issue 13)
        Binding("e", "invite_code", N_("Invite code")),
        Binding("x", "challenge", N_("Challenge")),
        # the pane's title says so; at once when it keeps the order of the keys read with
        # it (screens/keys.py: they are typed into the chat's line, not lost to the list)
        Binding("m", "chat_at_once", show=False, priority=True),
        Binding("m", "chat", N_("Chat"), show=False),
        Binding("f2", "app.language", N_("Language"), key_display="F2"),
        Binding("q", "app.quit", N_("Quit")),
    ]

    FOOTER_WHEN_ROOM = (
        "quick_play",
        "history",
        "leaderboard",
        "profile",
        "account",
        "invite_code",
        "challenge",
    )
    """Actions whose keys the footer shows only where the line has room (issue 13)."""

    def __init__(self) -> None:
        super().__init__()
        self._live = False
        self._rows: dict[int, tuple[str | Text, ...]] = {}
        self._tables: dict[int, protocol.TableSummary] = {}
        self._pending: protocol.LobbyState | None = None
        self._online: tuple[str, ...] = ()
        self._ratings: tuple[int | None, ...] = ()  # beside `_online` (issue 13)
        self._programs: frozenset[str] = frozenset()  # bot accounts of `_online` (issue 14)
        self._player = ""
        self._notes = protocol.ServerNotes()  # the server's name and message of the day
        self._drawn = DrawnTexts(self)  # what the title, hint and online column show

    @property
    def tr(self) -> Translator:
        """The app's translator (English outside a `PerudoApp`)."""
        return getattr(self.app, "tr", None) or translator("en")

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="lobby-title")
        motd = Static(Content(self._notes.motd), id="lobby-motd")  # plain text, no markup
        motd.display = bool(self._notes.motd)
        yield motd
        with Horizontal(id="lobby-body"):
            table = SharedGrid(id="tables", cursor_type="row", zebra_stripes=True)
            for key, label in zip(COLUMN_KEYS, column_labels(self.tr), strict=True):
                table.add_column(label, key=key)
            yield table
            yield OnlineColumn(id="online")
        yield Static(self._hint(), id="lobby-hint")
        yield ChatPane("lobby", id="lobby-chat")
        yield Footer()

    def _title(self) -> Text:
        server = self._notes.name or "perudo-ssh"
        if self._player:
            return Text(
                self.tr._("{server} · liar's dice · welcome, {name}", server=server,
                          name=self._player)
            )  # fmt: skip
        return Text(self.tr._("{server} · liar's dice", server=server))

    def _hint(self) -> str | Text:
        """Under the list: what to do without a table, else the chosen table's details."""
        chosen = self._chosen()
        if chosen is None:
            return self.tr._("No tables yet: press c to create one.")
        return table_detail(chosen, self.tr)

    def _chosen(self) -> protocol.TableSummary | None:
        """The table the cursor is on, if any (no notice)."""
        if not self._live or not self._tables:
            return None
        grid = self.query_one("#tables", DataTable)
        if grid.row_count == 0:
            return None
        try:  # the cursor may still be on a row just removed
            key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        except CellDoesNotExist:
            return None
        return self._tables.get(int(key)) if key is not None else None

    def _show_hint(self) -> None:
        if self._live:
            self._drawn.put("#lobby-hint", self._hint())

    def retranslate(self) -> None:
        """Redraw every text in the app's new language (`PerudoApp.set_language`)."""
        if not self._live:
            return
        self._drawn.clear()
        self._drawn.put("#lobby-title", self._title())
        self._drawn.put("#lobby-hint", self._hint())
        self.query_one(ChatPane).retranslate()
        grid = self.query_one("#tables", DataTable)
        cursor = grid.cursor_coordinate
        grid.clear(columns=True)  # headings and statuses are words: build the list again
        for key, label in zip(COLUMN_KEYS, column_labels(self.tr), strict=True):
            grid.add_column(label, key=key)
        self._rows.clear()
        self._show_tables(grid, tuple(self._tables.values()))
        grid.cursor_coordinate = cursor
        self.show_online()

    def on_mount(self) -> None:
        if not composed(self):  # closed while opening: nothing to draw on
            return
        self._live = True  # composed: from now on, draw at once
        if self._player:
            self.show_welcome(self._player)
        if self._notes.motd:
            self.show_notes(self._notes)
        if self._pending is not None:
            self.show_lobby(self._pending)

    def show_welcome(self, name: str) -> None:
        """Greet the player by `name`, the unique name the lobby gave (`Welcome`)."""
        self._player = name
        if self._live:
            self._drawn.put("#lobby-title", self._title())

    def show_notes(self, notes: protocol.ServerNotes) -> None:
        """Show the server's name in the title and its message of the day under it (issue
        15, item 5; no line when there is none): plain text, as the operator wrote it."""
        self._notes = notes
        if self._live:
            self._drawn.put("#lobby-title", self._title())
            self._drawn.put("#lobby-motd", notes.motd, layout=True)
            self.query_one("#lobby-motd", Static).display = bool(notes.motd)

    def show_lobby(self, lobby: protocol.LobbyState) -> None:
        """Bring the table list and the online list up to date with `lobby`, in place."""
        if not self._live:
            self._pending = lobby
            return
        self._show_tables(self.query_one("#tables", DataTable), lobby.tables)
        self._online = lobby.online
        self._ratings = lobby.ratings
        self._programs = frozenset(lobby.bot_accounts)
        self.show_online()
        self._show_hint()

    def _show_tables(self, grid: DataTable, tables: tuple[protocol.TableSummary, ...]) -> None:
        seen = set()
        drawn = self._tables
        for summary in tables:
            seen.add(summary.id)
            if summary.id in self._rows and (
                (shown := drawn.get(summary.id)) is summary or shown == summary
            ):
                continue  # this table's row shows it as it is (most of every LobbyState,
                # the same objects as decoded: `protocol.decode_event`)
            row = table_row(summary, self.tr)
            old = self._rows.get(summary.id)
            if old is None:
                grid.add_row(*row, key=str(summary.id))
            else:
                for column, cell, before in zip(COLUMN_KEYS, row, old, strict=True):
                    if cell != before:
                        grid.update_cell(str(summary.id), column, cell)
            self._rows[summary.id] = row
        for gone in set(self._rows) - seen:
            grid.remove_row(str(gone))
            del self._rows[gone]
        self._tables = {t.id: t for t in tables}

    def show_online(self) -> None:
        """The online column: its heading, then as many names as it has rows for (it does not
        scroll: drawing all of a thousand names on every arrival would cost each lobby screen
        for nothing; `MAX_ONLINE_LINES` before its size is known). Drawn again on resize.
        Each name has its rating at the right where the column has room (`online_line`); a
        bot account's is marked (`BOT robo`). Made once for the lobby screens of the process
        that show the same names at the same size in the same language (`ONLINE_COLUMNS`)."""
        column = self.query_one("#online", Static).content_region
        rows = column.height or MAX_ONLINE_LINES + 1
        width = column.width or NAME_WIDTH - 1
        key = (self.tr, self._online, self._ratings, self._programs, rows, width)
        online = ONLINE_COLUMNS.get(key)
        if online is None:
            online = ONLINE_COLUMNS[key] = self._online_column(rows, width)
        self._drawn.put("#online", online)

    def _online_column(self, rows: int, width: int) -> Content:
        online = Text(self.tr._("Online ({count})", count=len(self._online)) + "\n", style="bold")
        shown = self._online[: min(rows - 1, MAX_ONLINE_LINES)]
        ratings = self._ratings if len(self._ratings) == len(self._online) else ()
        lines = [
            online_line(
                marked(name, name in self._programs), ratings[i] if ratings else None, width
            )
            for i, name in enumerate(shown)
        ]
        online.append("\n".join(lines), style="")
        return Content.from_rich_text(online, console=self.app.console)

    # ---- actions -------------------------------------------------------------------------

    def _selected(self) -> protocol.TableSummary | None:
        grid = self.query_one("#tables", DataTable)
        if grid.row_count == 0:
            self.notify(self.tr._("No table yet: press c to create one."), markup=False)
            return None
        key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        return self._tables.get(int(key)) if key is not None else None

    def action_create(self) -> None:
        def created(command: protocol.CreateTable | None) -> None:
            if command is not None:
                self.post_message(Send(command))

        self.app.push_screen(CreateTableDialog(self._player), created)

    def action_quick_play(self) -> None:
        """The quick-play dialog, at the last choice made (`QuickPlayDialog`; issue 13)."""
        app = self.app  # a PerudoApp (screens.app imports this module)
        preset, wait = getattr(app, "quick_choice", (None, 30))

        def chosen(command: protocol.QuickPlay | None) -> None:
            if command is not None:
                choice = (command.preset, command.wait_seconds)
                app.quick_choice = choice  # type: ignore[attr-defined]
                self.post_message(Send(command))

        app.push_screen(QuickPlayDialog(preset, wait), chosen)

    def action_invite_code(self) -> None:
        """Join a private table by its invite code (`InviteCodeDialog`; issue 13)."""
        self.app.push_screen(InviteCodeDialog(), self._send_chosen)

    def action_challenge(self, name: str = "") -> None:
        """Challenge a player by name (`ChallengeDialog`; issue 13)."""
        self.app.push_screen(ChallengeDialog(name), self._send_chosen)

    def _send_chosen(self, command: protocol.Command | None) -> None:
        if command is not None:
            self.post_message(Send(command))

    def action_join(self) -> None:
        table = self._selected()
        if table is None:
            return
        if table.status == "playing":
            self.notify(
                self.tr._("Table {table} is playing: press s to watch it.", table=table.id),
                markup=False,
            )
        elif table.status != "waiting":
            self.notify(
                self.tr._("Table {table} is over: press s to watch it.", table=table.id),
                markup=False,
            )
        elif table.free == 0:
            self.notify(
                self.tr._("Table {table} is full: press s to watch it.", table=table.id),
                markup=False,
            )
        else:
            self.post_message(Send(protocol.JoinTable(table=table.id)))

    def action_history(self) -> None:
        """Your finished games; Enter replays one (screens/history.py)."""
        self.app.push_screen(HistoryScreen())

    def action_leaderboard(self) -> None:
        """The best rated players (screens/leaderboard.py)."""
        self.app.push_screen(LeaderboardScreen())

    def action_profile(self) -> None:
        """Your profile: games, wins, rating over time, calls (screens/profile.py)."""
        self.app.push_screen(ProfileScreen())

    def action_account(self) -> None:
        """Your account and a code to link another key (screens/account.py)."""
        self.app.push_screen(AccountScreen())

    def action_spectate(self) -> None:
        table = self._selected()
        if table is not None:
            self.post_message(Send(protocol.SpectateTable(table=table.id)))

    def action_chat_at_once(self) -> None:
        """`m` as the app takes it (a priority binding), before the keys read with it are
        routed: unless a line has the focus (there `m` is a letter) or keys before it are
        still on their way (`screens.keys.at_once`)."""
        at_once(self, letter=True)
        self.action_chat()

    def action_chat(self) -> None:
        """`m`: type a line in the lobby's chat (Escape comes back to the tables)."""
        self.query_one(ChatPane).focus_input()

    def after_chat(self) -> Widget | None:
        """Where the focus goes when the chat's line is left (`ChatInput.action_done`): the
        table list, whose keys are then the next keys read."""
        return self.query_one("#tables", DataTable)

    def on_chat_pane_done(self, event: ChatPane.Done) -> None:
        event.stop()  # the line moved the focus to `after_chat()` already

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_hint()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_join()
