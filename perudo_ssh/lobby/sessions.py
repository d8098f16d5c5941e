"""The sessions as the lobby actor holds them (`perudo_ssh.lobby.actor`): one connecting (a
unique name; seated back at a table that held its seat, issue 5), asking for its state again,
leaving, dropped; the names given back once free. Functions of the lobby, called on the
actor's turn only. Imports neither textual nor asyncssh."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from perudo_ssh import protocol
from perudo_ssh.chat import (
    clean_chat,
)
from perudo_ssh.i18n import N_
from perudo_ssh.lobby import chat, commands, flow, held_seats
from perudo_ssh.lobby.clients import Client, Connecting
from perudo_ssh.logs import log_event

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)


def on_connect(lobby: Lobby, connect: Connecting) -> None:
    session = connect.session
    wanted = clean_chat(session.name) or "player"  # no control character in a name
    taken = {c.name.casefold() for c in lobby._clients.values()}
    name, n = wanted, 2
    while name.casefold() in taken:
        name, n = f"{wanted}-{n}", n + 1
    client = Client(
        session=session,
        name=name,
        admin=connect.admin,
        address=connect.address,
        account_id=connect.account_id,
        bot_account=connect.bot_account,
        wanted=wanted,
    )
    if connect.account_id is not None:
        if connect.bot_account:
            lobby.programs.add(connect.account_id)
        else:
            lobby.programs.discard(connect.account_id)
    lobby._clients[session.id] = client
    lobby.online_changed()
    lobby.tell(client, protocol.Welcome(name=name, admin=client.admin))
    if lobby.notes.name or lobby.notes.motd:
        lobby.tell(client, lobby.notes)
    lobby._lobby_pending.add(session.id)
    chat.send_chat_history(lobby, client)
    take_back_seat(lobby, client)


def take_back_seat(lobby: Lobby, client: Client) -> None:
    """A player who dropped mid-game and logs in again with the same identity is seated
    back at once, with the whole table (their dice, the bids): issue 5, item 2.

    Most drops are silent (Wi-Fi, a sleeping laptop): the server finds the old connection
    dead only when its keepalives go unanswered, long after the player logged in again.
    So a new session of an identity also takes over a seat at a game in play that an
    older session of that identity still holds; that session is told and goes back to
    the lobby (if it is alive after all, it can watch)."""
    owner = client.owner
    if owner is None:
        return
    for table in lobby.tables.values():
        seat = held_seats.reclaim(table, client.id, owner)
        if seat is None:
            continue
        client.table = table.id
        flow.cancel_timer(lobby, table.id, f"grace{seat}")
        log_event(log, "seat_reclaimed", table=table.id, seat=seat, player=client.name)
        chat.send_chat_history(lobby, client)
        lobby.notice(table, N_("{name} is back"), but=client.id, name=table.seats[seat].name)
        flow.after_change(lobby, table)
        return
    for old in list(lobby._clients.values()):
        if old is client or old.owner != owner or old.table is None:
            continue
        table = lobby.tables[old.table]
        seat = held_seats.hand_over(table, old.id, client.id)
        if seat is None:
            continue
        old.table = None
        client.table = table.id
        lobby.tell(old, protocol.LeftTable())
        lobby.tell(
            old,
            protocol.Notice(
                text=N_("your seat at {table} went to your new session"),
                args={"table": table.name},
            ),
        )
        lobby._lobby_pending.add(old.id)
        chat.send_chat_history(lobby, old)
        log_event(log, "seat_taken_over", table=table.id, seat=seat, player=client.name)
        chat.send_chat_history(lobby, client)
        lobby.notice(table, N_("{name} is back"), but=client.id, name=table.seats[seat].name)
        flow.after_change(lobby, table)
        return


def on_refresh(lobby: Lobby, sid: int) -> None:
    client = lobby._clients.get(sid)
    if client is None or client.dropped:
        return
    lobby.tell(client, protocol.Welcome(name=client.name, admin=client.admin))
    if lobby.notes.name or lobby.notes.motd:
        lobby.tell(client, lobby.notes)
    if client.table is None:
        lobby._lobby_pending.add(sid)
    else:
        lobby._changed[client.table] = None
    chat.send_chat_history(lobby, client)


def remove_client(lobby: Lobby, client: Client) -> None:
    """The session is gone (disconnected or dropped). At a table mid-game its seat is
    held for it (`held_seats.disconnect`); otherwise it leaves."""
    if client.table is not None:
        disconnect(lobby, client)
    lobby._clients.pop(client.id, None)
    lobby.online_changed()
    lobby._lobby_pending.discard(client.id)
    lobby.moderation.forget_session(client.id)
    if client.owner is not None and client.name.casefold() == client.wanted.casefold():
        lobby._gone_names.append(client)  # `_names_back`, once the batch is over


def names_back(lobby: Lobby) -> None:
    """At the end of a batch, for each session gone in it (`_remove`): `_name_back`."""
    gone, lobby._gone_names = lobby._gone_names, []
    for client in gone:
        name_back(lobby, client)


def name_back(lobby: Lobby, gone: Client) -> None:
    """Issue 13, item 1: a session named `ben-2` because another of the same identity
    was online as `ben` takes the name back once that one is gone — at once in the
    lobby, as a spectator or at a waiting table; mid-game its seat keeps the name the
    game began with (its record's), and takes the new one when the table waits again
    (`_after_change`). It is told (`Welcome` again, and a notice). Done once the batch
    is over, so that sessions ended together (a ban of a key) are not renamed first."""
    taken = {c.name.casefold() for c in lobby._clients.values()}
    if gone.wanted.casefold() in taken:
        return
    client = next(
        (
            c
            for c in lobby._clients.values()
            if c.owner == gone.owner and not c.dropped and c.name != c.wanted
        ),
        None,
    )
    if client is None:
        return
    log_event(log, "renamed", old=client.name, new=client.wanted)
    client.name = client.wanted
    lobby.online_changed()
    lobby.tell(client, protocol.Welcome(name=client.name, admin=client.admin))
    lobby.tell(
        client,
        protocol.Notice(
            text=N_("Your other session ended: you play as {name} again."),
            args={"name": client.name},
        ),
    )
    table = lobby.tables.get(client.table) if client.table is not None else None
    if table is not None:
        seat = table.seat_of(client.id)
        if seat is not None and table.status == "waiting":
            table.seats[seat].name = client.name
        lobby._changed[table.id] = None  # a spectator's name shows there too


def disconnect(lobby: Lobby, client: Client) -> None:
    """`client` lost its connection while at a table: a playing seat with an identity is
    held for the table's grace period (issue 5, item 2), anything else is a leave."""
    assert client.table is not None
    table = lobby.tables[client.table]
    if held_seats.holds_for(table, client.id) is None:
        commands.leave_table(lobby, client)
        return
    seat = held_seats.disconnect(table, client.id)
    client.table = None
    log_event(log, "seat_held", table=table.id, seat=seat, player=client.name)
    lobby.notice(
        table,
        N_("{name} lost their connection; their seat is held for {seconds} seconds"),
        name=table.seats[seat].name,
        seconds=table.grace_seconds,
    )
    flow.after_change(lobby, table)


# ---- commands ------------------------------------------------------------------------
