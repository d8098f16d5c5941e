"""The rules panel (`i` everywhere): a table's rules in plain words (RULES.md §7: "The table's
rules are shown to every player and spectator").

The text is generated from the table's `Options` by screens/rulestext.py, never written per
preset, in the session's language (`app.tr`).
"""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from perudo_ssh import protocol
from perudo_ssh.i18n import N_, Translator
from perudo_ssh.rules import Options
from screens.cheaper import KeptPanel, PartialBackground
from screens.footer import Footer
from screens.rulestext import lobby_rules, rules_summary, settings_lines

Subject = Literal["table", "draft", "lobby"]
"""Whose rules the panel shows: the table here, the table being created, or (no options)
the rules in general."""

Settings = tuple[int, int]
"""A table's settings that are not rules (issue 5): its turn timer and disconnect grace, in
seconds (`CreateTable.turn_seconds`, `.grace_seconds`)."""


def table_settings(table: protocol.TableState | None) -> Settings | None:
    """The turn timer and grace of the table here (`TableState`), or None away from one."""
    return None if table is None else (table.turn_seconds, table.grace_seconds)


def settings_content(tr: Translator, options: Options | None, settings: Settings) -> Content:
    """The table's settings under a heading, a bulleted line each (`settings_lines`)."""
    turn, grace = settings
    lines = [Content.styled(tr._("Turn timer and connection"), "bold")]
    lines += [Content(f"• {line}") for line in settings_lines(tr, options, turn, grace)]
    return Content("\n").join(lines)


def rules_lines(tr: Translator, options: Options | None) -> list[str]:
    """The panel's lines: `rules_summary(options)`, or the general rules without options."""
    return lobby_rules(tr) if options is None else rules_summary(options, tr)


def rules_content(tr: Translator, options: Options | None) -> Content:
    """The panel's text: one bulleted line per rule, never read as markup."""
    return Content("\n").join(Content(f"• {line}") for line in rules_lines(tr, options))


def rules_title(tr: Translator, subject: Subject, options: Options | None) -> str:
    """The panel's title: `Rules of this table (club)`, `Rules of your new table (classic)`,
    or `Rules`."""
    if options is None or subject == "lobby":
        return tr._("Rules")
    if subject == "draft":
        return tr._("Rules of your new table ({preset})", preset=options.preset)
    return tr._("Rules of this table ({preset})", preset=options.preset)


class RulesScreen(KeptPanel, PartialBackground, ModalScreen[None]):
    """The rules of `options` in plain words, one line per rule, scrolling if needed;
    `subject` says whose they are (see `Subject`); then the table's `settings` (turn timer,
    disconnect grace), when given. Esc, q or i closes it. Kept a while once closed
    (`KeptPanel`): it `fits` any rules with settings if it has them, without if not."""

    BINDINGS = [
        Binding("escape,q,i", "dismiss", N_("Close"), key_display="esc"),
        Binding("question_mark", "app.help", N_("Help"), key_display="?"),
        # a modal screen hides the app's keys: the language key again
        Binding("f2", "app.language", N_("Language"), key_display="F2", show=False),
    ]

    def __init__(
        self, options: Options | None, subject: Subject = "table", settings: Settings | None = None
    ) -> None:
        super().__init__()
        self.options = options
        self.subject: Subject = subject if options is not None else "lobby"
        self.settings = settings
        self._language = ""

    def fits(
        self, options: Options | None, subject: Subject = "table", settings: Settings | None = None
    ) -> bool:
        return (settings is None) == (self.settings is None)

    def show(
        self, options: Options | None, subject: Subject = "table", settings: Settings | None = None
    ) -> None:
        subject = subject if options is not None else "lobby"
        shown = (self.options, self.subject, self.settings, self._language)
        if (options, subject, settings, self.app.language) != shown:  # type: ignore[attr-defined]
            self.options, self.subject, self.settings = options, subject, settings
            self.retranslate()
            self.refresh_bindings()
        self.query_one("#rules-box", VerticalScroll).scroll_home(animate=False)

    @property
    def _tr(self) -> Translator:
        return self.app.tr  # type: ignore[attr-defined]

    def compose(self) -> ComposeResult:
        tr = self._tr
        self._language = self.app.language  # type: ignore[attr-defined]
        with VerticalScroll(id="rules-box", classes="dialog"):
            title = rules_title(tr, self.subject, self.options)
            yield Static(Content(title), id="rules-title", classes="dialog-title")
            yield Static(rules_content(tr, self.options), id="rules-text")
            if self.settings is not None:
                content = settings_content(tr, self.options, self.settings)
                yield Static(content, id="rules-settings")
        yield Footer()

    def retranslate(self) -> None:
        """Redraw the title and the rules in the app's current language."""
        tr = self._tr
        self._language = self.app.language  # type: ignore[attr-defined]
        self.query_one("#rules-title", Static).update(
            Content(rules_title(tr, self.subject, self.options))
        )
        self.query_one("#rules-text", Static).update(rules_content(tr, self.options))
        if self.settings is not None:
            content = settings_content(tr, self.options, self.settings)
            self.query_one("#rules-settings", Static).update(content)
