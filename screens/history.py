"""The history screen: your finished games, newest first, and Enter replays one (issue 4,
item 3: "A history screen lists your games").

Each line: the date the game finished (UTC), its preset, the players in seat order, your
place among them, whether it moved your rating and by how much (displayed points,
`perudo_ssh.ratings.ordinal`). Games come from the store (`PerudoApp.store`) a page at a
time, read in a worker (the store works in its own thread); the next page is read when the
cursor reaches the last line. A guest (no account) has no history: the screen says to sign
in with a key. Text in the session's language (`app.tr`); `retranslate` redraws it.

"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from perudo_ssh.i18n import N_, Translator
from screens.account import AccountScreen
from screens.footer import Footer
from screens.leaderboard import LeaderboardScreen
from screens.mounting import composed
from screens.profile import ProfileScreen
from screens.replay import ReplayScreen
from screens.stored import GUEST, cut, day, rating_changes, signed, store_and_account
from screens.widgets import app_tr

if TYPE_CHECKING:
    from perudo_ssh.records import GameSummary

log = logging.getLogger(__name__)

PAGE = 100
"""Games read from the store at a time."""
PLAYERS_WIDTH = 18
"""Columns of the players cell: with the others, a line fits 80 columns."""
COLUMN_KEYS = ("game", "date", "preset", "players", "place", "rated", "change")


def column_labels(tr: Translator) -> tuple[str, ...]:
    """The headings of the history list, in `COLUMN_KEYS` order."""
    return (
        tr.p_("history column", "Game"),
        tr.p_("history column", "Date"),
        tr.p_("history column", "Preset"),
        tr.p_("history column", "Players"),
        tr.p_("history column", "Place"),
        tr.p_("history column", "Rated"),
        tr.p_("history column", "Rating ±"),
    )


def history_row(game: GameSummary, change: int | None) -> tuple[str | Text, ...]:
    """The cells of one game's line, in `COLUMN_KEYS` order: names as plain text (never
    markup); `change` the rating change (None: the game did not rate this player). The game's
    number first: the one `record N` takes (issue 13: not the table's number in the lobby)."""
    return (
        str(game.id),
        day(game.finished),
        game.preset,
        Text(cut(", ".join(game.players), PLAYERS_WIDTH)),
        f"{game.place}/{len(game.players)}",
        "✓" if change is not None else "–",
        signed(change) if change is not None else "",
    )


class HistoryScreen(Screen[None]):
    """Your games, newest first; Enter (or r) replays the chosen one, Esc goes back. The
    way to the rest of what is kept of you: `p` your profile, `l` the leaderboard, `k` your
    account (the lobby has these keys too, without room to show them)."""

    BINDINGS = [
        Binding("r", "replay", N_("Replay"), key_display="r/⏎"),
        Binding("p", "profile", N_("Profile")),
        Binding("l", "leaderboard", N_("Leaders")),
        Binding("k", "account", N_("Account")),
        Binding("escape,q,h", "close", N_("Back"), key_display="esc"),
        Binding("f2", "app.language", N_("Language"), key_display="F2"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._games: list[GameSummary] = []
        self._changes: dict[int, int] = {}
        self._more = False
        self._loading = True
        self._failed = False

    @property
    def tr(self) -> Translator:
        """The app's translator (English outside a `PerudoApp`)."""
        return app_tr(self)

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="history-title", classes="screen-title", markup=False)
        grid: DataTable[str | Text] = DataTable(
            id="history-games", cursor_type="row", zebra_stripes=True
        )
        for key, label in zip(COLUMN_KEYS, column_labels(self.tr), strict=True):
            grid.add_column(label, key=key)
        yield grid
        yield Static(self._hint(), id="history-hint", classes="screen-hint", markup=False)
        yield Footer()

    def _title(self) -> str:
        mine = store_and_account(self.app)
        if mine is None:
            return self.tr._("Your games")
        return self.tr._("Games of {name}", name=mine[1].name)

    def _hint(self) -> str:
        tr = self.tr
        if store_and_account(self.app) is None:
            return tr._(GUEST)
        if self._failed:
            return tr._("Your games could not be read just now. Esc, then h to try again.")
        if self._loading and not self._games:
            return tr._("Reading your games…")
        if not self._games:
            return tr._("No finished game yet: play one, and it is listed here.")
        return tr.n_(
            "{n} game · Enter replays the chosen one",
            "{n} games · Enter replays the chosen one",
            len(self._games),
        )

    def on_mount(self) -> None:
        if not composed(self):
            return
        if store_and_account(self.app) is None:
            self.query_one("#history-games", DataTable).display = False
            return
        self.run_worker(self._load(None), exclusive=True, exit_on_error=False)

    async def _load(self, before: int | None) -> None:
        """Read the next page of games (ids below `before`), and with the first page every
        rating change; add them to the list."""
        mine = store_and_account(self.app)
        assert mine is not None
        store, account = mine
        self._loading = True
        try:
            if before is None:
                self._changes = rating_changes(await store.rating_history(account.id))
            games = await store.games_of(account.id, PAGE, before)
        except Exception:
            log.exception("could not read the games of account %s", account.id)
            self._failed = True
            games = []
        self._loading = False
        self._more = len(games) == PAGE
        self._games.extend(games)
        if composed(self):
            grid = self.query_one("#history-games", DataTable)
            self._add_rows(grid, games)
            self.query_one("#history-hint", Static).update(self._hint())

    def _add_rows(self, grid: DataTable, games: Sequence[GameSummary]) -> None:
        for game in games:
            grid.add_row(*history_row(game, self._changes.get(game.id)), key=str(game.id))

    def retranslate(self) -> None:
        """Redraw every text in the app's (new) language."""
        if not composed(self):
            return
        self.query_one("#history-title", Static).update(self._title())
        self.query_one("#history-hint", Static).update(self._hint())
        grid = self.query_one("#history-games", DataTable)
        cursor = grid.cursor_coordinate
        grid.clear(columns=True)
        for key, label in zip(COLUMN_KEYS, column_labels(self.tr), strict=True):
            grid.add_column(label, key=key)
        self._add_rows(grid, self._games)
        grid.cursor_coordinate = cursor

    # ---- events and actions --------------------------------------------------------------

    def chosen(self) -> int | None:
        """The id of the game under the cursor, or None."""
        grid = self.query_one("#history-games", DataTable)
        if not grid.display or grid.row_count == 0:
            return None
        key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        return int(key) if key is not None else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        grid = event.data_table
        if self._more and not self._loading and event.cursor_row >= grid.row_count - 1:
            self._loading = True
            self.run_worker(self._load(self._games[-1].id), exclusive=True, exit_on_error=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_replay()

    def action_replay(self) -> None:
        game_id = self.chosen()
        if game_id is not None:
            self.app.push_screen(ReplayScreen(game_id))

    def action_profile(self) -> None:
        """Your profile (screens/profile.py)."""
        self.app.push_screen(ProfileScreen())

    def action_leaderboard(self) -> None:
        """The best rated players (screens/leaderboard.py)."""
        self.app.push_screen(LeaderboardScreen())

    def action_account(self) -> None:
        """Your account and a code to link another key (screens/account.py)."""
        self.app.push_screen(AccountScreen())

    def action_close(self) -> None:
        self.dismiss(None)
