"""Table widgets: dice drawn in boxes, the cups around the table, the round's bids.

Widgets only draw what a screen last handed them (`show(...)`); the game itself lives in the
lobby's `TableState`. Each redraw keeps the widget's size, so it refreshes without layout
(TEXTUAL-OVER-SSH.md: update in place). Their own words ("(you)", "5 dice", "out") are in the
app's language (`app.tr`; English in an app without one, as in a bare test app).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import NamedTuple

from rich.text import Text
from textual.cache import LRUCache
from textual.content import Content
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Static

from perudo_ssh.i18n import Translator, translator
from screens.changedrows import ChangedRows
from screens.wording import bot_tag, clock_time

# Box-drawing digits render in any UTF-8 terminal; the paco (face 1) gets a double box.
_BOX = ("┌───┐", "│ {} │", "└───┘")
_PACO_BOX = ("╔═══╗", "║ {} ║", "╚═══╝")
# dice set aside face up (show and reroll, RULES.md §6): a heavy box, drawn in reverse
_SHOWN_BOX = ("┏━━━┓", "┃ {} ┃", "┗━━━┛")
CARD_WIDTH = 46
"""Columns of one seat's box; a wide table lays the boxes side by side."""


class DrawnTexts:
    """The texts a screen's Statics show now, so that each is updated only when it changes
    (every session gets every change of its table or of the lobby: issue 10).

    `put(selector, content)` shows `content` (a str is plain text, never markup: names are
    the players' own) in the Static `selector` below `node`, unless it shows that already;
    `layout` only where its height or width may change. `clear()` forgets what is shown, so
    that the next `put` of each draws again (after a language switch)."""

    def __init__(self, node: DOMNode) -> None:
        self._node = weakref.ref(node)  # no cycle with the screen that holds this (issue 10)
        self._drawn: dict[str, tuple[str, tuple[object, ...]]] = {}

    def put(self, selector: str, content: str | Content | Text, *, layout: bool = False) -> None:
        """Show `content` in the Static `selector` if it is not what it shows already."""
        if isinstance(content, str):
            content = Content(content)
        key = (content.plain, tuple(content.spans))
        if self._drawn.get(selector) != key:
            node = self._node()
            if node is not None:
                self._drawn[selector] = key
                node.query_one(selector, Static).update(content, layout=layout)

    def clear(self) -> None:
        """Forget what is shown: the next `put` of each selector draws."""
        self._drawn.clear()


def app_tr(widget: Widget) -> Translator:
    """The translator of the app `widget` is in (`PerudoApp.tr`), else English."""
    tr = getattr(widget.app, "tr", None)
    return tr if isinstance(tr, Translator) else translator("en")


def die_lines(face: int, shown: bool = False) -> tuple[str, str, str]:
    """Three text lines drawing one die; face 1 (paco) in a double box, a die set aside face
    up (`shown`) in a heavy one."""
    top, middle, bottom = _SHOWN_BOX if shown else _PACO_BOX if face == 1 else _BOX
    return top, middle.format(face), bottom


