"""The table screen: the cups, the round's bids, your dice, and bidding by keys or by text.

Every `TableState` from the lobby redraws the widgets in place (`show`). Only the moves in
`choices` are offered; any other attempt is refused here with the reason in words, and the
lobby's own `Refused` is shown by the app. The reveal and game-over dialogs are opened from
here when the view says a round or the game has ended; the calzone question when the player
who just dropped to one die may declare one (RULES.md §4).

Every text is in the session's language (`app.tr`), the game's words as the table plays them
(`tr.terms(options)`: "Не верю", "Точно" at a Russian club table), the footer's too
(`describe_binding`); `retranslate` redraws it all after a language switch.

What counts down (issue 5) — the turn clock, the grace of a disconnected player's seat — is
counted from the moment its `TableState` arrived (the app's monotonic `clock`, injectable) and
redrawn once a second while anything counts down (`tick`); the timer sleeps otherwise.

The moves themselves — which are offered, checked and sent — are `MovesScreen`'s
(screens/moves.py), the base of this screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from perudo_ssh import protocol
from perudo_ssh.i18n import N_
from perudo_ssh.rules import GameView
from screens import tableview
from screens.bidinput import BidInput
from screens.chat import ChatInput, ChatPane
from screens.footer import Footer
from screens.keys import at_once
from screens.mounting import composed
from screens.moves import MovesScreen
from screens.reveal import RevealPanel
from screens.roundlog import RoundLog, round_log_lines
from screens.ticking import TickingStatic
from screens.widgets import BidHistory, CupsPanel, DiceRow, DrawnTexts
from screens.wording import bid_refusal, no_raise

# during a reveal, the keys the footer still offers (leave, the app's help) do their job;
# any other key closes the reveal (Escape too: it leaves a table only once the reveal is gone)
_KEYS_DURING_REVEAL = {"l", "question_mark", "t", "g", "pageup", "pagedown", "i", "f2"}
# the keys of moves: pressed as a round ends (a call of someone else's came first), they must
# not close the reveal unseen, so they do nothing until the reveal is closed
_MOVE_KEYS = {
    "d", "c", "j", "z", "r", "enter", "up", "down", "left", "right", "plus", "minus",
    "equals_sign", *(str(f) for f in range(1, 7)),
}  # fmt: skip


class TableScreen(MovesScreen):
    """The table this session sits at or watches: waiting room, then the game."""

    AUTO_FOCUS = ""  # keys drive the table; Tab moves to the bid input

    MODES = {
        "-waiting": ("#waiting", "#playing"),
        "-idle": ("#bid-input",),
        "-reveal": ("#middle", "#reveal", "#bid-input"),
        "-chat": ("#table-chat",),
        "-log": ("#round-log",),
    }
    """The screen's mode classes and the nodes perudo.tcss styles by them (`set_mode`)."""

    BINDINGS = [
        # count and face keys are named on the bid line itself (`BidComposer.line`), so the
        # footer keeps its room for the moves, also in longer languages
        Binding("up", "count(1)", N_("Count"), key_display="↑↓", show=False),
        Binding("down", "count(-1)", N_("Count"), show=False),
        Binding("plus,equals_sign", "count(1)", show=False),
        Binding("minus", "count(-1)", show=False),
        *(
            Binding(str(f), f"face({f})", N_("Face"), key_display="1-6", show=False)
            for f in range(1, 7)
        ),
        Binding("left", "face_step(-1)", show=False),
        Binding("right", "face_step(1)", show=False),
        Binding("enter", "bid", N_("Bid")),
        # priority: its action runs as soon as the app reads the key, before the app routes
        # the keys behind it (a paste, a fast typist on a slow link) to what has focus
        Binding("tab", "focus_bid", N_("Type"), key_display="tab", priority=True),
        # the calls' labels are the table's own words: see `describe_binding`
        Binding("d", "call('dudo')", "Dudo"),
        Binding("c", "call('calza')", "Calza"),
        Binding("j", "call('jonti')", "Jonti"),
        Binding("z", "calzone", "Calzone"),
        Binding("r", "reroll", N_("Reroll")),
        Binding("b", "add_bot", N_("Add bot")),
        Binding("s", "start", N_("Start")),
        Binding("l,escape", "leave", N_("Leave"), key_display="l"),
        # the table's chat opens over the bids and closes again; listed in the help; at
        # once when it keeps the order of the keys read with it (screens/keys.py: typed
        # into the chat's line; routed to the table's keys, `t` then `dude` called dudo)
        Binding("t", "chat_at_once", show=False, priority=True),
        Binding("t", "chat", N_("Chat"), show=False),
        # the round log (issue 13) opens over the bids too; PgUp/PgDn scroll it
        Binding("g", "round_log", N_("Rounds")),
        Binding("pageup", "scroll_log(-1)", show=False),
        Binding("pagedown", "scroll_log(1)", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._live = False
        self._my_turn = False  # whether the last table state was this player's turn
        self._drawn = DrawnTexts(self)
        self._arrived = 0.0  # when the table state shown arrived, on `_clock`
        self._ticker: Timer | None = None  # once a second while something counts down
        self._bid_line: Content = Content("")  # the bid part of the bid line

    def compose(self) -> ComposeResult:
        yield Static(id="table-title")
        yield Static(id="banner")
        with Container(id="waiting"):
            yield Static(id="waiting-seats")
            yield Static(id="waiting-hint")
        with Container(id="playing"):
            with Horizontal(id="middle"):
                yield CupsPanel(id="cups")
                yield BidHistory(id="history")
            yield RevealPanel(id="reveal")
            # the turn clock first (notices pile up on the right), then the bid: one line, so
            # the clock's width following the mover's name never asks for a layout; alike at
            # every seat but the mover's
            yield TickingStatic(id="current-bid")
            with Horizontal(id="my-row"):
                yield Static(id="my-label")
                yield DiceRow(id="my-dice")
            yield Static(id="composer")
            yield Static(id="status")
            yield BidInput(placeholder=self._placeholder(), id="bid-input")
        yield ChatPane("table", id="table-chat")
        yield RoundLog(id="round-log")
        yield Footer()

    def on_mount(self) -> None:
        if not composed(self):  # closed while opening: nothing to draw on
            return
        self._live = True  # composed: from now on, draw at once
        self._ticker = self.set_interval(1.0, self.tick, pause=True)
        if self._table is not None:
            self._draw(self._table)

    # ---- language ------------------------------------------------------------------------

    def _placeholder(self) -> str:
        return self.tr._(
            "Tab, then type a bid like 5x4 or 3p (or {dudo}), Enter", dudo=self.terms.dudo
        )

    def describe_binding(self, binding: Binding) -> str | None:
        """The footer label of the calls and the calzone: the table's own words (RULES.md §1,
        seed 002 at a club table); None for the other keys (translated as they are)."""
        match binding.action:
            case "call('dudo')":
                return self.terms.dudo
            case "call('calza')":
                return self.terms.calza
            case "call('jonti')":
                return self.terms.jonti
            case "calzone":
                return self.terms.calzone
        return None

    def retranslate(self) -> None:
        """Redraw every text in the app's new language (the app refreshes the footer)."""
        if not self._live:
            return
        self._error = None  # a refusal said in the old language: gone, not left standing
        self._drawn.clear()
        for widget in (self.query_one(CupsPanel), self.query_one(BidHistory)):
            widget.refresh()  # their words are drawn at render time, their data is unchanged
        self.query_one(BidInput).placeholder = self._placeholder()
        self.query_one(ChatPane).retranslate()
        if self._table is not None:
            self._draw(self._table)
            game = self._table.game
            if self.has_class("-reveal") and game is not None and game.last is not None:
                self._show_reveal(self._table, game)

    # ---- drawing -------------------------------------------------------------------------

    def show(self, table: protocol.TableState) -> None:
        """Draw `table`, the newest state from the lobby."""
        if self._table is not None and self._table.id != table.id:
            self._seen_round = self._revealed = None
        self._table = table
        self._arrived = self._clock()
        if self._live:
            self._draw(table)
        self._follow_turn(table)

    def _follow_turn(self, table: protocol.TableState) -> None:
        """Ring and title the terminal when it becomes this player's turn while they are
        elsewhere (`PerudoApp.turn_alert`, issue 13): the help or the rules over the table,
        the table chat open; the title goes back when the turn passes or they are back."""
        game = table.game
        mine = (
            game is not None
            and game.me is not None
            and game.phase == "bidding"
            and game.turn == game.me
        )
        became, self._my_turn = mine and not self._my_turn, mine
        alert = getattr(self.app, "turn_alert", None)
        if alert is None:
            return
        if became and self._elsewhere():
            alert(True)
        elif not mine:
            alert(False)

    def _elsewhere(self) -> bool:
        """Whether the player is not looking at the table: a screen over it, or its chat."""
        return self.app.screen is not self or self.has_class("-chat")

    def on_screen_resume(self) -> None:
        """Back at the table from a screen over it."""
        self._back_at_table()

    def _back_at_table(self) -> None:
        """The player looks at the table again: the terminal's title is its own again."""
        alert = getattr(self.app, "turn_alert", None)
        if alert is not None:
            alert(False)

    @property
    def _clock(self) -> Callable[[], float]:
        """The app's monotonic clock in seconds (`PerudoApp.clock`; tests set their own)."""
        clock = getattr(self.app, "clock", None)
        return clock if callable(clock) else time.monotonic

    def _elapsed(self) -> float:
        """Seconds since the table state shown arrived."""
        return max(0.0, self._clock() - self._arrived)

    def _counting(self, table: protocol.TableState) -> bool:
        """Whether anything on `table` counts down: the turn clock, a held seat's grace,
        the wait before bots fill a quick-play table."""
        return (
            table.clock is not None
            or (table.fill_in is not None and table.status == "waiting")
            or any(tableview.held_seconds(seat) is not None for seat in table.seats)
        )

    def tick(self) -> None:
        """Redraw what counts down (the turn clock, held seats), as of now; the once-a-second
        timer calls it while anything does."""
        table, game = self._table, self.game
        if not self._live or table is None:
            return
        elapsed = self._elapsed()
        if game is not None and table.status != "waiting":
            # the cups count down only the grace of held seats: none held, nothing to redo
            if any(tableview.held_seconds(seat) is not None for seat in table.seats):
                self.query_one(CupsPanel).show(tableview.cups(self.tr, table, game, elapsed))
        elif table.fill_in is not None:
            _seats, hint = tableview.waiting_lines(self.tr, table, self._is_creator(), elapsed)
            self._drawn.put("#waiting-hint", hint, layout=True)
        self._draw_bid_line(table, elapsed)

    def _draw_bid_line(self, table: protocol.TableState, elapsed: float) -> None:
        """The bid line: the turn clock (`Your turn — 0:42 ·`, `carl to play — 0:42 ·`; none
        without a turn timer), then the bid on the table."""
        clock = tableview.turn_clock(self.tr, table, elapsed)
        line, time_at = self._bid_line, None
        if clock is not None:
            words, time_at = clock
            line = Content.assemble(words, " · ", self._bid_line)
        self.query_one("#current-bid", TickingStatic).show(line, time_at)

    def _draw_title(self, table: protocol.TableState) -> None:
        """The title bar, as wide as the screen allows (at least `tableview.TITLE_WIDTH`)."""
        width = max(tableview.TITLE_WIDTH, self.size.width - 2)
        self._drawn.put("#table-title", tableview.title_line(self.tr, table, width))

    def on_resize(self, event: events.Resize) -> None:
        """A wider or narrower terminal: the title fits its rule words to the new width."""
        if self._table is not None:
            self._draw_title(self._table)

    def _draw(self, table: protocol.TableState) -> None:
        game = table.game
        bid_input = self.query_one(BidInput)
        if bid_input.placeholder != (placeholder := self._placeholder()):
            bid_input.placeholder = placeholder  # the table's own word for dudo, once known
        waiting = game is None or table.status == "waiting"
        self.set_mode(waiting, "-waiting")
        playing = (
            game is not None
            and game.me is not None
            and game.phase != "over"
            and game.seats[game.me].dice > 0
        )
        self.set_mode(not playing, "-idle")
        tr = self.tr
        self._draw_title(table)
        banner = tableview.banner_line(tr, table, None if waiting else game)
        self.query_one("#banner", Static).display = banner is not None
        self._drawn.put("#banner", banner or "")
        if waiting or game is None:
            seats, hint = tableview.waiting_lines(tr, table, self._is_creator(), self._elapsed())
            self._drawn.put("#waiting-seats", seats, layout=True)
            self._drawn.put("#waiting-hint", hint, layout=True)
        else:
            self._draw_game(table, game)
        self._draw_bid_line(table, self._elapsed())
        if self._ticker is not None:
            if self._counting(table):
                self._ticker.resume()
            else:
                self._ticker.pause()
        self._follow_round(table)
        self._ask_calzone()
        self._refresh_keys()

    def _draw_game(self, table: protocol.TableState, game: GameView) -> None:
        tr = self.tr
        self.query_one(CupsPanel).show(tableview.cups(tr, table, game, self._elapsed()))
        self.query_one(BidHistory).show(tableview.history_lines(tr, table, game))
        if self.has_class("-log"):
            self._draw_round_log()
        # with a turn clock, the clock says whose turn it is (at the line's start)
        turn = table.clock is None or game.phase != "bidding"
        self._bid_line = tableview.current_bid_line(tr, table, game, with_turn=turn)
        mine = game.seats[game.me] if game.me is not None else None
        over = game.phase == "over"
        if mine is None:
            label = tr._("Watching")
        elif over and mine.dice:  # the winner: no cup is rolled again
            label = tr._("Game over") + "\n" + tr._("you won")
        elif mine.dice == 0:
            label = tr._("Your dice") + "\n" + tr._("none left")
        elif mine.shown and not over:  # set aside face up, drawn after the hidden ones
            in_cup = tr.n_("{n} in cup", "{n} in cup", len(mine.hidden or ()))
            aside = tr.n_("{n} set aside", "{n} set aside", len(mine.shown))
            label = tr._("Your dice") + f"\n{in_cup}\n{aside}"
        else:
            label = tr._("Your dice") + "\n" + tr.n_("{n} in cup", "{n} in cup", mine.dice)
        self._drawn.put("#my-label", label)
        if mine is None:
            note = tr._("Spectators see every cup, never the dice.")
        elif over and mine.dice:
            note = tr.n_("You won, with {n} die left.", "You won, with {n} dice left.", mine.dice)
        elif mine.dice == 0:
            note = tr._("You are out of this game.")
        else:
            note = tr._("Rolling…")
        hidden = (mine.hidden or ()) if mine and not over else ()
        shown = mine.shown if mine and not over else ()
        self.query_one(DiceRow).show(hidden, note, shown)
        if self._composer.follow(game):
            self._error = None
            self._reroll_plan = ()
        self._close_stale_reroll(game)
        self._draw_composer()

    def _draw_composer(self) -> None:
        game = self.game
        if game is None:
            return
        tr = self.tr
        names = tableview.seat_names(tr, self._table) if self._table else []
        waiting = tr._("Waiting for {name}…", name=names[game.turn]) if names else ""
        if game.me is None or game.seats[game.me].dice == 0:  # watching: no moves to offer
            self._drawn.put("#composer", waiting if game.phase == "bidding" else "")
            self._drawn.put("#status", "")
            return
        if game.choices.bids:
            self._drawn.put("#composer", self._composer.line(game, self._reroll_plan, tr))
        elif game.phase == "bidding" and game.me != game.turn:
            self._drawn.put("#composer", waiting)
        elif game.phase == "bidding" and game.bids:  # the viewer's turn, and no bid tops it
            self._drawn.put("#composer", Content.styled(no_raise(tr, game), "bold"))
        else:
            self._drawn.put("#composer", "")
        if self._error:
            self._drawn.put("#status", Content.styled(self._error, "bold $error"))
        elif self.has_class("-reveal"):  # the reveal says what to do: any key goes on
            self._drawn.put("#status", "")
        else:
            self._drawn.put("#status", tableview.hint_line(tr, game))

    # ---- keys -----------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """Any key but those the footer shows closes the reveal; else explain a key whose move
        is not allowed now (its binding is disabled or hidden: jonti, say, is offered only
        while RULES.md §5 allows it, and its key says why not)."""
        if isinstance(self.focused, ChatInput):  # typing a chat line: the keys are its own
            return
        if event.key == "escape" and self.has_class("-log"):  # closes the log, not the table
            event.stop()
            event.prevent_default()
            self.action_round_log()
            return
        if self.has_class("-reveal"):
            if event.key in _KEYS_DURING_REVEAL:
                return
            event.stop()
            event.prevent_default()
            if event.key not in _MOVE_KEYS:
                self._close_reveal()
            return
        game = self.game
        if game is None or game.me is None or self.focused is not None or self._table is None:
            return
        reason = None
        call = {"d": "dudo", "c": "calza", "j": "jonti"}.get(event.key)
        if call is not None:
            reason = self._call_refusal(call)
        elif event.key == "enter" and not game.choices.bids:
            names = tableview.seat_names(self.tr, self._table)
            reason = bid_refusal(self.tr, game, self._composer.bid, names)
        if reason:
            self._refuse(reason)

    # ---- panels and focus -------------------------------------------------------------------

    def _draw_round_log(self) -> None:
        game, table = self.game, self._table
        if game is None or table is None:
            return
        tr = self.tr
        lines = round_log_lines(tr, self.terms, game.rounds, tableview.seat_names(tr, table))
        title = tr._("Rounds · g closes · PgUp/PgDn")
        self.query_one(RoundLog).show(title, lines)

    def action_round_log(self) -> None:
        """`g`: open the round log over the bids (the table chat gives way), or close it."""
        if self.has_class("-log"):
            self.set_mode(False, "-log")
        else:
            if self.has_class("-chat"):
                self.action_chat()
            self._draw_round_log()
            self.set_mode(True, "-log")
            self.query_one(RoundLog).scroll_home(animate=False)
        self._refresh_keys()

    def action_scroll_log(self, pages: int) -> None:
        """PgUp / PgDn: scroll the open round log a page."""
        log = self.query_one(RoundLog)
        if self.has_class("-log"):
            log.scroll_page_down(animate=False) if pages > 0 else log.scroll_page_up(animate=False)

    def action_chat_at_once(self) -> None:
        """`t` as the app takes it (a priority binding), before the keys read with it are
        routed: unless a line has the focus (there `t` is a letter) or keys before it are
        still on their way (`screens.keys.at_once`)."""
        at_once(self, letter=True)
        self.action_chat()

    def action_chat(self) -> None:
        """`t`: open the table's chat, the cursor on its line; `t` (from the table's keys)
        or Escape (from the line) closes it."""
        chat = self.query_one(ChatPane)
        if self.has_class("-chat"):
            self.set_mode(False, "-chat")
            if isinstance(self.focused, ChatInput):
                self.set_focus(None)
            self._back_at_table()
        else:
            if self.has_class("-log"):
                self.set_mode(False, "-log")
            self.set_mode(True, "-chat")
            chat.redraw()
            chat.focus_input()

    def on_chat_pane_done(self, event: ChatPane.Done) -> None:
        event.stop()  # the line gave the focus back to the table's keys already
        self.set_mode(False, "-chat")
        self._back_at_table()

    def action_focus_bid(self) -> None:
        # at once, not on the next idle: keys typed right after Tab belong to the input
        self.set_focus(self.query_one(BidInput))

    def action_focus_table(self) -> None:
        self.set_focus(None)
