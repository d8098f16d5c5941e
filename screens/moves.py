"""What a player does at a table (RULES.md §3–§6): a bid composed by keys or typed, a call, a
calzone, a show and reroll, and at a waiting table adding a bot or starting; leaving. Only the
moves in the view's `choices` are offered (`check_action`); any other attempt is refused here
with the reason in words, and what is allowed goes to the lobby as a command (`Send`).

`MovesScreen` sits between `RoundsScreen` (screens/rounds.py: the reveal, the calzone question,
game over) and `TableScreen` (screens/table.py: the table drawn, its panels and keys), which
draws what it holds (`_draw_composer`).
"""

from __future__ import annotations

from textual.widgets import Input

from perudo_ssh import protocol
from perudo_ssh.rules import Bid, GameView
from screens import tableview
from screens.bidinput import BidInput
from screens.bidtext import BidSyntaxError, parse_bid, parse_call
from screens.composer import BidComposer
from screens.dialogs import ConfirmDialog, Question, RerollDialog
from screens.messages import Send
from screens.rounds import RoundsScreen
from screens.wording import bid_refusal, call_refusal, call_word

# the actions whose keys come and go with the table's state (see `check_action`)
_OFFERED: tuple[tuple[str, tuple[object, ...]], ...] = (
    ("round_log", ()),
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


class MovesScreen(RoundsScreen):
    """A screen where this session moves at one table: the bid being composed, the refusal
    shown (`_error`, words in the session's language), the dice planned to show and reroll;
    the subclass draws them (`_draw_composer`) and composes a `BidInput`."""

    _live: bool
    """Whether the screen is composed, so a refusal is drawn at once (the subclass says)."""

    def __init__(self) -> None:
        super().__init__()
        self._composer = BidComposer()
        self._error: str | None = None
        self._offered: tuple[bool | None, ...] = ()
        self._reroll_plan: tuple[int, ...] = ()  # dice to show right after this turn's bid
        self._reroll_dialog: RerollDialog | None = None

    # ---- which keys are offered --------------------------------------------------------------

    def _refresh_keys(self) -> None:
        """Redraw the footer only when the offered keys changed (it is rebuilt each time)."""
        offered = tuple(self.check_action(action, args) for action, args in _OFFERED)
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()

    def _is_creator(self) -> bool:
        t = self._table
        return t is not None and t.me is not None and t.me == t.creator

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        t, game = self._table, self.game
        if action in ("add_bot", "start"):
            return t is not None and t.status == "waiting" and self._is_creator()
        if action in ("leave", "chat", "chat_at_once"):
            return True
        if action in ("round_log", "scroll_log"):  # a game begun: its rounds, when ended
            if game is None or (t is not None and t.status == "waiting"):
                return False
            return bool(game.rounds) or self.has_class("-log")
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
            if call == "jonti":  # out of turn: offered only while allowed
                return options.jonti and choices.jonti
            # offered only when it would work now (issue 13: "c Calza" at a 2-seat table or in
            # a palifico round, "d Dudo" out of turn); the key still says why not (`on_key`)
            return bool(game.bids) and bool(getattr(choices, str(call)))
        if action == "calzone":
            return choices.calzone
        if action == "reroll":
            if not options.show_and_reroll:
                return False
            return choices.reroll or self._may_plan_reroll()
        return True

    def _call_refusal(self, call: str) -> str | None:
        game = self.game
        if game is None or self._table is None:
            return None
        return call_refusal(self.tr, game, call, tableview.seat_names(self.tr, self._table))

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
            names = tableview.seat_names(self.tr, self._table)
            self._error = bid_refusal(self.tr, game, self._composer.bid, names)
        self._draw_composer()

    def action_face_step(self, step: int) -> None:
        self.action_face((self._composer.face - 1 + step) % 6 + 1)

    def action_bid(self) -> None:
        self._try_bid(self._composer.bid)

    def _try_bid(self, bid: Bid) -> bool:
        game = self.game
        if game is None or self._table is None:
            return False
        reason = bid_refusal(self.tr, game, bid, tableview.seat_names(self.tr, self._table))
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
        self._error = self.tr._("Too late to show and reroll: the next player has already played")

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

    def action_leave(self) -> None:
        game = self.game
        mid_game = game is not None and game.me is not None and game.phase != "over"
        if mid_game and game is not None and game.me is not None and not game.seats[game.me].dice:
            mid_game = False  # already out: nobody takes the seat over
        if self._table is not None and self._table.status == "waiting":
            mid_game = False
        if not mid_game or game is None:
            self.post_message(Send(protocol.LeaveTable()))
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.post_message(Send(protocol.LeaveTable()))

        question = leave_question(game.options.preset, between_rounds=game.phase != "bidding")
        self.app.push_screen(ConfirmDialog(question), confirmed)

    def on_bid_input_too_long(self, event: BidInput.TooLong) -> None:
        event.stop()
        self._refuse(
            self.tr._(
                "A bid is short, like 5x4 or 3p: at most {n} characters", n=BidInput.MAX_LENGTH
            )
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """A typed bid (or a call word): check it, send it, or say what is wrong."""
        event.stop()
        text = event.value.strip().lower()
        game = self.game
        if not text or game is None:
            return
        call = parse_call(text, self.terms)
        if call is not None:
            if self.check_action("call", (call,)):
                event.input.clear()
                self.set_focus(None)
                self.action_call(call)
            else:
                word = call_word(self.terms, call)
                self._refuse(
                    self._call_refusal(call)
                    or self.tr._("{call} is not played at this table", call=word)
                )
            return
        try:
            bid = parse_bid(text)
        except BidSyntaxError as err:
            self._refuse(err.text(self.tr))
            return
        if self._try_bid(bid):
            event.input.clear()
            self.set_focus(None)
        else:
            self._composer.take(bid)
            self._draw_composer()


def leave_question(preset: str, between_rounds: bool = False) -> Question:
    """The question before leaving mid-game, as a function of the translator (asked again in
    another language after a switch): at a club table the cup stays until the round ends,
    then the player is out — at once `between_rounds` (RULES.md §6); elsewhere a bot plays
    the seat on."""
    if preset == "club" and between_rounds:
        return lambda tr: tr._(
            "Leave this game? You are out at once, and your tokens stay in the bank."
        )
    if preset == "club":
        return lambda tr: tr._(
            "Leave this game? Your cup stays on the table until the round ends; then you are "
            "out, and your tokens stay in the bank."
        )
    return lambda tr: tr._("Leave this game? A bot takes your seat and plays on.")
