"""The lobby's side of the bus (issue 12): front processes' sessions attached to the actor.

A `LobbyHost` receives every front's `relay.FromFront` on `<prefix>.lobby` and gives each
session it attaches a `RelayedSession`: to the actor an ordinary session, whose events go
out to its front instead of into an outbox. The events of one batch of the actor are
gathered per front and sent as one `relay.ToFront` once the batch is out (each distinct
encoding once: the lobby list to 300 sessions is one payload and 300 numbers), in order, by
one sender task: the actor never waits for the bus, and a front that reads slowly stalls
nothing here (NATS drops a slow consumer; its front then asks for its sessions' state
again, `relay.Refresh`).

Faults (issue 12, item 4):
- a front not heard for `relay.FRONT_TIMEOUT` seconds is taken for dead: its sessions are
  disconnected, so their seats are held by the grace rule (issue 5). If it is heard again,
  its heartbeat names sessions the lobby no longer has and the host asks it to attach them
  again (`ToFront.again`): a player with an identity is seated back (`Lobby.connect`'s
  `sessions.take_back_seat`);
- a restarted lobby (a new `relay.LobbyAlive.incarnation`) is told every session again by
  the fronts, the same way;
- while the host's own bus connection is down, no front is timed out.

The admins are decided here, from the key, when the host is given an `AdminList`: a front
says who connects, the lobby says who is an admin. The session limits are counted here too,
over every front (`relay.Admit`: the sessions attached, and those admitted and not attached
yet for `relay.ADMIT_HOLD` seconds), and guests numbered (`relay.GuestNumber`). Imports
neither textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from perudo_ssh import protocol, relay
from perudo_ssh.admission import Admission, SessionCounts, SessionRefusal, address_group
from perudo_ssh.bus import Bus, BusError, Subscription
from perudo_ssh.limits import Limits
from perudo_ssh.lobby.actor import Lobby
from perudo_ssh.lobby.moderation import AdminList
from perudo_ssh.logs import log_event
from perudo_ssh.records import Account
from perudo_ssh.session import LobbySession

log = logging.getLogger(__name__)

PAYLOAD_SHARE = 0.75
"""What share of the bus's largest message one `ToFront` fills before another is begun."""

Joined = Callable[[LobbySession, Account | None], None]
"""Told of each session attached and its account (the archive's `session_joined`)."""


class RelayedSession(LobbySession):
    """A front's session as the actor holds it: `offer` and `end` hand its events to the
    host, for its front; nothing is read from it here."""

    def __init__(
        self,
        host: LobbyHost,
        front: str,
        local: int,
        sid: int,
        name: str,
        post: Callable[[object], None],
        fingerprint: str | None,
    ) -> None:
        super().__init__(sid, name, asyncio.Queue(maxsize=1), post, fingerprint)
        self.host = host
        self.front = front
        self.local = local
        self.admission: Admission | None = None
        """Its place in the host's session counts, given back when it is over."""

    def close(self) -> None:
        """Over (its front detached it, or was lost): its place in the counts is given back."""
        self._release()
        super().close()

    def _release(self) -> None:
        admission, self.admission = self.admission, None
        if admission is not None:
            admission.release()

    def offer(self, data: bytes) -> bool:
        """Queue `data` for this session's front; always taken (the front bounds its own
        sessions' outboxes)."""
        if self.closed:
            return True
        self.host._outgoing(self.front).events.append((self.local, data))
        return True

    def end(self, reason: str, args: protocol.Args | None = None) -> None:
        """The lobby ends this session: its front is told, after what was sent before."""
        if self.closed:
            return
        goodbye = protocol.encode(protocol.Goodbye(reason=reason, args=dict(args or {})))
        self.host._outgoing(self.front).ends.append((self.local, goodbye))
        self.host._forget(self)
        self._release()
        self._closed = True


@dataclass(slots=True)
class _Outgoing:
    events: list[tuple[int, bytes]] = field(default_factory=list)
    ends: list[tuple[int, bytes]] = field(default_factory=list)
    again: list[int] = field(default_factory=list)


