"""The replay screen: one stored game, round by round and move by move, every cup's dice
shown (issue 4, item 3: "a replay screen steps through any of them round by round and bid by
bid, dice revealed").

The moments come from the rules engine itself (`replay_frames` folds the record's rolls and
actions through `perudo_ssh.rules.apply`, as the referee does): nothing here judges a rule.
At each moment the screen shows every cup (the dice hidden then, and those set aside face up,
RULES.md §6), the moves of the round so far; after a round's call, its reveal as the table
showed it (`screens.reveal.reveal_lines`: counted, who lost or gained a die, the payments);
after the last, the finishing places.

Keys: ← → a move, PgUp PgDn or [ ] a round, Home End the first and last moment, Esc back.
Only a game the session's account played is shown. Text in the session's language
(`app.tr`); `retranslate` redraws it.
"""

from __future__ import annotations

import asyncio
import logging
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from perudo_ssh.i18n import N_, Terms, Translator
from perudo_ssh.record import MalformedRecord, Record, decode_record, engine_action, engine_roll
from perudo_ssh.rules import (
    Action,
    Call,
    DeclareCalzone,
    PlaceBid,
    Reroll,
    Resign,
    Roll,
    RuleError,
    State,
    apply,
    new_game,
)
from screens.bidtext import format_bid
from screens.footer import Footer
from screens.mounting import composed
from screens.reveal import reveal_lines
from screens.stored import GUEST, day, store_and_account
from screens.widgets import app_tr
from screens.wording import call_word

if TYPE_CHECKING:
    from perudo_ssh.store import StoredGame

log = logging.getLogger(__name__)

NAME_WIDTH = 14
"""Columns of a name in the cups."""
MOVER_WIDTH = 12
"""Columns of a name in the moves list (its panel is 34 columns wide)."""
MOVES_WIDTH = 31
"""Columns of a line of the moves list: its panel's 34 less its padding and border."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One moment of a replayed game: round `round` (0-based) after its first `step` actions
    (0: its dice just rolled); `state` the engine's state then; `action` the last action
    applied (None at step 0). After a round's call `state.results[-1]` is its reveal, and the
    players who left during the round (RULES.md §6) are already eliminated."""

    round: int
    step: int
    state: State
    action: Action | None


@dataclass(frozen=True, slots=True)
class Replay:
    """A game ready to step through: its `record`, its `frames` in order, and `fault_round`:
    the round in which the engine refused the record (the frames stop before it), or None
    when it replayed to the end."""

    record: Record
    frames: tuple[Frame, ...]
    fault_round: int | None = None

    @property
    def starts(self) -> tuple[int, ...]:
        """The index of each round's first frame (its roll), in order."""
        return tuple(i for i, frame in enumerate(self.frames) if frame.step == 0)

    def moves_in(self, round_: int) -> int:
        """How many actions round `round_` has in the record."""
        return len(self.record.rounds[round_].actions)


def replay_frames(record: Record) -> Replay:
    """Every moment of `record` from the engine (RECORD.md, RULES.md): the state after each
    round's roll and after each of its actions; the players a round's `left` lists are
    eliminated with its last action (the call). Stops at the first roll or action the engine
    refuses (a damaged record; the server stores only legal ones)."""
    frames: list[Frame] = []
    try:
        state = new_game(record.options, len(record.players), record.seat_of[record.first_opener])
    except (RuleError, MalformedRecord, KeyError):
        return Replay(record, (), 0)
    for i, round_ in enumerate(record.rounds):
        try:
            state = apply(state, engine_roll(record, round_))
            frames.append(Frame(i, 0, state, None))
            for j, recorded in enumerate(round_.actions):
                action = engine_action(record, recorded)
                state = apply(state, action)
                if j == len(round_.actions) - 1:
                    for name in round_.left:
                        state = apply(state, Resign(seat=record.seat_of[name]))
                frames.append(Frame(i, j + 1, state, action))
        except (RuleError, KeyError):
            return Replay(record, tuple(frames), i)
    return Replay(record, tuple(frames))


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
    tr: Translator, terms: Terms, replay: Replay, index: int, names: Sequence[str]
) -> list[Content]:
    """The moves of frame `index`'s round up to it, oldest first, the last one in bold; the
    round's opener first. A move too long for `MOVES_WIDTH` goes on under itself, at the
    column of the moves (`show and reroll:` / `4 4`), so each line is one line of the panel."""
    frame = replay.frames[index]
    start = index - frame.step
    opener = replay.frames[start].state.opener
    lines = [Content(tr._("{name} opens", name=names[opener]))]
    indent = " " * (MOVER_WIDTH + 1)
    for i in range(start + 1, index + 1):
        action = replay.frames[i].action
        assert action is not None and not isinstance(action, Roll)
        mover = f"{names[action.seat][:MOVER_WIDTH]:<{MOVER_WIDTH}} "
        wrapped = textwrap.wrap(
            move_text(tr, terms, action),
            MOVES_WIDTH,
            initial_indent=mover,
            subsequent_indent=indent,
            break_long_words=True,
        )
        for line in wrapped or [mover.rstrip()]:
            lines.append(Content.styled(line, "bold") if i == index else Content(line))
    return lines


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
        if called:
            result = frame.state.results[-1]
            lines = reveal_lines(tr, terms, result, names, frame.round)[:-1]  # no "press a key"
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
        cups.update(Content("\n").join(cup_text))
        move_text_lines = moves_lines(tr, terms, self.replay, self.index, names)
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
