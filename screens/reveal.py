"""The reveal at a round's end: every hand, the dice that counted, who lost or gained a die.

A panel of the table screen, shown in place of the cups (no screen is pushed: a reveal comes
every round, and a pushed screen rebuilds the footer twice). The table screen closes it on
any key or click and then tells the lobby this player is ready (`Ready`).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from perudo_ssh.rules import RoundResult
from screens.wording import counts_for, payments_line, reveal_story, tally_line


def hand_line(name: str, faces: Sequence[int], result: RoundResult) -> Content:
    """`ana      [5]  3  [1]  6`: the dice that counted for the bid in brackets, highlighted."""
    parts: list[tuple[str, str] | str] = [(f"{name[:16]:<17}", "bold")]
    for face in faces:
        if counts_for(result, face):
            parts.append((f"[{face}]", "bold reverse $accent"))
        else:
            parts.append((f" {face} ", "dim"))
        parts.append(" ")
    if not faces:
        parts.append(("out", "dim"))
    return Content.assemble(*parts)


def reveal_lines(result: RoundResult, names: Sequence[str], finished: int) -> list[Content]:
    """The whole reveal of round `finished` (0-based), line by line."""
    title = f"Round {finished + 1}: {result.call}!"
    if result.special is not None:
        title += f" ({result.special} round)"
    lines = [
        Content.styled(title, "bold $accent"),
        Content(reveal_story(result, names)),
        Content.styled(tally_line(result), "bold"),
    ]
    lines += [
        hand_line(names[seat], faces, result)
        for seat, faces in enumerate(result.hands)
        if faces or seat in (result.caller, result.bidder)
    ]
    tokens = payments_line(result, names)
    if tokens is not None:
        lines.append(Content(tokens))
    lines.append(Content.styled("Press any key to continue", "dim italic"))
    return lines


class RevealPanel(Widget):
    """One finished round, drawn over the table's middle; posts `Closed` when clicked."""

    DEFAULT_CSS = """
    RevealPanel {
        height: 1fr;
        padding: 0 1;
        background: $boost;
        display: none;
    }
    """

    class Closed(Message):
        """The player clicked the reveal away."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Content] = []

    def show(self, result: RoundResult, names: Sequence[str], finished: int) -> None:
        """Reveal round `finished` (0-based): every hand, the counting dice, who lost or won."""
        self._lines = reveal_lines(result, names, finished)
        self.refresh()

    def render(self) -> Content:
        return Content("\n").join(self._lines)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Closed())
