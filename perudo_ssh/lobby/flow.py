"""The game flow of every table (`perudo_ssh.lobby.actor`): a move played, what follows a
change (bots, timers, the reveal, a game over), the timers, a table closed. Each is a function
of the lobby, called on the actor's turn only. Imports neither textual nor asyncssh."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from perudo_ssh import protocol
from perudo_ssh.i18n import N_
from perudo_ssh.lobby import bot_turns, chat, held_seats
from perudo_ssh.lobby.clients import TimerFired
from perudo_ssh.lobby.table import Table
from perudo_ssh.logs import log_event

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)

T = TypeVar("T")


def played(lobby: Lobby, table: Table, move: Callable[[], T], by: str = "player") -> T:
    """Make a move at `table` (it may raise `Refusal`: then nothing changed), report the
    game's end, and move on; returns what `move` returned. `by` ("player", "bot",
    "timeout") is who moved, for the lobby's `meter`; a player's move is timed from the
    command that made it (`Lobby.received`) to its broadcast (`broadcast.end_batch`)."""
    was = table.status
    result = move()
    if by != "timeout" or result is not None:
        lobby.meter.moved(by)
    if by == "player":
        lobby.moves_received.append((table.id, lobby.received))
    game_may_have_ended(lobby, table, was)
    after_change(lobby, table)
    return result


def game_may_have_ended(lobby: Lobby, table: Table, was: str) -> None:
    """Report a game that went from `was` "playing" to over: `on_game_over`, a log line."""
    if was == "playing" and table.status == "over":
        assert table.log is not None and table.state is not None
        winner = table.state.winner
        lobby._finishing[table.id] = table
        lobby.meter.game_finished()
        log_event(
            log,
            "game_over",
            table=table.id,
            rounds=len(table.log.rounds),
            winner=None if winner is None else table.seats[winner].name,
            automatic=len(table.automatic),
        )
        if lobby.on_game_over is not None:
            lobby._guarded(lobby.on_game_over, table, table.log)


def after_change(lobby: Lobby, table: Table) -> None:
    """Move the table on as far as it goes by itself, set its timers, and mark it to be
    sent to everyone at it at the end of the batch. A paused table only gets sent:
    it moves on, and its timers are set (from the start), once an admin resumes it."""
    lobby._changed[table.id] = None
    if table.deserted:  # e.g. a game played on for players who never came back ended
        close_table(lobby, table)
        return
    if table.id in lobby.paused or table.id in lobby.unsaved:
        cancel_timer(lobby, table.id)
        return
    if table.status == "waiting":  # a seat takes its player's name back (`_name_back`)
        for seat in table.seats:
            client = lobby._clients.get(seat.sid) if seat.sid is not None else None
            if client is not None and seat.name != client.name:
                seat.name = client.name
    was = table.status
    table.advance(lobby.dice)
    if was == "waiting" and table.status == "playing":
        log_event(
            log,
            "game_started",
            table=table.id,
            players=[seat.name for seat in table.seats],
            bots=sum(seat.bot for seat in table.seats),
        )
    schedule(lobby, table)


def schedule(lobby: Lobby, table: Table) -> None:
    """The table's timers. "move": a bot's pause before it acts, or the reveal timeout
    (with no human seated, the reveal waits it out: spectators see it); none at an
    `unattended` table, whose bots play on at once. "turn": the turn
    timer of the human to move, held for them or not (issue 5, item 1). "grace" + seat:
    each disconnected player's seat held for them (issue 5, item 2). A timer whose key
    is unchanged runs on; one no longer wanted is cancelled."""
    key: tuple[str | int, ...] | None = None
    delay = 0.0
    if table.bot_to_move() is not None:
        key, delay = ("bot", table.epoch), lobby.rng.uniform(*lobby.bot_delay)
    elif table.in_reveal:
        assert table.state is not None
        key, delay = ("reveal", table.state.round_index), lobby.reveal_timeout
    if table.unattended:  # nobody to wait for: the bots play it out at once
        delay = 0.0
    set_timer(lobby, table.id, "move", key, delay)
    # from when the table opened (or went back to waiting): players sitting down do not
    # set it back
    waiting = table.status == "waiting" and table.fill_seconds
    fill = ("fill", table.games) if waiting else None
    set_timer(lobby, table.id, "fill", fill, table.fill_seconds * lobby.timer_scale)
    turn = table.turn_key() if table.turn_seconds else None
    set_timer(
        lobby,
        table.id,
        "turn",
        None if turn is None else ("turn", *turn),
        table.turn_seconds * lobby.timer_scale,
    )
    held = {seat for seat in table.away() if not table.seats[seat].bot}
    for slot in list(lobby._timers.get(table.id, {})):
        if slot.startswith("grace") and int(slot[5:]) not in held:
            cancel_timer(lobby, table.id, slot)
    for seat in held:
        delay = table.grace_seconds * lobby.timer_scale
        set_timer(lobby, table.id, f"grace{seat}", ("grace", seat), delay)


def set_timer(
    lobby: Lobby, tid: int, slot: str, key: tuple[str | int, ...] | None, delay: float
) -> None:
    """Table `tid`'s timer in `slot` goes off after `delay` seconds with `key` (None: no
    timer); one already set with the same key runs on."""
    current = lobby._timers.get(tid, {}).get(slot)
    if current is not None and current[0] == key:
        return
    cancel_timer(lobby, tid, slot)
    if key is not None:
        loop = asyncio.get_running_loop()
        message = TimerFired(table=tid, slot=slot, key=key)
        handle = loop.call_later(delay, lobby._inbox.put_nowait, message)
        lobby._timers.setdefault(tid, {})[slot] = (key, handle, loop.time() + delay)


def cancel_timer(lobby: Lobby, tid: int, slot: str | None = None) -> None:
    """Cancel table `tid`'s timer in `slot`, or all its timers (None)."""
    timers = lobby._timers.get(tid, {})
    for found in list(timers) if slot is None else [slot]:
        if found in timers:
            timers.pop(found)[1].cancel()
    if not timers:
        lobby._timers.pop(tid, None)


