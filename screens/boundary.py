"""The lobby/UI boundary of one session's app (STYLE.md item 6): `LobbyBoundary`, the base
of `screens.app.PerudoApp`.

A worker turns each lobby event into a `LobbyEventArrived` message, `on_lobby_event_arrived`
routes it to the screens (one `match` over `protocol.Event`), and `send` is the one place a
UI intention becomes a lobby command. It is apart from the app's module because what each
event does to the screens is one concern, and the app's lifecycle, language, panels and
turn alerts are others; the state the events bring (the lobby, the table, the notes, who
this session is) is kept here, where they arrive.

The lobby's `Notice`, `Refused` and `Goodbye` carry English message ids with their args and
are translated here, in the session's language (`tr`, set by the app).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import msgspec
from textual.app import App
from textual.notifications import Notification

from perudo_ssh import protocol
from perudo_ssh.i18n import N_, Terms, Translator
from screens.admin import AdminScreen
from screens.chat import ChatLogs, chat_arrived
from screens.dialogs import ConfirmDialog
from screens.lobby import LobbyScreen
from screens.messages import LobbyEventArrived, Send
from screens.refusals import refusal_text, say
from screens.table import TableScreen
from screens.wording import marked

if TYPE_CHECKING:
    from perudo_ssh.session import LobbySession

log = logging.getLogger(__name__)

LOST = N_("The connection to the lobby was lost.")
REFUSAL_SECONDS = 3.5
"""How long a refusal stays on screen: long enough to read, short enough not to cover play."""
ARRIVAL_SECONDS = 12.0
"""How long the notice on arrival (a name taken, a guest) stays on screen."""
ANNOUNCEMENT_SECONDS = 15.0
"""How long an admin's announcement stays on screen."""


