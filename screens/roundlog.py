"""The round log at the table (issue 13): every finished round of the game in a few words,
newest first - who called what on whom, what was counted, who lost or gained a die - open
over the bids with `g`, as the table chat opens with `t`.

It is drawn from `GameView.rounds` (the results without the hands: what the reveal showed,
public once revealed), so a player who arrives or comes back mid-game reads the rounds
before them too. The replay after the game has every hand."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from perudo_ssh.i18n import Terms, Translator
from perudo_ssh.rules import RoundResult
from screens.reveal import round_title
from screens.wording import reveal_story, tally_line

__all__ = ["RoundLog", "round_log_lines"]


def round_log_lines(
    tr: Translator, terms: Terms, rounds: Sequence[RoundResult], names: Sequence[str]
) -> list[Content]:
    """The log's lines, newest round first: `Round 3: Dudo!` (and its special round), the
    story of the call (`reveal_story`) and the tally (`tally_line`), a blank line between
    rounds; "No round has ended yet." when none has. In `tr`'s language, the game's words
    from `terms`; `names` by seat."""
    if not rounds:
        return [Content.styled(tr._("No round has ended yet."), "italic")]
    lines: list[Content] = []
    for index in range(len(rounds) - 1, -1, -1):
        result = rounds[index]
        title = round_title(tr, terms, result, index)
        if lines:
            lines.append(Content(""))
        lines += [
            Content.styled(title, "bold $accent"),
            Content(reveal_story(tr, terms, result, names)),
            Content.styled(tally_line(tr, terms, result), "dim"),
        ]
    return lines


class RoundLog(VerticalScroll, can_focus=False):
    """The round log's panel: `show` its lines; it scrolls (PgUp/PgDn from the table, the
    mouse wheel), its border title says how to close it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: list[tuple[str, tuple[object, ...]]] = []

    def compose(self) -> ComposeResult:
        yield Static(id="round-log-lines")

    def show(self, title: str, lines: list[Content]) -> None:
        """Draw `lines` under the border `title`; nothing when they are what is shown."""
        self.border_title = title
        drawn: list[tuple[str, tuple[object, ...]]] = [(c.plain, tuple(c.spans)) for c in lines]
        if drawn != self._shown and self.is_mounted:
            self._shown = drawn
            self.query_one("#round-log-lines", Static).update(Content("\n").join(lines))
