"""The game-over dialog: the finishing order (with final balances and the bank the winner
took at a table with stakes, RULES.md §6), then play again or back to the lobby."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from perudo_ssh import protocol
from perudo_ssh.i18n import N_, Translator
from screens.cheaper import PartialBackground
from screens.footer import Footer
from screens.messages import Send
from screens.mounting import composed
from screens.tableview import game_over_line, seat_names
from screens.widgets import app_tr
from screens.wording import finishing_order


def rating_change(change: protocol.RatingChange) -> str:
    """`1000 → 1014 (+14)`, `1014 → 1005 (−9)`, `1000 → 1000 (±0)`: a rating before and
    after a game, in points (issue 13)."""
    delta = change.after - change.before
    sign = "+" if delta > 0 else "−" if delta < 0 else "±"
    return f"{change.before} → {change.after} ({sign}{abs(delta)})"


def order_lines(tr: Translator, table: protocol.TableState) -> list[str]:
    """`1. ana (you)   ¤26`, winner first, each final balance at a table with stakes; then
    `ana took the bank: ¤37` (RULES.md §2.6, §6). Once the game is rated, each account
    holder's rating before and after it: `1. ana (you)   1000 → 1014 (+14)` (issue 13)."""
    game = table.game
    if game is None:
        return []
    names = seat_names(tr, table)
    changes = {change.name: change for change in table.rating_changes}
    order = finishing_order(game)
    whos = []
    for seat in order:
        bot = seat < len(table.seats) and table.seats[seat].bot
        if seat == game.me:
            whos.append(tr._("{name} (you)", name=names[seat]))
        elif bot:
            whos.append(tr._("{name} (bot)", name=names[seat]))
        else:
            whos.append(names[seat])
    width = max(map(len, whos)) if changes else 0  # the ratings in a column
    lines = []
    for place, (seat, who) in enumerate(zip(order, whos, strict=True), start=1):
        tokens = f"   ¤{game.tokens.balances[seat]}" if game.tokens is not None else ""
        change = changes.get(names[seat])
        rating = f"   {rating_change(change)}" if change is not None else ""
        lines.append(f"{place:>2}. {who:<{width}}{tokens}{rating}".rstrip())
    last = game.last
    if game.winner is not None and last is not None and last.bank_won:
        name = tr._("you") if game.winner == game.me else names[game.winner]
        lines.append("")
        lines.append(tr._("{name} took the bank: ¤{bank}", name=name, bank=last.bank_won))
    return lines


class GameOverScreen(PartialBackground, ModalScreen[None]):
    """Shown over the table once the game has a winner; closed when a new game begins."""

    BINDINGS = [
        Binding("a", "play_again", N_("Play again")),
        Binding("l,escape", "leave", N_("Back to lobby"), key_display="l"),
        Binding("question_mark", "app.help", N_("Help"), key_display="?"),
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

    def retranslate(self) -> None:
        """Redraw in the app's new language."""
        if self._live and self._table is not None:
            self._draw(self._table)

    def _draw(self, table: protocol.TableState) -> None:
        game = table.game
        if game is None:
            return
        tr = app_tr(self)
        self.query_one("#over-title", Static).update(Content(game_over_line(tr, table, game)))
        self.query_one("#over-order", Static).update(Content("\n".join(order_lines(tr, table))))
        again = ", ".join(table.play_again)
        self.query_one("#over-again", Static).update(
            Content(tr._("Ready to play again: {names}", names=again) if again else "")
        )
        # a spectator has no seat to play again in: only the way out is offered
        hint = tr._("l: back to the lobby")
        if table.me is not None:
            hint = tr._("a: play again") + " · " + hint
        self.query_one("#over-hint", Static).update(Content(hint))
        if self._seated != (table.me is not None):
            self._seated = table.me is not None
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "play_again":
            return self._table is not None and self._table.me is not None
        return True

    def action_play_again(self) -> None:
        self.post_message(Send(protocol.PlayAgain()))
        self.notify(
            app_tr(self)._("Waiting for the others to play again…"), markup=False, timeout=4
        )

    def action_leave(self) -> None:
        self.post_message(Send(protocol.LeaveTable()))