class LobbyBoundary(App[str | None]):
    """The app's side of the lobby session `session`: its events in, its commands out.

    Holds what the lobby said last (`lobby`, `table`, `notes`), who this session is
    (`player_name`, `admin`), the chats read (`chat`) and, once the lobby ended the session,
    `farewell`. `tr` is the session's translator, set by the app (`PerudoApp`)."""

    tr: Translator

    def __init__(self, session: LobbySession) -> None:
        super().__init__()
        self.session = session
        self.player_name: str = session.name
        self.lobby: protocol.LobbyState | None = None
        self.table: protocol.TableState | None = None
        self.notes: protocol.ServerNotes | None = None
        """The server's name and message of the day, once the lobby said them (issue 15)."""
        self._lobby_pending = False
        self.chat = ChatLogs()
        """The chat lines read so far, in the lobby and at the table (screens/chat.py)."""
        self.admin = False
        """Whether the lobby said this session is an admin's (`Welcome.admin`): the admin
        screen is offered then. The lobby refuses admin commands from anyone else anyway."""
        self.farewell: str | None = None
        """Why the lobby ended the session (its `Goodbye`, translated), once it has."""
        self._kept_notices: set[tuple[str, str]] = set()  # people's words: see notify_words

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

    def send(self, command: protocol.Command) -> None:
        """Hand `command` to the lobby (never blocks)."""
        self.session.send(command)

    def on_send(self, message: Send) -> None:
        message.stop()
        self.send(message.command)

    def on_lobby_event_arrived(self, message: LobbyEventArrived) -> None:
        message.stop()
        match message.event:
            case protocol.Welcome(name=name, admin=admin):
                self.player_name = name
                self._lobby_screen().show_welcome(name)
                if admin and not self.admin:
                    self.admin = True
                    self.screen.refresh_bindings()
                    self.notify(self.tr._("You are an admin: A opens the admin screen."))
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
            case protocol.Refused(code=code, message=text, args=args):
                self._notify_refusal(refusal_text(self.tr, code, text, args, self.terms()))
            case protocol.Notice(text=protocol.SAVE_PAUSED, args=args):
                # the table as last saved, held: its banner says so until it is sent afresh
                if self.table is not None:
                    self.table = msgspec.structs.replace(self.table, unsaved=True, clock=None)
                    self._table_screen().show(self.table)
                self.notify(
                    say(self.tr, protocol.SAVE_PAUSED, args),
                    severity="error",
                    markup=False,
                    timeout=ARRIVAL_SECONDS,
                )
            case protocol.Notice(text=text, args=args):
                self.notify(say(self.tr, text, args), markup=False)
            case protocol.ChatLine() | protocol.ChatHistory() as chat:
                chat_arrived(self, chat)
            case protocol.AdminState() as state:
                for screen in self.screen_stack:
                    if isinstance(screen, AdminScreen):
                        screen.show(state)
            case protocol.ServerNotes() as notes:
                self.notes = notes
                self._lobby_screen().show_notes(notes)
                if notes.changed and notes.motd:
                    # changed while this player is here: said once, wherever they are
                    self.notify_words(
                        notes.motd,
                        title=self.tr._("Message of the day"),
                        timeout=ANNOUNCEMENT_SECONDS,
                    )
            case protocol.Announcement(text=text, by=by):
                self.notify_words(
                    text,
                    title=self.tr._("Announcement from {name}", name=by),
                    timeout=ANNOUNCEMENT_SECONDS,
                )
            case protocol.Challenged() as challenge:
                self._challenged(challenge)
            case protocol.LeftTable():
                self.table = None
                self.chat.table.clear()
                while len(self.screen_stack) > 1:
                    self.pop_screen()
            case protocol.Goodbye(reason=reason, args=args):
                self.farewell = say(self.tr, reason, args)
                self.notify(
                    self.farewell,
                    title=self.tr._("Goodbye"),
                    severity="error",
                    markup=False,
                )
                self.set_timer(1.5, lambda: self.exit(reason))

    def _challenged(self, challenge: protocol.Challenged) -> None:
        """Someone challenges this player (issue 13): in the lobby, a y/n question (yes joins
        the private table, no tells them); at a table, a notice with the invite code."""
        if self.table is not None or len(self.screen_stack) > 1:
            self.notify(
                self.tr._(
                    "{name} challenges you to a game of {preset}: in the lobby, press e and "
                    "type {code}.",
                    name=marked(challenge.by, challenge.bot_account),
                    preset=challenge.preset,
                    code=challenge.code,
                ),
                markup=False,
                timeout=ARRIVAL_SECONDS,
            )
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.send(protocol.JoinPrivate(code=challenge.code))
            else:
                self.send(protocol.DeclineChallenge(code=challenge.code))

        def question(tr: Translator) -> str:
            return tr._(
                "{name} challenges you to a game of {preset}. Play?",
                name=marked(challenge.by, challenge.bot_account),
                preset=challenge.preset,
            )

        self.push_screen(ConfirmDialog(question), answered)

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

    def terms(self) -> Terms:
        """The game's words in this session's language, as the current table plays them
        (the classic words in the lobby)."""
        options = None
        if self.table is not None:
            game = self.table.game
            options = self.table.options or (game.options if game is not None else None)
        return self.tr.terms(options)

    def _notify_refusal(self, text: str) -> None:
        """Show a refusal for `REFUSAL_SECONDS`, unless the same one is still on screen: a
        key pressed again and again (Enter, d) out of turn is told once, not a stack of the
        same notice over the table. Added at once (as Textual's `Notify` handler adds it),
        so that a burst of refusals already queued finds the first one shown."""
        title = self.tr._("Refused")
        if any(n.message == text and n.title == title for n in self._notifications):
            return
        self._notifications.add(Notification(text, title, "warning", REFUSAL_SECONDS, markup=False))
        self._refresh_notifications()

    def notify_words(self, message: str, *, title: str, timeout: float) -> None:
        """Notify people's own words (a chat line, an announcement), as plain text: kept
        when the language changes, unlike what the server says (`PerudoApp.set_language`)."""
        self._kept_notices.add((message, title))
        self.notify(message, title=title, markup=False, timeout=timeout)
