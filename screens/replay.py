"""The replay screen: one stored game, round by round and move by move, every cup's dice
shown (issue 4, item 3: "a replay screen steps through any of them round by round and bid by
bid, dice revealed").

The moments come from the rules engine itself (`replay_frames` folds the record's rolls and
actions through `perudo_ssh.rules.apply`, as the referee does): nothing here judges a rule.
At each moment the screen shows every cup (the dice hidden then, and those set aside face up,
RULES.md §6), the moves of the round so far; after a round's call, its reveal as the table
showed it (`screens.reveal.reveal_lines`: counted, who lost or gained a die, the payments);
after the last, the finishing places. Each move is explained (issue 14, item 4;
`perudo_ssh.analysis`): a bid's odds to be true, a call's to be right, from the mover's own
dice and from the table's view; the moves that cost a die are marked `✗`.

Keys: ← → a move, PgUp PgDn or [ ] a round, Home End the first and last moment, Esc back.
Only a game the session's account played is shown. Text in the session's language
(`app.tr`); `retranslate` redraws it.
"""

from __future__ import annotations

import asyncio
import logging
import textwrap
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from perudo_ssh.analysis import MoveAnalysis, Replay, analyse, percent, replay_frames
from perudo_ssh.i18n import N_, Terms, Translator
from perudo_ssh.record import decode_record
from perudo_ssh.rules import Action, Call, DeclareCalzone, PlaceBid, Reroll, Roll, State
from screens.bidtext import format_bid
from screens.footer import Footer
from screens.mounting import composed
from screens.reveal import reveal_lines
from screens.stored import GUEST, day, store_and_account
from screens.widgets import app_tr
from screens.wording import call_word

if TYPE_CHECKING:
    from perudo_ssh.records import StoredGame

log = logging.getLogger(__name__)

NAME_WIDTH = 14
"""Columns of a name in the cups."""
MOVER_WIDTH = 12
"""Columns of a name in the moves list (its panel is 34 columns wide)."""
MOVES_WIDTH = 31
"""Columns of a line of the moves list: its panel's 34 less its padding and border."""


def replay_of_stored(game: StoredGame) -> Replay:
    """`replay_frames` of a stored game's record (raises `MalformedRecord` for a record that
    cannot be read)."""
    return replay_frames(decode_record(game.record))


def move_text(tr: Translator, terms: Terms, action: Action) -> str:
    """One action as the moves list shows it: `3 × 4`, `Dudo!`, `Calzone`, `show and reroll:
    5 5`."""
    match action:
        case PlaceBid(bid=bid):
            return format_bid(bid, terms)
        case Call(call=call):
            return tr._("{call}!", call=call_word(terms, call))
        case DeclareCalzone():
            return terms.calzone
        case Reroll(reveal=reveal):
            # the faces held together (no-break spaces): a long line wraps before them
            faces = "\u00a0".join(map(str, reveal))
            return tr._("{reroll}: {faces}", reroll=terms.reroll, faces=faces)
    return ""


def cup_lines(
    tr: Translator, state: State, names: Sequence[str], me: str | None = None
) -> list[Content]:
    """Every seat's cup while a round is played: `▶ ana   3 4 4 1 6`, the player to act
    marked, dice set aside face up (RULES.md §6) after the hidden ones in reverse, `out` for
    a seat without dice; the balance at a table with stakes."""
    lines = []
    for seat, name in enumerate(names):
        marker = "▶ " if state.phase == "bidding" and seat == state.turn else "  "
        shown_name = tr._("{name} (you)", name=name) if name == me else name
        label = f"{marker}{shown_name[:NAME_WIDTH]:<{NAME_WIDTH}}"
        parts: list[str | tuple[str, str]] = [(label, "bold")]
        if state.counts[seat] == 0:
            parts.append((" " + tr._("out"), "dim"))
        else:
            parts.extend(f" {face}" for face in state.hidden[seat])
            if state.shown[seat]:
                parts.append("  ")
                parts.extend((f"[{face}]", "reverse") for face in state.shown[seat])
        if state.tokens is not None:
            parts.append(f"   ¤{state.tokens.balances[seat]}")
        lines.append(Content.assemble(*parts))
    return lines


def moves_lines(
    tr: Translator,
    terms: Terms,
    replay: Replay,
    index: int,
    names: Sequence[str],
    costly: Collection[int] = (),
) -> list[Content]:
    """The moves of frame `index`'s round up to it, oldest first, the last one in bold; the
    round's opener first; a move whose frame is in `costly` (it cost its mover a die:
    `perudo_ssh.analysis.analyse`) marked `✗`. A move too long for `MOVES_WIDTH` goes on
    under itself, at the column of the moves (`show and reroll:` / `4 4`), so each line is
    one line of the panel."""
    frame = replay.frames[index]
    start = index - frame.step
    opener = replay.frames[start].state.opener
    lines = [Content(tr._("{name} opens", name=names[opener]))]
    indent = " " * (MOVER_WIDTH + 1)
    for i in range(start + 1, index + 1):
        action = replay.frames[i].action
        assert action is not None and not isinstance(action, Roll)
        mover = f"{names[action.seat][:MOVER_WIDTH]:<{MOVER_WIDTH}} "
        text = move_text(tr, terms, action) + (" ✗" if i in costly else "")
        wrapped = textwrap.wrap(
            text,
            MOVES_WIDTH,
            initial_indent=mover,
            subsequent_indent=indent,
            break_long_words=True,
        )
        for line in wrapped or [mover.rstrip()]:
            lines.append(Content.styled(line, "bold") if i == index else Content(line))
    return lines


