"""A front process's handle on the lobby in another process (issue 12).

`RemoteLobby.connect` makes the same `LobbySession` the SSH layer and the apps use with the
lobby in their own process: commands go out with `send`, events come in through the
session's bounded outbox. Here the commands travel to the lobby process on the bus
(`relay.FromFront`, gathered per turn of the event loop, in order) and the lobby's events
for this front's sessions come back in `relay.ToFront` batches. The session numbers are
this front's own (`local`); the lobby keeps its own ids.

A session that does not read its events fast enough (its outbox full) is ended here, "too
slow", as the lobby does in one process. Faults (issue 12, item 4): every `relay.HEARTBEAT`
the front says it is alive and which sessions it holds; when the lobby restarts (a new
`LobbyAlive.incarnation`) or asks (`ToFront.again`: it took this front for dead), the live
sessions are attached again, and a player with an identity is seated back. While the lobby
cannot be reached (the bus is down, or no `LobbyAlive` for `LOBBY_SILENT` heartbeats), what
the sessions send is held here, and sent once the lobby is heard again — after the
sessions are attached again if it restarted — so a command is never sent where nobody can
take it (one sent in the seconds before a dead lobby is noticed may have gone to it: its
sender is told so, `MAYBE_LOST`, once the restarted lobby is heard); the players are told
"reconnecting…" after a second, and "reconnected". Once the bus is back each session is sent
its whole state again (`relay.Refresh`), as events may have been lost meanwhile (its chat
lines too: the chat history comes with it). Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable

import msgspec

from perudo_ssh import protocol, relay
from perudo_ssh.admission import SessionRefusal
from perudo_ssh.bans import BanList
from perudo_ssh.bus import Bus, BusError, Subscription
from perudo_ssh.i18n import N_
from perudo_ssh.logs import log_event
from perudo_ssh.records import Account
from perudo_ssh.session import Disconnected, FromSession, LobbySession

log = logging.getLogger(__name__)

RECONNECTING = N_("The connection to the lobby is lost: reconnecting…")
"""Told to every session when the bus has been down for `RECONNECTING_AFTER` seconds."""
RECONNECTED = N_("Reconnected to the lobby.")
"""Told to them once it is back."""
MAYBE_LOST = N_(
    "The lobby restarted: what you did in the last seconds may not have reached it. If it is "
    "not shown, do it again."
)
"""Told, once a restarted lobby is heard, to each session that sent a command after the old
lobby was last heard: it went to a lobby that may have died before taking it (a move it
took is saved before anyone is shown it, so a move shown is never lost)."""
RECONNECTING_AFTER = 1.0
"""Seconds the bus may be down before the players are told."""
LOBBY_SILENT = 3.0
"""Heartbeats without the lobby's after which it is taken as gone (held for, told)."""
HELD_MOST = 100_000
"""Most messages held for a lobby that cannot be reached; past it the oldest are dropped."""
BANS_WAIT = 5.0
"""Seconds a front waits for the lobby's bans when it asks for them."""


class _FrontSession(LobbySession):
    """A session of this front; `attach` is what attaches it at the lobby, `sent_at` the
    loop time its last command left for the lobby (0.0: none yet)."""

    attach: relay.Attach
    sent_at: float = 0.0


