"""The table screen: the cups, the round's bids, your dice, and bidding by keys or by text.

Every `TableState` from the lobby redraws the widgets in place (`show`). Only the moves in
`choices` are offered; any other attempt is refused here with the reason in words, and the
lobby's own `Refused` is shown by the app. The reveal and game-over dialogs are opened from
here when the view says a round or the game has ended.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from perudo_ssh import protocol
from perudo_ssh.rules import Bid, GameView
from screens import tableview
from screens.bidinput import BidInput
from screens.bidtext import BidSyntaxError, parse_bid
from screens.composer import BidComposer
from screens.dialogs import ConfirmDialog, RerollDialog
from screens.gameover import GameOverScreen
from screens.messages import Send
from screens.mounting import composed
from screens.reveal import RevealPanel
from screens.widgets import BidHistory, CupsPanel, DiceRow
from screens.wording import bid_refusal, call_refusal

_CALLS = {"dudo", "calza", "jonti"}
# during a reveal, the keys the footer still offers (leave, the app's help) do their job;
# any other key closes the reveal (Escape too: it leaves a table only once the reveal is gone)
_KEYS_DURING_REVEAL = {"l", "question_mark"}
# the actions whose keys come and go with the table's state (see `check_action`)
_OFFERED: tuple[tuple[str, tuple[object, ...]], ...] = (
    ("add_bot", ()),
    ("start", ()),
    ("focus_bid", ()),
    ("bid", ()),
    ("call", ("dudo",)),
    ("call", ("calza",)),
    ("call", ("jonti",)),
    ("calzone", ()),
    ("reroll", ()),
)


class TableScreen(Screen[None]):
    """The table this session sits at or watches: waiting room, then the game."""

    AUTO_FOCUS = ""  # keys drive the table; Tab moves to the bid input

    BINDINGS = [
        Binding("up", "count(1)", "Count", key_display="↑↓"),
        Binding("down", "count(-1)", "Count", show=False),
        Binding("plus,equals_sign", "count(1)", show=False),
        Binding("minus", "count(-1)", show=False),
        *(
            Binding(str(f), f"face({f})", "Face", key_display="1-6", show=f == 1)
            for f in range(1, 7)
        ),
        Binding("left", "face_step(-1)", show=False),
        Binding("right", "face_step(1)", show=False),
        Binding("enter", "bid", "Bid"),
        # priority: its action runs as soon as the app reads the key, before the app routes
        # the keys behind it (a paste, a fast typist on a slow link) to what has focus
        Binding("tab", "focus_bid", "Type", key_display="tab", priority=True),
        Binding("d", "call('dudo')", "Dudo"),
        Binding("c", "call('calza')", "Calza"),
        Binding("j", "call('jonti')", "Jonti"),
        Binding("z", "calzone", "Calzone"),
        Binding("r", "reroll", "Reroll"),
        Binding("b", "add_bot", "Add bot"),
        Binding("s", "start", "Start"),
        Binding("l,escape", "leave", "Leave", key_display="l"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._live = False
        self._table: protocol.TableState | None = None
        self._composer = BidComposer()
        self._error: str | None = None
        self._seen_round: int | None = None
        self._revealed: int | None = None
        self._game_over: GameOverScreen | None = None
        self._offered: tuple[bool | None, ...] = ()
        self._drawn: dict[str, object] = {}  # selector -> what it shows now
        self._reroll_plan: tuple[int, ...] = ()  # dice to show right after this turn's bid
        self._reroll_dialog: RerollDialog | None = None

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
            yield Static(id="current-bid")
            with Horizontal(id="my-row"):
                yield Static(id="my-label")
                yield DiceRow(id="my-dice")
            yield Static(id="composer")
            yield Static(id="status")
            yield BidInput(
                placeholder="Tab, then type a bid like 5x4 or 3p (or dudo), Enter",
                id="bid-input",
            )
        yield Footer()

    def on_mount(self) -> None:
        if not composed(self):  # closed while opening: nothing to draw on
            return
        self._live = True  # composed: from now on, draw at once
        if self._table is not None:
            self._draw(self._table)

    # ---- drawing -------------------------------------------------------------------------

    @property
    def game(self) -> GameView | None:
        """This player's view of the game at the table, or None before the first game."""
        return None if self._table is None else self._table.game

    def show(self, table: protocol.TableState) -> None:
        """Draw `table`, the newest state from the lobby."""
        if self._table is not None and self._table.id != table.id:
            self._seen_round = self._revealed = None
        self._table = table
        if self._live:
            self._draw(table)

    def _draw(self, table: protocol.TableState) -> None:
        game = table.game
        waiting = game is None or table.status == "waiting"
        self.set_class(waiting, "-waiting")
        playing = (
            game is not None
            and game.me is not None
            and game.phase != "over"
            and game.seats[game.me].dice > 0
        )
        self.set_class(not playing, "-idle")
        self._put("#table-title", tableview.title_line(table))
        banner = tableview.banner_line(None if waiting else game)
        self.query_one("#banner", Static).display = banner is not None
        self._put("#banner", banner or "")
        if waiting or game is None:
            seats, hint = tableview.waiting_lines(table, self._is_creator())
            self._put("#waiting-seats", seats, layout=True)
            self._put("#waiting-hint", hint, layout=True)
        else:
            self._draw_game(table, game)
        self._follow_round(table)
        self._refresh_keys()

    def _put(self, selector: str, content: str | Content, *, layout: bool = False) -> None:
        """Update one line of text in place, only if it changed (`layout` when its height
        may change)."""
        if isinstance(content, str):  # names are the players' own text: never markup
            content = Content(content)
        key = (content.plain, tuple(content.spans))
        if self._drawn.get(selector) != key:
            self._drawn[selector] = key
            self.query_one(selector, Static).update(content, layout=layout)

    def _refresh_keys(self) -> None:
        """Redraw the footer only when the offered keys changed (it is rebuilt each time)."""
        offered = tuple(self.check_action(action, args) for action, args in _OFFERED)
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()

    def _draw_game(self, table: protocol.TableState, game: GameView) -> None:
        self.query_one(CupsPanel).show(tableview.cups(table, game))
        self.query_one(BidHistory).show(tableview.history_lines(table, game))
        self._put("#current-bid", tableview.current_bid_line(table, game))
        mine = game.seats[game.me] if game.me is not None else None
        over = game.phase == "over"
        if mine is None:
            label = "Watching"
        elif over and mine.dice:  # the winner: no cup is rolled again
            label = "Game over\nyou won"
        elif mine.dice == 0:
            label = "Your dice\nnone left"
        elif mine.shown:  # set aside face up: in the cup are only the hidden ones
            in_cup = len(mine.hidden or ())
            label = f"Your dice\n{in_cup} in cup\nshown {' '.join(map(str, mine.shown))}"
        else:
            label = f"Your dice\n{mine.dice} in cup"
        self._put("#my-label", label)
        if mine is None:
            note = "Spectators see every cup, never the dice."
        elif over and mine.dice:
            left = f"{mine.dice} {'die' if mine.dice == 1 else 'dice'}"
            note = f"You won, with {left} left."
        elif mine.dice == 0:
            note = "You are out of this game."
        else:
            note = "Rolling…"
        hidden = (mine.hidden or ()) if mine and not over else ()
        self.query_one(DiceRow).show(hidden, note)
        if self._composer.follow(game):
            self._error = None
            self._reroll_plan = ()
        self._close_stale_reroll(game)
        self._draw_composer()

    def _draw_composer(self) -> None:
        game = self.game
        if game is None:
            return
        names = tableview.seat_names(self._table) if self._table else []
        if game.me is None or game.seats[game.me].dice == 0:  # watching: no moves to offer
            waiting = game.phase == "bidding" and bool(names)
            self._put("#composer", f"Waiting for {names[game.turn]}…" if waiting else "")
            self._put("#status", "")
            return
        if game.choices.bids:
            self._put("#composer", self._composer.line(game, self._reroll_plan))
        elif game.phase == "bidding" and game.me != game.turn:
            self._put("#composer", f"Waiting for {names[game.turn]}…")
        else:
            self._put("#composer", "")
        if self._error:
            self._put("#status", Content.styled(self._error, "bold $error"))
        elif self.has_class("-reveal"):  # the reveal says what to do: any key goes on
            self._put("#status", "")
        else:
            self._put("#status", tableview.hint_line(game))

    # ---- following rounds: reveal and game over --------------------------------------------

    def _follow_round(self, table: protocol.TableState) -> None:
        """Open the reveal when a round has just ended, and the game-over dialog after the
        last round's reveal; close them when a new game begins."""
        game = table.game
        if game is None or game.last is None:  # no game, or a new one: nothing to reveal
            self._revealed = self._seen_round = None
            self._hide_reveal()
            self._close_game_over()
            return
        fresh = game.phase in ("rolling", "over") or (
            self._seen_round is not None and game.round_index > self._seen_round
        )
        self._seen_round = game.round_index
        if fresh and game.round_index != self._revealed:
            self._revealed = game.round_index
            self.query_one(RevealPanel).show(
                game.last, tableview.seat_names(table), game.round_index - 1
            )
            self.set_focus(None)
            self.add_class("-reveal")
            self._draw_composer()
        elif game.phase == "bidding" and game.bids and self.has_class("-reveal"):
            # the next round is already being bid (the reveal timed out, or this viewer
            # is only watching): show the table rather than an old round
            self._hide_reveal()
        if game.phase == "over":
            if self._game_over is None and not self.has_class("-reveal"):
                self._game_over = GameOverScreen()
                self.app.push_screen(self._game_over, self._game_over_closed)
            if self._game_over is not None:
                self._game_over.show(table)
        else:
            self._close_game_over()

    def _hide_reveal(self) -> None:
        if self.has_class("-reveal"):
            self.remove_class("-reveal")
            self._draw_composer()
        self._refresh_keys()

    def _close_reveal(self) -> None:
        """The player has seen the reveal: tell the lobby if it still waits, go on."""
        self._hide_reveal()
        game = self.game
        if game is None or self._revealed is None:
            return
        if game.me is not None and game.phase == "rolling":  # the lobby waits for us
            self.post_message(Send(protocol.Ready(round=self._revealed - 1)))
        if self._table is not None and game.phase == "over":
            self._follow_round(self._table)

    def on_reveal_panel_closed(self, event: RevealPanel.Closed) -> None:
        event.stop()
        self._close_reveal()

    def _game_over_closed(self, _: None) -> None:
        self._game_over = None

    def _close_game_over(self) -> None:
        """A new game began: close the dialogs left over from the last one."""
        if self._game_over is None:
            return
        self._game_over = None
        while self.app.screen is not self and self in self.app.screen_stack:
            self.app.pop_screen()

    # ---- which keys are offered --------------------------------------------------------------

    def _is_creator(self) -> bool:
        t = self._table
        return t is not None and t.me is not None and t.me == t.creator

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        t, game = self._table, self.game
        if action in ("add_bot", "start"):
            return t is not None and t.status == "waiting" and self._is_creator()
        if action == "leave":
            return True
        if self.has_class("-reveal"):  # any key but leave and help closes it first
            return False
        if game is None or game.me is None or (t is not None and t.status == "waiting"):
            return False
        if game.seats[game.me].dice == 0:  # out of the game: only watching now
            return False
        choices, options = game.choices, game.options
        if action == "focus_bid":  # from the input, Tab is its own: back to the keys
            return game.phase != "over" and not isinstance(self.focused, BidInput)
        if action in ("count", "face", "face_step", "bid"):
            return True if choices.bids else None
        if action == "call":
            call = parameters[0]
            if call == "calza" and options.calza == "off":
                return False
            if call == "jonti" and not options.jonti:
                return False
            return True if getattr(choices, str(call)) else None
        if action == "calzone":
            return choices.calzone
        if action == "reroll":
            if not options.show_and_reroll:
                return False
            return True if choices.reroll or self._may_plan_reroll() else None
        return True

    def _call_refusal(self, call: str) -> str | None:
        game = self.game
        if game is None or self._table is None:
            return None
        return call_refusal(game, call, tableview.seat_names(self._table))

    def on_key(self, event: events.Key) -> None:
        """Any key but those the footer shows closes the reveal; else explain a key whose move
        is not allowed now (its binding is disabled)."""
        if self.has_class("-reveal"):
            if event.key in _KEYS_DURING_REVEAL:
                return
            event.stop()
            event.prevent_default()
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
            names = tableview.seat_names(self._table)
            reason = bid_refusal(game, self._composer.bid, names)
        if reason:
            self._refuse(reason)

    def _refuse(self, reason: str) -> None:
        self._error = reason
        if self._live:
            self._draw_composer()

    # ---- actions ---------------------------------------------------------------------------

    def action_count(self, delta: int) -> None:
        game = self.game
        if game is not None:
            self._composer.step_count(game, delta)
            self._error = None
            self._draw_composer()

    def action_face(self, face: int) -> None:
        game = self.game
        if game is None or self._table is None:
            return
        self._error = None
        if not self._composer.pick_face(game, face):
            names = tableview.seat_names(self._table)
            self._error = bid_refusal(game, self._composer.bid, names)
        self._draw_composer()

    def action_face_step(self, step: int) -> None:
        self.action_face((self._composer.face - 1 + step) % 6 + 1)

    def action_bid(self) -> None:
        self._try_bid(self._composer.bid)

    def _try_bid(self, bid: Bid) -> bool:
        game = self.game
        if game is None or self._table is None:
            return False
        reason = bid_refusal(game, bid, tableview.seat_names(self._table))
        if reason is not None:
            self._refuse(reason)
            return False
        self._error = None
        self.post_message(Send(protocol.MakeBid(count=bid.count, face=bid.face)))
        if self._reroll_plan:  # right behind the bid, before anyone else may act
            self.post_message(Send(protocol.ShowAndReroll(reveal=self._reroll_plan)))
            self._reroll_plan = ()
        return True

    def action_call(self, call: str) -> None:
        self._error = None
        self.post_message(Send(protocol.MakeCall(call=call)))  # type: ignore[arg-type]

    def action_calzone(self) -> None:
        self.post_message(Send(protocol.DeclareCalzone()))

    def _may_plan_reroll(self) -> bool:
        """Whether the viewer may choose now the dice to show right after the bid they are
        about to make (RULES.md §6): the chance after a bid lasts only until the next player
        acts, and a bot acts within a second."""
        game = self.game
        return (
            game is not None
            and game.me is not None
            and game.options.show_and_reroll
            and game.phase == "bidding"
            and game.turn == game.me
            and bool(game.choices.bids)
            and len(game.seats[game.me].hidden or ()) > 1
        )

    def _close_stale_reroll(self, game: GameView) -> None:
        """Close the reroll dialog once its chance has passed (the next player acted)."""
        dialog = self._reroll_dialog
        if dialog is None or game.choices.reroll or self._may_plan_reroll():
            return
        self._reroll_dialog = None
        if self.app.screen is dialog:
            dialog.dismiss(None)
        self._error = "Too late to show and reroll: the next player has already played"

    def action_reroll(self) -> None:
        game = self.game
        if game is None or game.me is None:
            return
        hidden = game.seats[game.me].hidden or ()
        planning = not game.choices.reroll  # before the bid: the dice go with it

        def chosen(reveal: tuple[int, ...] | None) -> None:
            self._reroll_dialog = None
            if planning:
                self._reroll_plan = reveal or ()
                self._draw_composer()
            elif reveal:
                self.post_message(Send(protocol.ShowAndReroll(reveal=reveal)))

        self._reroll_dialog = RerollDialog(hidden, planning=planning)
        self.app.push_screen(self._reroll_dialog, chosen)

    def action_add_bot(self) -> None:
        self.post_message(Send(protocol.AddBot()))

    def action_start(self) -> None:
        self.post_message(Send(protocol.StartGame()))

    def action_focus_bid(self) -> None:
        # at once, not on the next idle: keys typed right after Tab belong to the input
        self.set_focus(self.query_one(BidInput))

    def action_focus_table(self) -> None:
        self.set_focus(None)

    def action_leave(self) -> None:
        game = self.game
        mid_game = game is not None and game.me is not None and game.phase != "over"
        if mid_game and game is not None and game.me is not None and not game.seats[game.me].dice:
            mid_game = False  # already out: nobody takes the seat over
        if self._table is not None and self._table.status == "waiting":
            mid_game = False
        if not mid_game:
            self.post_message(Send(protocol.LeaveTable()))
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.post_message(Send(protocol.LeaveTable()))

        self.app.push_screen(
            ConfirmDialog("Leave this game? A bot takes your seat and plays on."), confirmed
        )

    def on_bid_input_too_long(self, event: BidInput.TooLong) -> None:
        event.stop()
        self._refuse(f"A bid is short, like 5x4 or 3p: at most {BidInput.MAX_LENGTH} characters")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """A typed bid (or a call word): check it, send it, or say what is wrong."""
        event.stop()
        text = event.value.strip().lower()
        game = self.game
        if not text or game is None:
            return
        if text in _CALLS:
            if self.check_action("call", (text,)):
                event.input.clear()
                self.set_focus(None)
                self.action_call(text)
            else:
                self._refuse(
                    self._call_refusal(text) or f"{text.capitalize()} is not played at this table"
                )
            return
        try:
            bid = parse_bid(text)
        except BidSyntaxError as err:
            self._refuse(str(err))
            return
        if self._try_bid(bid):
            event.input.clear()
            self.set_focus(None)
        else:
            self._composer.take(bid)
            self._draw_composer()