def odds_line(
    tr: Translator, terms: Terms, action: Action, move: MoveAnalysis, names: Sequence[str]
) -> str:
    """What a move's odds were (`perudo_ssh.analysis`): `3 × 4 by ana: 62 % likely from
    ana's own dice, 41 % from the table's view.`, a call's to be right; `It cost ana a die.`
    after a move that did. Empty for a move with no odds (a calzone, a show and reroll)."""
    name = names[move.seat]
    line = ""
    if move.mover is not None and move.table is not None:
        mover, table = percent(move.mover), percent(move.table)
        if isinstance(action, PlaceBid):
            line = tr._(
                "{bid} by {name}: {mover} likely from {name}'s own dice, {table} from the "
                "table's view.",
                bid=format_bid(action.bid, terms),
                name=name,
                mover=mover,
                table=table,
            )
        elif isinstance(action, Call):
            line = tr._(
                "{call} by {name}: {mover} likely right from {name}'s own dice, {table} from "
                "the table's view.",
                call=call_word(terms, action.call),
                name=name,
                mover=mover,
                table=table,
            )
    if move.cost:
        line = (line + " " + tr._("It cost {name} a die.", name=name)).strip()
    return line


def places_line(tr: Translator, game: StoredGame) -> str:
    """`Places: 1 ana · 2 ben · 3 bot-Luis`, as stored."""
    order = sorted(game.players, key=lambda p: p.place)
    return tr._("Places: {places}", places=" · ".join(f"{p.place} {p.name}" for p in order))


