"""What the lobby actor sends at the end of a batch (`perudo_ssh.lobby.actor`): the events its
messages made, in order, once saved; each changed table to those at it; the lobby list and
who is online; sessions too slow to read, dropped. Functions of the lobby, called on the
actor's turn only. Imports neither textual nor asyncssh."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from perudo_ssh import protocol
from perudo_ssh.i18n import N_
from perudo_ssh.lobby import saving, sessions, views
from perudo_ssh.lobby.clients import Rated
from perudo_ssh.lobby.table import Table

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)

OnlineLists = tuple[tuple[str, ...], tuple[int | None, ...], tuple[str, ...]]
"""The lobby list's `online`, `ratings` and `bot_accounts` (`online_lists`)."""
ONLINE_UNMARKED = -1
"""What `Lobby.unmarked_changes` gets when the online lists changed unmarked."""


def flush_outgoing(lobby: Lobby) -> None:
    """Put the batch's events into their outboxes, in order, never waiting: a full outbox
    means its session is too slow (dropped by `_settle_drops`)."""
    outgoing, lobby._outgoing = lobby._outgoing, []
    for client, data, table in outgoing:
        if table in lobby.unsaved:
            lobby._held.append((client, data))  # out once it is saved (`saving.resume_saved`)
        elif not client.dropped and not client.session.offer(data):
            client.dropped = True
            lobby.online_changed()
            lobby._drops.append(client)


def settle_drops(lobby: Lobby) -> None:
    """Drop the sessions found too slow: outbox cleared, `Goodbye`, seat left."""
    while lobby._drops:
        client = lobby._drops.pop(0)
        client.session.end(N_("too slow"))
        log.info("lobby: dropped %s (outbox full)", client.name)
        lobby.meter.dropped("outbox_full")
        lobby._guarded(lobby.remove_client, client)


async def end_batch(lobby: Lobby) -> None:
    """Save, then send what the batch changed: the events its messages made (answers,
    notices, chat) in order, each changed table to the sessions at it, then the lobby list.
    Sending may find sessions too slow; dropping them changes their tables and who is
    online, so save and send again until nobody more is dropped."""
    while True:
        lobby._guarded(sessions.names_back, lobby)
        if await saving.save(lobby) and lobby.unsaved:
            saving.resume_saved(lobby)
            continue  # what resuming moved on is saved before it is sent
        while lobby._changed:
            tid = next(iter(lobby._changed))
            del lobby._changed[tid]
            lobby._summaries.pop(tid, None)
            # an unsaved table is not sent: it is sent afresh once saved
            if tid in lobby.tables and tid not in lobby.unsaved:
                lobby._guarded(broadcast, lobby, lobby.tables[tid])
        lobby._guarded(flush_lobby, lobby)
        lobby._guarded(lobby._admin.flush)
        flush_outgoing(lobby)
        if lobby.moves_received:  # the players' moves of the batch are out: time them
            now = time.monotonic()
            for tid, received in lobby.moves_received:
                if tid not in lobby.unsaved:  # a table that could not be saved sent nothing
                    lobby.meter.broadcast(now - received)
            lobby.moves_received.clear()
        if not lobby._drops:
            return
        settle_drops(lobby)


def on_rated(lobby: Lobby, rated: Rated) -> None:
    if lobby.ratings is None:
        lobby.ratings = {}
    for account, (_name, _before, after) in rated.changes.items():
        lobby.ratings[account] = after
    lobby.online_changed()
    table = lobby.tables.get(rated.table)
    if table is not None and table.status == "over":
        table.rating_changes = tuple(
            protocol.RatingChange(name=name, before=before, after=after)
            for name, before, after in rated.changes.values()
        )
    # the seats of the players rated show their new ratings: only their tables are
    # sent again (one rated game must not redraw every table of the server)
    owners = {f"account:{account}" for account in rated.changes}
    for table in lobby.tables.values():
        if any(seat.owner in owners for seat in table.seats):
            lobby._changed[table.id] = None


def flush_lobby(lobby: Lobby) -> None:
    """Send the lobby list to sessions in the lobby: to all if it changed, else only to
    those that just arrived there. The online names come sorted, each with its rating
    (`LobbyState.ratings`)."""
    online, ratings, bot_accounts = online_lists(lobby)
    state = protocol.LobbyState(
        tables=tuple(
            summary(lobby, t) for t in sorted(lobby.tables) if lobby.tables[t].code is None
        ),
        online=online,
        ratings=ratings,
        bot_accounts=bot_accounts,
    )
    if state != lobby._lobby_sent:
        targets = [c for c in lobby._clients.values() if c.table is None]
    else:
        targets = [lobby._clients[s] for s in lobby._lobby_pending if s in lobby._clients]
        targets = [c for c in targets if c.table is None]
    lobby._lobby_sent = state
    lobby._lobby_pending.clear()
    if targets:
        data = protocol.encode(state)
        for client in targets:
            lobby.deliver(client, data)


