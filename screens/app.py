"""The Textual app of one SSH connection, attached to one lobby session.

This module is the lobby/UI boundary (STYLE.md item 6): a worker turns each lobby event into
a `LobbyEventArrived` message, `on_lobby_event_arrived` routes it to the screens, and
`send` is the one place a UI intention becomes a lobby command. Nothing here may act on the
server machine (TEXTUAL-OVER-SSH.md trap 6): no command palette, URLs, screenshots or
suspend.

Every text is in the session's language (`tr`, a `perudo_ssh.i18n.Translator`): the lobby's
`Notice`, `Refused` and `Goodbye` carry English message ids with their args and are translated
here; F2 switches language at any time (`action_language`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import msgspec
from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer

from perudo_ssh import protocol
from perudo_ssh.i18n import LANGUAGE_NAMES, LANGUAGES, N_, Terms, Translator, next_language
from perudo_ssh.i18n import translator as translator_for
from perudo_ssh.logs import log_event
from screens.admin import AdminScreen
from screens.chat import ChatLogs, chat_arrived
from screens.cheaper import KeptPanel
from screens.dialogs import ConfirmDialog
from screens.help import HelpScreen
from screens.keys import KeysOnTheirWay
from screens.lobby import LobbyScreen
from screens.messages import LobbyEventArrived, Send
from screens.notices import DrawnNotices
from screens.refusals import refusal_text, say
from screens.rules import RulesScreen, table_settings
from screens.table import TableScreen
from screens.wording import marked

if TYPE_CHECKING:
    from perudo_ssh.limits import Limits
    from perudo_ssh.records import Account, Records
    from perudo_ssh.session import LobbySession

log = logging.getLogger(__name__)

LOST = N_("The connection to the lobby was lost.")
REFUSAL_SECONDS = 3.5
"""How long a refusal stays on screen: long enough to read, short enough not to cover play."""
ARRIVAL_SECONDS = 12.0
"""How long the notice on arrival (a name taken, a guest) stays on screen."""
ANNOUNCEMENT_SECONDS = 15.0
"""How long an admin's announcement stays on screen."""
IDLE_CHECK_SECONDS = 10.0
"""How often the lobby idle timeout is looked at (so it ends a session up to this late)."""
IDLE = "idle in the lobby"
"""The app's return value when the lobby idle timeout ended it (never shown: `farewell` is)."""


def idle_farewell(tr: Translator, seconds: float) -> str:
    """Why an idle session was ended, in `tr`'s language: idle in the lobby for `seconds`
    (in minutes from a minute on, rounded)."""
    if seconds >= 60:
        minutes = round(seconds / 60)
        return tr.n_(
            "You were idle in the lobby for {n} minute.",
            "You were idle in the lobby for {n} minutes.",
            minutes,
        )
    return tr.n_(
        "You were idle in the lobby for {n} second.",
        "You were idle in the lobby for {n} seconds.",
        round(seconds),
    )


