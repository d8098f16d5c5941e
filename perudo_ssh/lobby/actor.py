"""The lobby actor: the one owner of every table, seat and game (STYLE.md item 4).

One asyncio task drains one inbox, one message at a time: session commands, connects and
disconnects, and timer messages (a bot's pause, the reveal timeout, a turn timer, a
disconnected player's grace period) that `loop.call_later` puts into the same inbox — the
actor never sleeps while holding the world.

Never losing a game (issue 5): a player whose connection drops mid-game keeps the seat for
the table's grace period (`held_seats.disconnect`), then a bot plays it
(`held_seats.stand_in`) until they log in again with the same key, which seats them back at
once (`held_seats.reclaim`). A player who does not move within the table's turn timer gets a
safe automatic move (`bot_turns.auto_move`), shown as such to everyone. With `persist`
given, at the end of every batch the playing tables it changed are saved
(`snapshot.save_table`) — and only once the save has returned are the changes sent to
anyone, so no player ever sees a move a crash could lose; a save that fails pauses the
tables it held, showing nothing of them, until a save works (`saving.save`, issue 11);
`restore` puts the saved tables back when the server starts.
Events are built per recipient from `observe(state, seat)` and put into each session's
bounded outbox without waiting; a session whose outbox is full is dropped ("too slow").
Table and lobby-list updates are sent once per batch, when the inbox is empty: however many
commands one session floods in, the others get one update per table per batch.

The actor is this module (the inbox, the loop, the state) and functions of it in the
package's other modules, each called on the actor's turn only: `sessions` (connect,
disconnect, names), `commands` (what the sessions ask), `chat`, `flow` (moves, timers, what
follows a change), `saving` (issue 5 and 11), `broadcast` (what a batch sends), `admin`.
Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import msgspec

from perudo_ssh import protocol
from perudo_ssh.i18n import N_
from perudo_ssh.lobby import broadcast, commands, flow, saving, sessions
from perudo_ssh.lobby.admin import AdminCommands
from perudo_ssh.lobby.broadcast import OnlineLists
from perudo_ssh.lobby.clients import Client, Connecting, Rated, TimerFired
from perudo_ssh.lobby.game_log import GameLog
from perudo_ssh.lobby.meter import NO_METER, Meter
from perudo_ssh.lobby.moderation import Moderation
from perudo_ssh.lobby.saving import SAVE_RETRY, SaveRetry
from perudo_ssh.lobby.snapshot import restore_table
from perudo_ssh.lobby.table import Refusal, Table
from perudo_ssh.logs import log_event
from perudo_ssh.session import Disconnected, FromSession, LobbySession

log = logging.getLogger(__name__)

T = TypeVar("T")

BATCH = 64
"""Most inbox messages handled before the changes they made are sent out."""


@dataclass(frozen=True, slots=True)
class _Refresh:
    sid: int


@dataclass(frozen=True, slots=True)
class _Stop:
    pass


@dataclass(frozen=True, slots=True)
class _Notes:
    notes: protocol.ServerNotes


Persist = Callable[[Mapping[int, bytes | None]], Awaitable[None]]
"""Saves table snapshots: table id -> `snapshot.save_table` bytes, or None (forget that table);
returns once they are safe (`Store.save_tables`)."""

MakeSession = Callable[[int, str, Callable[[object], None], str | None], LobbySession]
"""What makes a session object (`Lobby.connect`): (sid, name, post to the inbox, fingerprint)."""


class Lobby:
    """Every table, every connected session, as one actor.

    `bot_delay` is the range of a bot's pause before acting, in seconds; `reveal_timeout`
    how long the reveal after a call waits for `Ready`; `outbox_size` each session's outbox
    bound, in events; `dice` rolls every die (issue 11: by default the operating system's
    CSPRNG, `secrets.SystemRandom`, which revealed dice and bot timing tell nothing about);
    `rng` drives the bots' choices, delays and names (a `random.Random`; given alone, as a
    seeded test does, it rolls the dice too, so that a seed replays a whole game);
    `on_game_over(table, log)`,
    if given, is called inside the actor when a game ends (keep it quick); `moderation`
    holds the bans, mutes and audit log (a memory-only one by default; issue 4, item 6);
    `persist`, if given, saves the playing tables after every batch, before anyone is told
    (the module docstring; issue 5, item 3). `timer_scale` multiplies every table's turn
    timer and grace period (tests run them in a fraction of the time; players see the
    table's own seconds). `meter` counts moves, saves, finished games, drops and the
    broadcast latency for the operator (`lobby.meter`; none by default).
    """

    check_summaries = False
    """Whether `broadcast.summary` checks each line it kept against one worked out afresh
    (and `broadcast.online_lists` its lists): the tests set it, and a change that forgot to
    mark its table adds the table's id to `unmarked_changes` (`ONLINE_UNMARKED` for the
    online lists; the fresh line is sent)."""
    unmarked_changes: ClassVar[list[int]] = []

    def __init__(
        self,
        *,
        bot_delay: tuple[float, float] = (0.7, 1.8),
        reveal_timeout: float = 8.0,
        outbox_size: int = 256,
        rng: random.Random | None = None,
        dice: random.Random | None = None,
        on_game_over: Callable[[Table, GameLog], None] | None = None,
        moderation: Moderation | None = None,
        persist: Persist | None = None,
        timer_scale: float = 1.0,
        meter: Meter = NO_METER,
    ) -> None:
        self.bot_delay = bot_delay
        self.reveal_timeout = reveal_timeout
        self.outbox_size = outbox_size
        self.rng = rng or random.Random()
        self.dice: random.Random = (
            dice if dice is not None else rng if rng is not None else secrets.SystemRandom()
        )
        self.on_game_over = on_game_over
        self.moderation = moderation if moderation is not None else Moderation()
        self.persist = persist
        self.timer_scale = timer_scale
        # the server's name and message of the day (perudo.toml: `set_notes`), told to each
        # session on connect when set
        self.notes = protocol.ServerNotes()
        self.meter = meter  # what the operator's metrics count (`perudo_ssh.metrics`)
        # when the command being handled was posted (`FromSession.at`), and those of the
        # players' moves of this batch, timed once its events are out (`broadcast.end_batch`)
        self.received = time.monotonic()
        self.moves_received: list[tuple[int, float]] = []  # (table id, when)
        # the shown rating of each rated account, by account id (issue 13): set by the
        # server from its store (None: no store, nobody is rated), kept by `rated`
        self.ratings: dict[int, int] | None = None
        # the bot accounts seen connecting, by account id (issue 14): their seats and names
        # are marked BOT (an account made a person's again is taken out when it connects)
        self.programs: set[int] = set()
        self._gone_names: list[Client] = []  # sessions gone whose name may be taken back
        # table id -> (the game log saved, its save key): one key per game (`saving.save`)
        self._saving: dict[int, tuple[GameLog, int]] = {}
        self._save_keys = itertools.count(1)
        self._finishing: dict[int, Table] = {}  # tables whose game ended in this batch
        self._restored: list[Table] = []  # tables put back by `restore`, to set going
        self._unarchived: list[Table] = []  # finished games found saved, not yet stored
        self.paused: set[int] = set()  # tables an admin paused: nothing moves, no timer
        # tables whose changes the last save could not write (issue 11): nothing moves, no
        # timer, nothing of them is sent until a save works (`saving.save`, `broadcast.end_batch`)
        self.unsaved: set[int] = set()
        self._unwritten: dict[int, bytes | None] = {}  # by save key, from the failed save
        self._held: list[tuple[Client, bytes]] = []  # their notices, sent once saved
        self._retry_wait = SAVE_RETRY[0]
        self._retry: asyncio.TimerHandle | None = None
        self._admin = AdminCommands(self)
        self.tables: dict[int, Table] = {}
        self._inbox: asyncio.Queue[object] = asyncio.Queue()
        self._clients: dict[int, Client] = {}
        # table id -> slot -> (key, handle, when it goes off in loop time); see `TimerFired`
        self._timers: dict[
            int, dict[str, tuple[tuple[str | int, ...], asyncio.TimerHandle, float]]
        ] = {}
        self._sids = itertools.count(1)
        self._table_ids = itertools.count(1)
        self._lobby_sent: protocol.LobbyState | None = None
        self._online_changes = 0  # moved on by `online_changed`
        self._online_kept: tuple[tuple[int, int], OnlineLists] | None = None
        self._lobby_pending: set[int] = set()
        # each listed table's line as last worked out; a table marked changed is worked out
        # again (every change to a table marks it: it is sent to its players too)
        self._summaries: dict[int, protocol.TableSummary] = {}
        self._changed: dict[int, None] = {}  # ids of tables to send at the end of the batch
        self._drops: list[Client] = []
        # events of this batch, sent once its changes are saved (`broadcast.end_batch`)
        self._outgoing: list[tuple[Client, bytes, int | None]] = []
        # the last chat lines said in the lobby (key None) and at each table (its id)
        self._chat: dict[int | None, deque[protocol.ChatLine]] = {}
        # chat line ids grow across restarts too (issue 12: the fronts keep their sessions,
        # and each app tells the lines it already shows by id): microseconds since the epoch
        self._chat_ids = itertools.count(time.time_ns() // 1_000)
        self.chat_clock: Callable[[], float] = time.monotonic
        """The chat rate limit's clock, in seconds (tests may set another)."""
        self._task: asyncio.Task[None] | None = None

    # ---- public API ----------------------------------------------------------------------

    def start(self) -> None:
        """Create the actor task on the running loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="lobby")

    def restore(self, snapshots: Iterable[tuple[int, bytes]]) -> list[int]:
        """Put back the games saved by `persist` (save key, snapshot), before `start` (issue
        5, item 3): each table exactly as saved (`snapshot.restore_table`), every seat of a
        player with an identity held for them for the table's grace period, every timer
        restarted. A game
        saved finished but not yet stored (the server stopped in between) is handed to
        `on_game_over` once started. A snapshot that cannot be read is logged and left alone.
        Returns the ids of the tables restored."""
        if self._task is not None:
            raise RuntimeError("restore before start")
        restored = []
        keys = [0]
        for key, data in snapshots:
            keys.append(key)
            try:
                table, paused = restore_table(data)
            except Exception:
                log.exception("lobby: could not restore table %d", key)
                continue
            assert table.log is not None
            table.save_key = key
            if table.status == "over":
                self._unarchived.append(table)
                continue
            if table.id in self.tables:
                log.error("lobby: two saved games of table %d; kept the first", table.id)
                continue
            self.tables[table.id] = table
            if paused:
                self.paused.add(table.id)
            self._saving[table.id] = (table.log, key)
            self._restored.append(table)
            restored.append(table.id)
            log_event(
                log,
                "table_restored",
                table=table.id,
                preset=table.options.preset,
                round=table.state.round_index if table.state else None,
                players=[seat.name for seat in table.seats],
            )
        ids = [*self.tables, *(t.id for t in self._unarchived)]
        if ids:
            self._table_ids = itertools.count(max(ids) + 1)
        self._save_keys = itertools.count(max(keys) + 1)
        return restored

    async def stop(self) -> None:
        """Say `Goodbye("server stopping")` to every session and end the actor task."""
        if self._task is None:
            return
        self._inbox.put_nowait(_Stop())
        await self._task
        await self.moderation.drain()  # the audit rows, bans and mutes are all written

    def rated(self, table: int, changes: Mapping[int, tuple[str, int, int]]) -> None:
        """A game of table `table` was rated (called by the archive once it stored and rated
        the game, from outside the actor): `changes` by account id, (name, rating before,
        rating after) in shown points. The actor keeps the new ratings (the lobby's online
        list and the tables show them) and, while that table still shows the game over,
        everyone at it gets the changes (`TableState.rating_changes`; issue 13)."""
        self._inbox.put_nowait(Rated(table, dict(changes)))

    def connect(
        self,
        name: str,
        fingerprint: str | None = None,
        *,
        admin: bool = False,
        address: str | None = None,
        account_id: int | None = None,
        bot_account: bool = False,
        make_session: MakeSession | None = None,
    ) -> LobbySession:
        """A new session asking for `name`, with key `fingerprint` (None: a guest); the
        actor answers `Welcome` (a unique name: name, name-2, name-3…) then `LobbyState`.
        `make_session(sid, name, post, fingerprint)` makes the session object (a
        `LobbySession` by default; the lobby's host of front processes makes one that
        relays its events over the bus: `perudo_ssh.lobby.host`).

        `admin` (the server decided it from the key and the configuration; admin commands
        from anyone else are refused), `address` (the client's IP address: address bans
        end it) and `account_id` (the key's account: mutes are an account's) are for
        moderation (issue 4, item 6). `bot_account`: the account is a bot account (a
        program; the server read it from the store): its name is marked BOT in the lobby
        and at tables (`programs`; issue 14)."""
        if make_session is None:
            outbox: asyncio.Queue[bytes] = asyncio.Queue(maxsize=self.outbox_size)
            session = LobbySession(
                next(self._sids), name, outbox, self._inbox.put_nowait, fingerprint
            )
        else:
            session = make_session(next(self._sids), name, self._inbox.put_nowait, fingerprint)
        self._inbox.put_nowait(Connecting(session, admin, address, account_id, bot_account))
        return session

    def refresh(self, sid: int) -> None:
        """Send session `sid` its whole state again at the end of the batch: the lobby list
        or its table, and the chat lines said where it is (issue 12: a front whose bus
        connection broke may have missed events). Unknown sessions are ignored."""
        self._inbox.put_nowait(_Refresh(sid))

    def set_notes(self, name: str = "", motd: str = "") -> None:
        """The server's name and message of the day are now `name` and `motd` (issue 15,
        item 5): every session is told at the end of the batch if they changed, and each
        new one on connect (`protocol.ServerNotes`). Never blocks."""
        self._inbox.put_nowait(_Notes(protocol.ServerNotes(name=name, motd=motd)))

    def leave_table(self, client: Client) -> None:
        """See `commands.leave_table`."""
        commands.leave_table(self, client)

    def after_change(self, table: Table) -> None:
        """See `flow.after_change`."""
        flow.after_change(self, table)

    def cancel_timer(self, tid: int, slot: str | None = None) -> None:
        """See `flow.cancel_timer`."""
        flow.cancel_timer(self, tid, slot)

    def close_table(
        self, table: Table, text: str = N_("table {table} closed"), **args: str | int
    ) -> None:
        """See `flow.close_table`."""
        flow.close_table(self, table, text, **args)

    def remove_client(self, client: Client) -> None:
        """See `sessions.remove_client`."""
        sessions.remove_client(self, client)

    def notice(self, table: Table, text: str, *, but: int | None = None, **args: str | int) -> None:
        """See `broadcast.notice`."""
        broadcast.notice(self, table, text, but=but, **args)

    # ---- what the lobby's modules and the admin commands act on (the actor's turn only) --

    def online_changed(self) -> None:
        """Who is online, their names or their ratings changed: the lobby list's online
        lists are worked out again (`broadcast.online_lists`)."""
        self._online_changes += 1

    def client(self, sid: int) -> Client | None:
        """The session `sid` as the lobby holds it, or None."""
        return self._clients.get(sid)

    def live_clients(self) -> list[Client]:
        """Every session not dropped."""
        return [c for c in self._clients.values() if not c.dropped]

    def mark_changed(self, table: Table) -> None:
        """Send `table` to those at it at the end of the batch."""
        self._changed[table.id] = None

    # ---- the actor loop ------------------------------------------------------------------

    async def _run(self) -> None:
        for table in self._restored:  # their timers start now (issue 5: "timers restarted")
            self._guarded(self.after_change, table)
        self._restored.clear()
        for table in self._unarchived:  # finished, saved, never stored: store them now
            assert table.log is not None
            if self.on_game_over is not None:
                self._guarded(self.on_game_over, table, table.log)
        self._unarchived.clear()
        handled = 0
        while True:
            message = await self._inbox.get()
            if isinstance(message, _Stop):
                if self._retry is not None:
                    self._retry.cancel()
                await saving.save(self)  # nothing accepted is lost by a clean stop
                self._shutdown()
                return
            self._guarded(self._handle, message)
            broadcast.settle_drops(self)
            handled += 1
            # a batch ends when the inbox is empty, or after BATCH messages so that a steady
            # stream of commands never holds back everybody's updates
            if self._inbox.empty() or handled >= BATCH:
                await broadcast.end_batch(self)
                handled = 0

    def _guarded(self, handler: Callable[..., None], *args: object) -> None:
        try:
            handler(*args)
        except Exception:
            log.exception("lobby: error handling %r", args)

    def _handle(self, message: object) -> None:
        match message:
            case FromSession(sid=sid, command=command, at=at):
                self.received = at
                client = self._clients.get(sid)
                if client is None or client.dropped:
                    return
                try:
                    # checked against the protocol's types first (raises, below, for a
                    # float seat count, options None, …): nothing malformed reaches a table
                    sent = protocol.encode(command)  # type: ignore[arg-type]  # anything
                    commands.on_command(self, client, protocol.decode_command(sent))
                except Refusal as refusal:
                    self.tell(
                        client,
                        protocol.Refused(
                            code=refusal.code, message=refusal.message, args=refusal.message_args
                        ),
                    )
                except Exception:
                    log.exception("lobby: error handling %r from %s", command, client.name)
                    self.tell(
                        client,
                        protocol.Refused(
                            code="bad_command", message=N_("the server could not do that")
                        ),
                    )
            case Connecting():
                sessions.on_connect(self, message)
            case Disconnected(sid=sid):
                client = self._clients.get(sid)
                if client is not None:
                    sessions.remove_client(self, client)
            case TimerFired(table=tid, slot=slot, key=key):
                flow.on_timer(self, tid, slot, key)
            case SaveRetry():
                self._retry = None  # the batch this message ends saves again
            case Rated():
                broadcast.on_rated(self, message)
            case _Refresh(sid=sid):
                sessions.on_refresh(self, sid)
            case _Notes(notes=notes):
                if notes != self.notes:
                    self.notes = notes
                    told = msgspec.structs.replace(notes, changed=True)
                    for client in self.live_clients():
                        self.tell(client, told)
            case _:
                raise TypeError(f"not an inbox message: {message!r}")

    def _shutdown(self) -> None:
        for tid in list(self._timers):
            flow.cancel_timer(self, tid)
        for client in self._clients.values():
            if not client.dropped:
                table = self.tables.get(client.table) if client.table is not None else None
                seat = None if table is None else table.seat_of(client.id)
                if (
                    table is not None
                    and seat is not None
                    and table.status == "playing"
                    and table.seats[seat].owner is not None
                    and table.state is not None
                    and table.state.counts[seat] > 0
                ):
                    client.session.end(
                        N_("server stopping: your game is saved; log in again to go on")
                    )
                else:
                    client.session.end(N_("server stopping"))
        self._clients.clear()
        self.tables.clear()

    def tell(self, client: Client, event: protocol.Event) -> None:
        self.deliver(client, protocol.encode(event))

    def deliver(self, client: Client, data: bytes, table: int | None = None) -> None:
        """Send `data` to the client at the end of the batch, once what the batch changed is
        saved (`broadcast.end_batch`): a notice of a move is never out before the move is safe. Data
        about `table` (a notice at it) is held while that table is `unsaved`."""
        if not client.dropped:
            self._outgoing.append((client, data, table))
