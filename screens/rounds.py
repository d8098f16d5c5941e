"""What a table screen does as rounds end and begin (RULES.md §2, §4): the reveal of each
round's call, the calzone question to the player who just dropped to one die, and the
game-over dialog. `TableScreen` (screens/table.py) is this screen plus the table itself.
"""

from __future__ import annotations

from textual.screen import Screen

from perudo_ssh import protocol
from perudo_ssh.i18n import Terms, Translator
from perudo_ssh.rules import GameView
from screens import tableview
from screens.calzone import CalzoneDialog
from screens.gameover import GameOverScreen
from screens.messages import Send
from screens.reveal import RevealPanel
from screens.widgets import app_tr


class RoundsScreen(Screen[None]):
    """A screen following one table's rounds: `_table` is the newest `TableState`; the
    subclass draws the table (`_draw_composer`, `_refresh_keys`) and composes a
    `RevealPanel`."""

    def __init__(self) -> None:
        super().__init__()
        self._table: protocol.TableState | None = None
        self._seen_round: int | None = None
        self._revealed: int | None = None
        self._game_over: GameOverScreen | None = None
        self._calzone_asked: int | None = None  # the round whose calzone question was asked
        self._calzone_dialog: CalzoneDialog | None = None

    @property
    def game(self) -> GameView | None:
        """This player's view of the game at the table, or None before the first game."""
        return None if self._table is None else self._table.game

    @property
    def tr(self) -> Translator:
        """The session's translator (`PerudoApp.tr`)."""
        return app_tr(self)

    @property
    def terms(self) -> Terms:
        """The game's words at this table in the session's language."""
        game = self.game
        return self.tr.terms(game.options if game is not None else None)

    MODES: dict[str, tuple[str, ...]] = {}
    """The screen's mode classes ("-reveal" and the subclass's own) and, for each, the
    selectors of the nodes the stylesheet's rules for that class style (the subclass lists
    them: `TableScreen.MODES`)."""

    def set_mode(self, on: bool, mode: str) -> None:
        """Add (`on`) or remove the mode class `mode` (a key of `MODES`) and restyle only the
        screen and the nodes `MODES[mode]` names, not every node of the screen (issue 10:
        a screen class toggled each round restyled the whole table screen, ~6 ms at 80x24).
        A test checks that every node's styles then equal a whole restyle's, for each mode
        on and off, so a rule added for a mode without its selector here fails it."""
        if self.has_class(mode) == on:
            return
        self.set_class(on, mode, update=False)
        nodes = [self, *(node for selector in self.MODES[mode] for node in self.query(selector))]
        self.app.stylesheet.update_nodes(nodes, animate=False)

    def _draw_composer(self) -> None:
        """Redraw the bid composer and the status lines (the subclass draws them)."""

    def _refresh_keys(self) -> None:
        """Redraw the footer if the offered keys changed (the subclass has the keys)."""

    # ---- following rounds: reveal and game over --------------------------------------------

    def _follow_round(self, table: protocol.TableState) -> None:
        """Open the reveal when a round has just ended, and the game-over dialog after the
        last round's reveal; close them when a new game begins."""
        game = table.game
        if game is None or game.last is None:  # no game, or a new one: nothing to reveal
            self._revealed = self._seen_round = None
            self._hide_reveal()
            self._close_game_over()
            return
        fresh = game.phase in ("rolling", "over") or (
            self._seen_round is not None and game.round_index > self._seen_round
        )
        self._seen_round = game.round_index
        if fresh and game.round_index != self._revealed:
            self._revealed = game.round_index
            self._show_reveal(table, game)
            if not self.has_class("-chat"):
                # a player typing at the table's chat keeps the line: the keys they are
                # typing stay its own (taken from it, the pane stayed open and its Escape
                # went to the table's keys); Escape closes it, then the reveal's keys
                self.set_focus(None)
            self.set_mode(True, "-reveal")
            self._draw_composer()
        elif (
            game.phase == "bidding"
            and (game.bids or game.turn == game.me)
            and self.has_class("-reveal")
        ):
            # the next round is already being bid (the reveal timed out, or this viewer
            # is only watching), or waits on this player's opening bid while the turn clock
            # runs: show the table rather than an old round (it stays in `g Rounds`)
            self._hide_reveal()
        elif game.phase == "rolling" and self.has_class("-reveal"):
            self._show_reveal(table, game)  # who the table still waits for (issue 13)
        if game.phase == "over":
            if self._game_over is None and not self.has_class("-reveal"):
                self._game_over = GameOverScreen()
                self.app.push_screen(self._game_over, self._game_over_closed)
            if self._game_over is not None:
                self._game_over.show(table)
        else:
            self._close_game_over()

    def _show_reveal(self, table: protocol.TableState, game: GameView) -> None:
        assert game.last is not None
        names = tableview.seat_names(self.tr, table)
        finished = game.round_index - 1
        automatic = tableview.automatic_call(table, finished)
        waiting = table.waiting_for if game.phase == "rolling" else ()
        self.query_one(RevealPanel).show(
            self.tr, self.terms, game.last, names, finished, automatic, waiting
        )

    def _hide_reveal(self) -> None:
        if self.has_class("-reveal"):
            self.set_mode(False, "-reveal")
            self._draw_composer()
        self._refresh_keys()

    def _close_reveal(self) -> None:
        """The player has seen the reveal: tell the lobby if it still waits, go on."""
        self._hide_reveal()
        game = self.game
        if game is None or self._revealed is None:
            return
        if game.me is not None and game.phase == "rolling":  # the lobby waits for us
            self.post_message(Send(protocol.Ready(round=self._revealed - 1)))
        if self._table is not None and game.phase == "over":
            self._follow_round(self._table)
        self._ask_calzone()

    def on_reveal_panel_closed(self, event: RevealPanel.Closed) -> None:
        event.stop()
        self._close_reveal()

    # ---- the calzone question (RULES.md §4) ----------------------------------------------------

    def _ask_calzone(self) -> None:
        """Ask the player who just dropped to one die, once per round and before any bid,
        whether to declare a calzone round; close the question once its chance has passed."""
        game = self.game
        offered = game is not None and game.phase == "bidding" and game.choices.calzone
        dialog = self._calzone_dialog
        if dialog is not None and not offered:
            self._calzone_dialog = None
            if self.app.screen is dialog:
                dialog.dismiss(False)
            return
        if (
            not offered
            or game is None
            or self._calzone_asked == game.round_index
            or self.has_class("-reveal")
            or self.app.screen is not self
        ):
            return
        self._calzone_asked = game.round_index

        def answered(yes: bool | None) -> None:
            self._calzone_dialog = None
            current = self.game
            if yes and current is not None and current.choices.calzone:
                self.post_message(Send(protocol.DeclareCalzone()))

        self._calzone_dialog = CalzoneDialog()
        self.app.push_screen(self._calzone_dialog, answered)

    def _game_over_closed(self, _: None) -> None:
        self._game_over = None

    def _close_game_over(self) -> None:
        """A new game began: close the dialogs left over from the last one."""
        if self._game_over is None:
            return
        self._game_over = None
        while self.app.screen is not self and self in self.app.screen_stack:
            self.app.pop_screen()
