"""The reveal at a round's end: every hand, the dice that counted, who lost or gained a die,
and at a table with stakes every payment with its reason, each balance and the bank.

A panel of the table screen, shown in place of the cups (no screen is pushed: a reveal comes
every round, and a pushed screen rebuilds the footer twice). The table screen closes it on
any key or click and then tells the lobby this player is ready (`Ready`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from perudo_ssh.i18n import Terms, Translator
from perudo_ssh.rules import RoundResult
from screens.shared import SharedLines
from screens.wording import (
    call_word,
    counts_for,
    left_lines,
    payment_lines,
    reveal_story,
    tally_line,
)

WIDTH = 78
"""Columns of the reveal's text: an 80-column terminal less the panel's padding."""


def hand_line(
    tr: Translator,
    name: str,
    faces: Sequence[int],
    result: RoundResult,
    tokens: int | None = None,
    waited: bool = False,
) -> Content:
    """`ana      [5]  3  [1]  6     ¤-10`: the dice that counted for the bid in brackets,
    highlighted; then the balance after the round at a table with stakes (RULES.md §6);
    then, when the table still `waited` for this player to go on, `⌛ not yet`."""
    parts: list[tuple[str, str] | str] = [(f"{name[:16]:<17}", "bold")]
    width = 17
    for face in faces:
        if counts_for(result, face):
            parts.append((f"[{face}]", "bold reverse $accent"))
        else:
            parts.append((f" {face} ", "dim"))
        parts.append(" ")
        width += 4
    if not faces:
        out = tr._("out")
        parts.append((out, "dim"))
        width += len(out)
    if tokens is not None:
        parts.append(" " * max(1, 17 + 4 * 5 - width) + f"  ¤{tokens}")
        width = max(width + 1, 17 + 4 * 5) + 3 + len(str(tokens))
    if waited:
        parts.append(" " * max(1, 17 + 4 * 5 - width) + "  ")
        parts.append(("⌛ " + tr._("not yet"), "italic $warning"))
    return Content.assemble(*parts)


def round_title(
    tr: Translator, terms: Terms, result: RoundResult, finished: int, automatic: bool = False
) -> str:
    """`Round 3: Dudo!`, `Round 3: Dudo! (palifico round)`, `Round 3: automatic Dudo (time
    ran out)`: the heading of round `finished` (0-based), in `tr`'s language; `automatic`
    when its call was made for a player whose time ran out (issue 5)."""
    call = call_word(terms, result.call)
    if automatic and result.special is not None:
        title = tr._(
            "Round {n} ({special} round): automatic {call} (time ran out)",
            n=finished + 1,
            call=call,
            special=terms.special(result.special),
        )
    elif automatic:
        title = tr._("Round {n}: automatic {call} (time ran out)", n=finished + 1, call=call)
    elif result.special is not None:
        title = tr._(
            "Round {n}: {call}! ({special} round)",
            n=finished + 1,
            call=call,
            special=terms.special(result.special),
        )
    else:
        title = tr._("Round {n}: {call}!", n=finished + 1, call=call)
    return title


def reveal_lines(
    tr: Translator,
    terms: Terms,
    result: RoundResult,
    names: Sequence[str],
    finished: int,
    automatic: bool = False,
    waiting: Collection[str] = (),
) -> list[Content]:
    """The whole reveal of round `finished` (0-based), line by line, in `tr`'s language;
    `automatic` when its call was made for a player whose time ran out (issue 5); each hand
    of a player named in `waiting` (the table waits for them to go on) marked so (issue 13)."""
    title = round_title(tr, terms, result, finished, automatic)
    lines = [
        Content.styled(title, "bold $accent"),
        Content(reveal_story(tr, terms, result, names)),
        Content.styled(tally_line(tr, terms, result), "bold"),
    ]
    balances = result.tokens.balances if result.tokens is not None else None
    lines += [
        hand_line(
            tr,
            names[seat],
            faces,
            result,
            None if balances is None else balances[seat],
            waited=names[seat] in waiting,
        )
        for seat, faces in enumerate(result.hands)
        if faces or seat in (result.caller, result.bidder)
    ]
    lines += [Content.styled(line, "bold") for line in left_lines(tr, result, names)]
    payments = payment_lines(tr, terms, result, names)
    if len(payments) == 2 and len(" · ".join(payments)) <= WIDTH:  # one payment: one line
        payments = [" · ".join(payments)]
    lines += [Content.styled(line, "$warning") for line in payments]
    lines.append(Content.styled(tr._("Press Space to continue"), "dim italic"))
    return lines


class RevealPanel(SharedLines, Widget):
    """One finished round, drawn over the table's middle; posts `Closed` when clicked.

    Everyone at the table sees the same reveal in their language, so its lines are drawn
    once for the process (`SharedLines`; ~2 ms a draw at 80×24 under load, issue 10)."""

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
        self._content = Content("")

    def show(
        self,
        tr: Translator,
        terms: Terms,
        result: RoundResult,
        names: Sequence[str],
        finished: int,
        automatic: bool = False,
        waiting: Collection[str] = (),
    ) -> None:
        """Reveal round `finished` (0-based): every hand, the counting dice, who lost or won,
        the payments; in `tr`'s language, the game's words from `terms`; `automatic` when
        the round's call was made for a player whose time ran out; the hands of those the
        table still `waiting` for marked. Redraws only when that changes what is shown."""
        lines = reveal_lines(tr, terms, result, names, finished, automatic, waiting)
        if [(line.plain, line.spans) for line in lines] != [
            (line.plain, line.spans) for line in self._lines
        ]:
            self._lines = lines
            self._content = Content("\n").join(lines)
            self.refresh()

    def render(self) -> Content:
        return self._content

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Closed())
