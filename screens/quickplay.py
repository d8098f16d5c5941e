"""The quick-play dialog (issue 13): a preset (or any) and how long to wait for people before
bots take the free seats; Enter sends `protocol.QuickPlay`.

Drawn by keys alone (←/→ the preset, ↑/↓ the wait), one `Static`: nothing to focus, cheap
to open. The app remembers the last choice for the next time.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from perudo_ssh import protocol
from perudo_ssh.i18n import N_, Translator
from perudo_ssh.rules import PRESETS
from screens.cheaper import PartialBackground
from screens.footer import Footer
from screens.mounting import composed
from screens.rulestext import preset_blurb
from screens.widgets import app_tr

CHOICES: tuple[str | None, ...] = (None, *PRESETS)
"""The presets offered, in order: None for any."""


def quick_play_lines(tr: Translator, preset: str | None, wait: int) -> list[str]:
    """The dialog's lines: the preset with its blurb, the wait, what happens."""
    name = tr._("any preset") if preset is None else preset
    blurb = (
        tr._("the open table nearest to starting") if preset is None else preset_blurb(tr, preset)
    )
    return [
        tr._("Preset      ◀ {name} ▶   ←/→", name=name),
        f"            {blurb}",
        tr._("Bots after  ◀ {seconds} s ▶   ↑/↓", seconds=wait),
        "",
        tr._(
            "You sit at the open table with the most players; with none open, a table of four "
            "opens and bots take its free seats once the wait is over."
        ),
    ]


class QuickPlayDialog(PartialBackground, ModalScreen[protocol.QuickPlay | None]):
    """Pick a preset and a wait; dismissed with the `protocol.QuickPlay` to send, or None."""

    BINDINGS = [
        Binding("enter", "play", N_("Play")),
        Binding("escape", "dismiss_none", N_("Cancel"), key_display="esc"),
        Binding("left", "preset(-1)", show=False),
        Binding("right", "preset(1)", show=False),
        Binding("up", "wait(1)", show=False),
        Binding("down", "wait(-1)", show=False),
    ]

    def __init__(self, preset: str | None = None, wait: int = 30) -> None:
        super().__init__()
        self.preset = preset if preset in CHOICES else None
        self.wait = wait if wait in protocol.QUICK_WAITS else 30

    def compose(self) -> ComposeResult:
        with Vertical(id="quick-box", classes="dialog"):
            yield Static(id="quick-title", classes="dialog-title")
            yield Static(id="quick-lines")
            yield Static(id="quick-hint", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        if composed(self):  # not closed while opening
            self._draw()

    def retranslate(self) -> None:
        """Redraw in the app's new language."""
        if composed(self):
            self._draw()

    def _draw(self) -> None:
        tr = app_tr(self)
        self.query_one("#quick-title", Static).update(Content(tr._("Quick play")))
        lines = quick_play_lines(tr, self.preset, self.wait)
        self.query_one("#quick-lines", Static).update(Content("\n".join(lines)))
        self.query_one("#quick-hint", Static).update(Content(tr._("Enter: play · Esc: cancel")))

    def action_preset(self, step: int) -> None:
        """The next (1) or previous (-1) preset, round the list."""
        self.preset = CHOICES[(CHOICES.index(self.preset) + step) % len(CHOICES)]
        self._draw()

    def action_wait(self, step: int) -> None:
        """A longer (1) or shorter (-1) wait, within `protocol.QUICK_WAITS`."""
        waits = protocol.QUICK_WAITS
        self.wait = waits[max(0, min(len(waits) - 1, waits.index(self.wait) + step))]
        self._draw()

    def action_play(self) -> None:
        self.dismiss(protocol.QuickPlay(preset=self.preset, wait_seconds=self.wait))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
