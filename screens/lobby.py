"""The lobby screen: every table, who is online; create, join or watch a table.

The table list is updated cell by cell from each `LobbyState` (rows are keyed by table id),
never rebuilt (TEXTUAL-OVER-SSH.md).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from perudo_ssh import protocol
from screens.create import CreateTableDialog
from screens.messages import Send
from screens.mounting import composed

COLUMNS = (("id", "#"), ("name", "Table"), ("preset", "Preset"), ("seats", "Seats"),
           ("status", "Status"), ("spectators", "Watch"))  # fmt: skip
# with these, the list and the online column fit 80 columns (the title shows the full name)
NAME_WIDTH = 17


def table_row(table: protocol.TableSummary) -> tuple[str | Text, ...]:
    """The cells of one table's row, in `COLUMNS` order (names as plain text, no markup)."""
    taken = table.seats - table.free
    return (
        str(table.id),
        Text(table.name if len(table.name) <= NAME_WIDTH else table.name[: NAME_WIDTH - 1] + "…"),
        table.preset,
        f"{taken}/{table.seats}",
        table.status,
        str(table.spectators),
    )


class LobbyScreen(Screen[None]):
    """Where a player arrives: the tables of the lobby and the players online."""

    BINDINGS = [
        Binding("c", "create", "Create table"),
        Binding("j", "join", "Join", key_display="j/⏎"),
        Binding("s", "spectate", "Watch"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._live = False
        self._rows: dict[int, tuple[str | Text, ...]] = {}
        self._tables: dict[int, protocol.TableSummary] = {}
        self._pending: protocol.LobbyState | None = None
        self._player = ""

    def compose(self) -> ComposeResult:
        yield Static("perudo-ssh · liar's dice", id="lobby-title")
        with Horizontal(id="lobby-body"):
            table: DataTable[str | Text] = DataTable(
                id="tables", cursor_type="row", zebra_stripes=True
            )
            for key, label in COLUMNS:
                table.add_column(label, key=key)
            yield table
            yield Static(id="online")
        yield Static("No tables yet: press c to create one.", id="lobby-hint")
        yield Footer()

    def on_mount(self) -> None:
        if not composed(self):  # closed while opening: nothing to draw on
            return
        self._live = True  # composed: from now on, draw at once
        if self._player:
            self.show_welcome(self._player)
        if self._pending is not None:
            self.show_lobby(self._pending)

    def show_welcome(self, name: str) -> None:
        self._player = name
        if self._live:
            self.query_one("#lobby-title", Static).update(
                Text(f"perudo-ssh · liar's dice · welcome, {name}"), layout=False
            )

    def show_lobby(self, lobby: protocol.LobbyState) -> None:
        """Bring the table list and the online list up to date with `lobby`, in place."""
        if not self._live:
            self._pending = lobby
            return
        grid = self.query_one("#tables", DataTable)
        seen = set()
        for summary in lobby.tables:
            seen.add(summary.id)
            row = table_row(summary)
            old = self._rows.get(summary.id)
            if old is None:
                grid.add_row(*row, key=str(summary.id))
            else:
                for (column, _), cell, before in zip(COLUMNS, row, old, strict=True):
                    if cell != before:
                        grid.update_cell(str(summary.id), column, cell)
            self._rows[summary.id] = row
        for gone in set(self._rows) - seen:
            grid.remove_row(str(gone))
            del self._rows[gone]
        self._tables = {t.id: t for t in lobby.tables}
        online = Text(f"Online ({len(lobby.online)})\n", style="bold")
        online.append("\n".join(lobby.online), style="")
        self.query_one("#online", Static).update(online)
        self.query_one("#lobby-hint", Static).display = not lobby.tables

    # ---- actions -------------------------------------------------------------------------

    def _selected(self) -> protocol.TableSummary | None:
        grid = self.query_one("#tables", DataTable)
        if grid.row_count == 0:
            self.notify("No table yet: press c to create one.", markup=False)
            return None
        key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        return self._tables.get(int(key)) if key is not None else None

    def action_create(self) -> None:
        def created(command: protocol.CreateTable | None) -> None:
            if command is not None:
                self.post_message(Send(command))

        self.app.push_screen(CreateTableDialog(self._player), created)

    def action_join(self) -> None:
        table = self._selected()
        if table is None:
            return
        if table.status != "waiting":
            self.notify(f"Table {table.id} is {table.status}: press s to watch it.", markup=False)
        elif table.free == 0:
            self.notify(f"Table {table.id} is full: press s to watch it.", markup=False)
        else:
            self.post_message(Send(protocol.JoinTable(table=table.id)))

    def action_spectate(self) -> None:
        table = self._selected()
        if table is not None:
            self.post_message(Send(protocol.SpectateTable(table=table.id)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_join()