class ReplayScreen(Screen[None]):
    """Step through stored game `game_id` (one the session's account played)."""

    BINDINGS = [
        Binding("right", "step(1)", N_("Next move"), key_display="→"),
        Binding("left", "step(-1)", N_("Move back"), key_display="←"),
        Binding("pagedown,right_square_bracket", "round(1)", N_("Next round"), key_display="]"),
        Binding("pageup,left_square_bracket", "round(-1)", N_("Round back"), key_display="["),
        Binding("home", "jump(0)", N_("First"), show=False),
        Binding("end", "jump(-1)", N_("Last"), show=False),
        Binding("escape,q", "close", N_("Back"), key_display="esc"),
        Binding("f2", "app.language", N_("Language"), key_display="F2", show=False),
    ]

    def __init__(self, game_id: int) -> None:
        super().__init__()
        self.game_id = game_id
        self.game: StoredGame | None = None
        self.replay: Replay | None = None
        self.analysis: dict[int, MoveAnalysis] = {}
        """Each move's odds and cost, by frame index (`perudo_ssh.analysis.analyse`)."""
        self.index = 0
        self._problem: str | None = None  # an `N_` message id instead of the game
        self._loading = True

    @property
    def tr(self) -> Translator:
        """The app's translator (English outside a `PerudoApp`)."""
        return app_tr(self)

    def compose(self) -> ComposeResult:
        yield Static(id="replay-title", classes="screen-title", markup=False)
        with Horizontal(id="replay-body"):
            yield Static(id="replay-cups")
            yield Static(id="replay-moves")
        yield Static(id="replay-reveal")
        yield Static(id="replay-position", classes="screen-hint")
        yield Footer()

    def on_mount(self) -> None:
        if not composed(self):
            return
        if store_and_account(self.app) is None:
            self._problem = GUEST
            self._loading = False
        else:
            self.run_worker(self._load(), exclusive=True, exit_on_error=False)
        self.draw()

    async def _load(self) -> None:
        """Read the game and replay it off the event loop."""
        mine = store_and_account(self.app)
        assert mine is not None
        store, account = mine
        try:
            game = await store.game(self.game_id)
            if game is None or game.seat_of(account.id) is None:
                self._problem = N_("That game is not one of yours.")
            else:
                self.replay = await asyncio.to_thread(replay_of_stored, game)
                moves = await asyncio.to_thread(analyse, self.replay)
                self.analysis = {move.index: move for move in moves}
                self.game = game
        except Exception:
            log.exception("could not replay game %s", self.game_id)
            self._problem = N_("That game could not be read just now.")
        self._loading = False
        self.draw()

    # ---- drawing -------------------------------------------------------------------------

    def _names(self) -> tuple[str, ...]:
        assert self.replay is not None
        return self.replay.record.players

    def _me(self) -> str | None:
        mine = store_and_account(self.app)
        if mine is None or self.game is None:
            return None
        seat = self.game.seat_of(mine[1].id)
        return None if seat is None else seat.name

    def heading(self) -> str:
        """The title bar: which game, its rules and date."""
        tr = self.tr
        if self.game is None:
            return tr._("Replay of game {id}", id=self.game_id)
        return tr._(
            "Replay of game {id} · {preset} · {date}",
            id=self.game_id,
            preset=self.game.preset,
            date=day(self.game.finished),
        )

    def position(self) -> str:
        """Where the replay stands: `Round 2 of 7 · move 3 of 5`."""
        tr = self.tr
        if self._problem is not None:
            return tr._(self._problem)
        if self.replay is None:
            return tr._("Reading the game…")
        if not self.replay.frames:
            return tr._("This record breaks a rule from its first round: nothing to replay.")
        frame = self.replay.frames[self.index]
        rounds = len(self.replay.starts)
        moves = self.replay.moves_in(frame.round)
        where = tr._(
            "Round {round} of {rounds} · move {move} of {moves}",
            round=frame.round + 1,
            rounds=rounds,
            move=frame.step,
            moves=moves,
        )
        if self.replay.fault_round is not None and self.index == len(self.replay.frames) - 1:
            where += " · " + tr._(
                "the record breaks a rule in round {round}: the replay stops here",
                round=self.replay.fault_round + 1,
            )
        return where

    def draw(self) -> None:
        """Draw the moment `index` (or why there is nothing to draw)."""
        if not composed(self):
            return
        tr = self.tr
        self.query_one("#replay-title", Static).update(self.heading())
        self.query_one("#replay-position", Static).update(Content(self.position()))
        cups = self.query_one("#replay-cups", Static)
        moves = self.query_one("#replay-moves", Static)
        reveal = self.query_one("#replay-reveal", Static)
        if self.replay is None or not self.replay.frames:
            self.set_class(False, "-reveal")
            cups.update("")
            moves.update("")
            return
        frame = self.replay.frames[self.index]
        names = self._names()
        terms = tr.terms(self.replay.record.options)
        called = isinstance(frame.action, Call)
        self.set_class(called, "-reveal")
        move = self.analysis.get(self.index)
        odds = (
            ""
            if move is None or frame.action is None
            else odds_line(tr, terms, frame.action, move, names)
        )
        if called:
            result = frame.state.results[-1]
            lines = reveal_lines(tr, terms, result, names, frame.round)[:-1]  # no "press a key"
            if odds:
                lines += [Content(""), Content.styled(odds, "italic")]
            if frame.state.phase == "over" and self.game is not None:
                lines.append(Content(""))
                lines.append(Content.styled(self._winner_line(frame.state, names), "bold"))
                lines.append(Content(places_line(tr, self.game)))
            reveal.update(Content("\n").join(lines))
            return
        heading = tr._("Round {round}", round=frame.round + 1)
        if frame.state.special is not None:
            heading = tr._(
                "Round {round}: {special} round",
                round=frame.round + 1,
                special=terms.special(frame.state.special),
            )
        cup_text = [Content.styled(heading, "bold underline"), Content("")]
        cup_text += cup_lines(tr, frame.state, names, self._me())
        if frame.state.tokens is not None:
            cup_text += [Content(""), Content(tr._("Bank: ¤{bank}", bank=frame.state.tokens.bank))]
        if odds:
            cup_text += [Content(""), Content.styled(odds, "italic")]
        cups.update(Content("\n").join(cup_text))
        costly = {i for i, analysed in self.analysis.items() if analysed.cost}
        move_text_lines = moves_lines(tr, terms, self.replay, self.index, names, costly)
        room = max(1, moves.size.height - 1) if moves.size.height else len(move_text_lines)
        title = Content.styled(tr._("Moves this round"), "bold underline")
        moves.update(Content("\n").join([title, *move_text_lines[-room:]]))

    def _winner_line(self, state: State, names: Sequence[str]) -> str:
        if state.winner is None:
            return self.tr._("Game over.")
        return self.tr._("Game over: {name} wins.", name=names[state.winner])

    def retranslate(self) -> None:
        """Redraw every text in the app's (new) language."""
        self.draw()

    # ---- actions -------------------------------------------------------------------------

    def _go(self, index: int) -> None:
        if self.replay is None or not self.replay.frames:
            return
        index = max(0, min(index, len(self.replay.frames) - 1))
        if index != self.index:
            self.index = index
            self.draw()

    def action_step(self, delta: int) -> None:
        """One move forward (1) or back (-1)."""
        self._go(self.index + delta)

    def action_round(self, delta: int) -> None:
        """To the next round's roll (1), or back to this round's roll, or, already there, to
        the previous round's (-1)."""
        if self.replay is None or not self.replay.frames:
            return
        starts = self.replay.starts
        if delta > 0:
            later = [s for s in starts if s > self.index]
            self._go(later[0] if later else len(self.replay.frames) - 1)
        else:
            earlier = [s for s in starts if s < self.index]
            self._go(earlier[-1] if earlier else 0)

    def action_jump(self, index: int) -> None:
        """To the first moment (0) or the last (-1)."""
        if self.replay is not None and self.replay.frames:
            self._go(index if index >= 0 else len(self.replay.frames) + index)

    def action_close(self) -> None:
        self.dismiss(None)
