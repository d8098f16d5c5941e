"""A seat held for a player who lost their connection mid-game, and taken back (issue 5,
item 2): `holds_for` (whether a drop holds the seat or is a leave), `disconnect`, `hand_over`
(a new session of the same player takes over a silently dropped one), `stand_in` (the grace
period is over: a bot plays the seat, or the club's leaving rule, RULES.md §6), `held_for`
and `reclaim` (the player is back).

Functions taking the `Table`, called by the lobby actor only (lobby/sessions.py,
lobby/flow.py): the table keeps its seats (`Seat.away`, `Seat.owner`, `Seat.left_round`);
this is what happens to them when a connection drops, apart from the seating of a waiting
table and a leave on purpose (`Table.sit`, `Table.leave`). The grace timer itself is the
lobby's (lobby/flow.py).
"""

from __future__ import annotations

from perudo_ssh.lobby.table import Table
from perudo_ssh.rules import Resign


def holds_for(table: Table, sid: int) -> int | None:
    """The seat that session `sid` keeps if its connection drops (issue 5, item 2): one
    with dice, at a game in play, of a player with an identity; None when a drop is a
    leave (`Table.leave`: a guest cannot come back, a waiting seat closes up)."""
    seat = table.seat_of(sid)
    if seat is None or table.status != "playing" or table.seats[seat].owner is None:
        return None
    assert table.state is not None
    return seat if table.state.counts[seat] > 0 else None


def disconnect(table: Table, sid: int) -> int:
    """Session `sid` lost its connection and `holds_for(table, sid)` is its seat: the seat is
    held for its player (`away`, nobody plays it; the turn timer moves for them) until
    `stand_in` or `reclaim`. Returns the seat."""
    seat = holds_for(table, sid)
    assert seat is not None, "a drop that is a leave: call leave"
    table.epoch += 1
    table.seats[seat].sid = None
    table.seats[seat].away = True
    table.ready.discard(seat)
    table.pass_creator(sid)
    return seat


def hand_over(table: Table, old: int, new: int) -> int | None:
    """Session `new` of the same player takes over the seat session `old` holds at a game
    in play (a silent drop: `old` is not known to be dead yet). Returns the seat, or None
    when `old` holds none that `holds_for` would keep."""
    seat = holds_for(table, old)
    if seat is None:
        return None
    table.epoch += 1
    table.seats[seat].sid = new
    if table.creator == old:
        table.creator = new
    return seat


def stand_in(table: Table, seat: int) -> str:
    """The grace period of disconnected `seat` is over: a bot plays it ("bot") until its
    player comes back (`reclaim`); they are ranked as having left in this round unless
    they do. At a club table, where a bot does not play someone's stake, the seat follows
    the club's leaving rule instead (RULES.md §6): out once the round ends ("leaving"),
    or at once between rounds ("resigned"). "kept" when the seat is no longer away."""
    place = table.seats[seat]
    if not place.away or place.bot or table.status != "playing":
        return "kept"
    assert table.state is not None
    table.epoch += 1
    place.bot = True
    if table.state.counts[seat] > 0:
        place.left_round = table.state.round_index
    if table.options.preset != "club" or table.state.counts[seat] == 0:
        return "bot"
    place.away = False
    place.owner = None
    if table.state.phase == "bidding":
        place.leaving = True
        return "leaving"
    table.act(Resign(seat=seat))
    return "resigned"


def held_for(table: Table, owner: str) -> int | None:
    """The seat held (or played by a bot) for the disconnected player `owner`, or None."""
    if table.status != "playing":
        return None
    for i, seat in enumerate(table.seats):
        if seat.away and seat.owner == owner and seat.sid is None:
            return i
    return None


def reclaim(table: Table, sid: int, owner: str) -> int | None:
    """Session `sid` of the player `owner` takes back their seat (issue 5, item 2): no
    bot plays it any more and they are no longer ranked as having left. Returns the seat,
    or None when no seat is held for `owner`."""
    seat = held_for(table, owner)
    if seat is None:
        return None
    table.epoch += 1
    place = table.seats[seat]
    place.sid = sid
    place.away = False
    place.bot = False
    place.left_round = None
    if table.creator is None:
        table.creator = sid
    return seat
