"""The Textual app of one SSH connection, attached to one lobby session.

The app stands on the lobby/UI boundary (STYLE.md item 6), `screens.boundary.LobbyBoundary`:
a worker turns each lobby event into a `LobbyEventArrived` message, `on_lobby_event_arrived`
routes it to the screens, and `send` is the one place a UI intention becomes a lobby command.
This module holds the rest of the session's app: its lifecycle and the lobby idle timeout,
the turn alert, the language, the help and rules panels, the admin screen's key. Nothing here
may act on the server machine (TEXTUAL-OVER-SSH.md trap 6): no command palette, URLs,
screenshots or suspend.

Every text is in the session's language (`tr`, a `perudo_ssh.i18n.Translator`); the lobby's
`Notice`, `Refused` and `Goodbye` carry English message ids with their args, translated by the
boundary; F2 switches language at any time (`action_language`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer

from perudo_ssh.i18n import LANGUAGE_NAMES, LANGUAGES, N_, Translator, next_language
from perudo_ssh.i18n import translator as translator_for
from perudo_ssh.logs import log_event
from screens.admin import AdminScreen
from screens.boundary import ARRIVAL_SECONDS, LobbyBoundary
from screens.cheaper import KeptPanel
from screens.dialogs import ConfirmDialog
from screens.help import HelpScreen
from screens.keys import KeysOnTheirWay
from screens.lobby import LobbyScreen
from screens.notices import DrawnNotices
from screens.refusals import say
from screens.rules import RulesScreen, table_settings

if TYPE_CHECKING:
    from perudo_ssh.limits import Limits
    from perudo_ssh.records import Account, Records
    from perudo_ssh.session import LobbySession

log = logging.getLogger(__name__)

IDLE_CHECK_SECONDS = 10.0
"""How often the lobby idle timeout is looked at (so it ends a session up to this late)."""
IDLE = "idle in the lobby"
"""The app's return value when the lobby idle timeout ended it (never shown: `farewell` is)."""


def quit_question(tr: Translator) -> str:
    """The question before Ctrl+Q quits a game being played, in `tr`'s language (a
    `dialogs.Question`, asked again after a language switch)."""
    return tr._(
        "Quit in the middle of this game? Your seat then goes as if your connection were lost."
    )


class QuitDialog(ConfirmDialog):
    """The question of Ctrl+Q mid-game (`PerudoApp.action_quit`): Ctrl+Q again over it
    quits, over any other dialog it asks."""


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


class PerudoApp(KeysOnTheirWay, DrawnNotices, LobbyBoundary):
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
        super().__init__(session)
        self.lobby_idle_timeout = lobby_idle_timeout
        self.clock = clock
        self.last_input = clock()
        """When the player last pressed a key, used the mouse or pasted (`clock` seconds);
        time at a table counts as input too."""
        self.language = language if language in LANGUAGES else "en"
        self.tr: Translator = translator_for(self.language)
        self._panels: dict[type[KeptPanel], KeptPanel] = {}
        self._panel_timers: dict[type[KeptPanel], Timer] = {}
        # Set by the server's app factory (perudo_ssh/serve.py) for a session with a store:
        self.store: Records | None = None
        """The server's store (`perudo_ssh.store`); screens await it in workers."""
        self.account: Account | None = None
        """The account this session's key signs in as; None for a guest."""
        self.arrival_notice: tuple[str, dict[str, str | int]] | None = None
        """Told once the app starts (`Login.notice`): an `N_` message id and its args."""
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

    async def action_quit(self) -> None:
        """Ctrl+Q (and the lobby's q): the app ends, and with it the session. Seated with
        dice in a game being played, the player is asked first (`ConfirmDialog`): the seat
        then goes by the table's rule for a lost connection."""
        table = self.table
        game = table.game if table is not None else None
        if (
            table is not None
            and table.status == "playing"
            and game is not None
            and game.me is not None
            and game.phase != "over"
            and game.seats[game.me].dice
            and not isinstance(self.screen, QuitDialog)
        ):

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self.exit()

            self.push_screen(QuitDialog(quit_question), confirmed)
            return
        await super().action_quit()

    def action_help_quit(self) -> None:
        """Ctrl+C, which quits many programs: says how to quit, in the player's language
        (Textual's own says it in English)."""
        self.notify(
            self.tr._("Press Ctrl+Q to quit."),
            title=self.tr._("Do you want to quit?"),
            markup=False,
        )

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
