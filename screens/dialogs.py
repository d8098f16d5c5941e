"""Small dialogs of the table: confirm a choice; pick dice to show and reroll (RULES.md §6).

Their text is in the session's language (`app.tr`, the table's words from `app.terms()`);
`retranslate` redraws it after a language switch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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

Question = str | Callable[[Translator], str]
"""A dialog's question: the text, or a function of the translator giving it (so that it can
be asked again in another language)."""


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


class ConfirmDialog(PartialBackground, ModalScreen[bool]):
    """A yes/no `question` (a `Question`); dismissed with True for yes."""

    BINDINGS = [
        # not Enter: it is the bid key, and a player pressing it twice must not leave a game
        Binding("y", "answer(True)", N_("Yes"), key_display="y"),
        Binding("n,escape", "answer(False)", N_("No"), key_display="n"),
    ]

    def __init__(self, question: Question) -> None:
        super().__init__()
        self._question = question

    def _texts(self) -> tuple[str, str]:
        tr: Translator = self.app.tr  # type: ignore[attr-defined]
        question = self._question if isinstance(self._question, str) else self._question(tr)
        return question, tr._("y: yes · n: no")

    def compose(self) -> ComposeResult:
        question, hint = self._texts()
        with Vertical(classes="dialog"):
            yield Static(Content(question), id="confirm-question", classes="dialog-title")
            yield Static(hint, id="confirm-hint", classes="dialog-hint")
        yield Footer()

    def retranslate(self) -> None:
        """Ask again in the app's new language (a plain-text question stays as it was)."""
        if composed(self):
            question, hint = self._texts()
            self.query_one("#confirm-question", Static).update(Content(question))
            self.query_one("#confirm-hint", Static).update(hint)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class RerollDialog(PartialBackground, ModalScreen[tuple[int, ...] | None]):
    """Choose hidden dice to set aside face up; the others are re-rolled (one stays hidden).

    Dismissed with the faces to show, or None."""

    BINDINGS = [
        *(Binding(str(n), f"pick({n - 1})", N_("Pick"), show=n == 1, key_display="1-5")
          for n in range(1, 6)),
        Binding("enter", "confirm", N_("Show & reroll")),
        Binding("escape", "cancel", N_("Cancel")),
    ]  # fmt: skip

    def __init__(self, hidden: Sequence[int], *, planning: bool = False) -> None:
        super().__init__()
        self._hidden = tuple(hidden)
        self._picked: set[int] = set()
        self._planning = planning

    @property
    def _tr(self) -> Translator:
        return self.app.tr  # type: ignore[attr-defined]

    @property
    def _terms(self) -> Terms:
        return self.app.terms()  # type: ignore[attr-defined]

    def _title(self) -> str:
        reroll = self._terms.reroll
        if self._planning:
            return self._tr._("With your bid, {reroll}: pick the dice to set aside", reroll=reroll)
        return self._tr._(
            "{reroll}: pick the dice to set aside", reroll=_capitalised(self._terms.reroll)
        )

    def describe_binding(self, binding: Binding) -> str | None:
        """The confirm key says the table's own word for show and reroll."""
        return _capitalised(self._terms.reroll) if binding.action == "confirm" else None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self._title(), id="reroll-title", classes="dialog-title")
            yield Static(id="reroll-dice")
            yield Static(id="reroll-hint", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        if composed(self):
            self._draw()

    def retranslate(self) -> None:
        """Redraw in the app's new language."""
        if composed(self):
            self.query_one("#reroll-title", Static).update(self._title())
            self._draw()

    def _draw(self) -> None:
        """The dice, each picked one in colour and marked `✓` (seen without colour too,
        issue 13), then what is set aside and what is re-rolled, in words."""
        parts: list[tuple[str, str] | str] = []
        for i, face in enumerate(self._hidden):
            picked = i in self._picked
            style = "bold reverse $accent" if picked else ""
            parts += [f"{i + 1}:", (f"[{face}]", style), "✓ " if picked else "  "]
        if self._picked:
            shown = " ".join(str(self._hidden[i]) for i in sorted(self._picked))
            rerolled = " ".join(
                str(face) for i, face in enumerate(self._hidden) if i not in self._picked
            )
            parts += ["\n", self._tr._("Set aside: {shown} · re-rolled: {rerolled}",
                                       shown=shown, rerolled=rerolled or "–")]  # fmt: skip
        self.query_one("#reroll-dice", Static).update(Content.assemble(*parts))
        hint = self._tr._("Number keys pick dice; keep at least one hidden. Enter to confirm.")
        if self._planning:
            hint += " " + self._tr._("They are shown as soon as you bid.")
        self.query_one("#reroll-hint", Static).update(hint)

    def action_pick(self, index: int) -> None:
        if index < len(self._hidden):
            self._picked ^= {index}
            self._draw()

    def action_confirm(self) -> None:
        if not self._picked and self._planning:
            self.dismiss(())  # show nothing with the bid after all
        elif not self._picked:
            self.notify(self._tr._("Pick at least one die to show."), markup=False)
        elif len(self._picked) >= len(self._hidden):
            self.notify(self._tr._("Keep at least one die hidden to re-roll."), markup=False)
        else:
            self.dismiss(tuple(self._hidden[i] for i in sorted(self._picked)))

    def action_cancel(self) -> None:
        self.dismiss(None)
