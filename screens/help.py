"""The help screen (`?` everywhere): every key, and the rules of the table here (or the rules
in general in the lobby), in the session's language (`app.tr`).

The rules come from the same generator as the rules panel (screens/rulestext.py).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from perudo_ssh.i18n import N_, Translator
from perudo_ssh.rules import Options
from screens.cheaper import KeptPanel, PartialBackground
from screens.footer import Footer
from screens.rules import Settings, rules_content, rules_title, settings_content
from screens.wording import auto_marker

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (N_("Lobby"), (
        ("↑ ↓", N_("choose a table")),
        ("c", N_("create a table")),
        ("g", N_("quick play: the best open table, or a new one bots fill after a wait")),
        ("e", N_("join a private table with its invite code")),
        ("x", N_("challenge a player online to a game (a private table of two)")),
        ("j / Enter", N_("join the chosen table")),
        ("s", N_("watch the chosen table")),
        ("m / Tab", N_("chat: type a line, Enter says it, Esc goes back")),
        ("h", N_("your games: replay one with Enter")),
        ("l", N_("the leaderboard: Enter opens a player's profile")),
        ("p", N_("your profile: games, wins, rating over time, calls")),
        ("k", N_("your account: link another key")),
        ("q", N_("quit")),
    )),
    (N_("Replay"), (
        ("← →", N_("a move back / forward")),
        ("[ ]", N_("a round back / forward (PgUp / PgDn too)")),
        ("Home End", N_("the first / last moment")),
    )),
    (N_("Create a table"), (
        ("↑ ↓ Enter", N_("choose a preset: every option takes its value")),
        ("Tab", N_("next option; Enter opens a list or ticks a box")),
        ("i", N_("the rules of the table as set so far")),
        ("ctrl+s", N_("create the table")),
    )),
    (N_("Table, waiting"), (
        ("b", N_("add a bot (creator)")),
        ("s", N_("start the game (creator)")),
        ("l / Esc", N_("leave the table")),
        ("t", N_("open the table's chat (Esc closes it)")),
    )),
    (N_("Table, playing"), (
        ("↑ ↓  + -", N_("bid count up / down")),
        ("1-6  ← →", N_("bid face (1 = {paco})")),
        ("Enter", N_("make the bid shown")),
        ("Tab", N_("type a bid: 5x4, 5 4, 5*4, 3p, 3 pacos; or dudo / calza")),
        ("Esc / Tab", N_("back from typing to keys")),
        ("d", N_("{dudo}: doubt the bid")),
        ("c", N_("{calza}: claim the bid is exact (if played here)")),
        ("j", N_("{jonti}: exact call out of turn (club)")),
        ("z", N_("declare a {calzone} round (club)")),
        ("r", N_("{reroll}: set dice aside face up, reroll the rest (club, with a bid)")),
        ("l / Esc", N_("leave the table (asks first mid-game)")),
        ("t", N_("open the table's chat (Esc closes it)")),
        ("g", N_("the rounds so far, newest first (PgUp/PgDn scroll, g or Esc closes)")),
    )),
    (N_("Turn timer and connection"), (
        ("0:42", N_("the time left to move; then a move is made for the player")),
        ("◷ auto", N_("a move made for a player whose time ran out")),
        ("ssh", N_("If your connection drops, log in again with the same key within the "
                   "grace period: you are seated back.")),
        ("", N_("After it a bot plays your seat until you are back (at a club table you are "
                "out once the round ends).")),
    )),
    (N_("Reveal"), (("Space", N_("next round (the keys of moves wait)")),)),
    (N_("Game over"), (("a", N_("play again")), ("l / Esc", N_("back to the lobby")))),
    (N_("Dialogs"), (
        ("Tab", N_("next field")), ("Enter", N_("choose / confirm")), ("Esc", N_("cancel")),
    )),
    (N_("Everywhere"), (
        ("?", N_("this help")),
        ("i", N_("the rules of the table here")),
        ("F2", N_("language: English, Français, Русский")),
        ("ctrl+q", N_("quit")),
    )),
)  # fmt: skip
"""Every key, place by place: (place, ((key, what it does), ...)); message ids whose fields
are the game's terms (`{dudo}`, `{calza}`, `{jonti}`, `{calzone}`, `{reroll}`, `{paco}`)."""


