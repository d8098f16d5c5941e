"""The lobby actor: the one owner of every table, seat and game (STYLE.md item 4).

One asyncio task drains one inbox, one message at a time: session commands, connects and
disconnects, and timer messages (a bot's pause, the reveal timeout) that `loop.call_later`
puts into the same inbox — the actor never sleeps while holding the world. Events are built
per recipient from `observe(state, seat)` and put into each session's bounded outbox without
waiting; a session whose outbox is full is dropped ("too slow"). Table and lobby-list updates
are sent once per batch, when the inbox is empty: however many commands one session floods in,
the others get one update per table per batch. Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from perudo_ssh import protocol
from perudo_ssh.admin_commands import ADMIN_COMMANDS, AdminCommands
from perudo_ssh.chat import (
    HISTORY,
    MAX_CHAT_LENGTH,
    MAX_RAW_LENGTH,
    RATE_LINES,
    RATE_SECONDS,
    RateLimit,
    clean_chat,
)
from perudo_ssh.i18n import N_
from perudo_ssh.moderation import Moderation
from perudo_ssh.session import Disconnected, FromSession, LobbySession
from perudo_ssh.table import GameLog, Refusal, Table

log = logging.getLogger(__name__)

BATCH = 64
"""Most inbox messages handled before the changes they made are sent out."""

_MOVES = (
    protocol.StartGame,
    protocol.AddBot,
    protocol.PlayAgain,
    protocol.Ready,
    protocol.MakeBid,
    protocol.MakeCall,
    protocol.DeclareCalzone,
    protocol.ShowAndReroll,
)
"""Commands that move a table on: refused while an admin has it paused."""


@dataclass(eq=False, slots=True)
class _Client:
    """A connected session as the actor knows it: its unique name, its table (or None)."""

    session: LobbySession
    name: str
    table: int | None = None
    dropped: bool = False
    chat: RateLimit = field(default_factory=RateLimit)  # how fast it may chat
    # decided by the server at connect (the key, the configuration), never by the client
    admin: bool = False
    address: str | None = None  # the client's IP address
    account_id: int | None = None  # the key's account (None: a guest, or no store)
    watching_admin: bool = False  # an admin with the admin screen open

    @property
    def id(self) -> int:
        """The session id, unique for the lobby's life."""
        return self.session.id


@dataclass(frozen=True, slots=True)
class _Connect:
    session: LobbySession
    admin: bool = False
    address: str | None = None
    account_id: int | None = None


@dataclass(frozen=True, slots=True)
class _Timer:
    """A timer went off for table `table`; `key` says which ("bot", epoch) or
    ("reveal", round_index). Stale when the table's current timer has another key."""

    table: int
    key: tuple[str, int]


@dataclass(frozen=True, slots=True)
class _Stop:
    pass


