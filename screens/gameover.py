"""The game-over dialog: the finishing order, then play again or back to the lobby."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from perudo_ssh import protocol
from screens.messages import Send
from screens.mounting import composed
from screens.tableview import game_over_line, seat_names
from screens.wording import finishing_order


class GameOverScreen(ModalScreen[None]):
    """Shown over the table once the game has a winner; closed when a new game begins."""

    BINDINGS = [
        Binding("a", "play_again", "Play again"),
        Binding("l,escape", "leave", "Back to lobby", key_display="l"),
        Binding("question_mark", "app.help", "Help", key_display="?"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._live = False
        self._table: protocol.TableState | None = None
        self._seated = False

    def compose(self) -> ComposeResult:
        with Vertical(id="over-box", classes="dialog"):
            yield Static(id="over-title", classes="dialog-title")
            yield Static(id="over-order")
            yield Static(id="over-again")
            yield Static(id="over-hint", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        if not composed(self):  # closed while opening: nothing to draw on
            return
        self._live = True  # composed: from now on, draw at once
        if self._table is not None:
            self._draw(self._table)

    def show(self, table: protocol.TableState) -> None:
        """Draw the finishing order of `table`'s game, winner first, and what may come next."""
        self._table = table
        if self._live:
            self._draw(table)

    def _draw(self, table: protocol.TableState) -> None:
        game = table.game
        if game is None:
            return
        names = seat_names(table)
        self.query_one("#over-title", Static).update(Content(game_over_line(table, game)))
        lines = []
        for place, seat in enumerate(finishing_order(game), start=1):
            tokens = f"   ¤{game.tokens.balances[seat]}" if game.tokens is not None else ""
            bot = seat < len(table.seats) and table.seats[seat].bot
            you = " (you)" if seat == game.me else " (bot)" if bot else ""
            lines.append(f"{place:>2}. {names[seat]}{you}{tokens}")
        self.query_one("#over-order", Static).update(Content("\n".join(lines)))
        again = ", ".join(table.play_again)
        self.query_one("#over-again", Static).update(
            Content(f"Ready to play again: {again}" if again else "")
        )
        # a spectator has no seat to play again in: only the way out is offered
        again = "a: play again · " if table.me is not None else ""
        self.query_one("#over-hint", Static).update(f"{again}l: back to the lobby")
        if self._seated != (table.me is not None):
            self._seated = table.me is not None
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "play_again":
            return self._table is not None and self._table.me is not None
        return True

    def action_play_again(self) -> None:
        self.post_message(Send(protocol.PlayAgain()))
        self.notify("Waiting for the others to play again…", markup=False, timeout=4)

    def action_leave(self) -> None:
        self.post_message(Send(protocol.LeaveTable()))