class PerudoApp(KeysOnTheirWay, DrawnNotices, App[str | None]):
    """Perudo for one player: the lobby, the table they sit at or watch, dialogs.

    `language` is one of `perudo_ssh.i18n.LANGUAGES` (anything else reads English); `tr`
    translates into it, for every screen. `return_value` after exit is the Goodbye reason
    (the English message id), if the lobby ended the session, and `farewell` that reason
    translated with its args, which the SSH layer prints once the app has left the terminal
    (`perudo_ssh.ssh.session`).

    `lobby_idle_timeout` (seconds, 0: never; `Limits.lobby_idle_timeout`) ends the session,
    with a farewell saying why, once it has been in the lobby — at no table — that long with
    no key, mouse or paste from the player (`check_lobby_idle`, on `clock`, monotonic seconds)."""

    PANEL_KEPT = 10.0
    """Seconds a closed help or rules panel is kept to open again (`open_panel`): one opened
    once costs its ~0.6 MB only these seconds after it closes."""

    CSS_PATH = "perudo.tcss"
    TITLE = "perudo-ssh"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("question_mark", "help", N_("Help"), key_display="?"),
        # shown by the lobby's footer only: the table's footer has no room to spare
        Binding("f2", "language", N_("Language"), key_display="F2", show=False),
        # the rules panel, for every player and spectator (RULES.md §7); listed in the help
        Binding("i", "rules", N_("Rules"), show=False),
        # the admin screen: offered to admins only (`check_action`); the lobby checks again
        Binding("A,ctrl+a", "admin", N_("Admin"), key_display="A", show=False),
    ]

    def __init__(
        self,
        session: LobbySession,
        language: str = "en",
        *,
        lobby_idle_timeout: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.lobby_idle_timeout = lobby_idle_timeout
        self.clock = clock
        self.last_input = clock()
        """When the player last pressed a key, used the mouse or pasted (`clock` seconds);
        time at a table counts as input too."""
        self.language = language if language in LANGUAGES else "en"
        self.tr: Translator = translator_for(self.language)
        self.session = session
        self.player_name: str = session.name
        self.lobby: protocol.LobbyState | None = None
        self.table: protocol.TableState | None = None
        self.notes: protocol.ServerNotes | None = None
        """The server's name and message of the day, once the lobby said them (issue 15)."""
        self._lobby_pending = False
        self._panels: dict[type[KeptPanel], KeptPanel] = {}
        self._panel_timers: dict[type[KeptPanel], Timer] = {}
        # Set by the server's app factory (perudo_ssh/serve.py) for a session with a store:
        self.store: Records | None = None
        """The server's store (`perudo_ssh.store`); screens await it in workers."""
        self.account: Account | None = None
        """The account this session's key signs in as; None for a guest."""
        self.arrival_notice: tuple[str, dict[str, str | int]] | None = None
        """Told once the app starts (`Login.notice`): an `N_` message id and its args."""
        self.chat = ChatLogs()
        """The chat lines read so far, in the lobby and at the table (screens/chat.py)."""
        self.admin = False
        """Whether the lobby said this session is an admin's (`Welcome.admin`): the admin
        screen is offered then. The lobby refuses admin commands from anyone else anyway."""
        self.farewell: str | None = None
        self._kept_notices: set[tuple[str, str]] = set()  # people's words: see notify_words
        """Why the lobby ended the session (its `Goodbye`, translated), once it has."""
        self.quick_choice: tuple[str | None, int] = (None, 30)
        """The quick-play dialog's last preset (None: any) and wait in seconds (issue 13)."""
        self.turn_bell = True
        """Whether the terminal rings and its title says so when it becomes this player's
        turn while they are elsewhere (`turn_alert`); the account dialog's `b`, kept with an
        account (`Store.turn_bell`)."""
        self._turn_title = False  # the terminal's title says "your turn" (pushed)

    # ---- lifecycle -----------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        return LobbyScreen()

    def on_mount(self) -> None:
        if self.lobby_idle_timeout > 0:
            every = min(IDLE_CHECK_SECONDS, self.lobby_idle_timeout)
            self.set_interval(every, self.check_lobby_idle)
        self.run_worker(self._receive(), name="lobby-events", exit_on_error=False)
        if self.store is not None and self.account is not None:
            self.run_worker(self._read_turn_bell(), name="turn-bell", exit_on_error=False)
        if self.arrival_notice is not None:
            text, args = self.arrival_notice
            self.notify(say(self.tr, text, args), markup=False, timeout=ARRIVAL_SECONDS)

    def on_unmount(self) -> None:
        self.detach()

    # ---- your turn, when you are elsewhere (issue 13) ------------------------------------

    async def _read_turn_bell(self) -> None:
        """The account's `turn_bell` choice (the store works in its own thread)."""
        assert self.store is not None and self.account is not None
        try:
            self.turn_bell = await self.store.turn_bell(self.account.id)
        except Exception:
            log.exception("could not read the turn bell of account %s", self.account.id)

    def set_turn_bell(self, on: bool) -> None:
        """Turn the bell and title on your turn on or off; kept with the account (a guest's
        choice lasts the session)."""
        self.turn_bell = on
        if not on:
            self.turn_alert(False)
        store, account = self.store, self.account
        if store is not None and account is not None:

            async def keep() -> None:
                try:
                    await store.set_turn_bell(account.id, on)
                except Exception:
                    log.exception("could not keep the turn bell of account %s", account.id)

            self.run_worker(keep(), name="turn-bell", exit_on_error=False)

    def turn_alert(self, on: bool) -> None:
        """`on`: it has just become your turn while you are elsewhere (the rules, the help,
        the table chat): the terminal rings (BEL) and its title says "Your turn ·
        perudo-ssh" (the terminal's own title pushed first: xterm's window ops, which
        terminals without them ignore) - unless `turn_bell` is off. `off`: the title is
        the terminal's own again. Idempotent."""
        if on and not self.turn_bell:
            return
        if on == self._turn_title:
            return
        self._turn_title = on
        driver = self._driver
        if on:
            self.bell()
            title = self.tr._("Your turn · perudo-ssh")
            text = f"\x1b[22;0t\x1b]2;{title}\x07"  # push the title, then set it
        else:
            text = "\x1b[23;0t"  # pop: the title the terminal had
        if driver is not None:
            driver.write(text)

    def detach(self) -> None:
        """Leave the lobby (close the lobby session; a seat then follows the disconnect
        rules); idempotent. Called when the app unmounts, and by the SSH layer once the
        app's task has ended however it ended (`perudo_ssh.ssh.session`): a task cancelled
        after its client left never unmounts, and would leave a ghost in the lobby."""
        self.session.close()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent | events.Paste) and not event.is_forwarded:
            self.last_input = self.clock()
        await super().on_event(event)

    def check_lobby_idle(self) -> bool:
        """End the session if it has been idle in the lobby for `lobby_idle_timeout`
        seconds: `farewell` says so and the app exits with `IDLE`. Time at a table (playing
        or watching) is not idle, nor is an admin's time on the admin screen. Returns whether
        it ended the session."""
        timeout = self.lobby_idle_timeout
        if timeout <= 0 or self.farewell is not None:  # off, or already leaving
            return False
        now = self.clock()
        if self.table is not None or isinstance(self.screen, AdminScreen):
            self.last_input = now  # at a table, or an admin watching the server
            return False
        if now - self.last_input < timeout:
            return False
        self.farewell = idle_farewell(self.tr, timeout)
        log_event(log, "lobby_idle", name=self.player_name, seconds=timeout)
        self.exit(IDLE)
        return True

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
                self.notify(
                    refusal_text(self.tr, code, text, args, self.terms()),
                    title=self.tr._("Refused"),
                    severity="warning",
                    markup=False,
                    timeout=REFUSAL_SECONDS,
                )
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

    # ---- language ------------------------------------------------------------------------

    def set_language(self, language: str) -> None:
        """Read everything in `language` (one of `LANGUAGES`) from now on: the notifications
        in the old language are cleared (those of `notify_words` stay), every screen in the
        stack that has `retranslate()` redraws its text, every footer its key labels, and a
        notice in the new language says which it is."""
        self.language = language if language in LANGUAGES else "en"
        self.tr = translator_for(self.language)
        # what the server said in the old language goes (a refusal, a notice: issue 13);
        # people's own words stay (`notify_words`)
        for notification in list(self._notifications):
            if (notification.message, notification.title) not in self._kept_notices:
                self._unnotify(notification, refresh=False)
        self._kept_notices &= {(n.message, n.title) for n in self._notifications}
        self._refresh_notifications()
        for screen in self.screen_stack:
            retranslate = getattr(screen, "retranslate", None)
            if retranslate is not None:
                retranslate()
            screen.refresh_bindings()
        self.notify(
            self.tr._("Language: {language}", language=LANGUAGE_NAMES[self.language]),
            markup=False,
        )

    def notify_words(self, message: str, *, title: str, timeout: float) -> None:
        """Notify people's own words (a chat line, an announcement), as plain text: kept
        when the language changes, unlike what the server says (`set_language`)."""
        self._kept_notices.add((message, title))
        self.notify(message, title=title, markup=False, timeout=timeout)

    def action_language(self) -> None:
        """The language key: English, French, Russian, and round again."""
        self.set_language(next_language(self.language))

    # ---- actions -------------------------------------------------------------------------

    def _toggle_panel(self, panel: type[Screen]) -> bool:
        """Close `panel` if it is on top, or go back to it if it is already open beneath
        (help and rules open each other): True when done, False to open a new one. So
        `i ? i ? …` never piles up more than the two panels."""
        if isinstance(self.screen, panel):
            self.screen.dismiss()
            return True
        if any(isinstance(screen, panel) for screen in self.screen_stack):
            while not isinstance(self.screen, panel):
                self.pop_screen()
            return True
        return False

    def action_help(self) -> None:
        if self._toggle_panel(HelpScreen):
            return
        options = None
        if self.table is not None and self.table.game is not None:
            options = self.table.game.options
        if self.table is not None and self.table.options is not None:  # before a game too
            options = self.table.options
        self.open_panel(HelpScreen, options, table_settings(self.table))

    def action_rules(self) -> None:
        """The rules panel (`i`, RULES.md §7): the rules of the table here; in the lobby, of
        the chosen table (the screen's optional `chosen_options() -> Options | None`), else
        the rules in general. `i` again closes it."""
        if self._toggle_panel(RulesScreen):
            return
        options = None
        if self.table is not None:
            game = self.table.game
            options = self.table.options or (game.options if game is not None else None)
        elif (chosen := getattr(self.screen, "chosen_options", None)) is not None:
            options = chosen()
        self.open_panel(RulesScreen, options, "table", table_settings(self.table))

    def open_panel(self, kind: type[KeptPanel], *args: object) -> None:
        """Open a `kind` panel (help, rules) made with `args`: the one kept since the last
        closed, if it `fits` them, showing them, else a new one, kept in its turn once it
        closes (`panel_closed`) for `PANEL_KEPT` seconds (`KeptPanel`, issue 11)."""
        screen = self._panels.get(kind)
        if screen is not None and screen.fits(*args):
            screen.show(*args)
        else:
            self._forget_panel(kind)
            screen = kind(*args)
            if kind not in self._panels:  # else the kept one is in the stack: this one goes
                self._panels[kind] = screen
                self.install_screen(cast(Screen, screen), name=f"kept-{kind.__name__}")
        timer = self._panel_timers.pop(kind, None)
        if timer is not None:
            timer.stop()
        self.push_screen(cast(Screen, screen))

    def panel_closed(self, screen: KeptPanel) -> None:
        """`screen` (a `KeptPanel`) left the top of the stack: forgotten in `PANEL_KEPT`
        seconds unless opened again."""
        kind = type(screen)
        if self._panels.get(kind) is not screen:
            return
        timer = self._panel_timers.pop(kind, None)
        if timer is not None:
            timer.stop()
        self._panel_timers[kind] = self.set_timer(self.PANEL_KEPT, lambda: self._forget_panel(kind))

    def _forget_panel(self, kind: type[KeptPanel]) -> None:
        """Remove the kept `kind` panel, unless it is in the stack (help under the rules):
        it is kept again once it leaves the top."""
        self._panel_timers.pop(kind, None)
        screen = cast(Screen | None, self._panels.get(kind))
        if screen is None or screen in self.screen_stack:
            return
        del self._panels[kind]
        self.uninstall_screen(screen)
        screen.remove()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The admin key is there for admins only (hidden and inert for anyone else)."""
        if action == "admin":
            return self.admin
        return True

    def action_admin(self) -> None:
        """The admin screen (admins only), or back from it."""
        if not self.admin:
            return
        if isinstance(self.screen, AdminScreen):
            self.screen.dismiss(None)
            return
        self.push_screen(AdminScreen())

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


def make_app(
    session: LobbySession, language: str = "en", limits: Limits | None = None
) -> PerudoApp:
    """The app for one connection, attached to `session` (closed when the app ends), in
    `language` (see `perudo_ssh.i18n.language_of` for a client's LANG), ending itself after
    `limits.lobby_idle_timeout` idle in the lobby (never without `limits`)."""
    idle = limits.lobby_idle_timeout if limits is not None else 0.0
    return PerudoApp(session, language, lobby_idle_timeout=idle)
