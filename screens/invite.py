"""Private tables and challenges (issue 13): the dialogs that join a table by its invite code
and challenge a player by name.

`InviteCodeDialog` is dismissed with the `protocol.JoinPrivate` to send (or None);
`ChallengeDialog` with the `protocol.Challenge` (a name typed, a preset picked with ↑/↓).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from perudo_ssh import protocol
from perudo_ssh.i18n import N_, Translator
from perudo_ssh.rules import PRESETS
from screens.cheaper import PartialBackground, QuietInput
from screens.footer import Footer
from screens.mounting import composed
from screens.rulestext import preset_blurb
from screens.widgets import app_tr

NAME_LENGTH = 24
"""Characters a challenged name may have (a player's name is shorter)."""


class _PromptDialog(PartialBackground, ModalScreen[protocol.Command | None]):
    """A title, one line to type, lines under it; Enter sends what `_command` makes of the
    text (nothing while it is empty), Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"), key_display="esc")]

    MAX_LENGTH = 12
    """Characters the line takes (an invite code is six; spaces are ignored)."""

    def __init__(self, value: str = "") -> None:
        super().__init__()
        self._value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog prompt-box"):
            yield Static(id="prompt-title", classes="dialog-title")
            field = QuietInput(
                self._value,
                placeholder=self._placeholder(app_tr(self)),
                max_length=self.MAX_LENGTH,
                id="prompt-input",
                compact=True,
            )
            field.cursor_blink = False  # no idle CPU per session
            yield field
            yield Static(id="prompt-lines")
            yield Static(id="prompt-hint", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        if composed(self):  # not closed while opening
            self._draw()
            self.query_one(Input).focus()

    def retranslate(self) -> None:
        """Redraw in the app's new language."""
        if composed(self):
            self._draw()

    def _draw(self) -> None:
        tr = app_tr(self)
        title, lines = self._texts(tr)
        self.query_one("#prompt-title", Static).update(Content(title))
        self.query_one(Input).placeholder = self._placeholder(tr)
        self.query_one("#prompt-lines", Static).update(Content("\n".join(lines)))
        self.query_one("#prompt-hint", Static).update(Content(tr._("Enter: send · Esc: cancel")))

    def _texts(self, tr: Translator) -> tuple[str, list[str]]:
        raise NotImplementedError

    def _placeholder(self, tr: Translator) -> str:
        raise NotImplementedError

    def _command(self, text: str) -> protocol.Command:
        raise NotImplementedError

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text:
            self.dismiss(self._command(text))

    def action_cancel(self) -> None:
        self.dismiss(None)


class InviteCodeDialog(_PromptDialog):
    """Type a private table's invite code; dismissed with `protocol.JoinPrivate`."""

    def _texts(self, tr: Translator) -> tuple[str, list[str]]:
        return tr._("Join a private table"), [
            tr._("Type the invite code the table's players gave you (six letters and digits).")
        ]

    def _placeholder(self, tr: Translator) -> str:
        return tr._("the invite code, then Enter")

    def _command(self, text: str) -> protocol.Command:
        return protocol.JoinPrivate(code=text)


class ChallengeDialog(_PromptDialog):
    """Type the name of a player online and pick a preset (↑/↓); dismissed with
    `protocol.Challenge`."""

    BINDINGS = [
        Binding("up", "preset(-1)", show=False),
        Binding("down", "preset(1)", show=False),
    ]
    MAX_LENGTH = NAME_LENGTH

    def __init__(self, name: str = "", preset: str = "classic") -> None:
        super().__init__(name)
        self.preset = preset if preset in PRESETS else "classic"

    def _texts(self, tr: Translator) -> tuple[str, list[str]]:
        return tr._("Challenge a player"), [
            tr._("Preset  ◀ {name} ▶   ↑/↓", name=self.preset),
            f"        {preset_blurb(tr, self.preset)}",
            "",
            tr._("A private table of two opens for you; the player you name is asked to join it."),
        ]

    def action_preset(self, step: int) -> None:
        """The next (1) or previous (-1) preset, round the list."""
        presets = list(PRESETS)
        self.preset = presets[(presets.index(self.preset) + step) % len(presets)]
        self._draw()

    def _placeholder(self, tr: Translator) -> str:
        return tr._("a player's name, then Enter")

    def _command(self, text: str) -> protocol.Command:
        return protocol.Challenge(name=text, preset=self.preset)
