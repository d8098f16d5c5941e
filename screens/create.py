"""The create-table dialog: a preset, then every rule option of RULES.md, seats, bots, the
turn timer and how long a disconnected player's seat is held (issue 5: settings, not rules)
and a name, as a `CreateTable` (RULES.md §7: "Every option may be overridden per table").

Choosing a preset resets every option to that preset's values. The dialog checks the options
with the rules' own `options_for` / `check_options` (the lobby checks them again): an
impossible combination shows its reason on a live line, and Create refuses with that reason
instead of sending. Options that do not apply (calza's limits while calza is off, the face
change without special rounds) are disabled, not cleared. Keyboard only: Tab between fields,
arrows and Enter in them, ctrl+s creates, Esc cancels, i shows the rules as set so far.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    Label,
    RadioButton,
    RadioSet,
    Static,
)

from perudo_ssh import protocol
from perudo_ssh.bots import LEVELS
from perudo_ssh.i18n import N_, Terms, Translator
from perudo_ssh.rules import PRESET_NAMES, PRESETS, Options, OptionsError, options_for
from perudo_ssh.rules.options import CHOICES, FLAGS, LIMITS, check_options
from screens.cheaper import PartialBackground, QuietInput
from screens.choice import Choice
from screens.footer import Footer
from screens.mounting import composed
from screens.rules import RulesScreen
from screens.rulestext import (
    GRACE_CHOICES,
    OPTION_ORDER,
    TURN_CHOICES,
    change_phrase,
    grace_label,
    option_label,
    options_refusal,
    preset_blurb,
    turn_timer_label,
    value_label,
)
from screens.wording import bot_level_word

SEATS = range(2, 7)
DEFAULT_SEATS = 4
DEFAULT_BOTS = 2
DEFAULT_TURN_SECONDS = protocol.CreateTable().turn_seconds  # 60
DEFAULT_GRACE_SECONDS = protocol.CreateTable().grace_seconds  # 120
SETTINGS: tuple[str, ...] = ("turn_seconds", "grace_seconds", "bot_level")
"""The table's settings that are not rules (issue 5), a row of the grid after the rules."""
NAME_LENGTH = 24
SELECTS: tuple[str, ...] = tuple(
    n for n in OPTION_ORDER if n in CHOICES or (n in LIMITS and n != "stake")
)
"""The options chosen from a list (every option but the flags and the stake)."""
GRID: tuple[str, ...] = (
    "seats", "bots",
    "dice_per_player", "opening_roll_dice",
    "raise_rule",
    "special_round", "special_face_change",
    "calza", "calza_min_players",
    "calza_in_special_round", "jonti",
    "show_and_reroll", "stake",
)  # fmt: skip
"""The fields of the grid, two to a row (`raise_rule` has a row of its own: its words are
long), in Tab order; the table name comes last."""
WIDE = frozenset({"raise_rule"})


class MarkedRadioButton(RadioButton):
    """A radio button that shows whether it is chosen by a mark, `(•)` or `( )`, not by
    colour alone (a monochrome terminal, a colour-blind player)."""

    @property
    def _button(self) -> Content:
        return Content.styled(
            "(•)" if self.value else "( )", self.get_visual_style("toggle--button")
        )


class MarkedCheckbox(Checkbox):
    """A checkbox that shows its state by a mark, `[x]` or `[ ]`, not by colour alone."""

    @property
    def _button(self) -> Content:
        return Content.styled(
            "[x]" if self.value else "[ ]", self.get_visual_style("toggle--button")
        )


def _stake_value(text: str) -> int:
    """The stake typed in the dialog, in tokens. Raises `OptionsError` unless it is a whole
    number in `LIMITS["stake"]`."""
    low, high = LIMITS["stake"]
    if not text.strip().isdigit():
        raise OptionsError(
            N_("the stake is a whole number of tokens, from {low} to {high}"), low=low, high=high
        )
    return int(text)


