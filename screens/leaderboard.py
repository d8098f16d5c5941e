"""The leaderboard: the best rated players by displayed rating, with their games and wins
(issue 4, item 4); Enter opens the chosen player's profile. People and bot accounts are
rated apart (issue 14), so they are listed apart: `b` shows the one list or the other; the
bots' list has the built-in bots' levels too (`bot-hard`: its games are its rated games).

Ratings are each account's latest (`Store.current_ratings`), ranked and shown in points by
`perudo_ssh.ratings.leaderboard` (best first, equal ratings by name); games and wins count
every stored game (`Store.game_counts`). Read in a worker. A guest is told to sign in with a
key. Text in the session's language (`app.tr`); `retranslate` redraws it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from perudo_ssh.i18n import N_, Translator
from perudo_ssh.ratings import leaderboard
from perudo_ssh.records import is_level_account
from screens.footer import Footer
from screens.mounting import composed
from screens.profile import ProfileScreen
from screens.stored import GUEST, cut, rating_of_row, store_and_account
from screens.widgets import app_tr

if TYPE_CHECKING:
    from perudo_ssh.records import Records

log = logging.getLogger(__name__)

TOP = 100
"""Players listed."""
NAME_WIDTH = 24
COLUMN_KEYS = ("rank", "name", "rating", "games", "wins")


@dataclass(frozen=True, slots=True)
class Leader:
    """One line of the leaderboard: `rank` from 1, the account's `id` and `name`, its shown
    `rating` (points), its `games` and `wins`."""

    rank: int
    id: int
    name: str
    rating: int
    games: int
    wins: int | None
    """None for a level of the built-in bots, whose seats are nobody's in the stored games:
    its `games` are its rated games (issue 14)."""


async def read_leaders(store: Records, top: int = TOP, bots: bool = False) -> list[Leader]:
    """The `top` best rated accounts of people (`bots` True: of bot accounts), best first."""
    current = [(a, row) for a, row in await store.current_ratings() if a.bot == bots]
    ids = {account.name: account.id for account, _ in current}
    board = leaderboard((account.name, rating_of_row(row)) for account, row in current)[:top]
    levels = {account.id for account, _ in current if is_level_account(account)}
    counts = await store.game_counts([ids[name] for name, _ in board])
    rated = await store.rated_games(sorted(levels))
    leaders = []
    for rank, (name, points) in enumerate(board, start=1):
        games, wins = counts[ids[name]]
        if ids[name] in levels:
            leaders.append(Leader(rank, ids[name], name, round(points), rated[ids[name]], None))
        else:
            leaders.append(Leader(rank, ids[name], name, round(points), games, wins))
    return leaders


def column_labels(tr: Translator) -> tuple[str, ...]:
    """The headings of the leaderboard, in `COLUMN_KEYS` order."""
    return (
        "#",
        tr.p_("leaderboard column", "Player"),
        tr.p_("leaderboard column", "Rating"),
        tr.p_("leaderboard column", "Games"),
        tr.p_("leaderboard column", "Wins"),
    )


def leader_row(leader: Leader) -> tuple[str | Text, ...]:
    """The cells of one line, in `COLUMN_KEYS` order (the name as plain text, never markup)."""
    return (
        str(leader.rank),
        Text(cut(leader.name, NAME_WIDTH)),
        str(leader.rating),
        str(leader.games),
        "–" if leader.wins is None else str(leader.wins),
    )


class LeaderboardScreen(Screen[None]):
    """The best players; Enter (or p) opens the chosen one's profile, Esc goes back."""

    BINDINGS = [
        Binding("p", "profile", N_("Profile"), key_display="p/⏎"),
        Binding("b", "bots", N_("People / bots")),
        Binding("escape,q,l", "close", N_("Back"), key_display="esc"),
        Binding("f2", "app.language", N_("Language"), key_display="F2"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.leaders: list[Leader] | None = None
        self._failed = False
        self.bots = False
        """Listing bot accounts (`b`), not people."""

    @property
    def tr(self) -> Translator:
        """The app's translator (English outside a `PerudoApp`)."""
        return app_tr(self)

    def _title(self) -> str:
        tr = self.tr
        return tr._("Leaderboard of bot accounts") if self.bots else tr._("Leaderboard")

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="leaders-title", classes="screen-title")
        grid: DataTable[str | Text] = DataTable(id="leaders", cursor_type="row", zebra_stripes=True)
        for key, label in zip(COLUMN_KEYS, column_labels(self.tr), strict=True):
            grid.add_column(label, key=key)
        yield grid
        yield Static(self._hint(), id="leaders-hint", classes="screen-hint", markup=False)
        yield Footer()

    def _hint(self) -> str:
        tr = self.tr
        if store_and_account(self.app) is None:
            return tr._(GUEST)
        if self._failed:
            return tr._("The leaderboard could not be read just now.")
        if self.leaders is None:
            return tr._("Reading the leaderboard…")
        if not self.leaders:
            if self.bots:
                return tr._(
                    "No bot account is rated yet: rated games between two bot accounts count. "
                    "b: people."
                )
            return tr._("Nobody is rated yet: rated games between two players with keys count.")
        if self.bots:
            return tr._(
                "Programs playing through the bot API, rated among themselves, and the "
                "built-in bots by level, rated against everyone at rated tables. b: people."
            )
        return tr._(
            "Rating: a conservative estimate of skill; a newcomer starts at 1000. "
            "Enter: the player's profile."
        )

    def on_mount(self) -> None:
        if not composed(self):
            return
        if store_and_account(self.app) is None:
            self.query_one("#leaders", DataTable).display = False
            return
        self.run_worker(self._load(), exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        mine = store_and_account(self.app)
        assert mine is not None
        try:
            self.leaders = await read_leaders(mine[0], bots=self.bots)
        except Exception:
            log.exception("could not read the leaderboard")
            self._failed = True
        if composed(self):
            self._fill(self.query_one("#leaders", DataTable))
            self.query_one("#leaders-hint", Static).update(self._hint())

    def _fill(self, grid: DataTable) -> None:
        for leader in self.leaders or ():
            grid.add_row(*leader_row(leader), key=str(leader.id))
        mine = store_and_account(self.app)
        if mine is not None and self.leaders:  # start on your own line when you are listed
            for i, leader in enumerate(self.leaders):
                if leader.id == mine[1].id:
                    grid.move_cursor(row=i)

    def retranslate(self) -> None:
        """Redraw every text in the app's (new) language."""
        if not composed(self):
            return
        self.query_one("#leaders-title", Static).update(self._title())
        self.query_one("#leaders-hint", Static).update(self._hint())
        grid = self.query_one("#leaders", DataTable)
        cursor = grid.cursor_coordinate
        grid.clear(columns=True)
        for key, label in zip(COLUMN_KEYS, column_labels(self.tr), strict=True):
            grid.add_column(label, key=key)
        for leader in self.leaders or ():
            grid.add_row(*leader_row(leader), key=str(leader.id))
        grid.cursor_coordinate = cursor

    def chosen(self) -> int | None:
        """The account id on the cursor's line, or None."""
        grid = self.query_one("#leaders", DataTable)
        if not grid.display or grid.row_count == 0:
            return None
        key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        return int(key) if key is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_profile()

    def action_profile(self) -> None:
        account_id = self.chosen()
        if account_id is not None:
            self.app.push_screen(ProfileScreen(account_id))

    def action_bots(self) -> None:
        """`b`: the bot accounts' list, or the people's again (issue 14)."""
        if store_and_account(self.app) is None:
            return
        self.bots = not self.bots
        self.leaders = None
        self._failed = False
        if composed(self):
            self.query_one("#leaders", DataTable).clear()
            self.query_one("#leaders-title", Static).update(self._title())
            self.query_one("#leaders-hint", Static).update(self._hint())
        self.run_worker(self._load(), exclusive=True, exit_on_error=False)

    def action_close(self) -> None:
        self.dismiss(None)
