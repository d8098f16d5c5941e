"""What the lobby process and the front processes say to each other on the bus (issue 12).

The sessions' own commands and events (`perudo_ssh.protocol`) cross unchanged, as the bytes
the lobby encoded for each recipient: a front only ever receives the events of its own
sessions, so no die reaches a session that may not see it (DEVELOPERS.md rule 3). Around
them, a few envelopes (msgpack, `msgspec`):

- on `<prefix>.lobby`, each front's `FromFront`: `Attach` (a session starts, or starts again
  after the lobby restarted or lost the front), `Command` (a session's command, encoded),
  `Detach` (a session ended), `Refresh` (send a session its whole state again: events may
  have been lost while the bus was down) and `Alive` (every `HEARTBEAT` seconds: the front
  and the sessions it holds);
- on `<prefix>.front.<front id>`, the lobby's `ToFront`: the batch's events for that front's
  sessions (each distinct encoding once, with who gets it), the sessions it ended (their
  `Goodbye`), and the sessions it asks the front to attach again;
- on `<prefix>.lobby.alive`, `LobbyAlive` every `HEARTBEAT` seconds: a new `incarnation`
  tells the fronts the lobby restarted (they attach their sessions again), a new `bans`
  that the bans changed (they ask for them on `<prefix>.lobby.bans`: the SSH layer refuses
  banned keys and addresses at login, on whichever front);
- on `<prefix>.lobby.admit`, a front asks whether a session it is about to start stays within
  the session limits counted over all fronts (`Admit`, answered by `Admitted`): the lobby
  counts the sessions attached, and those admitted but not attached yet for `ADMIT_HOLD`
  seconds;
- on `<prefix>.lobby.guest`, a front asks for the next guest number (`GuestNumber`), so that
  guests are `guest-N` once over all fronts.

Messages of one publisher arrive in order (`perudo_ssh.bus.base`), so a session's `Attach`
comes before its commands. Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import msgspec

from perudo_ssh import protocol
from perudo_ssh.records import Account

HEARTBEAT = 1.0
"""Seconds between two `Alive` of a front, and between two `LobbyAlive`."""
FRONT_TIMEOUT = 5.0
"""Seconds without an `Alive` after which the lobby takes a front for dead: its sessions are
disconnected (their seats held by the grace rule, issue 5) until it is heard again."""


class Attach(msgspec.Struct, frozen=True, tag=True):
    """Session `local` (the front's own number for it) starts: as asked of `Lobby.connect`.
    `again`: it was attached before (the lobby restarted, or took the front for dead)."""

    local: int
    name: str
    fingerprint: str | None = None
    address: str | None = None
    account: Account | None = None
    admin: bool = False
    bot_account: bool = False
    again: bool = False


class Command(msgspec.Struct, frozen=True, tag=True):
    """Session `local` sent a command: `data`, as `protocol.encode` made it."""

    local: int
    data: bytes


class Detach(msgspec.Struct, frozen=True, tag=True):
    """Session `local` ended (its connection closed, or it was too slow to read)."""

    local: int


class Refresh(msgspec.Struct, frozen=True, tag=True):
    """Send session `local` its whole state again (`Lobby.refresh`)."""

    local: int


class Alive(msgspec.Struct, frozen=True, tag=True):
    """The front is alive and holds `sessions` (their local numbers), attached to the lobby
    of incarnation `lobby` (None: none heard yet). A lobby asks for the sessions it lacks
    only when that is itself: a front that has not heard of a restarted lobby attaches its
    sessions by itself once it does."""

    sessions: tuple[int, ...] = ()
    lobby: str | None = None


FrontItem = Attach | Command | Detach | Refresh | Alive


class FromFront(msgspec.Struct, frozen=True):
    """One message from front `front` to the lobby: its `items`, in order."""

    front: str
    items: tuple[FrontItem, ...]


class ToFront(msgspec.Struct, frozen=True):
    """One message from the lobby to a front: `payloads` (encoded events, each once) and
    `to` (local session, index in `payloads`) in the order sent; `ends` (local session,
    its encoded `Goodbye`), after them; `again`: sessions to attach again."""

    payloads: tuple[bytes, ...] = ()
    to: tuple[tuple[int, int], ...] = ()
    ends: tuple[tuple[int, bytes], ...] = ()
    again: tuple[int, ...] = ()


ADMIT_HOLD = 30.0
"""Seconds a session admitted by the lobby (`Admit`) is counted before its `Attach` comes (a
client that leaves while its app starts never attaches)."""
ADMIT_WAIT = 5.0
"""Seconds a front waits for the lobby's `Admitted`; past it, its own count decides."""


class Admit(msgspec.Struct, frozen=True):
    """May front `front` start a session from IP `address` with key `fingerprint` (None: a
    guest)? Answered by `Admitted`."""

    front: str
    address: str | None = None
    fingerprint: str | None = None


class Admitted(msgspec.Struct, frozen=True):
    """The lobby's answer to `Admit`: `reason` empty when admitted, else the limit passed
    (`perudo_ssh.admission.SessionRefusal`'s reason, message and limit)."""

    reason: str = ""
    message: str = ""
    limit: int = 0


class GuestNumber(msgspec.Struct, frozen=True):
    """The next guest number (an answer on `guest_subject`)."""

    number: int


class LobbyAlive(msgspec.Struct, frozen=True):
    """The lobby is alive; `incarnation` changes each time it starts, `bans` each time the
    bans in force change (then the fronts ask for them: `bans_subject`)."""

    incarnation: str
    bans: int = 0


class BanRows(msgspec.Struct, frozen=True):
    """The lobby's bans in force (`Moderation.bans`), the answer on `bans_subject`."""

    rows: tuple[protocol.BanRow, ...] = ()


def lobby_subject(prefix: str) -> str:
    """Where the fronts send to the lobby."""
    return f"{prefix}.lobby"


def alive_subject(prefix: str) -> str:
    """Where the lobby says it is alive."""
    return f"{prefix}.lobby.alive"


def bans_subject(prefix: str) -> str:
    """Where the fronts ask for the bans in force (`BanRows`)."""
    return f"{prefix}.lobby.bans"


def admit_subject(prefix: str) -> str:
    """Where the fronts ask for a session's admission (`Admit`, `Admitted`)."""
    return f"{prefix}.lobby.admit"


def guest_subject(prefix: str) -> str:
    """Where the fronts ask for the next guest number (`GuestNumber`)."""
    return f"{prefix}.lobby.guest"


def ping_subject(prefix: str) -> str:
    """Where a front times a round trip to the lobby (an empty request, an empty answer:
    the operator's `perudo_bus_round_trip_seconds`)."""
    return f"{prefix}.lobby.ping"


def front_subject(prefix: str, front: str) -> str:
    """Where the lobby sends to front `front`."""
    return f"{prefix}.front.{front}"


_encoder = msgspec.msgpack.Encoder()
_from_front = msgspec.msgpack.Decoder(FromFront)
_to_front = msgspec.msgpack.Decoder(ToFront)
_lobby_alive = msgspec.msgpack.Decoder(LobbyAlive)
_ban_rows = msgspec.msgpack.Decoder(BanRows)
_admit = msgspec.msgpack.Decoder(Admit)
_admitted = msgspec.msgpack.Decoder(Admitted)
_guest_number = msgspec.msgpack.Decoder(GuestNumber)


def encode(
    message: FromFront | ToFront | LobbyAlive | BanRows | Admit | Admitted | GuestNumber,
) -> bytes:
    """msgpack bytes of a relay message."""
    return _encoder.encode(message)


def decode_from_front(data: bytes) -> FromFront:
    """A front's message; raises `msgspec.DecodeError`/`ValidationError` if it is not one."""
    return _from_front.decode(data)


def decode_to_front(data: bytes) -> ToFront:
    """The lobby's message to a front; raises as `decode_from_front`."""
    return _to_front.decode(data)


def decode_lobby_alive(data: bytes) -> LobbyAlive:
    """The lobby's heartbeat; raises as `decode_from_front`."""
    return _lobby_alive.decode(data)


def decode_ban_rows(data: bytes) -> BanRows:
    """The lobby's bans; raises as `decode_from_front`."""
    return _ban_rows.decode(data)


def decode_admit(data: bytes) -> Admit:
    """A front's `Admit`; raises as `decode_from_front`."""
    return _admit.decode(data)


def decode_admitted(data: bytes) -> Admitted:
    """The lobby's `Admitted`; raises as `decode_from_front`."""
    return _admitted.decode(data)


def decode_guest_number(data: bytes) -> GuestNumber:
    """The lobby's `GuestNumber`; raises as `decode_from_front`."""
    return _guest_number.decode(data)
