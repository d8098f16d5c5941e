"""The calzone question (RULES.md §4, seed 002): asked of the player who just dropped to one
die, before any bid of the round — declare a calzone round, or play a normal one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from perudo_ssh.i18n import N_, Terms, Translator
from screens.cheaper import PartialBackground
from screens.footer import Footer
from screens.mounting import composed
from screens.widgets import app_tr


def calzone_texts(tr: Translator, terms: Terms) -> tuple[str, str, str]:
    """The question, what a calzone round changes, and the keys, in `tr`'s language."""
    question = tr._("You dropped to one die. Declare {calzone}?", calzone=terms.calzone)
    explained = tr._(
        "In a {calzone} round pacos are not wild: they count only as themselves, and the "
        "round may open on any face, pacos too. Players with one die, you included, may "
        "change the face; the others must bid more of the same face. Declined, the round is "
        "a normal one.",
        calzone=terms.calzone,
    )
    keys = tr._("y: declare {calzone} · n: play a normal round", calzone=terms.calzone)
    return question, explained, keys


class CalzoneDialog(PartialBackground, ModalScreen[bool]):
    """Declare a calzone round? Dismissed with True for yes (the table then sends
    `DeclareCalzone`), False for no (the player bids a normal round). `terms` are the table's
    words (`tr.terms(options)`, taken again from the app's `terms()` after a language
    switch)."""

    BINDINGS = [
        Binding("y,enter", "answer(True)", N_("Yes"), key_display="y"),
        Binding("n,escape", "answer(False)", N_("No"), key_display="n"),
    ]

    def compose(self) -> ComposeResult:
        question, explained, keys = self._texts()
        with Vertical(classes="dialog"):
            yield Static(Content(question), id="calzone-question", classes="dialog-title")
            yield Static(Content(explained), id="calzone-explained")
            yield Static(Content(keys), id="calzone-keys", classes="dialog-hint")
        yield Footer()

    def _texts(self) -> tuple[str, str, str]:
        tr = app_tr(self)
        terms_of = getattr(self.app, "terms", None)
        terms = terms_of() if terms_of is not None else tr.terms(None)
        return calzone_texts(tr, terms)

    def retranslate(self) -> None:
        """Redraw in the app's new language."""
        if not composed(self):
            return
        question, explained, keys = self._texts()
        self.query_one("#calzone-question", Static).update(Content(question))
        self.query_one("#calzone-explained", Static).update(Content(explained))
        self.query_one("#calzone-keys", Static).update(Content(keys))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
