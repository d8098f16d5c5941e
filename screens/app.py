"""The Textual app of one SSH connection, attached to one lobby session.

This module is the lobby/UI boundary (STYLE.md item 6): a worker turns each lobby event into
a `LobbyEventArrived` message, `on_lobby_event_arrived` routes it to the screens, and
`send` is the one place a UI intention becomes a lobby command. Nothing here may act on the
server machine (TEXTUAL-OVER-SSH.md trap 6): no command palette, URLs, screenshots or
suspend.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from perudo_ssh import protocol
from screens.help import HelpScreen
from screens.lobby import LobbyScreen
from screens.messages import LobbyEventArrived, Send
from screens.table import TableScreen

if TYPE_CHECKING:
    from perudo_ssh.session import LobbySession

log = logging.getLogger(__name__)

LOST = "The connection to the lobby was lost."
REFUSAL_SECONDS = 3.5
"""How long a refusal stays on screen: long enough to read, short enough not to cover play."""


class PerudoApp(App[str | None]):
    """Perudo for one player: the lobby, the table they sit at or watch, dialogs.

    `return_value` after exit is the Goodbye reason, if the lobby ended the session."""

    CSS_PATH = "perudo.tcss"
    TITLE = "perudo-ssh"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("question_mark", "help", "Help", key_display="?")]

    def __init__(self, session: LobbySession) -> None:
        super().__init__()
        self.session = session
        self.player_name: str = session.name
        self.lobby: protocol.LobbyState | None = None
        self.table: protocol.TableState | None = None
        self._lobby_pending = False

    # ---- lifecycle -----------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        return LobbyScreen()

    def on_mount(self) -> None:
        self.run_worker(self._receive(), name="lobby-events", exit_on_error=False)

    def on_unmount(self) -> None:
        self.session.close()

    async def _receive(self) -> None:
        """Forward every lobby event to the app as a message, until Goodbye."""
        while True:
            try:
                event = await self.session.next_event()
            except Exception:  # the session is gone; tell the player and leave
                log.exception("lobby session failed")
                event = protocol.Goodbye(reason=LOST)
            self.post_message(LobbyEventArrived(event))
            if isinstance(event, protocol.Goodbye):
                return

    # ---- the boundary --------------------------------------------------------------------

    def send(self, command: protocol.Command) -> None:
        """Hand `command` to the lobby (never blocks)."""
        self.session.send(command)

    def on_send(self, message: Send) -> None:
        message.stop()
        self.send(message.command)

    def on_lobby_event_arrived(self, message: LobbyEventArrived) -> None:
        message.stop()
        match message.event:
            case protocol.Welcome(name=name):
                self.player_name = name
                self._lobby_screen().show_welcome(name)
            case protocol.LobbyState() as lobby:
                # A burst of lobby states already queued is drawn once, with the last one.
                self.lobby = lobby
                if not self._lobby_pending:
                    self._lobby_pending = True
                    self.call_later(self._show_lobby)
            case protocol.TableState() as table:
                before = self.table
                if before is not None and before.id == table.id and before.status != table.status:
                    # a refusal or "waiting for the others" is about the table as it was: once
                    # the game starts or ends, it would only cover the dice and the bid line
                    self.clear_notifications()
                self.table = table
                self._table_screen().show(table)
            case protocol.Refused(message=text):
                self.notify(
                    text, title="Refused", severity="warning", markup=False, timeout=REFUSAL_SECONDS
                )
            case protocol.Notice(text=text):
                self.notify(text, markup=False)
            case protocol.LeftTable():
                self.table = None
                while len(self.screen_stack) > 1:
                    self.pop_screen()
            case protocol.Goodbye(reason=reason):
                self.notify(reason, title="Goodbye", severity="error", markup=False)
                self.set_timer(1.5, lambda: self.exit(reason))

    def _show_lobby(self) -> None:
        self._lobby_pending = False
        if self.lobby is not None:
            self._lobby_screen().show_lobby(self.lobby)

    def _lobby_screen(self) -> LobbyScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, LobbyScreen)
        return screen

    def _table_screen(self) -> TableScreen:
        for screen in self.screen_stack:
            if isinstance(screen, TableScreen):
                return screen
        while len(self.screen_stack) > 1:  # help or a dialog over the lobby
            self.pop_screen()
        screen = TableScreen()
        self.push_screen(screen)
        return screen

    # ---- actions -------------------------------------------------------------------------

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        options = None
        if self.table is not None and self.table.game is not None:
            options = self.table.game.options
        self.push_screen(HelpScreen(options))

    # ---- nothing may happen on the server's own machine ----------------------------------

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        log.warning("refused to open a URL on the server: %s", url)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        log.warning("refused a screenshot on the server")

    def deliver_text(self, *args: object, **kwargs: object) -> str | None:
        return None

    def deliver_binary(self, *args: object, **kwargs: object) -> str | None:
        return None

    def action_suspend_process(self) -> None:
        log.warning("refused to suspend the server process")


def make_app(session: LobbySession) -> PerudoApp:
    """The app for one connection, attached to `session` (closed when the app ends)."""
    return PerudoApp(session)