class Lobby:
    """Every table, every connected session, as one actor.

    `bot_delay` is the range of a bot's pause before acting, in seconds; `reveal_timeout`
    how long the reveal after a call waits for `Ready`; `outbox_size` each session's outbox
    bound, in events; `rng` rolls every die and drives the bots; `on_game_over(table, log)`,
    if given, is called inside the actor when a game ends (keep it quick); `moderation`
    holds the bans, mutes and audit log (a memory-only one by default; issue 4, item 6).
    """

    def __init__(
        self,
        *,
        bot_delay: tuple[float, float] = (0.7, 1.8),
        reveal_timeout: float = 8.0,
        outbox_size: int = 256,
        rng: random.Random | None = None,
        on_game_over: Callable[[Table, GameLog], None] | None = None,
        moderation: Moderation | None = None,
    ) -> None:
        self.bot_delay = bot_delay
        self.reveal_timeout = reveal_timeout
        self.outbox_size = outbox_size
        self.rng = rng or random.Random()
        self.on_game_over = on_game_over
        self.moderation = moderation if moderation is not None else Moderation()
        self.paused: set[int] = set()  # tables an admin paused: nothing moves, no timer
        self._admin = AdminCommands(self)
        self.tables: dict[int, Table] = {}
        self._inbox: asyncio.Queue[object] = asyncio.Queue()
        self._clients: dict[int, _Client] = {}
        self._timers: dict[int, tuple[tuple[str, int], asyncio.TimerHandle]] = {}
        self._sids = itertools.count(1)
        self._table_ids = itertools.count(1)
        self._lobby_sent: protocol.LobbyState | None = None
        self._lobby_pending: set[int] = set()
        self._changed: dict[int, None] = {}  # ids of tables to send at the end of the batch
        self._drops: list[_Client] = []
        # the last chat lines said in the lobby (key None) and at each table (its id)
        self._chat: dict[int | None, deque[protocol.ChatLine]] = {}
        self._chat_ids = itertools.count(1)
        self.chat_clock: Callable[[], float] = time.monotonic
        """The chat rate limit's clock, in seconds (tests may set another)."""
        self._task: asyncio.Task[None] | None = None

    # ---- public API ----------------------------------------------------------------------

    def start(self) -> None:
        """Create the actor task on the running loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="lobby")

    async def stop(self) -> None:
        """Say `Goodbye("server stopping")` to every session and end the actor task."""
        if self._task is None:
            return
        self._inbox.put_nowait(_Stop())
        await self._task
        await self.moderation.drain()  # the audit rows, bans and mutes are all written

    def connect(
        self,
        name: str,
        fingerprint: str | None = None,
        *,
        admin: bool = False,
        address: str | None = None,
        account_id: int | None = None,
    ) -> LobbySession:
        """A new session asking for `name`, with key `fingerprint` (None: a guest); the
        actor answers `Welcome` (a unique name: name, name-2, name-3…) then `LobbyState`.

        `admin` (the server decided it from the key and the configuration; admin commands
        from anyone else are refused), `address` (the client's IP address: address bans
        end it) and `account_id` (the key's account: mutes are an account's) are for
        moderation (issue 4, item 6)."""
        outbox: asyncio.Queue[bytes] = asyncio.Queue(maxsize=self.outbox_size)
        session = LobbySession(next(self._sids), name, outbox, self._inbox.put_nowait, fingerprint)
        self._inbox.put_nowait(_Connect(session, admin, address, account_id))
        return session

    # ---- the actor loop ------------------------------------------------------------------

    async def _run(self) -> None:
        handled = 0
        while True:
            message = await self._inbox.get()
            if isinstance(message, _Stop):
                self._shutdown()
                return
            self._guarded(self._handle, message)
            self._settle_drops()
            handled += 1
            # a batch ends when the inbox is empty, or after BATCH messages so that a steady
            # stream of commands never holds back everybody's updates
            if self._inbox.empty() or handled >= BATCH:
                self._end_batch()
                handled = 0

    def _guarded(self, handler: Callable[..., None], *args: object) -> None:
        try:
            handler(*args)
        except Exception:
            log.exception("lobby: error handling %r", args)

    def _handle(self, message: object) -> None:
        match message:
            case FromSession(sid=sid, command=command):
                client = self._clients.get(sid)
                if client is None or client.dropped:
                    return
                try:
                    # checked against the protocol's types first (raises, below, for a
                    # float seat count, options None, …): nothing malformed reaches a table
                    sent = protocol.encode(command)  # type: ignore[arg-type]  # anything
                    self._on_command(client, protocol.decode_command(sent))
                except Refusal as refusal:
                    self._send(
                        client,
                        protocol.Refused(
                            code=refusal.code, message=refusal.message, args=refusal.message_args
                        ),
                    )
                except Exception:
                    log.exception("lobby: error handling %r from %s", command, client.name)
                    self._send(
                        client,
                        protocol.Refused(
                            code="bad_command", message=N_("the server could not do that")
                        ),
                    )
            case _Connect():
                self._on_connect(message)
            case Disconnected(sid=sid):
                client = self._clients.get(sid)
                if client is not None:
                    self._remove(client)
            case _Timer(table=tid, key=key):
                self._on_timer(tid, key)
            case _:
                raise TypeError(f"not an inbox message: {message!r}")

    def _shutdown(self) -> None:
        for _, handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for client in self._clients.values():
            if not client.dropped:
                client.session.end(N_("server stopping"))
        self._clients.clear()
        self.tables.clear()

    # ---- delivery ------------------------------------------------------------------------

    def _send(self, client: _Client, event: protocol.Event) -> None:
        self._deliver(client, protocol.encode(event))

    def _deliver(self, client: _Client, data: bytes) -> None:
        """Put `data` into the client's outbox, never waiting: full means too slow."""
        if not client.dropped and not client.session.offer(data):
            client.dropped = True
            self._drops.append(client)

    def _settle_drops(self) -> None:
        """Drop the sessions found too slow: outbox cleared, `Goodbye`, seat left."""
        while self._drops:
            client = self._drops.pop(0)
            client.session.end(N_("too slow"))
            log.info("lobby: dropped %s (outbox full)", client.name)
            self._guarded(self._remove, client)

    def _end_batch(self) -> None:
        """Send what the batch changed: each changed table to the sessions at it, then the
        lobby list. Sending may find sessions too slow; dropping them changes their tables
        and who is online, so send again until nobody more is dropped."""
        while True:
            while self._changed:
                tid = next(iter(self._changed))
                del self._changed[tid]
                if tid in self.tables:
                    self._guarded(self._broadcast, self.tables[tid])
            self._guarded(self._flush_lobby)
            self._guarded(self._admin.flush)
            if not self._drops:
                return
            self._settle_drops()

    def _flush_lobby(self) -> None:
        """Send the lobby list to sessions in the lobby: to all if it changed, else only to
        those that just arrived there."""
        state = protocol.LobbyState(
            tables=tuple(self.tables[t].summary() for t in sorted(self.tables)),
            online=tuple(sorted(c.name for c in self._clients.values() if not c.dropped)),
        )
        if state != self._lobby_sent:
            targets = [c for c in self._clients.values() if c.table is None]
        else:
            targets = [self._clients[s] for s in self._lobby_pending if s in self._clients]
            targets = [c for c in targets if c.table is None]
        self._lobby_sent = state
        self._lobby_pending.clear()
        if targets:
            data = protocol.encode(state)
            for client in targets:
                self._deliver(client, data)

    def _broadcast(self, table: Table) -> None:
        """Each seated human and spectator gets the table as they may see it."""
        names = {sid: self._clients[sid].name for sid in table.spectators if sid in self._clients}
        paused = table.id in self.paused
        for seat in table.humans():
            client = self._clients.get(table.seats[seat].sid)  # type: ignore[arg-type]
            if client is not None:
                self._send(client, table.table_state(seat, names, paused))
        if table.spectators:
            data = protocol.encode(table.table_state(None, names, paused))
            for sid in table.spectators:
                if sid in self._clients:
                    self._deliver(self._clients[sid], data)

    def _notice(self, table: Table, text: str, **args: str | int) -> None:
        """Tell everyone at `table` `text` (an `N_` message id) with its named `args`."""
        data = protocol.encode(protocol.Notice(text=text, args=args))
        for sid in table.sessions():
            if sid in self._clients:
                self._deliver(self._clients[sid], data)

    # ---- sessions ------------------------------------------------------------------------

    def _on_connect(self, connect: _Connect) -> None:
        session = connect.session
        wanted = clean_chat(session.name) or "player"  # no control character in a name
        taken = {c.name.casefold() for c in self._clients.values()}
        name, n = wanted, 2
        while name.casefold() in taken:
            name, n = f"{wanted}-{n}", n + 1
        client = _Client(
            session=session,
            name=name,
            admin=connect.admin,
            address=connect.address,
            account_id=connect.account_id,
        )
        self._clients[session.id] = client
        self._send(client, protocol.Welcome(name=name, admin=client.admin))
        self._lobby_pending.add(session.id)
        self._send_chat_history(client)

    def _remove(self, client: _Client) -> None:
        """The session is gone (disconnected or dropped): disconnect = leave."""
        if client.table is not None:
            self._leave(client)
        self._clients.pop(client.id, None)
        self._lobby_pending.discard(client.id)
        self.moderation.forget_session(client.id)

    # ---- commands ------------------------------------------------------------------------

    def _on_command(self, client: _Client, command: object) -> None:
        if isinstance(command, _MOVES) and client.table in self.paused:
            raise Refusal("paused", N_("an admin paused this table; wait until it resumes"))
        match command:
            case protocol.CreateTable():
                self._create(client, command)
            case protocol.JoinTable(table=tid):
                self._join(client, tid)
            case protocol.SpectateTable(table=tid):
                self._spectate(client, tid)
            case protocol.LeaveTable():
                if client.table is None:
                    raise Refusal("not_seated", N_("you are not at a table"))
                self._leave(client)
            case protocol.StartGame():
                table = self._creators_waiting_table(client)
                if len(table.seats) < 2:
                    raise Refusal("bad_command", N_("a game needs at least 2 players seated"))
                table.start(self.rng)
                self._after_change(table)
            case protocol.AddBot():
                table = self._creators_waiting_table(client)
                if len(table.seats) >= table.size:
                    raise Refusal("table_full", N_("every seat is taken"))
                table.add_bot(self.rng)
                self._after_change(table)
            case protocol.PlayAgain():
                table, seat = self._my_seat(client)
                if table.status != "over":
                    raise Refusal("bad_command", N_("the game is not over"))
                if seat not in table.play_again:  # asking twice changes nothing
                    table.play_again.add(seat)
                    self._after_change(table)
            case protocol.Ready(round=round_):
                self._ready(client, round_)
            case protocol.Say(text=text):
                self._say(client, text)
            case _ if isinstance(command, ADMIN_COMMANDS):
                self._admin.handle(client, command)  # refused unless client.admin
            case (
                protocol.MakeBid()
                | protocol.MakeCall()
                | protocol.DeclareCalzone()
                | protocol.ShowAndReroll()
            ):
                table, seat = self._my_seat(client)
                self._played(table, lambda: table.play(command, seat, self.rng))
            case _:
                raise TypeError(f"not a command: {command!r}")

    def _create(self, client: _Client, command: protocol.CreateTable) -> None:
        self._require_no_table(client)
        tid = next(self._table_ids)
        table = Table.create(tid, command, client.id, client.name, self.rng)
        self.tables[tid] = table
        client.table = tid
        self._after_change(table)

    def _join(self, client: _Client, tid: int) -> None:
        self._require_no_table(client)
        table = self._table(tid)
        if table.status != "waiting":
            raise Refusal("table_full", N_("that table is not waiting for players; you may watch"))
        if len(table.seats) >= table.size:
            raise Refusal("table_full", N_("every seat is taken"))
        table.sit(client.id, client.name)
        client.table = tid
        self._send_chat_history(client)
        self._after_change(table)

    def _spectate(self, client: _Client, tid: int) -> None:
        self._require_no_table(client)
        table = self._table(tid)
        table.spectators.append(client.id)
        client.table = tid
        self._send_chat_history(client)
        self._changed[tid] = None

    def _leave(self, client: _Client) -> None:
        """`client` leaves its table: mid-game a bot takes the seat, except at a club table,
        where the cup stays until the round ends and the player is then out (RULES.md §6;
        `Table.leave`). A leave that ends the game is reported like a move that does."""
        assert client.table is not None
        table = self.tables[client.table]
        client.table = None
        was = table.status
        what = table.leave(client.id)
        self._send(client, protocol.LeftTable())
        self._lobby_pending.add(client.id)
        self._send_chat_history(client)
        if was == "playing" and table.status == "over" and self.on_game_over is not None:
            assert table.log is not None
            self._guarded(self.on_game_over, table, table.log)
        if table.deserted:
            self._close(table)
            return
        if what == "bot":
            self._notice(table, N_("{name} left; a bot plays their seat"), name=client.name)
        elif what in ("freed", "gone", "out"):
            self._notice(table, N_("{name} left the table"), name=client.name)
        elif what == "leaving":
            self._notice(
                table,
                N_("{name} left; their cup stays until the round ends, then they are out"),
                name=client.name,
            )
        elif what == "resigned":
            self._notice(table, N_("{name} left and is out of the game"), name=client.name)
        self._after_change(table)

    def _ready(self, client: _Client, round_: int) -> None:
        """`Ready(round)`: see `Table.confirm`. A spectator's or a late one is ignored."""
        if client.table is None:
            raise Refusal("not_seated", N_("you are not at a table"))
        table = self.tables[client.table]
        seat = table.seat_of(client.id)
        if seat is not None and table.confirm(seat, round_):
            self._after_change(table)

    def _require_no_table(self, client: _Client) -> None:
        if client.table is not None:
            raise Refusal("bad_command", N_("leave your table first"))

    def _table(self, tid: int) -> Table:
        table = self.tables.get(tid)
        if table is None:
            raise Refusal("no_table", N_("there is no such table"))
        return table

    def _my_seat(self, client: _Client) -> tuple[Table, int]:
        table = self.tables.get(client.table) if client.table is not None else None
        seat = None if table is None else table.seat_of(client.id)
        if table is None or seat is None:
            raise Refusal("not_seated", N_("you are not seated at a table"))
        return table, seat

    def _creators_waiting_table(self, client: _Client) -> Table:
        if client.table is None:
            raise Refusal("not_seated", N_("you are not at a table"))
        table = self.tables[client.table]
        if table.creator != client.id:
            raise Refusal("not_creator", N_("only the table's creator may do that"))
        if table.status != "waiting":
            raise Refusal("bad_command", N_("the game has already started"))
        return table

    # ---- chat (issue 4, item 5) ----------------------------------------------------------

    def _muted(self, client: _Client) -> str | None:
        """Why `client` may not chat now ("" for no reason given), or None: it may."""
        mute = self.moderation.muted(client.account_id, client.id)  # an admin's Mute
        return None if mute is None else mute.reason

    def _say(self, client: _Client, text: str) -> None:
        """`Say(text)`: the cleaned line goes to everyone where `client` is — its table's
        players and spectators, or everyone in the lobby — the speaker included, and into
        that scope's history. Refused, changing nothing (the rate limit included), when
        `client` is muted, when nothing printable is left, when it is too long; refused when
        it comes too fast (that costs nothing either)."""
        reason = self._muted(client)
        if reason:
            raise Refusal("muted", N_("you may not chat: {reason}"), {"reason": reason})
        if reason is not None:
            raise Refusal("muted", N_("you may not chat now"))
        if not isinstance(text, str) or len(text) > MAX_RAW_LENGTH:
            raise Refusal(
                "chat_too_long", N_("a chat line is at most {n} characters"), {"n": MAX_CHAT_LENGTH}
            )
        line = clean_chat(text)
        if line is None:
            raise Refusal("chat_empty", N_("a chat line needs some text"))
        if len(line) > MAX_CHAT_LENGTH:
            raise Refusal(
                "chat_too_long", N_("a chat line is at most {n} characters"), {"n": MAX_CHAT_LENGTH}
            )
        if not client.chat.allow(self.chat_clock()):
            raise Refusal(
                "chat_rate",
                N_("slow down: at most {lines} chat lines every {seconds} seconds"),
                {"lines": RATE_LINES, "seconds": round(RATE_SECONDS)},
            )
        table = self.tables.get(client.table) if client.table is not None else None
        said = protocol.ChatLine(
            id=next(self._chat_ids),
            scope="lobby" if table is None else "table",
            table=None if table is None else table.id,
            name=client.name,
            text=line,
        )
        scope = None if table is None else table.id
        self._chat.setdefault(scope, deque(maxlen=HISTORY)).append(said)
        if table is not None:
            listeners = [self._clients[sid] for sid in table.sessions() if sid in self._clients]
        else:
            listeners = [c for c in self._clients.values() if c.table is None]
        data = protocol.encode(said)
        for listener in listeners:
            self._deliver(listener, data)

    def _send_chat_history(self, client: _Client) -> None:
        """The last lines said where `client` has just arrived (its table, or the lobby),
        if any."""
        lines = self._chat.get(client.table)
        if lines:
            scope: Literal["lobby", "table"] = "lobby" if client.table is None else "table"
            history = protocol.ChatHistory(scope=scope, table=client.table, lines=tuple(lines))
            self._send(client, history)

    # ---- the game flow -------------------------------------------------------------------

    def _played(self, table: Table, move: Callable[[], None]) -> None:
        """Make a move at `table` (it may raise `Refusal`: then nothing changed), report the
        game's end, and move on."""
        was = table.status
        move()
        if was == "playing" and table.status == "over" and self.on_game_over is not None:
            assert table.log is not None
            self._guarded(self.on_game_over, table, table.log)
        self._after_change(table)

    def _after_change(self, table: Table) -> None:
        """Move the table on as far as it goes by itself, set its timer, and mark it to be
        sent to everyone at it at the end of the batch. A paused table only gets sent:
        it moves on, and its timer is set, once an admin resumes it."""
        self._changed[table.id] = None
        if table.id in self.paused:
            self._cancel_timer(table.id)
            return
        table.advance(self.rng)
        self._schedule(table)

    def _schedule(self, table: Table) -> None:
        """The table's one timer: a bot's pause before it acts, or the reveal timeout.
        With no human seated, the reveal waits out the timeout (spectators see it)."""
        key: tuple[str, int] | None = None
        delay = 0.0
        if table.bot_to_move() is not None:
            key, delay = ("bot", table.epoch), self.rng.uniform(*self.bot_delay)
        elif table.in_reveal:
            assert table.state is not None
            key, delay = ("reveal", table.state.round_index), self.reveal_timeout
        current = self._timers.get(table.id)
        if current is not None and current[0] == key:
            return
        self._cancel_timer(table.id)
        if key is not None:
            message = _Timer(table=table.id, key=key)
            handle = asyncio.get_running_loop().call_later(delay, self._inbox.put_nowait, message)
            self._timers[table.id] = (key, handle)

    def _cancel_timer(self, tid: int) -> None:
        current = self._timers.pop(tid, None)
        if current is not None:
            current[1].cancel()

    def _on_timer(self, tid: int, key: tuple[str, int]) -> None:
        table = self.tables.get(tid)
        current = self._timers.get(tid)
        if table is None or current is None or current[0] != key:
            return  # stale: the table moved on or closed since
        del self._timers[tid]
        if key[0] == "bot":
            self._played(table, lambda: table.bot_move(self.rng))
        else:
            if table.in_reveal:
                table.roll(self.rng)
            self._after_change(table)

    def _close(
        self, table: Table, text: str = N_("table {table} closed"), **args: str | int
    ) -> None:
        """Close a table nobody plays at or watches, or one an admin closes; its bots stop.
        Everyone still at it goes back to the lobby, told `text` (an `N_` message id with
        `{table}`, the table's name, and `args`)."""
        self._cancel_timer(table.id)
        self.paused.discard(table.id)
        self.tables.pop(table.id, None)
        self._chat.pop(table.id, None)
        for sid in table.sessions():
            client = self._clients.get(sid)
            if client is not None:
                client.table = None
                self._send(client, protocol.Notice(text=text, args={"table": table.name, **args}))
                self._send(client, protocol.LeftTable())
                self._lobby_pending.add(sid)
                self._send_chat_history(client)
