"""The account dialog: your name, the keys that sign in as you, and a one-time code to link
another key (issue 4, item 2: "a logged-in player can link a second key through a one-time
code shown on screen").

The code comes from the store (`PerudoApp.store.new_link_code`, valid ten minutes, used
once); the other computer runs `ssh … link CODE` with its own key
(`perudo_ssh.ssh.commands`). A guest is told to sign in with a key instead. Text in the
session's language (`app.tr`); `retranslate` redraws it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from perudo_ssh.i18n import N_, Translator
from perudo_ssh.records import LINK_CODE_SECONDS, KeyInfo, show_code
from screens.cheaper import PartialBackground
from screens.footer import Footer
from screens.mounting import composed

if TYPE_CHECKING:
    from perudo_ssh.records import Account, Records

log = logging.getLogger(__name__)


class AccountScreen(PartialBackground, ModalScreen[None]):
    """Your account and a code to link another key; Escape or Enter closes it, `n` makes a
    new code (the old one stays valid until it expires)."""

    BINDINGS = [
        Binding("escape,enter", "close", N_("Close"), key_display="Esc"),
        Binding("n", "new_code", N_("New code")),
        Binding("b", "turn_bell", N_("Bell on your turn")),
        Binding("m", "make_bot", N_("Bot account")),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._code: str | None = None
        self._keys: list[KeyInfo] = []
        self._failed = False
        self._bot: str | None = None
        """The bot account's line (issue 14): None, "asked" (m once: m again confirms),
        "made" (this session made it one), "failed"."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A guest has no account to link keys to: no code to make, no bot account."""
        if action in ("new_code", "make_bot"):
            return self._account is not None and self._store is not None
        return True

    @property
    def _store(self) -> Records | None:
        return getattr(self.app, "store", None)

    @property
    def _account(self) -> Account | None:
        return getattr(self.app, "account", None)

    def _bell_line(self, tr: Translator) -> str:
        """Whether the terminal rings on your turn when you are elsewhere (issue 13)."""
        if getattr(self.app, "turn_bell", True):
            return tr._(
                "Bell on your turn: on. When it becomes your turn while you read the rules "
                "or chat, the terminal rings and its title says so (b: turn it off)."
            )
        return tr._("Bell on your turn: off (b: turn it on).")

    def _texts(self) -> tuple[str, str, str]:
        """The title, the body and the hint, in the app's language."""
        tr: Translator = self.app.tr  # type: ignore[attr-defined]
        account, store = self._account, self._store
        if account is None or store is None:
            return (
                tr._("Account"),
                tr._(
                    "You play as a guest. Log in with an SSH key to keep your name and your "
                    "games, and to link your other computers' keys."
                )
                + "\n\n"
                + self._bell_line(tr),
                tr._("Esc: close"),
            )
        title = tr._("Account: {name}", name=account.name)
        lines = [tr._("Keys that sign in as {name}:", name=account.name)]
        for key in self._keys:
            added = time.strftime("%Y-%m-%d", time.gmtime(key.added))
            lines.append(f"  {key.fingerprint}  {added}")
        lines.append("")
        if self._failed:
            lines.append(tr._("No code could be made just now; try again with n."))
        elif self._code is None:
            lines.append(tr._("Making a code…"))
        else:
            minutes = int(LINK_CODE_SECONDS // 60)
            lines.append(
                tr.n_(
                    "To play as {name} from another computer with its own key, run there "
                    "within {n} minute, the same ssh command with the word link and the code:",
                    "To play as {name} from another computer with its own key, run there "
                    "within {n} minutes, the same ssh command with the word link and the code:",
                    minutes,
                    name=account.name,
                )
            )
            lines.append("")
            lines.append(f"    ssh … link {show_code(self._code)}")
            lines.append("")
            lines.append(tr._("The code works once."))
        lines += ["", self._bell_line(tr), "", self._bot_line(tr, account)]
        return title, "\n".join(lines), tr._("Esc: close · n: new code")

    def _bot_line(self, tr: Translator, account: Account) -> str:
        """Whether this is a bot account, or how it becomes one (issue 14)."""
        if account.bot:
            return tr._(
                "This is a bot account: a program plays with its keys through `ssh … play` "
                "(JSON lines, see docs/BOT-API.md), marked BOT and rated apart from people."
            )
        if self._bot == "made":
            return tr._(
                "This is now a bot account: from its next login, a program plays with its "
                "keys through `ssh … play`, marked BOT and rated apart from people."
            )
        if self._bot == "failed":
            return tr._("It could not be made a bot account just now; try again with m.")
        if self._bot == "asked":
            return tr._(
                "Press m again to make {name} a bot account: for a program, not a person. "
                "Only the server's admin can make it a person's account again.",
                name=account.name,
            )
        return tr._("Bot account: m makes this account a program's (the bot API).")

    def compose(self) -> ComposeResult:
        title, body, hint = self._texts()
        with Vertical(classes="dialog"):
            yield Static(title, id="account-title", classes="dialog-title", markup=False)
            yield Static(Content(body), id="account-body")
            yield Static(hint, id="account-hint", classes="dialog-hint", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        if self._account is not None and self._store is not None:
            self.run_worker(self._load(), exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        """Read the keys and make a code (the store works in its own thread)."""
        store, account = self._store, self._account
        assert store is not None and account is not None
        try:
            self._keys = await store.keys_of(account.id)
            self._code = await store.new_link_code(account.id)
            self._failed = False
        except Exception:
            log.exception("no link code for account %s", account.id)
            self._failed = True
        self.retranslate()

    def retranslate(self) -> None:
        """Redraw every text in the app's (new) language."""
        if composed(self):
            title, body, hint = self._texts()
            self.query_one("#account-title", Static).update(title)
            self.query_one("#account-body", Static).update(Content(body))
            self.query_one("#account-hint", Static).update(hint)

    def action_new_code(self) -> None:
        if self._account is not None and self._store is not None:
            self._code = None
            self.retranslate()
            self.run_worker(self._load(), exclusive=True, exit_on_error=False)

    def action_turn_bell(self) -> None:
        """`b`: the bell and title on your turn, on or off (kept with the account)."""
        app = self.app
        set_turn_bell = getattr(app, "set_turn_bell", None)
        if set_turn_bell is not None:
            set_turn_bell(not getattr(app, "turn_bell", True))
            self.retranslate()

    def action_make_bot(self) -> None:
        """`m` asks, `m` again makes the account a bot account (issue 14)."""
        account = self._account
        if account is None or account.bot or self._bot == "made":
            return
        if self._bot != "asked":
            self._bot = "asked"
            self.retranslate()
            return
        self.run_worker(self._make_bot(), exclusive=False, exit_on_error=False)

    async def _make_bot(self) -> None:
        store, account = self._store, self._account
        assert store is not None and account is not None
        try:
            await store.set_bot(account.id, True)
            self._bot = "made"
            log.info("account %s made a bot account by its player", account.id)
        except Exception:
            log.exception("account %s could not be made a bot account", account.id)
            self._bot = "failed"
        self.retranslate()

    def action_close(self) -> None:
        self.dismiss(None)
