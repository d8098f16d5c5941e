"""The key bar at the bottom of every screen, in the player's language.

A drop-in for `textual.widgets.Footer`: each key's label is its binding's description taken
as a message id and translated with the app's `tr` (`PerudoApp.tr`), unless the screen names
it itself with an optional `describe_binding(binding) -> str | None` (the table screen does,
so that "Dudo" reads as the table's own word, e.g. "Не верю" at a Russian club table).
After a language switch, `screen.refresh_bindings()` redraws it.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

from perudo_ssh.i18n import N_

__all__ = ["Footer", "describe"]

TEXTUAL_LABELS = (N_("Dismiss menu"), N_("Show menu"))
"""Key labels of Textual's own widgets (a Select's menu), for the catalogs."""


def describe(node: TextualFooter, binding: Binding) -> str:
    """The label of `binding` in the footer of `node`'s screen: the screen's own
    `describe_binding(binding)` if it gives one, else the description translated by the
    app's `tr` (the English description when the app has none, as in a bare test app)."""
    own = getattr(node.screen, "describe_binding", None)
    if own is not None:
        text = own(binding)
        if text is not None:
            return text
    tr = getattr(node.app, "tr", None)
    return tr._(binding.description) if tr is not None else binding.description


class Footer(TextualFooter):
    """`textual.widgets.Footer` with every key label translated (see the module docstring)."""

    def compose(self) -> ComposeResult:
        active = self.screen.active_bindings if self._bindings_ready else {}
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.description and widget.key in active:
                widget.description = describe(self, active[widget.key][1])
            yield widget
