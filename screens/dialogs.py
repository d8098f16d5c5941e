"""Small dialogs of the table: confirm a choice; pick dice to show and reroll (RULES.md §6)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from screens.mounting import composed


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question; dismissed with True for yes."""

    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes", key_display="y"),
        Binding("n,escape", "answer(False)", "No", key_display="n"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self._question, classes="dialog-title")
            yield Static("y: yes · n: no", classes="dialog-hint")
        yield Footer()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class RerollDialog(ModalScreen[tuple[int, ...] | None]):
    """Choose hidden dice to set aside face up; the others are re-rolled (one stays hidden).

    Dismissed with the faces to show, or None."""

    BINDINGS = [
        *(Binding(str(n), f"pick({n - 1})", "Pick", show=n == 1, key_display="1-5")
          for n in range(1, 6)),
        Binding("enter", "confirm", "Show & reroll"),
        Binding("escape", "cancel", "Cancel"),
    ]  # fmt: skip

    def __init__(self, hidden: Sequence[int], *, planning: bool = False) -> None:
        super().__init__()
        self._hidden = tuple(hidden)
        self._picked: set[int] = set()
        self._planning = planning

    def compose(self) -> ComposeResult:
        title = (
            "With your bid, show and reroll: pick the dice to set aside"
            if self._planning
            else "Show and reroll: pick the dice to set aside"
        )
        with Vertical(classes="dialog"):
            yield Static(title, classes="dialog-title")
            yield Static(id="reroll-dice")
            yield Static(id="reroll-hint", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        if composed(self):
            self._draw()

    def _draw(self) -> None:
        parts: list[tuple[str, str] | str] = []
        for i, face in enumerate(self._hidden):
            style = "bold reverse $accent" if i in self._picked else ""
            parts += [f"{i + 1}:", (f"[{face}]", style), "  "]
        self.query_one("#reroll-dice", Static).update(Content.assemble(*parts))
        self.query_one("#reroll-hint", Static).update(
            "Number keys pick dice; keep at least one hidden. Enter to confirm."
            + (" They are shown as soon as you bid." if self._planning else "")
        )

    def action_pick(self, index: int) -> None:
        if index < len(self._hidden):
            self._picked ^= {index}
            self._draw()

    def action_confirm(self) -> None:
        if not self._picked and self._planning:
            self.dismiss(())  # show nothing with the bid after all
        elif not self._picked:
            self.notify("Pick at least one die to show.", markup=False)
        elif len(self._picked) >= len(self._hidden):
            self.notify("Keep at least one die hidden to re-roll.", markup=False)
        else:
            self.dismiss(tuple(self._hidden[i] for i in sorted(self._picked)))

    def action_cancel(self) -> None:
        self.dismiss(None)