@dataclass(slots=True)
class _Front:
    sessions: dict[int, RelayedSession] = field(default_factory=dict)
    last_heard: float = 0.0
    lost: bool = False


class LobbyHost:
    """Attaches the sessions of front processes on `bus` to `lobby` (the module docstring).

    `prefix` starts every subject (`relay`); `admins` (None: the fronts' word, for tests)
    decides which keys are admins'; `joined(session, account)` is told each session
    attached; `limits` are the session limits counted over every front (`relay.Admit`);
    `front_timeout` is `relay.FRONT_TIMEOUT` unless a test shortens it."""

    def __init__(
        self,
        lobby: Lobby,
        bus: Bus,
        *,
        prefix: str = "perudo",
        admins: AdminList | None = None,
        joined: Joined | None = None,
        limits: Limits | None = None,
        front_timeout: float = relay.FRONT_TIMEOUT,
        heartbeat: float = relay.HEARTBEAT,
        admit_hold: float = relay.ADMIT_HOLD,
    ) -> None:
        self.lobby = lobby
        self.bus = bus
        self.prefix = prefix
        self.admins = admins
        self.joined = joined
        self.front_timeout = front_timeout
        self.heartbeat = heartbeat
        self.incarnation = secrets.token_hex(8)
        self.fronts: dict[str, _Front] = {}
        self._pending: dict[str, _Outgoing] = {}
        self._flush_soon = False
        self._sending: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue()
        self._subscription: Subscription | None = None
        self._bans_served: Subscription | None = None
        self._admit_served: Subscription | None = None
        self._guest_served: Subscription | None = None
        self._ping_served: Subscription | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._connected = True
        self.counts = SessionCounts(limits) if limits is not None else None
        """Every front's sessions against the limits (None: no limits, as in tests)."""
        self.admit_hold = admit_hold
        self._admitted: dict[tuple[str, str | None, str | None], deque[tuple[Admission, float]]]
        self._admitted = {}  # (front, address group, key) -> admitted, not attached yet
        self._guests = itertools.count(1)

    async def start(self) -> None:
        """Receive the fronts and start the heartbeat; the lobby must be started."""
        self.bus.on_state(self._bus_state)
        self._subscription = await self.bus.subscribe(
            relay.lobby_subject(self.prefix), self._received
        )
        self._bans_served = await self.bus.serve(relay.bans_subject(self.prefix), self._bans)
        self._admit_served = await self.bus.serve(relay.admit_subject(self.prefix), self._admit)
        self._guest_served = await self.bus.serve(relay.guest_subject(self.prefix), self._guest)
        self._ping_served = await self.bus.serve(relay.ping_subject(self.prefix), self._ping)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._send_loop(), name="lobby host sender"),
            loop.create_task(self._heartbeat_loop(), name="lobby host heartbeat"),
        ]
        await self.bus.flush()

    async def stop(self) -> None:
        """Send what is still queued (the goodbyes of a stopping lobby), then stop."""
        if self._subscription is not None:
            await self._subscription.stop()
        served_all = (self._bans_served, self._admit_served, self._guest_served, self._ping_served)
        for served in served_all:
            if served is not None:
                await served.stop()
        self._flush()
        self._sending.put_nowait(None)
        sender, *others = self._tasks
        for task in others:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*others, return_exceptions=True)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5):
                await sender
        with contextlib.suppress(BusError):
            await self.bus.flush()

    @property
    def sessions(self) -> int:
        """How many sessions of fronts are attached."""
        return sum(len(front.sessions) for front in self.fronts.values())

    # ---- from the fronts -----------------------------------------------------------------

    async def _received(self, data: bytes) -> None:
        try:
            message = relay.decode_from_front(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.error("lobby host: a message that is not a front's: %s", error)
            return
        now = asyncio.get_running_loop().time()
        front = self.fronts.get(message.front)
        if front is None:
            front = self.fronts[message.front] = _Front(last_heard=now)
            log_event(log, "front_joined", front=message.front)
        front.last_heard = now
        if front.lost:
            front.lost = False
            log_event(log, "front_back", front=message.front)
        for item in message.items:
            try:
                self._item(message.front, front, item)
            except Exception:
                log.exception("lobby host: error handling %r from %s", item, message.front)

    def _item(self, name: str, front: _Front, item: relay.FrontItem) -> None:
        match item:
            case relay.Command(local=local, data=data):
                session = front.sessions.get(local)
                if session is None:
                    return  # ended here (its Goodbye is on its way), or not attached yet
                try:
                    command = protocol.decode_command(data)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    self._outgoing(name).events.append(
                        (
                            local,
                            protocol.encode(
                                protocol.Refused(
                                    code="bad_command",
                                    message="the server could not do that",
                                )
                            ),
                        )
                    )
                    self._soon()
                    return
                session.send(command)
            case relay.Attach():
                self._attach(name, front, item)
            case relay.Detach(local=local):
                session = front.sessions.pop(local, None)
                if session is not None:
                    session.close()
            case relay.Refresh(local=local):
                session = front.sessions.get(local)
                if session is not None:
                    self.lobby.refresh(session.id)
            case relay.Alive(sessions=held, lobby=incarnation):
                if incarnation != self.incarnation:
                    return  # it attaches them itself once it hears of this lobby
                missing = [local for local in held if local not in front.sessions]
                if missing:
                    self._outgoing(name).again.extend(missing)
                    self._soon()

    def _attach(self, name: str, front: _Front, attach: relay.Attach) -> None:
        old = front.sessions.pop(attach.local, None)
        if old is not None:  # attached twice: the first one is over
            old.close()
        admin = attach.admin if self.admins is None else self.admins.is_admin(attach.fingerprint)

        def make(
            sid: int, asked: str, post: Callable[[object], None], fingerprint: str | None
        ) -> LobbySession:
            return RelayedSession(self, name, attach.local, sid, asked, post, fingerprint)

        session = self.lobby.connect(
            attach.name,
            attach.fingerprint,
            admin=admin,
            address=attach.address,
            account_id=attach.account.id if attach.account is not None else None,
            bot_account=attach.bot_account,
            make_session=make,
        )
        assert isinstance(session, RelayedSession)
        front.sessions[attach.local] = session
        if self.counts is not None:
            session.admission = self._admission_of(name, attach.address, attach.fingerprint)
        if self.joined is not None:
            self.joined(session, attach.account)

    def _forget(self, session: RelayedSession) -> None:
        front = self.fronts.get(session.front)
        if front is not None and front.sessions.get(session.local) is session:
            del front.sessions[session.local]

    # ---- the session limits, over every front --------------------------------------------

    async def _admit(self, data: bytes) -> bytes:
        try:
            asked = relay.decode_admit(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.error("lobby host: an admission asked wrongly: %s", error)
            return relay.encode(relay.Admitted())
        if self.counts is None:
            return relay.encode(relay.Admitted())
        self._expire_admitted()
        admitted = self.counts.admit(asked.address, asked.fingerprint)
        if isinstance(admitted, SessionRefusal):
            limit = admitted.args.get("limit")
            return relay.encode(
                relay.Admitted(
                    reason=admitted.reason,
                    message=admitted.message,
                    limit=limit if isinstance(limit, int) else 0,
                )
            )
        key = (asked.front, address_group(asked.address), asked.fingerprint)
        expires = asyncio.get_running_loop().time() + self.admit_hold
        self._admitted.setdefault(key, deque()).append((admitted, expires))
        return relay.encode(relay.Admitted())

    def _admission_of(self, front: str, address: str | None, key: str | None) -> Admission:
        """The place in the counts of a session attached: the one it was admitted with, or a
        new one (attached again after a restart: admitted before, counted whatever the
        limits)."""
        assert self.counts is not None
        admitted = (front, address_group(address), key)
        waiting = self._admitted.get(admitted)
        if waiting:
            admission, _ = waiting.popleft()
            if not waiting:
                del self._admitted[admitted]
            return admission
        return self.counts.count(address, key)

    def _expire_admitted(self) -> None:
        """Give back the places of sessions admitted `admit_hold` seconds ago and never
        attached (their clients left while their apps started)."""
        now = asyncio.get_running_loop().time()
        for key in list(self._admitted):
            waiting = self._admitted[key]
            while waiting and waiting[0][1] <= now:
                waiting.popleft()[0].release()
            if not waiting:
                del self._admitted[key]

    async def _guest(self, data: bytes) -> bytes:
        return relay.encode(relay.GuestNumber(number=next(self._guests)))

    async def _ping(self, data: bytes) -> bytes:
        return b""

    # ---- to the fronts -------------------------------------------------------------------

    def _outgoing(self, front: str) -> _Outgoing:
        pending = self._pending.get(front)
        if pending is None:
            pending = self._pending[front] = _Outgoing()
            self._soon()
        return pending

    def _soon(self) -> None:
        if not self._flush_soon:
            self._flush_soon = True
            # after the actor's batch: it puts its events out without awaiting in between
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_soon = False
        pending, self._pending = self._pending, {}
        limit = int(self.bus.max_payload * PAYLOAD_SHARE)
        for front, outgoing in pending.items():
            subject = relay.front_subject(self.prefix, front)
            for message in _split(outgoing, limit):
                self._sending.put_nowait((subject, relay.encode(message)))

    async def _send_loop(self) -> None:
        while True:
            item = await self._sending.get()
            if item is None:
                return
            subject, data = item
            try:
                await self.bus.publish(subject, data)
            except BusError as error:
                # the front asks for its sessions' state once it is back (`relay.Refresh`)
                log.warning("lobby host: events for %s lost: %s", subject, error)

    # ---- liveness ------------------------------------------------------------------------

    def _bus_state(self, state: str) -> None:
        self._connected = state != "disconnected"
        if state == "reconnected":  # nobody could be heard meanwhile: time them afresh
            now = asyncio.get_running_loop().time()
            for front in self.fronts.values():
                front.last_heard = now

    async def _bans(self, data: bytes) -> bytes:
        return relay.encode(relay.BanRows(rows=self.lobby.moderation.bans()))

    def bans_version(self) -> int:
        """A number that changes when the bans in force change (`relay.LobbyAlive.bans`)."""
        return hash(self.lobby.moderation.bans()) & 0x7FFF_FFFF_FFFF_FFFF

    async def _heartbeat_loop(self) -> None:
        subject = relay.alive_subject(self.prefix)
        loop = asyncio.get_running_loop()
        while True:
            alive = relay.encode(
                relay.LobbyAlive(incarnation=self.incarnation, bans=self.bans_version())
            )
            with contextlib.suppress(BusError):
                await self.bus.publish(subject, alive)
            self._expire_admitted()
            if self._connected:
                now = loop.time()
                for name, front in self.fronts.items():
                    if not front.lost and now - front.last_heard > self.front_timeout:
                        self._front_lost(name, front)
            await asyncio.sleep(self.heartbeat)

    def _front_lost(self, name: str, front: _Front) -> None:
        front.lost = True
        log_event(
            log, "front_lost", level=logging.WARNING, front=name, sessions=len(front.sessions)
        )
        sessions, front.sessions = front.sessions, {}
        for session in sessions.values():
            session.close()  # a seat at a game is held for its player (issue 5)


def _split(outgoing: _Outgoing, limit: int) -> list[relay.ToFront]:
    """`outgoing` as `ToFront` messages of about `limit` bytes of payloads at most each (one
    event larger than that goes alone), in order; the ends and the sessions to attach again
    go with the last."""
    messages: list[relay.ToFront] = []
    payloads: list[bytes] = []
    index: dict[int, int] = {}  # id of a payload -> its place in `payloads`
    to: list[tuple[int, int]] = []
    size = 0
    for local, data in outgoing.events:
        at = index.get(id(data))
        if at is None:
            if payloads and size + len(data) > limit:
                messages.append(relay.ToFront(payloads=tuple(payloads), to=tuple(to)))
                payloads, index, to, size = [], {}, [], 0
            at = index[id(data)] = len(payloads)
            payloads.append(data)
            size += len(data)
        to.append((local, at))
    messages.append(
        relay.ToFront(
            payloads=tuple(payloads),
            to=tuple(to),
            ends=tuple(outgoing.ends),
            again=tuple(outgoing.again),
        )
    )
    return messages