class CreateTableDialog(PartialBackground, ModalScreen[protocol.CreateTable | None]):
    """Choose a table's rules; dismissed with the `CreateTable` to send, or None.

    `player` names the table by default (`ana's table`)."""

    BINDINGS = [
        Binding("escape", "cancel", N_("Cancel")),
        Binding("ctrl+s", "ok", N_("Create")),
        Binding("i", "rules", N_("Rules")),
        Binding("question_mark", "app.help", N_("Help"), key_display="?"),
        # a modal screen hides the app's keys: the language key again
        Binding("f2", "app.language", N_("Language"), key_display="F2", show=False),
    ]

    def __init__(self, player: str = "") -> None:
        super().__init__()
        self._player = player
        self._preset = "classic"
        # the form's values: what compose draws and what `_read` finds (option names, plus
        # "seats", "bots", "name"); the stake is kept as typed
        self._values: dict[str, object] = {
            **{name: getattr(PRESETS["classic"], name) for name in OPTION_ORDER},
            "stake": str(PRESETS["classic"].stake),
            "seats": DEFAULT_SEATS,
            "bots": DEFAULT_BOTS,
            "name": "",
            "rated": True,
            "private": False,
            "bot_level": "medium",
            "turn_seconds": DEFAULT_TURN_SECONDS,
            "grace_seconds": DEFAULT_GRACE_SECONDS,
        }

    # ---- texts ---------------------------------------------------------------------------

    @property
    def _tr(self) -> Translator:
        return self.app.tr  # type: ignore[attr-defined]

    def _terms(self) -> Terms:
        return self._tr.terms(PRESETS[self._preset])

    def _preset_label(self, name: str) -> Content:
        return Content(f"{name:<14}{preset_blurb(self._tr, name)}")

    def _label(self, name: str) -> str:
        tr = self._tr
        if name == "seats":
            return tr._("Seats")
        if name == "bots":
            return tr._("Bots")
        if name == "name":
            return tr._("Name")
        if name == "turn_seconds":
            return tr._("Turn timer")
        if name == "grace_seconds":
            return tr._("If disconnected")
        if name == "bot_level":
            return tr._("Bot level")
        return option_label(tr, self._terms(), name)

    def _choices(self, name: str) -> list[tuple[Content, object]]:
        if name == "seats":
            return [(Content(str(n)), n) for n in SEATS]
        if name == "bots":
            seats = self._values["seats"]
            assert isinstance(seats, int)
            return [(Content(str(n)), n) for n in range(seats)]
        if name == "turn_seconds":
            return [(Content(turn_timer_label(self._tr, n)), n) for n in TURN_CHOICES]
        if name == "grace_seconds":
            return [(Content(grace_label(self._tr, n)), n) for n in GRACE_CHOICES]
        if name == "bot_level":  # issue 14
            return [(Content(bot_level_word(self._tr, level)), level) for level in LEVELS]
        if name in CHOICES:
            values: list[object] = list(CHOICES[name])
        else:
            low, high = LIMITS[name]
            values = list(range(low, high + 1))
        terms = self._terms()
        return [(Content(value_label(self._tr, terms, name, v)), v) for v in values]

    def _placeholder(self) -> str:
        if self._player:
            return self._tr._("{name}'s table", name=self._player)
        return self._tr._("table name")

    # ---- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        tr = self._tr
        values = self._values
        with VerticalScroll(id="create-box", classes="dialog") as box:
            box.can_focus = False  # Tab starts at the presets; a focused field scrolls in
            yield Static(Content(tr._("Create a table")), id="create-title", classes="dialog-title")
            with RadioSet(id="preset"):
                for name in PRESET_NAMES:
                    yield MarkedRadioButton(
                        self._preset_label(name), value=name == self._preset, name=name
                    )
            with Grid(id="create-grid"):
                for name in GRID:
                    if name in FLAGS:
                        yield MarkedCheckbox(
                            Content(self._label(name)),
                            value=bool(values[name]),
                            id=name,
                            classes="flag",
                            compact=True,
                        )
                        continue
                    yield Label(
                        Content(self._label(name)), id=f"{name}-label", classes="option-label"
                    )
                    if name == "stake":
                        stake = QuietInput(
                            str(values["stake"]),
                            type="integer",
                            restrict=r"\d{0,3}",
                            max_length=3,
                            id="stake",
                            compact=True,
                        )
                        stake.cursor_blink = False  # no idle CPU per session
                        yield stake
                    else:
                        yield Choice(
                            self._choices(name),
                            value=values[name],
                            id=name,
                            classes="wide" if name in WIDE else "",
                        )
                for name in SETTINGS:  # not rules: how the table waits for its players
                    yield Label(
                        Content(self._label(name)), id=f"{name}-label", classes="option-label"
                    )
                    yield Choice(self._choices(name), value=values[name], id=name)
                yield Label(Content(self._label("name")), id="name-label", classes="option-label")
                table_name = QuietInput(
                    str(values["name"]),
                    placeholder=self._placeholder(),
                    max_length=NAME_LENGTH,
                    id="table-name",
                    compact=True,
                )
                # set here, not in on_mount: a dialog closed while opening (the client left,
                # or a table state arrived) runs on_mount without its widgets mounted
                table_name.cursor_blink = False  # no idle CPU per session
                yield table_name
                # not a rule: whether the table's games move the players' ratings (issue 4)
                yield MarkedCheckbox(
                    Content(tr._("Rated")),
                    value=bool(values["rated"]),
                    id="rated",
                    classes="flag half",
                    compact=True,
                )
                # not listed in the lobby: joined with its invite code (issue 13)
                yield MarkedCheckbox(
                    Content(tr._("Private")),
                    value=bool(values["private"]),
                    id="private",
                    classes="flag half",
                    compact=True,
                )
            yield Static(id="create-status")
            with Horizontal(classes="buttons"):
                yield Button(Content(tr._("Create")), variant="primary", id="ok", compact=True)
                yield Button(Content(tr._("Cancel")), id="cancel", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        if composed(self):  # else closed while opening: nothing to draw on
            self._refresh_form()

    def retranslate(self) -> None:
        """Every text in the app's current language; what was entered stays."""
        self._values = self._read()
        self._write_texts()
        self._refresh_form()

    def _write_texts(self) -> None:
        """Write every label, choice and placeholder in the current language and with the
        chosen preset's terms (the values stay)."""
        tr = self._tr
        self.query_one("#create-title", Static).update(Content(tr._("Create a table")))
        for button in self.query(MarkedRadioButton):
            button.label = self._preset_label(button.name or "")
        for name in GRID:
            if name in FLAGS:
                self.query_one(f"#{name}", MarkedCheckbox).label = Content(self._label(name))
                continue
            self.query_one(f"#{name}-label", Label).update(Content(self._label(name)))
        for name in SETTINGS:
            self.query_one(f"#{name}-label", Label).update(Content(self._label(name)))
        # every choice's words, ranges too (`calza_min_players` says "2 players"); the
        # values stay
        for choice in self.query(Choice):
            choice.set_options(self._choices(choice.id or ""))
        self.query_one("#name-label", Label).update(Content(self._label("name")))
        self.query_one("#rated", MarkedCheckbox).label = Content(tr._("Rated"))
        self.query_one("#private", MarkedCheckbox).label = Content(tr._("Private"))
        self.query_one("#table-name", Input).placeholder = self._placeholder()
        self.query_one("#ok", Button).label = Content(tr._("Create"))
        self.query_one("#cancel", Button).label = Content(tr._("Cancel"))

    # ---- the form ------------------------------------------------------------------------

    def _read(self) -> dict[str, object]:
        """The values the widgets show now (see `_values`)."""
        values: dict[str, object] = {}
        for name in (*SELECTS, "seats", "bots", *SETTINGS):
            values[name] = self.query_one(f"#{name}", Choice).value
        for name in FLAGS:
            values[name] = self.query_one(f"#{name}", Checkbox).value
        values["stake"] = self.query_one("#stake", Input).value
        values["name"] = self.query_one("#table-name", Input).value
        values["rated"] = self.query_one("#rated", Checkbox).value
        values["private"] = self.query_one("#private", Checkbox).value
        return values

    def _overrides(self, values: dict[str, object]) -> dict[str, str | int | bool]:
        """The options of `values` that differ from the preset's. Raises `OptionsError` for
        a stake that is not a number."""
        preset = PRESETS[self._preset]
        chosen = {name: values[name] for name in OPTION_ORDER}
        chosen["stake"] = _stake_value(str(values["stake"]))
        changed: dict[str, str | int | bool] = {}
        for name, value in chosen.items():
            if value != getattr(preset, name):
                assert isinstance(value, str | int | bool)
                changed[name] = value
        return changed

    def checked(self) -> tuple[Options | None, str | None]:
        """The options the form describes and None, or None and why the table cannot be made
        (translated): the rules' own `options_for` and `check_options` with the seats."""
        values = self._read()
        try:
            options = options_for(self._preset, **self._overrides(values))
            seats = values["seats"]
            assert isinstance(seats, int)
            check_options(options, seats=seats)
        except OptionsError as err:
            return None, options_refusal(self._tr, err)
        return options, None

    def command(self) -> protocol.CreateTable:
        """The `CreateTable` the form describes: the options that differ from the preset's
        (none: `{}`), the turn timer and the grace; without a typed name, the placeholder's
        `ana's table` (translated). Raises `OptionsError` for a stake that is not a number
        (other checks: `checked`)."""
        values = self._read()
        seats, bots = values["seats"], values["bots"]
        turn, grace = values["turn_seconds"], values["grace_seconds"]
        assert isinstance(seats, int) and isinstance(bots, int)
        assert isinstance(turn, int) and isinstance(grace, int)
        name = str(values["name"]).strip()
        if not name and self._player:  # what the placeholder promised, in its language
            name = self._placeholder()[:NAME_LENGTH]
        return protocol.CreateTable(
            preset=self._preset,
            seats=seats,
            bots=bots,
            options=self._overrides(values),
            name=name or None,
            rated=bool(values["rated"]),
            private=bool(values["private"]),
            bot_level=str(values["bot_level"]),
            turn_seconds=turn,
            grace_seconds=grace,
        )

    def _refresh_form(self) -> None:
        """Disable the options that do not apply and say whether the table can be made."""
        values = self._read()
        calza_off = values["calza"] == "off"
        special_off = values["special_round"] == "off"
        self.query_one("#calza_min_players", Choice).disabled = calza_off
        self.query_one("#calza_in_special_round", Checkbox).disabled = calza_off or special_off
        self.query_one("#special_face_change", Choice).disabled = special_off
        options, reason = self.checked()
        status = self.query_one("#create-status", Static)
        tr = self._tr
        if reason is not None:
            status.update(Content(tr._("Cannot create: {reason}", reason=reason)))
        elif options is not None:
            changes = self._overrides(values)
            terms = self._terms()
            if changes:
                said = "; ".join(
                    change_phrase(tr, terms, n, changes[n]) for n in OPTION_ORDER if n in changes
                )
                status.update(
                    Content(
                        tr._("Changed from {preset}: {changes}", preset=self._preset, changes=said)
                    )
                )
            else:
                status.update(Content(tr._("The {preset} preset, unchanged", preset=self._preset)))
        status.set_class(reason is not None, "-refused")

    def _reset_to_preset(self, preset: str) -> None:
        """Every option takes `preset`'s value (RULES.md §7)."""
        self._preset = preset
        options = PRESETS[preset]
        self._write_texts()  # the preset's terms (a club table's words)
        for name in SELECTS:
            self.query_one(f"#{name}", Choice).value = getattr(options, name)
        for name in FLAGS:
            self.query_one(f"#{name}", Checkbox).value = getattr(options, name)
        self.query_one("#stake", Input).value = str(options.stake)
        self._refresh_form()

    # ---- events --------------------------------------------------------------------------

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        preset = event.pressed.name
        if preset in PRESETS and preset != self._preset:
            self._reset_to_preset(preset)

    def on_choice_changed(self, event: Choice.Changed) -> None:
        event.stop()
        if event.select.id == "seats" and isinstance(event.value, int):
            self._values["seats"] = event.value
            bots = self.query_one("#bots", Choice)
            keep = bots.value if isinstance(bots.value, int) else 0
            bots.set_options(self._choices("bots"))
            bots.value = min(keep, event.value - 1)
        self._refresh_form()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self._refresh_form()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.input.id == "stake":
            self._refresh_form()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self.action_ok()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_ok()

    # ---- actions -------------------------------------------------------------------------

    def action_ok(self) -> None:
        """Send the table, or say why it cannot be made and send nothing."""
        options, reason = self.checked()
        if reason is not None or options is None:
            self._refresh_form()
            self.notify(
                reason or "",
                title=self._tr._("Cannot create"),
                severity="warning",
                markup=False,
            )
            return
        self.dismiss(self.command())

    def action_rules(self) -> None:
        """The rules panel for the options as set so far (or why they cannot be played)."""
        options, reason = self.checked()
        if options is None:
            self.notify(
                reason or "", title=self._tr._("Cannot create"), severity="warning", markup=False
            )
            return
        values = self._read()
        turn, grace = values["turn_seconds"], values["grace_seconds"]
        assert isinstance(turn, int) and isinstance(grace, int)
        self.app.open_panel(RulesScreen, options, "draft", (turn, grace))  # type: ignore[attr-defined]

    def action_cancel(self) -> None:
        self.dismiss(None)