def on_timer(lobby: Lobby, tid: int, slot: str, key: tuple[str | int, ...]) -> None:
    table = lobby.tables.get(tid)
    current = lobby._timers.get(tid, {}).get(slot)
    if table is None or current is None or current[0] != key:
        return  # stale: the table moved on or closed since
    cancel_timer(lobby, tid, slot)  # gone off: only forgotten
    if key[0] == "bot":
        played(lobby, table, lambda: bot_turns.bot_move(table, lobby.rng, lobby.dice), by="bot")
    elif key[0] == "turn":
        time_ran_out(lobby, table)
    elif key[0] == "grace":
        grace_over(lobby, table, int(key[1]))
    elif key[0] == "fill":  # a quick-play table waited long enough: bots sit down
        if table.status == "waiting" and table.seats:
            while len(table.seats) < table.size:
                table.add_bot(lobby.rng)
        after_change(lobby, table)
    else:
        if table.in_reveal:
            table.roll(lobby.dice)
        after_change(lobby, table)


def time_ran_out(lobby: Lobby, table: Table) -> None:
    """The turn timer went off: the automatic move (`bot_turns.auto_move`), told to all."""
    move = played(
        lobby, table, lambda: bot_turns.auto_move(table, lobby.rng, lobby.dice), by="timeout"
    )
    if move is None:
        return
    name = table.seats[move.seat].name
    log_event(log, "automatic_move", table=table.id, seat=move.seat, call=move.call)
    if move.call is not None:
        lobby.notice(table, N_("{name} ran out of time: automatic Dudo"), name=name)
        return
    # a bid does not end the round: it is the round's bid number `move.bids`
    assert table.state is not None and table.state.round_index == move.round
    bid = table.state.bids[move.bids].bid
    lobby.notice(
        table,
        N_("{name} ran out of time: automatic bid of {count}×{face}"),
        name=name,
        count=bid.count,
        face=bid.face,
    )


def grace_over(lobby: Lobby, table: Table, seat: int) -> None:
    """A disconnected player's grace period ended: a bot plays their seat until they
    come back (`held_seats.stand_in`; the club's leaving rule at a club table)."""
    was = table.status
    what = held_seats.stand_in(table, seat)
    if what == "kept":
        return
    name = table.seats[seat].name
    log_event(log, "seat_stand_in", table=table.id, seat=seat, player=name, what=what)
    if what == "bot":
        lobby.notice(
            table,
            N_("{name} has not come back: a bot plays their seat until they do"),
            name=name,
        )
    elif what == "leaving":
        lobby.notice(
            table,
            N_("{name} is not back: their cup stays until this round ends, then they are out"),
            name=name,
        )
    else:
        lobby.notice(table, N_("{name} has not come back and is out of the game"), name=name)
    game_may_have_ended(lobby, table, was)
    after_change(lobby, table)


def close_table(
    lobby: Lobby, table: Table, text: str = N_("table {table} closed"), **args: str | int
) -> None:
    """Close a table nobody plays at or watches, or one an admin closes; its bots stop.
    Everyone still at it goes back to the lobby, told `text` (an `N_` message id with
    `{table}`, the table's name, and `args`)."""
    cancel_timer(lobby, table.id)
    lobby.paused.discard(table.id)
    lobby.tables.pop(table.id, None)
    lobby._chat.pop(table.id, None)
    lobby._changed[table.id] = None  # to forget its saved game (`saving.save`)
    log_event(log, "table_closed", table=table.id, status=table.status)
    for sid in table.sessions():
        client = lobby._clients.get(sid)
        if client is not None:
            client.table = None
            lobby.tell(client, protocol.Notice(text=text, args={"table": table.name, **args}))
            lobby.tell(client, protocol.LeftTable())
            lobby._lobby_pending.add(sid)
            chat.send_chat_history(lobby, client)