class DiceRow(Widget):
    """A row of large boxed dice, three lines tall: the hidden dice, then (apart) the dice set
    aside face up. Pacos are double-boxed and coloured; set-aside dice heavy-boxed."""

    DEFAULT_CSS = """
    DiceRow {
        height: 3;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._faces: tuple[int, ...] = ()
        self._shown: tuple[int, ...] = ()
        self._note = ""

    def show(self, faces: Sequence[int], note: str = "", shown: Sequence[int] = ()) -> None:
        """Draw `faces` (in hand order) and `shown`, the dice set aside face up (RULES.md §6);
        `note` replaces the dice when there are none."""
        drawn = (tuple(faces), tuple(shown), note)
        if drawn != (self._faces, self._shown, self._note):
            self._faces, self._shown, self._note = drawn
            self.refresh()

    def render(self) -> Content:
        if not self._faces and not self._shown:
            return Content(self._note)
        rows: list[list[tuple[str, str]]] = [[], [], []]
        for face in self._faces:
            style = "bold $accent" if face == 1 else "bold"
            for row, text in zip(rows, die_lines(face), strict=True):
                row += [(text, style), (" ", "")]
        if self._faces and self._shown:
            for row in rows:
                row.append(("  ", ""))
        for face in self._shown:
            for row, text in zip(rows, die_lines(face, shown=True), strict=True):
                row += [(text, "bold reverse"), (" ", "")]
        return Content("\n").join(Content.assemble(*row) for row in rows)


class Cup(NamedTuple):
    """One seat as drawn around the table: `dice` its count, `shown` its dice set aside face
    up (RULES.md §6), `tokens` its balance at a table with stakes (else None). `away`: its
    player lost their connection (issue 5): the seat is `held` for them (whole seconds left)
    or, with `held` None, a bot plays it until they are back. `rating`: the player's rating
    in points, None for a bot or a guest (issue 13)."""

    name: str
    dice: int
    shown: tuple[int, ...] = ()
    turn: bool = False
    me: bool = False
    bot: bool = False
    tokens: int | None = None
    away: bool = False
    held: int | None = None
    rating: int | None = None
    level: str | None = None


SEAT_DRAWINGS: LRUCache[tuple[object, ...], tuple[Content, ...]] = LRUCache(1024)
"""Seats drawn (`CupsPanel`: a box's three lines, or a seat's line), by what they show, the
width and the language, for every app of the process: the players at a table see the same
seats, each but their own (issue 10: each bid drew every seat again in every app, ~5 % of
a table screen's handling of a bid). A seat as drawn holds nothing hidden (its count, its
dice set aside face up, its state), so sharing it shows no one a die they may not see."""


class CupsPanel(ChangedRows, Widget):
    """Every seat as a cup: name, one `[?]` per hidden die, set-aside dice, tokens; the seat
    to act highlighted (and marked ▶ for terminals without colour). A change draws again only
    the seats' rows that changed (`ChangedRows`)."""

    DEFAULT_CSS = """
    CupsPanel {
        height: 1fr;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._cups: tuple[Cup, ...] = ()

    def show(self, cups: Sequence[Cup]) -> None:
        """Draw `cups` in seat order; redraws only when they changed."""
        cups = tuple(cups)
        if cups != self._cups:
            self._cups = cups
            self.redraw()

    @staticmethod
    def _label(cup: Cup, tr: Translator) -> str:
        if cup.me:
            return tr._("{name} (you)", name=cup.name)
        if cup.bot and not cup.away:  # a bot standing in for a player says so itself
            if cup.level is not None:  # `bot-Elena (hard bot)` (issue 14)
                return tr._("{name} ({tag})", name=cup.name, tag=bot_tag(tr, cup.level))
            return tr._("{name} (bot)", name=cup.name)
        return cup.name

    @staticmethod
    def _away(cup: Cup, tr: Translator, short: bool = False) -> tuple[str, str] | None:
        """What became of a disconnected player's seat, and its style: `disconnected, seat
        held 1:45` (counting down), then `away, a bot plays for now`; `short` for a seat drawn
        on one line (`held 1:45`, `away: bot`). None for a seat whose player is here."""
        if not cup.away:
            return None
        if cup.held is not None:
            time = clock_time(cup.held)
            if short:
                return tr._("held {time}", time=time), "bold $warning"
            return tr._("disconnected, seat held {time}", time=time), "bold $warning"
        if short:
            return tr._("away: bot"), "italic $text-muted"
        return tr._("away, a bot plays for now"), "italic $text-muted"

    @staticmethod
    def _dice(cup: Cup, tr: Translator | None = None) -> list[tuple[str, str] | str]:
        """`[?][?][3][5]    4 dice  ¤8`: a `[?]` per hidden die, set-aside dice face up
        (RULES.md §6), the count; or `out`; then the balance at a table with stakes."""
        tr = tr if tr is not None else translator("en")
        if cup.dice == 0:
            parts: list[tuple[str, str] | str] = [(tr._("out"), "dim")]
        else:
            count = tr.n_("{n} die", "{n} dice", cup.dice)
            hidden = max(0, cup.dice - len(cup.shown))
            parts = [("[?]" * hidden, "bold $accent")]
            parts += [(f"[{face}]", "bold reverse") for face in cup.shown]
            parts += [" " * (16 - 3 * (hidden + len(cup.shown))), f"{count:<7}"]
        if cup.tokens is not None:
            parts.append(f"  ¤{cup.tokens}")
        return parts

    def _line(self, cup: Cup, width: int, tr: Translator) -> Content:
        """One line: the turn marker, the name (and rating or state), the dice (once drawn
        in the process for the same seat, width and language: `SEAT_DRAWINGS`)."""
        key = ("line", cup, width, tr.code)
        found = SEAT_DRAWINGS.get(key)
        if found is None:
            found = SEAT_DRAWINGS[key] = (self._draw_line(cup, width, tr),)
        return found[0]

    def _draw_line(self, cup: Cup, width: int, tr: Translator) -> Content:
        marker = "▶ " if cup.turn else "  "
        dice = Content.assemble(*self._dice(cup, tr))
        # the name gives way first: a seat's line never wraps onto the next
        room = max(8, min(22, width - len(marker) - 2 - len(dice.plain)))
        style = "bold" if cup.me else "dim" if not cup.dice else ""
        away = self._away(cup, tr, short=True)
        if away is None:
            label = self._label(cup, tr)
            if cup.rating is not None and len(label) + 6 <= room:  # `ana (you) 1014`
                label = f"{label} {cup.rating}"
            name = Content.styled(f"{label[:room]:<{room}} ", style)
        else:  # the seat's state outlasts the name: `benedet · held 1:45`
            said, look = away
            label = self._label(cup, tr)[: max(3, room - len(said) - 3)]
            name = Content.assemble((label, style), " · ", (said, look))
            name = name[:room].pad_right(max(0, room - len(name.plain))) + Content(" ")
        line = Content.assemble(marker, name, dice)[: max(1, width)]
        if cup.turn:
            line = line.pad_right(max(0, width - len(line.plain))).stylize("reverse")
        return line

    def _card(self, cup: Cup, width: int, tr: Translator) -> list[Content]:
        """Three lines: the seat in a rounded box, its name in the top border (once drawn in
        the process for the same seat, width and language: `SEAT_DRAWINGS`)."""
        key = ("card", cup, width, tr.code)
        found = SEAT_DRAWINGS.get(key)
        if found is None:
            found = SEAT_DRAWINGS[key] = tuple(self._draw_card(cup, width, tr))
        return list(found)

    def _draw_card(self, cup: Cup, width: int, tr: Translator) -> list[Content]:
        inner = max(20, min(width, CARD_WIDTH) - 4)
        style = "bold $accent" if cup.turn else "dim" if not cup.dice else ""
        label = Content(("▶ " if cup.turn else "") + self._label(cup, tr))
        away = self._away(cup, tr)
        if away is not None and min(len(label.plain), 6) + 3 + len(away[0]) > inner - 4:
            away = self._away(cup, tr, short=True)  # the long words leave no room for a name
        if away is not None:  # the name gives way to the seat's state
            said, look = away
            label = label[: max(3, inner - 4 - 3 - len(said))]
            label = Content.assemble(label, " · ", (said, look))
        label = label[: inner - 4]
        head = Content.styled("╭─ ", style) + label.stylize_before(style)
        rest = inner - len(label.plain) - 1  # the border's dashes after the name
        rating = f" {cup.rating} " if cup.rating is not None else ""
        if rating and rest >= len(rating) + 2:  # the rating at the right: `─ 1014 ─╮`
            tail = "─" * (rest - len(rating) - 1) + rating + "─╮"
        else:
            tail = "─" * max(0, rest) + "╮"
        top = head + Content.styled(" " + tail, style)
        body = Content.assemble(*self._dice(cup, tr))[:inner]
        body = body.pad_right(max(0, inner - len(body.plain)))
        if cup.turn:
            body = body.stylize("bold")
        return [
            top,
            Content.assemble(("│ ", style), body, (" │", style)),
            Content.styled("╰" + "─" * (inner + 2) + "╯", style),
        ]

    def rows(self) -> list[Content]:
        """One line a row: each seat in a box (side by side when wide), on a line of its
        own with a blank line between, or a line each; as the widget's size allows."""
        tr = app_tr(self)
        width, height = self.size
        cups = self._cups
        columns = max(1, min(len(cups), (width + 2) // (CARD_WIDTH + 2)))
        rows = -(-len(cups) // columns)
        if cups and columns > 1 and height >= 3 * rows:  # wide: boxes side by side
            lines = []
            for first in range(0, len(cups), columns):
                cards = [self._card(cup, CARD_WIDTH, tr) for cup in cups[first : first + columns]]
                lines += [Content("  ").join(parts) for parts in zip(*cards, strict=True)]
        elif cups and height >= 3 * len(cups):  # room for a box per seat
            lines = [line for cup in cups for line in self._card(cup, width, tr)]
        elif cups and height >= 2 * len(cups) - 1:  # a blank line between seats
            lines = []
            for cup in cups:
                lines += [self._line(cup, width, tr), Content("")]
            lines.pop()
        else:
            lines = [self._line(cup, width, tr) for cup in cups]
        return lines


class BidHistory(ChangedRows, Widget):
    """The round's bids, oldest first, keeping the newest in view (and, in the first round,
    the opening roll before them). A new bid draws again only its row while the list is not
    full (`ChangedRows`)."""

    DEFAULT_CSS = """
    BidHistory {
        height: 1fr;
        width: 30;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._lines: tuple[Content, ...] = ()
        self._key: tuple[object, ...] = ()

    def show(self, lines: Sequence[str | Content]) -> None:
        """Draw the round's lines; redraws only when they changed."""
        drawn = tuple(Content(line) if isinstance(line, str) else line for line in lines)
        # Content compares by its text alone: compare the styles too
        key = tuple((line.plain, tuple(line.spans)) for line in drawn)
        if key != self._key:
            self._lines, self._key = drawn, key
            self.redraw()

    def rows(self) -> list[Content]:
        """The title, then the newest bids that fit (or "no bid yet")."""
        tr = app_tr(self)
        room = max(1, self.size.height - 1)
        lines = self._lines[-room:] if self._lines else (Content(tr._("no bid yet")),)
        title = Content.styled(tr._("Bids this round"), "bold underline")
        return [title, *lines]
