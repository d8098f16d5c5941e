"""The lobby's answers to its sessions' commands (`perudo_ssh.lobby.actor`): make, join,
watch and leave tables, challenges, quick play, ready, and chat (issue 4, item 5). Each is a
function of the lobby, called on the actor's turn only. Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

from perudo_ssh import bots, protocol
from perudo_ssh.i18n import N_
from perudo_ssh.lobby import chat, flow
from perudo_ssh.lobby.admin import ADMIN_COMMANDS
from perudo_ssh.lobby.clients import CODE_LETTERS, MOVES, Client
from perudo_ssh.lobby.table import Refusal, Table
from perudo_ssh.logs import log_event
from perudo_ssh.rules import PRESETS

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)


def on_command(lobby: Lobby, client: Client, command: object) -> None:
    if isinstance(command, MOVES) and client.table in lobby.paused:
        raise Refusal("paused", N_("an admin paused this table; wait until it resumes"))
    if isinstance(command, MOVES) and client.table in lobby.unsaved:
        raise Refusal("paused", protocol.SAVE_PAUSED)
    match command:
        case protocol.CreateTable():
            create_table(lobby, client, command)
        case protocol.JoinTable(table=tid):
            join(lobby, client, tid, None)
        case protocol.QuickPlay():
            quick_play(lobby, client, command)
        case protocol.JoinPrivate(code=code):
            join(lobby, client, private_table(lobby, code).id, code)
        case protocol.Challenge():
            challenge(lobby, client, command)
        case protocol.DeclineChallenge(code=code):
            decline(lobby, client, code)
        case protocol.SpectateTable(table=tid):
            spectate(lobby, client, tid)
        case protocol.LeaveTable():
            if client.table is None:
                raise Refusal("not_seated", N_("you are not at a table"))
            leave_table(lobby, client)
        case protocol.StartGame():
            table = creators_waiting_table(lobby, client)
            if len(table.seats) < 2:
                raise Refusal("bad_command", N_("a game needs at least 2 players seated"))
            table.start(lobby.dice)
            lobby.after_change(table)
        case protocol.AddBot(level=asked):
            table = creators_waiting_table(lobby, client)
            level = table.bot_level if asked is None else asked
            if len(table.seats) >= table.size:
                raise Refusal("table_full", N_("every seat is taken"))
            if level not in bots.LEVELS:
                raise Refusal("bad_command", N_("unknown bot level {level}"), {"level": level[:12]})
            table.add_bot(lobby.rng, level)
            lobby.after_change(table)
        case protocol.PlayAgain():
            table, seat = my_seat(lobby, client)
            if table.status != "over":
                raise Refusal("bad_command", N_("the game is not over"))
            if seat not in table.play_again:  # asking twice changes nothing
                table.play_again.add(seat)
                lobby.after_change(table)
        case protocol.Ready(round=round_):
            ready(lobby, client, round_)
        case protocol.Say(text=text):
            chat.say(lobby, client, text)
        case _ if isinstance(command, ADMIN_COMMANDS):
            lobby._admin.handle(client, command)  # refused unless client.admin
        case (
            protocol.MakeBid()
            | protocol.MakeCall()
            | protocol.DeclareCalzone()
            | protocol.ShowAndReroll()
        ):
            table, seat = my_seat(lobby, client)
            flow.played(lobby, table, lambda: table.play(command, seat, lobby.dice))
        case _:
            raise TypeError(f"not a command: {command!r}")


def create_table(lobby: Lobby, client: Client, command: protocol.CreateTable) -> Table:
    require_no_table(lobby, client)
    tid = next(lobby._table_ids)
    table = Table.create(tid, command, client.id, client.name, lobby.rng, client.owner)
    if command.private:
        table.code = new_code(lobby)
    lobby.tables[tid] = table
    client.table = tid
    log_event(
        log,
        "table_created",
        table=tid,
        by=client.name,
        preset=table.options.preset,
        seats=table.size,
        bots=command.bots,
        turn_seconds=table.turn_seconds,
        grace_seconds=table.grace_seconds,
        private=table.code is not None,
    )
    lobby.after_change(table)
    return table


def new_code(lobby: Lobby) -> str:
    """A fresh invite code: six of `CODE_LETTERS` (no 0/O, 1/I/L to misread), from the
    operating system's randomness, none in use."""
    taken = {t.code for t in lobby.tables.values()}
    while (code := "".join(secrets.choice(CODE_LETTERS) for _ in range(6))) in taken:
        pass
    return code


