"""The text box where a player types a bid or a call word (`5x4`, `3p`, `dudo`)."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message

from perudo_ssh.i18n import N_
from screens.cheaper import QuietInput


class BidInput(QuietInput):
    """The text box for typed bids, at most `MAX_LENGTH` characters; Escape (or Tab) goes
    back to the table's keys. Text that would make it longer (a key, a paste) is refused
    whole, with `TooLong`."""

    MAX_LENGTH = 32
    """Longer than any bid or call anyone types (`twelve sixes`, `calza`)."""

    BINDINGS = [
        Binding("enter", "submit", N_("Bid"), key_display="⏎"),
        Binding("escape", "screen.focus_table", N_("Back to keys"), key_display="esc"),
        Binding("tab", "screen.focus_table", show=False),
    ]

    class TooLong(Message):
        """A key or a paste was refused: the text would be over `MAX_LENGTH`."""

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, max_length=self.MAX_LENGTH, id=id, compact=True)
        self.cursor_blink = False  # a blinking cursor costs CPU per idle session

    def restricted(self) -> None:
        super().restricted()  # the bell
        self.post_message(self.TooLong())
