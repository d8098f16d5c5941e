"""The create-table dialog: preset, seats, bots, calza mode and name, as a `CreateTable`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, RadioButton, RadioSet, Select, Static

from perudo_ssh import protocol
from perudo_ssh.rules import PRESET_NAMES, PRESETS
from screens.wording import CALZA_MODES, PRESET_BLURBS

SEATS = range(2, 7)


class CreateTableDialog(ModalScreen[protocol.CreateTable | None]):
    """Choose a table's rules; dismissed with the `CreateTable` to send, or None."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "ok", "Create"),
        Binding("question_mark", "app.help", "Help", key_display="?"),
    ]

    def __init__(self, player: str = "") -> None:
        super().__init__()
        self._player = player

    def compose(self) -> ComposeResult:
        with Vertical(id="create-box", classes="dialog"):
            yield Static("Create a table", classes="dialog-title")
            with RadioSet(id="preset"):
                for i, name in enumerate(PRESET_NAMES):
                    yield RadioButton(f"{name:<14}{PRESET_BLURBS[name]}", value=i == 0, name=name)
            with Horizontal(classes="field"):
                yield Label("Seats", classes="field-label")
                yield Select(
                    [(str(n), n) for n in SEATS], value=4, allow_blank=False, id="seats",
                    compact=True,
                )  # fmt: skip
                yield Label("Bots", classes="field-label")
                yield Select(
                    self._bot_options(4), value=2, allow_blank=False, id="bots", compact=True
                )
            with Horizontal(classes="field"):
                yield Label("Calza", classes="field-label")
                yield Select(
                    [(label, mode) for mode, label in CALZA_MODES.items()],
                    value=PRESETS["classic"].calza,
                    allow_blank=False,
                    id="calza",
                    compact=True,
                )
            with Horizontal(classes="field"):
                yield Label("Name", classes="field-label")
                table_name = Input(
                    placeholder=f"{self._player}'s table" if self._player else "table name",
                    max_length=24,
                    id="table-name",
                    compact=True,
                )
                # set here, not in on_mount: a dialog closed while opening (the client left,
                # or a table state arrived) runs on_mount without its widgets mounted
                table_name.cursor_blink = False  # no idle CPU per session
                yield table_name
            with Horizontal(classes="buttons"):
                yield Button("Create", variant="primary", id="ok", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer()

    @staticmethod
    def _bot_options(seats: int) -> list[tuple[str, int]]:
        return [(str(n), n) for n in range(seats)]

    def _preset(self) -> str:
        pressed = self.query_one("#preset", RadioSet).pressed_button
        return pressed.name if pressed is not None and pressed.name else "classic"

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        options = PRESETS[self._preset()]
        calza = self.query_one("#calza", Select)
        calza.value = options.calza
        calza.disabled = options.jonti  # the club plays jonti, not calza

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "seats" or not isinstance(event.value, int):
            return
        bots = self.query_one("#bots", Select)
        keep = bots.value if isinstance(bots.value, int) else 0
        bots.set_options(self._bot_options(event.value))
        bots.value = min(keep, event.value - 1)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self.action_ok()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_ok()

    def command(self) -> protocol.CreateTable:
        """The `CreateTable` the form describes; calza is sent only when it differs from the
        preset's; without a typed name, the placeholder's `ana's table`."""
        preset = self._preset()
        seats = self.query_one("#seats", Select).value
        bots = self.query_one("#bots", Select).value
        calza = self.query_one("#calza", Select).value
        name = self.query_one("#table-name", Input).value.strip()
        if not name and self._player:  # what the placeholder promised
            name = f"{self._player}'s table"[:24]
        assert isinstance(seats, int) and isinstance(bots, int) and isinstance(calza, str)
        return protocol.CreateTable(
            preset=preset,
            seats=seats,
            bots=bots,
            calza=None if calza == PRESETS[preset].calza else calza,
            name=name or None,
        )

    def action_ok(self) -> None:
        self.dismiss(self.command())

    def action_cancel(self) -> None:
        self.dismiss(None)