def keys_text(tr: Translator, options: Options | None = None) -> Content:
    """Every key binding, place by place, as the help screen shows them, in `tr`'s language
    with the words of a table with `options` (the classic words without)."""
    terms = tr.terms(options)
    words = dict(
        dudo=terms.dudo,
        calza=terms.calza,
        jonti=terms.jonti,
        calzone=terms.calzone,
        reroll=terms.reroll,
        paco=terms.paco,
    )
    lines: list[Content] = []
    for place, keys in KEYS:
        lines.append(Content.styled(tr._(place), "bold underline"))
        for key, what in keys:
            shown = tr._("Space") if key == "Space" else key  # the only key names in words
            shown = auto_marker(tr) if key == "◷ auto" else shown
            lines.append(Content.assemble((f"  {shown:<11}", "bold $accent"), tr._(what, **words)))
    return Content("\n").join(lines)


def rules_text(tr: Translator, options: Options | None) -> Content:
    """The rules of `options` in plain words; in the lobby (None), the rules in general and
    what each preset is (screens/rulestext.py)."""
    return rules_content(tr, options)


class HelpScreen(KeptPanel, PartialBackground, ModalScreen[None]):
    """Key bindings and the rules in plain words, and at a table its `settings` (turn timer,
    disconnect grace) after the rules; any of Esc, q, ? closes it. Kept a while once closed
    (`KeptPanel`): it `fits` any place with the same sections (the lobby's; a table's, with
    or without its settings)."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", N_("Close"), key_display="esc"),
        # a modal screen hides the app's keys: the rules panel and the language key again
        Binding("i", "app.rules", N_("Rules")),
        Binding("f2", "app.language", N_("Language"), key_display="F2", show=False),
    ]

    def __init__(self, options: Options | None = None, settings: Settings | None = None) -> None:
        super().__init__()
        self._options = options
        self._settings = settings
        self._language = ""

    def fits(self, options: Options | None = None, settings: Settings | None = None) -> bool:
        return (options is None) == (self._options is None) and (settings is None) == (
            self._settings is None
        )

    def show(self, options: Options | None = None, settings: Settings | None = None) -> None:
        if (options, settings, self.app.language) != (  # type: ignore[attr-defined]
            self._options,
            self._settings,
            self._language,
        ):
            self._options, self._settings = options, settings
            self.retranslate()
            self.refresh_bindings()
        self.query_one("#help-box", VerticalScroll).scroll_home(animate=False)

    def _texts(self) -> dict[str, Content]:
        """Every text of the screen by widget id, in the app's current language."""
        tr: Translator = self.app.tr  # type: ignore[attr-defined]
        self._language = self.app.language  # type: ignore[attr-defined]
        texts = {
            "help-rules-title": Content(rules_title(tr, "table", self._options)),
            "help-rules": rules_text(tr, self._options),
            "help-keys-title": Content(tr._("Keys")),
            "help-keys": keys_text(tr, self._options),
        }
        if self._settings is not None:
            texts["help-settings"] = settings_content(tr, self._options, self._settings)
        return texts

    def compose(self) -> ComposeResult:
        texts = self._texts()
        sections = ["help-rules", "help-keys"]
        if self._options is None:  # in the lobby, keys first
            sections.reverse()
        with VerticalScroll(id="help-box", classes="dialog"):
            for section in sections:
                title = f"{section}-title"
                yield Static(texts[title], id=title, classes="dialog-title")
                yield Static(texts[section], id=section)
                if section == "help-rules" and "help-settings" in texts:
                    yield Static(texts["help-settings"], id="help-settings")
        yield Footer()

    def retranslate(self) -> None:
        """Write every text in the app's current language."""
        for widget_id, text in self._texts().items():
            self.query_one(f"#{widget_id}", Static).update(text)