def private_table(lobby: Lobby, code: str) -> Table:
    """The private table whose invite code is `code` (any case, spaces ignored); refused
    as "no_table" if none."""
    wanted = "".join(code.split()).upper()
    for table in lobby.tables.values():
        if table.code is not None and table.code == wanted:
            return table
    raise Refusal("no_table", N_("no table has the invite code {code}"), {"code": code[:12]})


def challenge(lobby: Lobby, client: Client, command: protocol.Challenge) -> None:
    """`protocol.Challenge`: a private table of two for `client`, and the challenged
    player told (`protocol.Challenged`)."""
    require_no_table(lobby, client)
    wanted = command.name.strip().casefold()
    target = next(
        (c for c in lobby._clients.values() if not c.dropped and c.name.casefold() == wanted),
        None,
    )
    if target is None:
        raise Refusal(
            "bad_command", N_("nobody called {name} is online"), {"name": command.name[:24]}
        )
    if target is client or (client.owner is not None and target.owner == client.owner):
        raise Refusal("bad_command", N_("you cannot challenge yourself"))
    create = protocol.CreateTable(
        preset=command.preset, seats=2, bots=0, name=f"{client.name} – {target.name}",
        private=True,
    )  # fmt: skip
    table = create_table(lobby, client, create)
    assert table.code is not None
    challenged = protocol.Challenged(
        by=client.name,
        table=table.id,
        code=table.code,
        preset=table.options.preset,
        bot_account=client.bot_account,
    )
    lobby.tell(target, challenged)
    lobby.tell(
        client,
        protocol.Notice(
            text=N_("You challenged {name}; the table waits for them."),
            args={"name": target.name},
        ),
    )


def decline(lobby: Lobby, client: Client, code: str) -> None:
    """`protocol.DeclineChallenge`: whoever waits at that private table is told."""
    table = private_table(lobby, code)
    lobby.notice(table, N_("{name} declined the challenge."), name=client.name)


def quick_play(lobby: Lobby, client: Client, command: protocol.QuickPlay) -> None:
    """`protocol.QuickPlay`: join the best open table, else open one that bots fill after
    the wait chosen (the "fill" timer, `flow.schedule`)."""
    require_no_table(lobby, client)
    if command.wait_seconds not in protocol.QUICK_WAITS:
        raise Refusal("bad_command", N_("a quick play waits 15, 30, 60 or 120 seconds"))
    if command.preset is not None and command.preset not in PRESETS:
        raise Refusal("bad_options", N_("unknown preset {preset}"), {"preset": command.preset})
    open_tables = [
        table
        for table in lobby.tables.values()
        if table.status == "waiting"
        and len(table.seats) < table.size
        and table.id not in lobby.paused
        and table.code is None
        and (command.preset is None or table.options.preset == command.preset)
        and (client.owner is None or all(s.owner != client.owner for s in table.seats))
    ]
    if open_tables:
        best = max(open_tables, key=lambda t: (len(t.humans()), -t.id))
        join(lobby, client, best.id, None)
        return
    preset = command.preset or "classic"
    create_table(lobby, client, protocol.CreateTable(preset=preset, seats=4, bots=0))
    table = lobby.tables[client.table]  # type: ignore[index]
    table.fill_seconds = command.wait_seconds
    flow.schedule(lobby, table)