def online_lists(lobby: Lobby) -> OnlineLists:
    """The lobby list's online names (sorted), their ratings (in the same order; none
    without ratings) and the bot accounts' names (sorted), kept until `Lobby.online_changed`
    (issue 10: worked out at every batch, with each session's owner string built, they
    were ~3 % of the server at 300 sessions)."""
    key = (lobby._online_changes, id(lobby.ratings))
    kept = lobby._online_kept if lobby._online_kept and lobby._online_kept[0] == key else None
    if kept is not None and not lobby.check_summaries:
        return kept[1]
    fresh = online_afresh(lobby)
    if kept is not None and kept[1] != fresh:
        lobby.unmarked_changes.append(ONLINE_UNMARKED)
    lobby._online_kept = (key, fresh)
    return fresh


def online_afresh(lobby: Lobby) -> OnlineLists:
    online = sorted(
        (c.name, views.rating_of(c.owner, lobby.ratings))
        for c in lobby._clients.values()
        if not c.dropped
    )
    return (
        tuple(name for name, _ in online),
        tuple(rating for _, rating in online) if lobby.ratings is not None else (),
        tuple(sorted(c.name for c in lobby._clients.values() if c.bot_account and not c.dropped)),
    )


def summary(lobby: Lobby, tid: int) -> protocol.TableSummary:
    """Table `tid`'s line in the lobby list, worked out again only when the table changed
    since (issue 10: the list was built whole at every batch, ~3 % of the server at 200
    sessions, though most batches change one table or none)."""
    kept = lobby._summaries.get(tid)
    if kept is None:
        kept = lobby._summaries[tid] = views.summary(lobby.tables[tid])
    elif lobby.check_summaries and kept != (fresh := views.summary(lobby.tables[tid])):
        lobby.unmarked_changes.append(tid)
        kept = lobby._summaries[tid] = fresh
    return kept


def broadcast(lobby: Lobby, table: Table) -> None:
    """Each seated human and spectator gets the table as they may see it, with the turn
    timer and the grace periods as they stand now."""
    names = {sid: lobby._clients[sid].name for sid in table.spectators if sid in lobby._clients}
    paused = table.id in lobby.paused
    now = asyncio.get_running_loop().time()
    clock = None
    timers = lobby._timers.get(table.id, {})
    turn = timers.get("turn")
    if turn is not None and table.turn_seconds:
        seat = turn[0][1]
        assert isinstance(seat, int)
        left = round(max(0.0, turn[2] - now) / lobby.timer_scale, 1)
        clock = protocol.TurnClock(seat=seat, seconds=table.turn_seconds, left=left)
    grace: dict[int, float] = {}
    for seat in table.away():
        timer = timers.get(f"grace{seat}")
        # no timer running (a paused table): the whole grace is left, as on resuming
        left = table.grace_seconds if timer is None else (timer[2] - now) / lobby.timer_scale
        grace[seat] = max(0.0, left)
    fill = timers.get("fill")
    fill_in = None if fill is None else round(max(0.0, fill[2] - now) / lobby.timer_scale, 1)
    for seat in table.humans():
        client = lobby._clients.get(table.seats[seat].sid)  # type: ignore[arg-type]
        if client is not None:
            lobby.tell(
                client,
                views.table_state(
                    table, seat, names, paused, clock, grace, lobby.ratings, fill_in, lobby.programs
                ),
            )
    if table.spectators:
        data = protocol.encode(
            views.table_state(
                table, None, names, paused, clock, grace, lobby.ratings, fill_in, lobby.programs
            )
        )
        for sid in table.spectators:
            if sid in lobby._clients:
                lobby.deliver(lobby._clients[sid], data)


def notice(
    lobby: Lobby, table: Table, text: str, *, but: int | None = None, **args: str | int
) -> None:
    """Tell everyone at `table` but session `but` (if given) `text` (an `N_` message id)
    with its named `args`."""
    data = protocol.encode(protocol.Notice(text=text, args=args))
    for sid in table.sessions():
        if sid in lobby._clients and sid != but:
            lobby.deliver(lobby._clients[sid], data, table.id)


# ---- sessions ------------------------------------------------------------------------
