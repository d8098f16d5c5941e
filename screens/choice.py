"""`Choice`: a one-line pick from a list, the create dialog's light stand-in for Textual's
`Select` (issue 10).

A Textual `Select` is six widgets (itself, the current value's bar with a label and two
arrows, and an option list kept mounted and hidden); the create dialog has fourteen, and
mounting, styling and laying them out was most of the ~250 ms of CPU it took to open the
dialog, and each list opened or closed restyled all six. A `Choice` is one widget that draws
its own line (the option's words, then `▼`), and mounts its list only while it is open (`▲`).

Keys as a Select's: Enter, Space, ↑ or ↓ open the list at the chosen option; in it ↑/↓ (and
typing the start of an option's words) move, Enter picks, Esc or leaving it closes it
unchanged. A click on the line opens it too.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from rich.console import RenderableType
from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from perudo_ssh.i18n import N_


class ChoiceList(OptionList):
    """A `Choice`'s open list: an overlay under its line, mounted while open. Posts
    `Choice.Picked` (an index) or `Choice.Closed`; typing moves to the first option whose
    words start with what was typed (as a Select's list)."""

    BINDINGS = [Binding("escape", "close", N_("Dismiss menu"))]
    ALLOW_SELECT = False

    def __init__(self, options: Iterable[Option], highlighted: int) -> None:
        super().__init__(*options, compact=True)
        self._start = highlighted
        self._typed = ""

    def on_mount(self) -> None:
        self.highlighted = self._start
        self.scroll_to_highlight()

    def action_close(self) -> None:
        """Close the list, the choice unchanged."""
        self.post_message(Choice.Closed(refocus=True))

    def _on_blur(self, event: events.Blur) -> None:
        self.post_message(Choice.Closed(refocus=False))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(Choice.Picked(event.option_index))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        return character is not None and character.isprintable()

    async def _on_key(self, event: events.Key) -> None:
        if event.character is None or not event.is_printable:
            return
        event.stop()
        event.prevent_default()
        self._typed = (self._typed + event.character)[-32:].casefold()
        for typed in (self._typed, event.character.casefold()):
            for index in range(self.option_count):
                words = self.get_option_at_index(index).prompt
                plain = words.plain if isinstance(words, Content) else str(words)
                if plain.casefold().lstrip().startswith(typed):
                    self.highlighted = index
                    self.scroll_to_highlight()
                    return
        self._typed = ""


class Choice(Widget, can_focus=True):
    """One value of `options` (pairs of words and a hashable value), shown on one line as
    the words then `▼`; Enter, Space, ↑ or ↓ open the list of every option (`▲`).

    `value` is the chosen option's value (setting it to a value not among the options
    raises `ValueError`); each change posts `Choice.Changed` (`.select` / `.control`: this
    choice, `.value`). `set_options` replaces the options, keeping the value if it is
    still one of them. Styled in `perudo.tcss` (`Choice`, `ChoiceList`)."""

    BINDINGS = [Binding("enter,down,space,up", "open", N_("Show menu"), show=False)]
    ALLOW_SELECT = False

    value: var[Hashable] = var[Hashable](None, init=False)
    """The chosen option's value."""
    expanded: var[bool] = var(False, init=False)
    """Whether the list is open."""

    class Changed(Message):
        """The choice's value changed (by the player or by code)."""

        def __init__(self, choice: Choice, value: Hashable) -> None:
            super().__init__()
            self.select = choice
            self.value = value

        @property
        def control(self) -> Choice:
            return self.select

    class Picked(Message):
        """An option of the open list was picked (index into the options)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Closed(Message):
        """The open list was closed with nothing picked; `refocus`: give the choice focus
        back (Esc), not when focus went elsewhere."""

        def __init__(self, refocus: bool) -> None:
            super().__init__()
            self.refocus = refocus

    def __init__(
        self,
        options: Iterable[tuple[RenderableType, Hashable]],
        *,
        value: Hashable = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        super().__init__(id=id, classes=classes, disabled=disabled)
        self._options: list[tuple[RenderableType, Hashable]] = list(options)
        if not self._options:
            raise ValueError("a Choice needs at least one option")
        start = value if any(v == value for _, v in self._options) else self._options[0][1]
        self.set_reactive(Choice.value, start)

    # ---- value ---------------------------------------------------------------------------

    def _index(self, value: Hashable) -> int | None:
        for index, (_, option) in enumerate(self._options):
            if option == value:
                return index
        return None

    def validate_value(self, value: Hashable) -> Hashable:
        if self._index(value) is None:
            raise ValueError(f"{value!r} is not one of the choices")
        return value

    def watch_value(self, value: Hashable) -> None:
        self.refresh()
        self.post_message(self.Changed(self, value))

    def set_options(self, options: Iterable[tuple[RenderableType, Hashable]]) -> None:
        """Replace the options (new words, another range), drawn at once. The value stays if
        it is still one of them, else the first is chosen (`Changed` is posted then)."""
        made = list(options)
        if not made:
            raise ValueError("a Choice needs at least one option")
        self._options = made
        self.expanded = False
        if self._index(self.value) is None:
            self.value = made[0][1]
        self.refresh()

    # ---- drawing -------------------------------------------------------------------------

    def render(self) -> Content:
        index = self._index(self.value)
        words = self._options[index][0] if index is not None else ""
        label = words if isinstance(words, Content) else Content(str(words))
        width = self.content_region.width
        mark = "▲" if self.expanded else "▼"
        arrow = Content.styled(mark, self.get_visual_style("choice--arrow"))
        room = max(0, width - 2)
        label = label.truncate(room, pad=True)
        return Content.assemble(label, " ", arrow)

    COMPONENT_CLASSES = {"choice--arrow"}

    # ---- the list ------------------------------------------------------------------------

    def action_open(self) -> None:
        """Open the list at the chosen option."""
        self.expanded = True

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self.refresh()
        for old in self.query_children(ChoiceList):
            old.remove()
        if expanded and self.is_mounted:  # else its screen is composed or taken down
            options = [Option(words) for words, _ in self._options]
            shown = ChoiceList(options, self._index(self.value) or 0)
            self.mount(shown)
            shown.focus(scroll_visible=False)

    def on_choice_picked(self, event: Choice.Picked) -> None:
        event.stop()
        value = self._options[event.index][1]
        self.focus()
        self.expanded = False
        if value != self.value:
            self.value = value

    def on_choice_closed(self, event: Choice.Closed) -> None:
        event.stop()
        if event.refocus:
            self.focus()
        self.expanded = False

    async def _on_click(self, event: events.Click) -> None:
        event.stop()
        if not self.expanded:
            self.focus()
            self.expanded = True
