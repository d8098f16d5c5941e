"""The lobby actor: the one owner of every table, seat and game (STYLE.md item 4).

One asyncio task drains one inbox, one message at a time: session commands, connects and
disconnects, and timer messages (a bot's pause, the reveal timeout, a turn timer, a
disconnected player's grace period) that `loop.call_later` puts into the same inbox — the
actor never sleeps while holding the world.

Never losing a game (issue 5): a player whose connection drops mid-game keeps the seat for
the table's grace period (`Table.disconnect`), then a bot plays it (`Table.stand_in`) until
they log in again with the same key, which seats them back at once (`Table.reclaim`). A
player who does not move within the table's turn timer gets a safe automatic move
(`Table.auto_move`), shown as such to everyone. With `persist` given, at the end of every
batch the playing tables it changed are saved (`Table.snapshot`) — and only once the save
has returned are the changes sent to anyone, so no player ever sees a move a crash could
lose; a save that fails pauses the tables it held, showing nothing of them, until a save
works (`_save`, issue 11); `restore` puts the saved tables back when the server starts.
Events are built per recipient from `observe(state, seat)` and put into each session's
bounded outbox without waiting; a session whose outbox is full is dropped ("too slow").
Table and lobby-list updates are sent once per batch, when the inbox is empty: however many
commands one session floods in, the others get one update per table per batch. Imports
neither textual nor asyncssh.
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
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeVar

from perudo_ssh import bots, protocol
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
from perudo_ssh.lobby.admin import ADMIN_COMMANDS, AdminCommands
from perudo_ssh.lobby.moderation import Moderation
from perudo_ssh.lobby.table import GameLog, Refusal, Table, rating_of
from perudo_ssh.logs import log_event
from perudo_ssh.rules import PRESETS
from perudo_ssh.session import Disconnected, FromSession, LobbySession

log = logging.getLogger(__name__)

T = TypeVar("T")

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
class Client:
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
    bot_account: bool = False  # a bot account's session: a program, marked BOT (issue 14)
    wanted: str = ""  # the name asked for (`name` is it, or it with a suffix: `ben-2`)
    watching_admin: bool = False  # an admin with the admin screen open

    @property
    def owner(self) -> str | None:
        """Who this is across connections (a disconnected player's seat waits for it):
        the account, else the key; None for a guest, who cannot come back."""
        if self.account_id is not None:
            return f"account:{self.account_id}"
        if self.session.fingerprint is not None:
            return f"key:{self.session.fingerprint}"
        return None

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
    bot_account: bool = False


@dataclass(frozen=True, slots=True)
class _Refresh:
    sid: int


@dataclass(frozen=True, slots=True)
class _Timer:
    """A timer went off for table `table` in `slot`: "move" (a bot's pause, key ("bot",
    epoch), or the reveal timeout, ("reveal", round_index)), "turn" (the turn timer, key
    ("turn", seat, round, actions)) or "grace" + seat (a disconnected player's grace).
    Stale when the slot's current timer has another key."""

    table: int
    slot: str
    key: tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class _Stop:
    pass


CODE_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
"""The letters of an invite code (issue 13): none that reads as another."""


@dataclass(frozen=True, slots=True)
class _Rated:
    """A game of table `table` was rated: `changes` each account's (name, before, after)
    in shown points, by account id (`Lobby.rated`)."""

    table: int
    changes: Mapping[int, tuple[str, int, int]]


@dataclass(frozen=True, slots=True)
class _SaveRetry:
    """Time to try again a save that failed (`Lobby._save`): the batch this message ends
    writes what is still unwritten."""


SAVE_RETRY = (0.5, 15.0)
"""After a failed save, the first wait before trying again and the longest, in seconds: the
wait doubles after each failure until a save works."""


Persist = Callable[[Mapping[int, bytes | None]], Awaitable[None]]
"""Saves table snapshots: table id -> `Table.snapshot()` bytes, or None (forget that table);
returns once they are safe (`Store.save_tables`)."""

MakeSession = Callable[[int, str, Callable[[object], None], str | None], LobbySession]
"""What makes a session object (`Lobby.connect`): (sid, name, post to the inbox, fingerprint)."""

OnlineLists = tuple[tuple[str, ...], tuple[int | None, ...], tuple[str, ...]]
"""The lobby list's `online`, `ratings` and `bot_accounts` (`Lobby._online`)."""
ONLINE_UNMARKED = -1
"""What `Lobby.unmarked_changes` gets when the online lists changed unmarked."""


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
    table's own seconds).
    """

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
        # the shown rating of each rated account, by account id (issue 13): set by the
        # server from its store (None: no store, nobody is rated), kept by `rated`
        self.ratings: dict[int, int] | None = None
        # the bot accounts seen connecting, by account id (issue 14): their seats and names
        # are marked BOT (an account made a person's again is taken out when it connects)
        self.programs: set[int] = set()
        self._gone_names: list[Client] = []  # sessions gone whose name may be taken back
        # table id -> (the game log saved, its save key): one key per game (`_save`)
        self._saving: dict[int, tuple[GameLog, int]] = {}
        self._save_keys = itertools.count(1)
        self._finishing: dict[int, Table] = {}  # tables whose game ended in this batch
        self._restored: list[Table] = []  # tables put back by `restore`, to set going
        self._unarchived: list[Table] = []  # finished games found saved, not yet stored
        self.paused: set[int] = set()  # tables an admin paused: nothing moves, no timer
        # tables whose changes the last save could not write (issue 11): nothing moves, no
        # timer, nothing of them is sent until a save works (`_save`, `_end_batch`)
        self.unsaved: set[int] = set()
        self._unwritten: dict[int, bytes | None] = {}  # by save key, from the failed save
        self._held: list[tuple[Client, bytes]] = []  # their notices, sent once saved
        self._retry_wait = SAVE_RETRY[0]
        self._retry: asyncio.TimerHandle | None = None
        self._admin = AdminCommands(self)
        self.tables: dict[int, Table] = {}
        self._inbox: asyncio.Queue[object] = asyncio.Queue()
        self._clients: dict[int, Client] = {}
        # table id -> slot -> (key, handle, when it goes off in loop time); see `_Timer`
        self._timers: dict[
            int, dict[str, tuple[tuple[str | int, ...], asyncio.TimerHandle, float]]
        ] = {}
        self._sids = itertools.count(1)
        self._table_ids = itertools.count(1)
        self._lobby_sent: protocol.LobbyState | None = None
        self._online_changes = 0  # moved on by `_online_changed`
        self._online_kept: tuple[tuple[int, int], OnlineLists] | None = None
        self._lobby_pending: set[int] = set()
        # each listed table's line as last worked out; a table marked changed is worked out
        # again (every change to a table marks it: it is sent to its players too)
        self._summaries: dict[int, protocol.TableSummary] = {}
        self._changed: dict[int, None] = {}  # ids of tables to send at the end of the batch
        self._drops: list[Client] = []
        # events of this batch, sent once its changes are saved (`_end_batch`)
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
        5, item 3): each table exactly as saved (`Table.restore`), every seat of a player with
        an identity held for them for the table's grace period, every timer restarted. A game
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
                table, paused = Table.restore(data)
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
        self._inbox.put_nowait(_Rated(table, dict(changes)))

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
        self._inbox.put_nowait(_Connect(session, admin, address, account_id, bot_account))
        return session

    def refresh(self, sid: int) -> None:
        """Send session `sid` its whole state again at the end of the batch: the lobby list
        or its table, and the chat lines said where it is (issue 12: a front whose bus
        connection broke may have missed events). Unknown sessions are ignored."""
        self._inbox.put_nowait(_Refresh(sid))

    # ---- what the admin commands act on (lobby/admin.py; on the actor's turn only) --------

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
                await self._save()  # nothing accepted is lost by a clean stop
                self._shutdown()
                return
            self._guarded(self._handle, message)
            self._settle_drops()
            handled += 1
            # a batch ends when the inbox is empty, or after BATCH messages so that a steady
            # stream of commands never holds back everybody's updates
            if self._inbox.empty() or handled >= BATCH:
                await self._end_batch()
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
            case _Connect():
                self._on_connect(message)
            case Disconnected(sid=sid):
                client = self._clients.get(sid)
                if client is not None:
                    self.remove_client(client)
            case _Timer(table=tid, slot=slot, key=key):
                self._on_timer(tid, slot, key)
            case _SaveRetry():
                self._retry = None  # the batch this message ends saves again
            case _Rated():
                self._on_rated(message)
            case _Refresh(sid=sid):
                self._on_refresh(sid)
            case _:
                raise TypeError(f"not an inbox message: {message!r}")

    def _shutdown(self) -> None:
        for tid in list(self._timers):
            self.cancel_timer(tid)
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

    async def _save(self) -> bool:
        """Persist the games changed since the last save (`persist`), each under its own save
        key (`Table.save_key`, one per game): a game in play, its snapshot; a game that just
        ended, its last snapshot, which the archive forgets in the transaction that stores the
        game (`GameArchive.game_over`; with no `on_game_over`, forgotten here); a game whose
        table closed before it ended, None. True once all of it is written (or there is
        nothing to write, or no `persist`).

        A failed save (a full disk, a database error: issue 11) loses nothing and shows
        nothing: what it could not write is kept for the next save, which writes it with
        whatever changed since; every table in it joins `unsaved` — it takes no move, its
        timers stop, what it did in the batch is not sent (`_end_batch`) — and everyone at it
        is told "the server cannot save this game right now; it is paused". A `_SaveRetry`
        comes back after `SAVE_RETRY` (doubling); the first save that works resumes them
        (`_resume_saved`). False while that has not happened."""
        finishing, self._finishing = self._finishing, {}
        if self.persist is None:
            return True
        changes, self._unwritten = self._unwritten, {}
        tables: set[int] = set(self.unsaved)
        for tid in {**self._changed, **dict.fromkeys(finishing)}:
            # a table whose game ended is saved even if it closed in the same batch
            table = finishing.get(tid) or self.tables.get(tid)
            saving = self._saving.get(tid)
            game = table.log if table is not None else None
            if saving is not None and saving[0] is not game:
                del self._saving[tid]  # closed, or back to waiting, before its game ended
                changes[saving[1]] = None
                tables.add(tid)
                saving = None
            if table is None or game is None:
                continue
            if table.status == "playing" and saving is None:
                saving = (game, next(self._save_keys))
                self._saving[tid] = saving
                table.save_key = saving[1]
            if saving is None:
                continue
            try:
                snapshot = table.snapshot(paused=tid in self.paused)
            except Exception:
                log.exception("lobby: could not snapshot table %d", tid)
                continue
            changes[saving[1]] = snapshot
            tables.add(tid)
            if table.status == "over" and tid in finishing:
                del self._saving[tid]  # the archive forgets it once the game is stored
                if self.on_game_over is None:
                    changes[saving[1]] = None
        if not changes:
            return True
        try:
            await self.persist(changes)
        except Exception as error:
            self._unwritten = changes
            self._save_failed(tables, error)
            return False
        self._retry_wait = SAVE_RETRY[0]
        return True

    def _save_failed(self, tables: set[int], error: Exception) -> None:
        """A save of `tables` failed with `error`: pause the ones not paused for it yet, tell
        everyone at them, log it, and have the save tried again (`_save`)."""
        newly = sorted(tid for tid in tables - self.unsaved if tid in self.tables)
        self.unsaved |= tables
        log_event(
            log,
            "save_failed",
            level=logging.ERROR if newly or self._retry is None else logging.WARNING,
            tables=sorted(tables),
            paused=newly,
            exc=f"{type(error).__name__}: {error}",
        )
        message = protocol.encode(protocol.Notice(text=protocol.SAVE_PAUSED))
        for tid in newly:
            self.cancel_timer(tid)
            for sid in self.tables[tid].sessions():
                if sid in self._clients:
                    self.deliver(self._clients[sid], message)  # untagged: sent now
        if self._retry is None:
            loop = asyncio.get_running_loop()
            self._retry = loop.call_later(self._retry_wait, self._inbox.put_nowait, _SaveRetry())
            self._retry_wait = min(self._retry_wait * 2, SAVE_RETRY[1])

    def _resume_saved(self) -> None:
        """A save worked after some failed: the `unsaved` tables are safe again. Their held
        notices go out, they are told, and they move on (`_after_change`: timers restarted,
        each sent afresh to everyone at it)."""
        resumed, self.unsaved = sorted(self.unsaved), set()
        held, self._held = self._held, []
        for client, data in held:
            self.deliver(client, data)
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        log_event(log, "save_resumed", tables=resumed)
        for tid in resumed:
            table = self.tables.get(tid)
            if table is not None:
                self.notice(table, protocol.SAVE_RESUMED)
                self._guarded(self.after_change, table)

    # ---- delivery ------------------------------------------------------------------------

    def tell(self, client: Client, event: protocol.Event) -> None:
        self.deliver(client, protocol.encode(event))

    def deliver(self, client: Client, data: bytes, table: int | None = None) -> None:
        """Send `data` to the client at the end of the batch, once what the batch changed is
        saved (`_end_batch`): a notice of a move is never out before the move is safe. Data
        about `table` (a notice at it) is held while that table is `unsaved`."""
        if not client.dropped:
            self._outgoing.append((client, data, table))

    def _flush_outgoing(self) -> None:
        """Put the batch's events into their outboxes, in order, never waiting: a full outbox
        means its session is too slow (dropped by `_settle_drops`)."""
        outgoing, self._outgoing = self._outgoing, []
        for client, data, table in outgoing:
            if table in self.unsaved:
                self._held.append((client, data))  # out once it is saved (`_resume_saved`)
            elif not client.dropped and not client.session.offer(data):
                client.dropped = True
                self._online_changed()
                self._drops.append(client)

    def _settle_drops(self) -> None:
        """Drop the sessions found too slow: outbox cleared, `Goodbye`, seat left."""
        while self._drops:
            client = self._drops.pop(0)
            client.session.end(N_("too slow"))
            log.info("lobby: dropped %s (outbox full)", client.name)
            self._guarded(self.remove_client, client)

    async def _end_batch(self) -> None:
        """Save, then send what the batch changed: the events its messages made (answers,
        notices, chat) in order, each changed table to the sessions at it, then the lobby list.
        Sending may find sessions too slow; dropping them changes their tables and who is
        online, so save and send again until nobody more is dropped."""
        while True:
            self._guarded(self._names_back)
            if await self._save() and self.unsaved:
                self._resume_saved()
                continue  # what resuming moved on is saved before it is sent
            while self._changed:
                tid = next(iter(self._changed))
                del self._changed[tid]
                self._summaries.pop(tid, None)
                # an unsaved table is not sent: it is sent afresh once saved
                if tid in self.tables and tid not in self.unsaved:
                    self._guarded(self._broadcast, self.tables[tid])
            self._guarded(self._flush_lobby)
            self._guarded(self._admin.flush)
            self._flush_outgoing()
            if not self._drops:
                return
            self._settle_drops()

    def _on_rated(self, rated: _Rated) -> None:
        if self.ratings is None:
            self.ratings = {}
        for account, (_name, _before, after) in rated.changes.items():
            self.ratings[account] = after
        self._online_changed()
        table = self.tables.get(rated.table)
        if table is not None and table.status == "over":
            table.rating_changes = tuple(
                protocol.RatingChange(name=name, before=before, after=after)
                for name, before, after in rated.changes.values()
            )
        # the seats of the players rated show their new ratings: only their tables are
        # sent again (one rated game must not redraw every table of the server)
        owners = {f"account:{account}" for account in rated.changes}
        for table in self.tables.values():
            if any(seat.owner in owners for seat in table.seats):
                self._changed[table.id] = None

    def _flush_lobby(self) -> None:
        """Send the lobby list to sessions in the lobby: to all if it changed, else only to
        those that just arrived there. The online names come sorted, each with its rating
        (`LobbyState.ratings`)."""
        online, ratings, bot_accounts = self._online()
        state = protocol.LobbyState(
            tables=tuple(
                self._summary(t) for t in sorted(self.tables) if self.tables[t].code is None
            ),
            online=online,
            ratings=ratings,
            bot_accounts=bot_accounts,
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
                self.deliver(client, data)

    def _online_changed(self) -> None:
        """Who is online, their names or their ratings changed: `_online` works the lists
        out again."""
        self._online_changes += 1

    def _online(self) -> OnlineLists:
        """The lobby list's online names (sorted), their ratings (in the same order; none
        without ratings) and the bot accounts' names (sorted), kept until `_online_changed`
        (issue 10: worked out at every batch, with each session's owner string built, they
        were ~3 % of the server at 300 sessions)."""
        key = (self._online_changes, id(self.ratings))
        kept = self._online_kept if self._online_kept and self._online_kept[0] == key else None
        if kept is not None and not self.check_summaries:
            return kept[1]
        fresh = self._online_afresh()
        if kept is not None and kept[1] != fresh:
            self.unmarked_changes.append(ONLINE_UNMARKED)
        self._online_kept = (key, fresh)
        return fresh

    def _online_afresh(self) -> OnlineLists:
        online = sorted(
            (c.name, rating_of(c.owner, self.ratings))
            for c in self._clients.values()
            if not c.dropped
        )
        return (
            tuple(name for name, _ in online),
            tuple(rating for _, rating in online) if self.ratings is not None else (),
            tuple(
                sorted(c.name for c in self._clients.values() if c.bot_account and not c.dropped)
            ),
        )

    check_summaries = False
    """Whether `_summary` checks each line it kept against one worked out afresh (and
    `_online` its lists): the tests set it, and a change that forgot to mark its table adds
    the table's id to `unmarked_changes` (`ONLINE_UNMARKED` for the online lists; the fresh
    line is sent)."""
    unmarked_changes: ClassVar[list[int]] = []

    def _summary(self, tid: int) -> protocol.TableSummary:
        """Table `tid`'s line in the lobby list, worked out again only when the table changed
        since (issue 10: the list was built whole at every batch, ~3 % of the server at 200
        sessions, though most batches change one table or none)."""
        kept = self._summaries.get(tid)
        if kept is None:
            kept = self._summaries[tid] = self.tables[tid].summary()
        elif self.check_summaries and kept != (fresh := self.tables[tid].summary()):
            self.unmarked_changes.append(tid)
            kept = self._summaries[tid] = fresh
        return kept

    def _broadcast(self, table: Table) -> None:
        """Each seated human and spectator gets the table as they may see it, with the turn
        timer and the grace periods as they stand now."""
        names = {sid: self._clients[sid].name for sid in table.spectators if sid in self._clients}
        paused = table.id in self.paused
        now = asyncio.get_running_loop().time()
        clock = None
        timers = self._timers.get(table.id, {})
        turn = timers.get("turn")
        if turn is not None and table.turn_seconds:
            seat = turn[0][1]
            assert isinstance(seat, int)
            left = round(max(0.0, turn[2] - now) / self.timer_scale, 1)
            clock = protocol.TurnClock(seat=seat, seconds=table.turn_seconds, left=left)
        grace: dict[int, float] = {}
        for seat in table.away():
            timer = timers.get(f"grace{seat}")
            # no timer running (a paused table): the whole grace is left, as on resuming
            left = table.grace_seconds if timer is None else (timer[2] - now) / self.timer_scale
            grace[seat] = max(0.0, left)
        fill = timers.get("fill")
        fill_in = None if fill is None else round(max(0.0, fill[2] - now) / self.timer_scale, 1)
        for seat in table.humans():
            client = self._clients.get(table.seats[seat].sid)  # type: ignore[arg-type]
            if client is not None:
                self.tell(
                    client,
                    table.table_state(
                        seat, names, paused, clock, grace, self.ratings, fill_in, self.programs
                    ),
                )
        if table.spectators:
            data = protocol.encode(
                table.table_state(
                    None, names, paused, clock, grace, self.ratings, fill_in, self.programs
                )
            )
            for sid in table.spectators:
                if sid in self._clients:
                    self.deliver(self._clients[sid], data)

    def notice(self, table: Table, text: str, **args: str | int) -> None:
        """Tell everyone at `table` `text` (an `N_` message id) with its named `args`."""
        data = protocol.encode(protocol.Notice(text=text, args=args))
        for sid in table.sessions():
            if sid in self._clients:
                self.deliver(self._clients[sid], data, table.id)

    # ---- sessions ------------------------------------------------------------------------

    def _on_connect(self, connect: _Connect) -> None:
        session = connect.session
        wanted = clean_chat(session.name) or "player"  # no control character in a name
        taken = {c.name.casefold() for c in self._clients.values()}
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
                self.programs.add(connect.account_id)
            else:
                self.programs.discard(connect.account_id)
        self._clients[session.id] = client
        self._online_changed()
        self.tell(client, protocol.Welcome(name=name, admin=client.admin))
        self._lobby_pending.add(session.id)
        self._send_chat_history(client)
        self._take_back_seat(client)

    def _take_back_seat(self, client: Client) -> None:
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
        for table in self.tables.values():
            seat = table.reclaim(client.id, owner)
            if seat is None:
                continue
            client.table = table.id
            self.cancel_timer(table.id, f"grace{seat}")
            log_event(log, "seat_reclaimed", table=table.id, seat=seat, player=client.name)
            self._send_chat_history(client)
            self.notice(table, N_("{name} is back"), name=table.seats[seat].name)
            self.after_change(table)
            return
        for old in list(self._clients.values()):
            if old is client or old.owner != owner or old.table is None:
                continue
            table = self.tables[old.table]
            seat = table.hand_over(old.id, client.id)
            if seat is None:
                continue
            old.table = None
            client.table = table.id
            self.tell(old, protocol.LeftTable())
            self.tell(
                old,
                protocol.Notice(
                    text=N_("your seat at {table} went to your new session"),
                    args={"table": table.name},
                ),
            )
            self._lobby_pending.add(old.id)
            self._send_chat_history(old)
            log_event(log, "seat_taken_over", table=table.id, seat=seat, player=client.name)
            self._send_chat_history(client)
            self.notice(table, N_("{name} is back"), name=table.seats[seat].name)
            self.after_change(table)
            return

    def _on_refresh(self, sid: int) -> None:
        client = self._clients.get(sid)
        if client is None or client.dropped:
            return
        self.tell(client, protocol.Welcome(name=client.name, admin=client.admin))
        if client.table is None:
            self._lobby_pending.add(sid)
        else:
            self._changed[client.table] = None
        self._send_chat_history(client)

    def remove_client(self, client: Client) -> None:
        """The session is gone (disconnected or dropped). At a table mid-game its seat is
        held for it (`Table.disconnect`); otherwise it leaves."""
        if client.table is not None:
            self._disconnect(client)
        self._clients.pop(client.id, None)
        self._online_changed()
        self._lobby_pending.discard(client.id)
        self.moderation.forget_session(client.id)
        if client.owner is not None and client.name.casefold() == client.wanted.casefold():
            self._gone_names.append(client)  # `_names_back`, once the batch is over

    def _names_back(self) -> None:
        """At the end of a batch, for each session gone in it (`_remove`): `_name_back`."""
        gone, self._gone_names = self._gone_names, []
        for client in gone:
            self._name_back(client)

    def _name_back(self, gone: Client) -> None:
        """Issue 13, item 1: a session named `ben-2` because another of the same identity
        was online as `ben` takes the name back once that one is gone — at once in the
        lobby, as a spectator or at a waiting table; mid-game its seat keeps the name the
        game began with (its record's), and takes the new one when the table waits again
        (`_after_change`). It is told (`Welcome` again, and a notice). Done once the batch
        is over, so that sessions ended together (a ban of a key) are not renamed first."""
        taken = {c.name.casefold() for c in self._clients.values()}
        if gone.wanted.casefold() in taken:
            return
        client = next(
            (
                c
                for c in self._clients.values()
                if c.owner == gone.owner and not c.dropped and c.name != c.wanted
            ),
            None,
        )
        if client is None:
            return
        log_event(log, "renamed", old=client.name, new=client.wanted)
        client.name = client.wanted
        self._online_changed()
        self.tell(client, protocol.Welcome(name=client.name, admin=client.admin))
        self.tell(
            client,
            protocol.Notice(
                text=N_("Your other session ended: you play as {name} again."),
                args={"name": client.name},
            ),
        )
        table = self.tables.get(client.table) if client.table is not None else None
        if table is not None:
            seat = table.seat_of(client.id)
            if seat is not None and table.status == "waiting":
                table.seats[seat].name = client.name
            self._changed[table.id] = None  # a spectator's name shows there too

    def _disconnect(self, client: Client) -> None:
        """`client` lost its connection while at a table: a playing seat with an identity is
        held for the table's grace period (issue 5, item 2), anything else is a leave."""
        assert client.table is not None
        table = self.tables[client.table]
        if table.holds_for(client.id) is None:
            self.leave_table(client)
            return
        seat = table.disconnect(client.id)
        client.table = None
        log_event(log, "seat_held", table=table.id, seat=seat, player=client.name)
        self.notice(
            table,
            N_("{name} lost their connection; their seat is held for {seconds} seconds"),
            name=table.seats[seat].name,
            seconds=table.grace_seconds,
        )
        self.after_change(table)

    # ---- commands ------------------------------------------------------------------------

    def _on_command(self, client: Client, command: object) -> None:
        if isinstance(command, _MOVES) and client.table in self.paused:
            raise Refusal("paused", N_("an admin paused this table; wait until it resumes"))
        if isinstance(command, _MOVES) and client.table in self.unsaved:
            raise Refusal("paused", protocol.SAVE_PAUSED)
        match command:
            case protocol.CreateTable():
                self._create(client, command)
            case protocol.JoinTable(table=tid):
                self._join(client, tid, None)
            case protocol.QuickPlay():
                self._quick_play(client, command)
            case protocol.JoinPrivate(code=code):
                self._join(client, self._private_table(code).id, code)
            case protocol.Challenge():
                self._challenge(client, command)
            case protocol.DeclineChallenge(code=code):
                self._decline(client, code)
            case protocol.SpectateTable(table=tid):
                self._spectate(client, tid)
            case protocol.LeaveTable():
                if client.table is None:
                    raise Refusal("not_seated", N_("you are not at a table"))
                self.leave_table(client)
            case protocol.StartGame():
                table = self._creators_waiting_table(client)
                if len(table.seats) < 2:
                    raise Refusal("bad_command", N_("a game needs at least 2 players seated"))
                table.start(self.dice)
                self.after_change(table)
            case protocol.AddBot(level=asked):
                table = self._creators_waiting_table(client)
                level = table.bot_level if asked is None else asked
                if len(table.seats) >= table.size:
                    raise Refusal("table_full", N_("every seat is taken"))
                if level not in bots.LEVELS:
                    raise Refusal(
                        "bad_command", N_("unknown bot level {level}"), {"level": level[:12]}
                    )
                table.add_bot(self.rng, level)
                self.after_change(table)
            case protocol.PlayAgain():
                table, seat = self._my_seat(client)
                if table.status != "over":
                    raise Refusal("bad_command", N_("the game is not over"))
                if seat not in table.play_again:  # asking twice changes nothing
                    table.play_again.add(seat)
                    self.after_change(table)
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
                self._played(table, lambda: table.play(command, seat, self.dice))
            case _:
                raise TypeError(f"not a command: {command!r}")

    def _create(self, client: Client, command: protocol.CreateTable) -> Table:
        self._require_no_table(client)
        tid = next(self._table_ids)
        table = Table.create(tid, command, client.id, client.name, self.rng, client.owner)
        if command.private:
            table.code = self._new_code()
        self.tables[tid] = table
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
        self.after_change(table)
        return table

    def _new_code(self) -> str:
        """A fresh invite code: six of `CODE_LETTERS` (no 0/O, 1/I/L to misread), from the
        operating system's randomness, none in use."""
        taken = {t.code for t in self.tables.values()}
        while (code := "".join(secrets.choice(CODE_LETTERS) for _ in range(6))) in taken:
            pass
        return code

    def _private_table(self, code: str) -> Table:
        """The private table whose invite code is `code` (any case, spaces ignored); refused
        as "no_table" if none."""
        wanted = "".join(code.split()).upper()
        for table in self.tables.values():
            if table.code is not None and table.code == wanted:
                return table
        raise Refusal("no_table", N_("no table has the invite code {code}"), {"code": code[:12]})

    def _challenge(self, client: Client, command: protocol.Challenge) -> None:
        """`protocol.Challenge`: a private table of two for `client`, and the challenged
        player told (`protocol.Challenged`)."""
        self._require_no_table(client)
        wanted = command.name.strip().casefold()
        target = next(
            (c for c in self._clients.values() if not c.dropped and c.name.casefold() == wanted),
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
        table = self._create(client, create)
        assert table.code is not None
        challenged = protocol.Challenged(
            by=client.name,
            table=table.id,
            code=table.code,
            preset=table.options.preset,
            bot_account=client.bot_account,
        )
        self.tell(target, challenged)
        self.tell(
            client,
            protocol.Notice(
                text=N_("You challenged {name}; the table waits for them."),
                args={"name": target.name},
            ),
        )

    def _decline(self, client: Client, code: str) -> None:
        """`protocol.DeclineChallenge`: whoever waits at that private table is told."""
        table = self._private_table(code)
        self.notice(table, N_("{name} declined the challenge."), name=client.name)

    def _quick_play(self, client: Client, command: protocol.QuickPlay) -> None:
        """`protocol.QuickPlay`: join the best open table, else open one that bots fill after
        the wait chosen (the "fill" timer, `_schedule`)."""
        self._require_no_table(client)
        if command.wait_seconds not in protocol.QUICK_WAITS:
            raise Refusal("bad_command", N_("a quick play waits 15, 30, 60 or 120 seconds"))
        if command.preset is not None and command.preset not in PRESETS:
            raise Refusal("bad_options", N_("unknown preset {preset}"), {"preset": command.preset})
        open_tables = [
            table
            for table in self.tables.values()
            if table.status == "waiting"
            and len(table.seats) < table.size
            and table.id not in self.paused
            and table.code is None
            and (command.preset is None or table.options.preset == command.preset)
            and (client.owner is None or all(s.owner != client.owner for s in table.seats))
        ]
        if open_tables:
            best = max(open_tables, key=lambda t: (len(t.humans()), -t.id))
            self._join(client, best.id, None)
            return
        preset = command.preset or "classic"
        self._create(client, protocol.CreateTable(preset=preset, seats=4, bots=0))
        table = self.tables[client.table]  # type: ignore[index]
        table.fill_seconds = command.wait_seconds
        self._schedule(table)

    def _join(self, client: Client, tid: int, code: str | None) -> None:
        """Sit `client` at table `tid`; a private table only with its invite `code` (checked
        by the caller: `JoinTable` has none, and a private table is refused as unknown)."""
        self._require_no_table(client)
        table = self._table(tid)
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
        self._send_chat_history(client)
        self.after_change(table)

    def _spectate(self, client: Client, tid: int) -> None:
        self._require_no_table(client)
        table = self._table(tid)
        if table.code is not None and not client.admin:  # not listed: admins only
            raise Refusal("no_table", N_("there is no such table"))
        table.spectators.append(client.id)
        client.table = tid
        self._send_chat_history(client)
        self._changed[tid] = None

    def leave_table(self, client: Client) -> None:
        """`client` leaves its table: mid-game a bot takes the seat, except at a club table,
        where the cup stays until the round ends and the player is then out (RULES.md §6;
        `Table.leave`). A leave that ends the game is reported like a move that does."""
        assert client.table is not None
        table = self.tables[client.table]
        client.table = None
        was = table.status
        what = table.leave(client.id)
        self.tell(client, protocol.LeftTable())
        self._lobby_pending.add(client.id)
        self._send_chat_history(client)
        self._game_may_have_ended(table, was)
        if table.deserted and table.status == "playing":
            # the last person left mid-game: the bots play it out at once and it is stored,
            # the leaver placed when they left (issue 13, item 8); then the table closes
            table.unattended = True
        if table.deserted:
            self.close_table(table)
            return
        if what == "bot":
            self.notice(table, N_("{name} left; a bot plays their seat"), name=client.name)
        elif what in ("freed", "gone", "out"):
            self.notice(table, N_("{name} left the table"), name=client.name)
        elif what == "leaving":
            self.notice(
                table,
                N_("{name} left; their cup stays until the round ends, then they are out"),
                name=client.name,
            )
        elif what == "resigned":
            self.notice(table, N_("{name} left and is out of the game"), name=client.name)
        self.after_change(table)

    def _ready(self, client: Client, round_: int) -> None:
        """`Ready(round)`: see `Table.confirm`. A spectator's or a late one is ignored."""
        if client.table is None:
            raise Refusal("not_seated", N_("you are not at a table"))
        table = self.tables[client.table]
        seat = table.seat_of(client.id)
        if seat is not None and table.confirm(seat, round_):
            self.after_change(table)

    def _require_no_table(self, client: Client) -> None:
        if client.table is not None:
            raise Refusal("bad_command", N_("leave your table first"))

    def _table(self, tid: int) -> Table:
        table = self.tables.get(tid)
        if table is None:
            raise Refusal("no_table", N_("there is no such table"))
        return table

    def _my_seat(self, client: Client) -> tuple[Table, int]:
        table = self.tables.get(client.table) if client.table is not None else None
        seat = None if table is None else table.seat_of(client.id)
        if table is None or seat is None:
            raise Refusal("not_seated", N_("you are not seated at a table"))
        return table, seat

    def _creators_waiting_table(self, client: Client) -> Table:
        if client.table is None:
            raise Refusal("not_seated", N_("you are not at a table"))
        table = self.tables[client.table]
        if table.creator != client.id:
            raise Refusal("not_creator", N_("only the table's creator may do that"))
        if table.status != "waiting":
            raise Refusal("bad_command", N_("the game has already started"))
        return table

    # ---- chat (issue 4, item 5) ----------------------------------------------------------

    def _muted(self, client: Client) -> str | None:
        """Why `client` may not chat now ("" for no reason given), or None: it may."""
        mute = self.moderation.muted(client.account_id, client.id)  # an admin's Mute
        return None if mute is None else mute.reason

    def _say(self, client: Client, text: str) -> None:
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
            bot_account=client.bot_account,
        )
        scope = None if table is None else table.id
        self._chat.setdefault(scope, deque(maxlen=HISTORY)).append(said)
        if table is not None:
            listeners = [self._clients[sid] for sid in table.sessions() if sid in self._clients]
        else:
            listeners = [c for c in self._clients.values() if c.table is None]
        data = protocol.encode(said)
        for listener in listeners:
            self.deliver(listener, data)

    def _send_chat_history(self, client: Client) -> None:
        """The last lines said where `client` has just arrived (its table, or the lobby),
        if any."""
        lines = self._chat.get(client.table)
        if lines:
            scope: Literal["lobby", "table"] = "lobby" if client.table is None else "table"
            history = protocol.ChatHistory(scope=scope, table=client.table, lines=tuple(lines))
            self.tell(client, history)

    # ---- the game flow -------------------------------------------------------------------

    def _played(self, table: Table, move: Callable[[], T]) -> T:
        """Make a move at `table` (it may raise `Refusal`: then nothing changed), report the
        game's end, and move on; returns what `move` returned."""
        was = table.status
        result = move()
        self._game_may_have_ended(table, was)
        self.after_change(table)
        return result

    def _game_may_have_ended(self, table: Table, was: str) -> None:
        """Report a game that went from `was` "playing" to over: `on_game_over`, a log line."""
        if was == "playing" and table.status == "over":
            assert table.log is not None and table.state is not None
            winner = table.state.winner
            self._finishing[table.id] = table
            log_event(
                log,
                "game_over",
                table=table.id,
                rounds=len(table.log.rounds),
                winner=None if winner is None else table.seats[winner].name,
                automatic=len(table.automatic),
            )
            if self.on_game_over is not None:
                self._guarded(self.on_game_over, table, table.log)

    def after_change(self, table: Table) -> None:
        """Move the table on as far as it goes by itself, set its timers, and mark it to be
        sent to everyone at it at the end of the batch. A paused table only gets sent:
        it moves on, and its timers are set (from the start), once an admin resumes it."""
        self._changed[table.id] = None
        if table.deserted:  # e.g. a game played on for players who never came back ended
            self.close_table(table)
            return
        if table.id in self.paused or table.id in self.unsaved:
            self.cancel_timer(table.id)
            return
        if table.status == "waiting":  # a seat takes its player's name back (`_name_back`)
            for seat in table.seats:
                client = self._clients.get(seat.sid) if seat.sid is not None else None
                if client is not None and seat.name != client.name:
                    seat.name = client.name
        was = table.status
        table.advance(self.dice)
        if was == "waiting" and table.status == "playing":
            log_event(
                log,
                "game_started",
                table=table.id,
                players=[seat.name for seat in table.seats],
                bots=sum(seat.bot for seat in table.seats),
            )
        self._schedule(table)

    def _schedule(self, table: Table) -> None:
        """The table's timers. "move": a bot's pause before it acts, or the reveal timeout
        (with no human seated, the reveal waits it out: spectators see it); none at an
        `unattended` table, whose bots play on at once. "turn": the turn
        timer of the human to move, held for them or not (issue 5, item 1). "grace" + seat:
        each disconnected player's seat held for them (issue 5, item 2). A timer whose key
        is unchanged runs on; one no longer wanted is cancelled."""
        key: tuple[str | int, ...] | None = None
        delay = 0.0
        if table.bot_to_move() is not None:
            key, delay = ("bot", table.epoch), self.rng.uniform(*self.bot_delay)
        elif table.in_reveal:
            assert table.state is not None
            key, delay = ("reveal", table.state.round_index), self.reveal_timeout
        if table.unattended:  # nobody to wait for: the bots play it out at once
            delay = 0.0
        self._set_timer(table.id, "move", key, delay)
        # from when the table opened (or went back to waiting): players sitting down do not
        # set it back
        waiting = table.status == "waiting" and table.fill_seconds
        fill = ("fill", table.games) if waiting else None
        self._set_timer(table.id, "fill", fill, table.fill_seconds * self.timer_scale)
        turn = table.turn_key() if table.turn_seconds else None
        self._set_timer(
            table.id,
            "turn",
            None if turn is None else ("turn", *turn),
            table.turn_seconds * self.timer_scale,
        )
        held = {seat for seat in table.away() if not table.seats[seat].bot}
        for slot in list(self._timers.get(table.id, {})):
            if slot.startswith("grace") and int(slot[5:]) not in held:
                self.cancel_timer(table.id, slot)
        for seat in held:
            delay = table.grace_seconds * self.timer_scale
            self._set_timer(table.id, f"grace{seat}", ("grace", seat), delay)

    def _set_timer(
        self, tid: int, slot: str, key: tuple[str | int, ...] | None, delay: float
    ) -> None:
        """Table `tid`'s timer in `slot` goes off after `delay` seconds with `key` (None: no
        timer); one already set with the same key runs on."""
        current = self._timers.get(tid, {}).get(slot)
        if current is not None and current[0] == key:
            return
        self.cancel_timer(tid, slot)
        if key is not None:
            loop = asyncio.get_running_loop()
            message = _Timer(table=tid, slot=slot, key=key)
            handle = loop.call_later(delay, self._inbox.put_nowait, message)
            self._timers.setdefault(tid, {})[slot] = (key, handle, loop.time() + delay)

    def cancel_timer(self, tid: int, slot: str | None = None) -> None:
        """Cancel table `tid`'s timer in `slot`, or all its timers (None)."""
        timers = self._timers.get(tid, {})
        for found in list(timers) if slot is None else [slot]:
            if found in timers:
                timers.pop(found)[1].cancel()
        if not timers:
            self._timers.pop(tid, None)

    def _on_timer(self, tid: int, slot: str, key: tuple[str | int, ...]) -> None:
        table = self.tables.get(tid)
        current = self._timers.get(tid, {}).get(slot)
        if table is None or current is None or current[0] != key:
            return  # stale: the table moved on or closed since
        self.cancel_timer(tid, slot)  # gone off: only forgotten
        if key[0] == "bot":
            self._played(table, lambda: table.bot_move(self.rng, self.dice))
        elif key[0] == "turn":
            self._time_ran_out(table)
        elif key[0] == "grace":
            self._grace_over(table, int(key[1]))
        elif key[0] == "fill":  # a quick-play table waited long enough: bots sit down
            if table.status == "waiting" and table.seats:
                while len(table.seats) < table.size:
                    table.add_bot(self.rng)
            self.after_change(table)
        else:
            if table.in_reveal:
                table.roll(self.dice)
            self.after_change(table)

    def _time_ran_out(self, table: Table) -> None:
        """The turn timer went off: the automatic move (`Table.auto_move`), told to all."""
        move = self._played(table, lambda: table.auto_move(self.rng, self.dice))
        if move is None:
            return
        name = table.seats[move.seat].name
        log_event(log, "automatic_move", table=table.id, seat=move.seat, call=move.call)
        if move.call is not None:
            self.notice(table, N_("{name} ran out of time: automatic Dudo"), name=name)
            return
        # a bid does not end the round: it is the round's bid number `move.bids`
        assert table.state is not None and table.state.round_index == move.round
        bid = table.state.bids[move.bids].bid
        self.notice(
            table,
            N_("{name} ran out of time: automatic bid of {count}×{face}"),
            name=name,
            count=bid.count,
            face=bid.face,
        )

    def _grace_over(self, table: Table, seat: int) -> None:
        """A disconnected player's grace period ended: a bot plays their seat until they
        come back (`Table.stand_in`; the club's leaving rule at a club table)."""
        was = table.status
        what = table.stand_in(seat)
        if what == "kept":
            return
        name = table.seats[seat].name
        log_event(log, "seat_stand_in", table=table.id, seat=seat, player=name, what=what)
        if what == "bot":
            self.notice(
                table,
                N_("{name} has not come back: a bot plays their seat until they do"),
                name=name,
            )
        elif what == "leaving":
            self.notice(
                table,
                N_("{name} is not back: their cup stays until this round ends, then they are out"),
                name=name,
            )
        else:
            self.notice(table, N_("{name} has not come back and is out of the game"), name=name)
        self._game_may_have_ended(table, was)
        self.after_change(table)

    def close_table(
        self, table: Table, text: str = N_("table {table} closed"), **args: str | int
    ) -> None:
        """Close a table nobody plays at or watches, or one an admin closes; its bots stop.
        Everyone still at it goes back to the lobby, told `text` (an `N_` message id with
        `{table}`, the table's name, and `args`)."""
        self.cancel_timer(table.id)
        self.paused.discard(table.id)
        self.tables.pop(table.id, None)
        self._chat.pop(table.id, None)
        self._changed[table.id] = None  # to forget its saved game (`_save`)
        log_event(log, "table_closed", table=table.id, status=table.status)
        for sid in table.sessions():
            client = self._clients.get(sid)
            if client is not None:
                client.table = None
                self.tell(client, protocol.Notice(text=text, args={"table": table.name, **args}))
                self.tell(client, protocol.LeftTable())
                self._lobby_pending.add(sid)
                self._send_chat_history(client)
