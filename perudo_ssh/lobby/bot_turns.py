"""The moves a table makes by itself for a seat: a bot's turn (`bot_move`: out-of-turn calls
of the other bots first, then its move, then maybe a show and reroll; RULES.md §5–§6) and a
human's move when their turn timer runs out (`auto_move`, issue 5, item 1), both decided by
`perudo_ssh.bots` from the seat's own view (`observe`), then played through `Table.act`.

Functions taking the `Table`, called by the lobby's timers (lobby/flow.py): the table knows
whose turn it is (`Table.bot_to_move`, `Table.turn_key`); choosing a move for a seat that
nobody at a keyboard makes is this module's job. A bot must never stall its table: what a
bot fails to play is logged and replaced by the plainest legal move.
"""

from __future__ import annotations

import logging
import random

from perudo_ssh import bots, protocol
from perudo_ssh.lobby.table import Table
from perudo_ssh.rules import Call, PlaceBid, RuleError, observe

log = logging.getLogger(__name__)


def _calls_out_of_turn(table: Table, turn: int) -> bool:
    """Before the bot at seat `turn` moves, the other bots may call the last bid out of
    turn (`bots.out_of_turn_calls`): the first that does ends the round. True when one
    did. (Bots are asked when a bot is to move; while a person thinks, none calls.)"""
    assert table.state is not None
    levels = [(seat.level or "medium") if seat.bot else None for seat in table.seats]
    for call in bots.out_of_turn_calls(table.state, levels, turn):
        try:
            table.act(call)
        except RuleError:  # optional: the bot to move moves as it would have
            log.exception(
                "table %s: bot at seat %s could not call out of turn", table.id, call.seat
            )
            continue
        return True
    return False


def bot_move(table: Table, rng: random.Random, dice: random.Random | None = None) -> None:
    """The bot to act (if any) moves, deciding from its own view only with `rng`; right
    after its bid it may show and reroll (RULES.md §6, `bots.show_after_bid`), the new
    dice from `dice` (`rng` when None: a seeded test's one stream). Before it, another
    bot may call the last bid out of turn (`_calls_out_of_turn`)."""
    dice = rng if dice is None else dice
    seat = table.bot_to_move()
    if seat is None or table.state is None:
        return
    if _calls_out_of_turn(table, seat):
        return
    view = observe(table.state, seat)
    command = None
    try:
        # a bot of its own level; one playing a human's seat plays as medium
        command = bots.choose(view, rng, level=table.seats[seat].level or "medium")
        table.act(table.action_for(command, seat, dice))
    except Exception:
        # A bot must never stall its table: log it and make the plainest legal move.
        log.exception("table %s: bot at seat %s chose %r", table.id, seat, command)
        choices = view.choices
        fallback = (
            Call(seat=seat, call="dudo")
            if choices.dudo
            else PlaceBid(seat=seat, bid=choices.bids[0])
        )
        table.act(fallback)
    if table.state.phase == "bidding" and table.state.last_action_seat == seat:
        level = table.seats[seat].level or "medium"
        shown = bots.show_after_bid(observe(table.state, seat), rng, level=level)
        if shown is not None:
            try:
                table.act(table.action_for(shown, seat, dice))
            except RuleError:  # optional: the bid stands without it
                # not the command: it names dice still under the bot's cup
                log.exception("table %s: bot at seat %s could not reroll", table.id, seat)


def auto_move(
    table: Table, rng: random.Random, dice: random.Random | None = None
) -> protocol.AutoMove | None:
    """The turn timer ran out (issue 5, item 1): make `bots.automatic_move` for the seat
    to move, record it in `automatic` and return it; None when no human's turn waits.
    A reroll's dice come from `dice` (`rng` when None)."""
    state = table.state
    if table.status != "playing" or state is None or state.phase != "bidding":
        return None
    seat = state.turn
    if table.seats[seat].bot:
        return None
    command = bots.automatic_move(observe(state, seat))
    move = protocol.AutoMove(
        round=state.round_index,
        seat=seat,
        bids=len(state.bids),
        call=command.call if isinstance(command, protocol.MakeCall) else None,
    )
    table.act(table.action_for(command, seat, rng if dice is None else dice))
    table.automatic.append(move)
    return move