def join(lobby: Lobby, client: Client, tid: int, code: str | None) -> None:
    """Sit `client` at table `tid`; a private table only with its invite `code` (checked
    by the caller: `JoinTable` has none, and a private table is refused as unknown)."""
    require_no_table(lobby, client)
    table = table_of(lobby, tid)
    if table.code is not None and code is None:
        raise Refusal("no_table", N_("there is no such table"))
    if table.status != "waiting":
        raise Refusal("table_full", N_("that table is not waiting for players; you may watch"))
    if len(table.seats) >= table.size:
        raise Refusal("table_full", N_("every seat is taken"))
    if client.owner is not None and any(seat.owner == client.owner for seat in table.seats):
        # a second session plays as its account (issue 13): one account, one seat a game
        raise Refusal("bad_command", N_("you already sit at this table, from another session"))
    table.sit(client.id, client.name, client.owner)
    client.table = tid
    chat.send_chat_history(lobby, client)
    lobby.after_change(table)


def spectate(lobby: Lobby, client: Client, tid: int) -> None:
    require_no_table(lobby, client)
    table = table_of(lobby, tid)
    if table.code is not None and not client.admin:  # not listed: admins only
        raise Refusal("no_table", N_("there is no such table"))
    table.spectators.append(client.id)
    client.table = tid
    chat.send_chat_history(lobby, client)
    lobby._changed[tid] = None


def leave_table(lobby: Lobby, client: Client) -> None:
    """`client` leaves its table: mid-game a bot takes the seat, except at a club table,
    where the cup stays until the round ends and the player is then out (RULES.md §6;
    `Table.leave`). A leave that ends the game is reported like a move that does."""
    assert client.table is not None
    table = lobby.tables[client.table]
    client.table = None
    was = table.status
    what = table.leave(client.id)
    lobby.tell(client, protocol.LeftTable())
    lobby._lobby_pending.add(client.id)
    chat.send_chat_history(lobby, client)
    flow.game_may_have_ended(lobby, table, was)
    if table.deserted and table.status == "playing":
        # the last person left mid-game: the bots play it out at once and it is stored,
        # the leaver placed when they left (issue 13, item 8); then the table closes
        table.unattended = True
    if table.deserted:
        lobby.close_table(table)
        return
    if what == "bot":
        lobby.notice(table, N_("{name} left; a bot plays their seat"), name=client.name)
    elif what in ("freed", "gone", "out"):
        lobby.notice(table, N_("{name} left the table"), name=client.name)
    elif what == "leaving":
        lobby.notice(
            table,
            N_("{name} left; their cup stays until the round ends, then they are out"),
            name=client.name,
        )
    elif what == "resigned":
        lobby.notice(table, N_("{name} left and is out of the game"), name=client.name)
    lobby.after_change(table)


def ready(lobby: Lobby, client: Client, round_: int) -> None:
    """`Ready(round)`: see `Table.confirm`. A spectator's or a late one is ignored."""
    if client.table is None:
        raise Refusal("not_seated", N_("you are not at a table"))
    table = lobby.tables[client.table]
    seat = table.seat_of(client.id)
    if seat is not None and table.confirm(seat, round_):
        lobby.after_change(table)


def require_no_table(lobby: Lobby, client: Client) -> None:
    if client.table is not None:
        raise Refusal("bad_command", N_("leave your table first"))


def table_of(lobby: Lobby, tid: int) -> Table:
    table = lobby.tables.get(tid)
    if table is None:
        raise Refusal("no_table", N_("there is no such table"))
    return table


def my_seat(lobby: Lobby, client: Client) -> tuple[Table, int]:
    table = lobby.tables.get(client.table) if client.table is not None else None
    seat = None if table is None else table.seat_of(client.id)
    if table is None or seat is None:
        raise Refusal("not_seated", N_("you are not seated at a table"))
    return table, seat


def creators_waiting_table(lobby: Lobby, client: Client) -> Table:
    if client.table is None:
        raise Refusal("not_seated", N_("you are not at a table"))
    table = lobby.tables[client.table]
    if table.creator != client.id:
        raise Refusal("not_creator", N_("only the table's creator may do that"))
    if table.status != "waiting":
        raise Refusal("bad_command", N_("the game has already started"))
    return table