class RemoteLobby:
    """The lobby of another process, reached over `bus` (the module docstring).

    `prefix` starts every subject (`relay`); `front` names this front on the bus (a fresh
    random one by default); `outbox_size` bounds each session's outbox, in events;
    `round_trip`, if given, is called with the seconds of a request to the lobby and its
    answer, timed once a heartbeat (the operator's metrics)."""

    def __init__(
        self,
        bus: Bus,
        *,
        prefix: str = "perudo",
        front: str | None = None,
        outbox_size: int = 256,
        heartbeat: float = relay.HEARTBEAT,
        round_trip: Callable[[float], None] | None = None,
    ) -> None:
        self.bus = bus
        self.round_trip = round_trip
        self.prefix = prefix
        self.front = front or secrets.token_hex(6)
        self.outbox_size = outbox_size
        self.heartbeat = heartbeat
        self.sessions: dict[int, _FrontSession] = {}
        self.lobby_incarnation: str | None = None
        self._locals = iter(range(1, 2**62))
        self._guests = iter(range(1, 2**62))
        self._items: list[relay.FrontItem] = []
        self._flush_soon = False
        self._sending: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._subscriptions: list[Subscription] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._down: asyncio.TimerHandle | None = None
        self._told_down = False
        self._lobby_here = False  # heard since it was last lost: what is sent can reach it
        self._last_alive = 0.0
        self._lobby_seen = asyncio.Event()
        self.bans = BanList()
        """The lobby's bans in force, as last heard (the SSH layer refuses them at login)."""
        self._bans_version: int | None = None
        self._bans_asked: asyncio.Task[None] | None = None
        self._bans_read = asyncio.Event()

    async def start(self) -> None:
        """Receive the lobby's events for this front and start the heartbeat."""
        self.bus.on_state(self._bus_state)
        self._subscriptions = [
            await self.bus.subscribe(relay.front_subject(self.prefix, self.front), self._received),
            await self.bus.subscribe(relay.alive_subject(self.prefix), self._lobby_alive),
        ]
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._send_loop(), name="front sender"),
            loop.create_task(self._heartbeat_loop(), name="front heartbeat"),
        ]
        if self.round_trip is not None:
            self._tasks.append(loop.create_task(self._ping_loop(), name="front ping"))
        await self.bus.flush()

    async def wait_for_lobby(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the lobby's first heartbeat; True once heard."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._lobby_seen.wait()
        return self._lobby_seen.is_set()

    async def stop(self) -> None:
        """Detach every session still open (their seats follow the leave rule) and stop."""
        for session in list(self.sessions.values()):
            session.close()
        self._flush()
        self._sending.put_nowait(None)
        sender, *others = self._tasks
        if self._bans_asked is not None:
            others.append(self._bans_asked)
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5):
                await sender
        for subscription in self._subscriptions:
            await subscription.stop()
        with contextlib.suppress(BusError):
            await self.bus.flush()

    def end_all(self, reason: str) -> int:
        """End every session here with `Goodbye(reason)` (an `N_` message id) and tell the
        lobby they are gone (a seat at a game in play is held by the grace rule); returns
        how many there were."""
        sessions, self.sessions = self.sessions, {}
        for local, session in sessions.items():
            session.end(reason)
            self._queue(relay.Detach(local=local))
        return len(sessions)

    def connect(
        self,
        name: str,
        fingerprint: str | None = None,
        *,
        admin: bool = False,
        address: str | None = None,
        account: Account | None = None,
        bot_account: bool = False,
    ) -> LobbySession:
        """A new session asking for `name` (as `Lobby.connect`; `account`: the key's account,
        None for a guest). The lobby decides who is an admin when it was told its admins
        (`LobbyHost.admins`); `admin` is a front's word otherwise."""
        local = next(self._locals)
        outbox: asyncio.Queue[bytes] = asyncio.Queue(maxsize=self.outbox_size)
        session = _FrontSession(
            local, name, outbox, lambda message: self._post(local, message), fingerprint
        )
        session.attach = relay.Attach(
            local=local,
            name=name,
            fingerprint=fingerprint,
            address=address,
            account=account,
            admin=admin,
            bot_account=bot_account,
        )
        self.sessions[local] = session
        self._queue(session.attach)
        return session

    # ---- to the lobby --------------------------------------------------------------------

    def _post(self, local: int, message: object) -> None:
        match message:
            case FromSession(command=command):
                try:
                    data = protocol.encode(command)  # type: ignore[arg-type]  # anything
                    protocol.decode_command(data)
                except (TypeError, msgspec.ValidationError, msgspec.DecodeError):
                    self._deliver_here(
                        local,
                        protocol.Refused(
                            code="bad_command", message=N_("the server could not do that")
                        ),
                    )
                    return
                self._queue(relay.Command(local=local, data=data))
            case Disconnected():
                if self.sessions.pop(local, None) is not None:
                    self._queue(relay.Detach(local=local))

    def _queue(self, item: relay.FrontItem) -> None:
        self._items.append(item)
        if not self._flush_soon:
            self._flush_soon = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_soon = False
        if not self._lobby_here:
            # held until the lobby is heard (again): sent now, they could reach nobody
            if len(self._items) > HELD_MOST:
                log.error("front: %d messages held for the lobby: the oldest dropped", HELD_MOST)
                del self._items[: len(self._items) - HELD_MOST]
            return
        if self._items:
            items, self._items = self._items, []
            now = asyncio.get_running_loop().time()
            for item in items:
                if isinstance(item, relay.Command):
                    session = self.sessions.get(item.local)
                    if session is not None:
                        session.sent_at = now
            self._sending.put_nowait(
                relay.encode(relay.FromFront(front=self.front, items=tuple(items)))
            )

    async def _send_loop(self) -> None:
        subject = relay.lobby_subject(self.prefix)
        while True:
            data = await self._sending.get()
            if data is None:
                return
            try:
                await self.bus.publish(subject, data)
            except BusError as error:
                log.warning("front: commands lost: %s", error)

    # ---- from the lobby ------------------------------------------------------------------

    async def _received(self, data: bytes) -> None:
        try:
            message = relay.decode_to_front(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.error("front: a message that is not the lobby's: %s", error)
            return
        payloads = message.payloads
        for local, at in message.to:
            session = self.sessions.get(local)
            if session is not None and not session.closed and not session.offer(payloads[at]):
                self._too_slow(session)
        for local, goodbye in message.ends:
            session = self.sessions.pop(local, None)
            if session is not None:
                event = protocol.decode_event(goodbye)
                if isinstance(event, protocol.Goodbye):
                    session.end(event.reason, event.args)
                else:
                    session.end(N_("the lobby ended this session"))
        for local in message.again:
            session = self.sessions.get(local)
            if session is not None and not session.closed:
                self._queue(msgspec.structs.replace(session.attach, again=True))

    def _too_slow(self, session: _FrontSession) -> None:
        log_event(log, "session_dropped", name=session.name, reason="too_slow")
        session.end(N_("too slow"))
        if self.sessions.pop(session.id, None) is not None:
            self._queue(relay.Detach(local=session.id))

    def _deliver_here(self, local: int, event: protocol.Event) -> None:
        session = self.sessions.get(local)
        if session is not None and not session.closed and not session.offer(protocol.encode(event)):
            self._too_slow(session)

    async def _lobby_alive(self, data: bytes) -> None:
        try:
            alive = relay.decode_lobby_alive(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        self._lobby_seen.set()
        last_heard, self._last_alive = self._last_alive, asyncio.get_running_loop().time()
        if alive.bans != self._bans_version and self._bans_asked is None:
            self._bans_asked = asyncio.get_running_loop().create_task(self._ask_bans(alive.bans))
        if alive.incarnation != self.lobby_incarnation:
            restarted = self.lobby_incarnation is not None
            self.lobby_incarnation = alive.incarnation
            if restarted:
                # this lobby knows none of the sessions: each is attached again first, then
                # what was held for the lobby follows (sessions whose first `Attach` is held
                # are attached by it)
                log_event(log, "lobby_restarted", sessions=len(self.sessions))
                held = {item.local for item in self._items if isinstance(item, relay.Attach)}
                again: list[relay.FrontItem] = [
                    msgspec.structs.replace(session.attach, again=True)
                    for local, session in self.sessions.items()
                    if local not in held
                ]
                self._items[:0] = again
                for session in self.sessions.values():
                    if session.sent_at >= last_heard:
                        self._deliver_here(session.id, protocol.Notice(text=MAYBE_LOST))
        if not self._lobby_here:
            self._found()

    async def _ask_bans(self, version: int) -> None:
        try:
            reply = await self.bus.request(relay.bans_subject(self.prefix), b"", BANS_WAIT)
            self.bans.replace(relay.decode_ban_rows(reply).rows)
            self._bans_version = version
            self._bans_read.set()
        except (BusError, msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("front: could not read the bans: %s", error)  # asked again next beat
        finally:
            self._bans_asked = None

    # ---- the session limits and guest numbers, over every front ---------------------------

    async def admit(self, address: str | None, fingerprint: str | None) -> SessionRefusal | None:
        """Whether the lobby, counting the sessions of every front, admits one more from IP
        `address` with key `fingerprint` (`SessionCounts.shared`): None, or the refusal. When
        the lobby does not answer within `relay.ADMIT_WAIT` seconds, this front's own count
        decides (None: it passed that already), logged."""
        asked = relay.Admit(front=self.front, address=address, fingerprint=fingerprint)
        try:
            reply = await self.bus.request(
                relay.admit_subject(self.prefix), relay.encode(asked), relay.ADMIT_WAIT
            )
            answer = relay.decode_admitted(reply)
        except (BusError, msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("front: the lobby did not count a session: %s", error)
            return None
        if not answer.reason:
            return None
        return SessionRefusal(answer.reason, answer.message, {"limit": answer.limit})

    async def guest_number(self) -> int:
        """The next guest number, the lobby's (`GuestNumbers`): once over every front. When
        the lobby does not answer, this front's own (the lobby then tells a second
        `guest-N` apart, as it does any name taken twice)."""
        try:
            reply = await self.bus.request(relay.guest_subject(self.prefix), b"", relay.ADMIT_WAIT)
            return relay.decode_guest_number(reply).number
        except (BusError, msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("front: no guest number from the lobby: %s", error)
            return next(self._guests)

    async def bans_known(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds until the lobby's bans have been read once."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._bans_read.wait()
        return self._bans_read.is_set()

    # ---- liveness ------------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if self._lobby_here:
                self._queue(self._alive())
                if loop.time() - self._last_alive > LOBBY_SILENT * self.heartbeat:
                    log_event(log, "lobby_silent", level=logging.WARNING)
                    self._lost()
            await asyncio.sleep(self.heartbeat)

    async def _ping_loop(self) -> None:
        """Time a round trip to the lobby once a heartbeat, for `round_trip` (seconds)."""
        assert self.round_trip is not None
        loop = asyncio.get_running_loop()
        subject = relay.ping_subject(self.prefix)
        while True:
            if self._lobby_here:
                started = loop.time()
                with contextlib.suppress(BusError):  # BusTimeout too: no answer, no time
                    await self.bus.request(subject, b"", LOBBY_SILENT * self.heartbeat)
                    self.round_trip(loop.time() - started)
            await asyncio.sleep(self.heartbeat)

    def _bus_state(self, state: str) -> None:
        if state == "disconnected":
            self._lost()
            return
        # events may have been lost while down: every session gets its state again, once
        # the lobby is heard (the messages are held until then)
        for local in self.sessions:
            self._queue(relay.Refresh(local=local))
        self._queue(self._alive())

    def _alive(self) -> relay.Alive:
        return relay.Alive(sessions=tuple(self.sessions), lobby=self.lobby_incarnation)

    def _lost(self) -> None:
        """The lobby cannot be reached (the bus is down, or the lobby silent): hold what is
        sent to it, and tell the players if it lasts."""
        self._lobby_here = False
        if self._down is None and not self._told_down:
            self._down = asyncio.get_running_loop().call_later(RECONNECTING_AFTER, self._tell_down)

    def _found(self) -> None:
        """The lobby is heard: send what was held, and tell the players if they were told."""
        self._lobby_here = True
        if self._down is not None:
            self._down.cancel()
            self._down = None
        if self._told_down:
            self._told_down = False
            self._tell_all(RECONNECTED)
        if self._items and not self._flush_soon:
            self._flush_soon = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _tell_down(self) -> None:
        self._down = None
        self._told_down = True
        self._tell_all(RECONNECTING)

    def _tell_all(self, text: str) -> None:
        for local in list(self.sessions):
            self._deliver_here(local, protocol.Notice(text=text))


Connect = Callable[..., LobbySession]
"""What the SSH layer calls to attach a session: `RemoteLobby.connect`'s shape."""
