"""The bid a player composes with keys: a count and a face, started from the lowest legal bid
each turn (RULES.md §3). Plain state of the table screen; the legal bids come from the view."""

from __future__ import annotations

from textual.content import Content

from perudo_ssh.i18n import Translator, translator
from perudo_ssh.rules import Bid, GameView
from screens.bidtext import format_bid


class BidComposer:
    """`count` × `face`, moved by the count and face keys."""

    def __init__(self) -> None:
        self.count = 1
        self.face = 2
        self._turn: tuple[object, ...] | None = None

    @property
    def bid(self) -> Bid:
        """The bid composed so far (not necessarily legal: see `GameView.choices.bids`)."""
        return Bid(count=self.count, face=self.face)

    def follow(self, game: GameView) -> bool:
        """On a new turn, start again from the lowest legal bid: on the current bid's face if
        it may still be raised, else the first legal one. True when a new turn began."""
        turn = (game.round_index, game.phase, len(game.bids), game.turn)
        if turn == self._turn:
            return False
        self._turn = turn
        legal = game.choices.bids
        if legal:
            same = [b for b in legal if game.bids and b.face == game.bids[-1].bid.face]
            start = min(same, key=lambda b: b.count) if same else legal[0]
            self.count, self.face = start.count, start.face
        return True

    def take(self, bid: Bid) -> None:
        """Compose `bid` (a typed one), count and face at once."""
        self.count, self.face = bid.count, bid.face

    def step_count(self, game: GameView, delta: int) -> None:
        """Move the count by `delta` dice, kept between 1 and the dice in play (RULES.md §2.8)."""
        self.count = max(1, min(game.dice_in_play, self.count + delta))

    def pick_face(self, game: GameView, face: int) -> bool:
        """Face `face`, keeping the count when that bid is legal, else at the lowest legal
        count for the face (issue 13: 5×5 then 4 gave 3×4); False when no bid on it is legal
        now (the count is then kept)."""
        self.face = face
        counts = [b.count for b in game.choices.bids if b.face == face]
        if counts and self.count not in counts:
            self.count = min(counts)
        return bool(counts)

    def line(
        self, game: GameView, then_show: tuple[int, ...] = (), tr: Translator | None = None
    ) -> Content:
        """`Your bid ▸ 5×4  ✓ legal   ↑↓ count · 1-6 face · ⏎ bid`; with `then_show`, the
        dice to show and reroll right after the bid instead of the keys. In `tr`'s language
        (English by default), pacos named as the table names them."""
        tr = tr if tr is not None else translator("en")
        legal = self.bid in game.choices.bids
        mark = ("  " + tr._("✓ legal"), "green") if legal else ("  " + tr._("✗ not allowed"), "red")
        if then_show:
            dice = " ".join(map(str, then_show))
            after = ("   " + tr._("then show {dice} (r: change)", dice=dice), "italic")
        else:
            after = ("   " + tr._("↑↓ count · 1-6 face · ⏎ bid"), "dim")
        bid = format_bid(self.bid, tr.terms(game.options))
        return Content.assemble(tr._("Your bid ▸") + " ", (f" {bid} ", "bold reverse"), mark, after)
