"""The help screen (`?` everywhere): every key, and the rules of the table's preset."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from perudo_ssh.rules import PRESET_NAMES, PRESETS, Options
from screens.wording import PRESET_BLURBS, rules_summary

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Lobby", (
        ("↑ ↓", "choose a table"),
        ("c", "create a table"),
        ("j / Enter", "join the chosen table"),
        ("s", "watch the chosen table"),
        ("q", "quit"),
    )),
    ("Table, waiting", (
        ("b", "add a bot (creator)"),
        ("s", "start the game (creator)"),
        ("l / Esc", "leave the table"),
    )),
    ("Table, playing", (
        ("↑ ↓  + -", "bid count up / down"),
        ("1-6  ← →", "bid face (1 = pacos)"),
        ("Enter", "make the bid shown"),
        ("Tab", "type a bid: 5x4, 5 4, 5*4, 3p, 3 pacos; or dudo / calza"),
        ("Esc / Tab", "back from typing to keys"),
        ("d", "dudo: doubt the bid"),
        ("c", "calza: claim the bid is exact (if played here)"),
        ("j", "jonti: exact call out of turn (club)"),
        ("z", "declare a calzone round (club)"),
        ("r", "club: set dice aside face up, reroll the rest (with a bid)"),
        ("l / Esc", "leave the table (asks first mid-game)"),
    )),
    ("Reveal", (("any key", "next round"),)),
    ("Game over", (("a", "play again"), ("l / Esc", "back to the lobby"))),
    ("Dialogs", (("Tab", "next field"), ("Enter", "choose / confirm"), ("Esc", "cancel"))),
    ("Everywhere", (("?", "this help"), ("ctrl+q", "quit"))),
)  # fmt: skip


def keys_text() -> Content:
    """Every key binding, place by place, as the help screen shows them."""
    lines: list[Content] = []
    for place, keys in KEYS:
        lines.append(Content.styled(place, "bold underline"))
        lines += [Content.assemble((f"  {key:<11}", "bold $accent"), what) for key, what in keys]
    return Content("\n").join(lines)


def rules_text(options: Options | None) -> str:
    """The rules of `options` in plain words; in the lobby (None), the classic rules and
    what each preset changes."""
    if options is not None:
        return "\n".join(f"• {line}" for line in rules_summary(options))
    classic = "\n".join(f"• {line}" for line in rules_summary(PRESETS["classic"])[1:])
    presets = "\n".join(f"• {name}: {PRESET_BLURBS[name]}" for name in PRESET_NAMES)
    return (
        "Perudo, liar's dice: everyone rolls in secret, then bids on all the dice in play.\n"
        f"{classic}\n\nTables choose a preset:\n{presets}"
    )


class HelpScreen(ModalScreen[None]):
    """Key bindings and the rules in plain words; any of Esc, q, ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", key_display="esc")]

    def __init__(self, options: Options | None = None) -> None:
        super().__init__()
        self._options = options

    def compose(self) -> ComposeResult:
        rules_title = "Rules" if self._options is None else "Rules of this table"
        sections = [
            (rules_title, Static(rules_text(self._options), id="help-rules")),
            ("Keys", Static(keys_text(), id="help-keys")),
        ]
        if self._options is None:  # in the lobby, keys first
            sections.reverse()
        with VerticalScroll(id="help-box", classes="dialog"):
            for title, body in sections:
                yield Static(title, classes="dialog-title")
                yield body
        yield Footer()
