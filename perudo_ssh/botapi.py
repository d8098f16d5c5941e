"""The bot API (issue 14): a program plays as its bot account over `ssh HOST play`.

The program and the server exchange newline-delimited JSON (one object a line, UTF-8). The
server's lines are the events a screen gets (`perudo_ssh.protocol.Event`, built per recipient
by the lobby: never a die the program may not see), first a `Hello`; the program's lines are
commands (`ProgramCommand`: the lobby's own commands a player uses, not the admin ones). Both
are tagged by their `"type"`:

    <- {"type":"Hello","protocol":"perudo-bot/1","name":"mybot"}
    <- {"type":"Welcome","name":"mybot","admin":false}
    -> {"type":"CreateTable","seats":3,"bots":2}
    <- {"type":"TableState","id":4, ... "game":{..."turn":0,"me":0,...}}
    -> {"type":"MakeBid","count":2,"face":5}

A line that is not a command (not JSON, an unknown type, a missing or wrong field), longer
than `MAX_LINE` bytes gets an `Error` line naming the problem and changes nothing. Lines past
the rate (`COMMANDS_PER_SECOND`) wait their turn; nothing is dropped. docs/BOT-API.md is the
documentation; docs/bot-api.schema.json the JSON Schema of both directions, made by
`schema()` (`python -m perudo_ssh.botapi`).

`ProgramLink` is the transport-free part (no asyncssh, no textual): lines in, commands to
the lobby session; events in, lines out; whether the table waits for the program too long.
`perudo_ssh.ssh.play` runs it on an SSH channel.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from perudo_ssh import protocol
from perudo_ssh.session import LobbySession

PROTOCOL = "perudo-bot/1"
"""The protocol's name and version, in the first line the server sends (`Hello`)."""

MAX_LINE = 8192
"""Longest line a program may send, in bytes (newline excluded)."""
COMMANDS_PER_SECOND = 5.0
"""Lines of a program handled a second, sustained (a bot account is rate-limited, as a
person's keys are): lines past it wait their turn."""
COMMANDS_BURST = 20
"""Lines handled at once above the sustained rate."""
BYTES_PER_SECOND = 16384
"""Bytes a program may send a second, sustained (its lines are short: this is a flood)."""
BYTES_BURST = 262144
"""Bytes a program may send at once above `BYTES_PER_SECOND`."""
FLOOD_SECONDS = 30.0
"""A program that keeps lines waiting for the rate this long without a break is ended
(`Error` "too_much_input")."""
ANSWER_SECONDS = 30.0
"""How long the table may wait for a program to move (its turn, a reveal it has not
confirmed with `Ready`) without hearing a line from it: then it is treated like a player who
lost their connection (`Error` "no_answer", the session ends and its seat follows the grace
rule; the turn timer, if shorter, moves for it first)."""

ProgramCommand = (
    protocol.CreateTable
    | protocol.JoinTable
    | protocol.QuickPlay
    | protocol.JoinPrivate
    | protocol.Challenge
    | protocol.DeclineChallenge
    | protocol.SpectateTable
    | protocol.LeaveTable
    | protocol.StartGame
    | protocol.AddBot
    | protocol.PlayAgain
    | protocol.Ready
    | protocol.MakeBid
    | protocol.MakeCall
    | protocol.DeclareCalzone
    | protocol.ShowAndReroll
    | protocol.Say
)
"""The commands a program may send: a player's, not an admin's."""


class Hello(protocol.Message, frozen=True, tag=True):
    """The server's first line: the `protocol` spoken (`PROTOCOL`) and the name asked for
    (the lobby's `Welcome` that follows gives the unique one)."""

    protocol: str
    name: str


ErrorCode = Literal["malformed", "line_too_long", "no_answer", "too_much_input"]


class Error(protocol.Message, frozen=True, tag=True, omit_defaults=True):
    """Something the program sent was not taken, and changed nothing; or (`no_answer`,
    `too_much_input`) the session ends. `code`: "malformed" (not JSON, not a command: the
    `message` says where), "line_too_long" (over `MAX_LINE` bytes), "no_answer"
    (`ANSWER_SECONDS`), "too_much_input" (`FLOOD_SECONDS`). `line` is the 1-based number of
    the program's line it is about (left out: not one line)."""

    code: ErrorCode
    message: str
    line: int | None = None


ProgramEvent = (
    protocol.Welcome
    | protocol.LobbyState
    | protocol.TableState
    | protocol.Refused
    | protocol.Notice
    | protocol.ChatLine
    | protocol.ChatHistory
    | protocol.LeftTable
    | protocol.Goodbye
    | protocol.Announcement
    | protocol.Challenged
    | protocol.ServerNotes
)
"""The lobby's events a program gets: every one but the admins' (`AdminState` answers an
admin command, which programs may not send)."""

ServerLine = Hello | Error | ProgramEvent
"""What the server writes: one of these a line."""

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ProgramCommand)


def encode_line(message: ServerLine | protocol.Event) -> bytes:
    """One server line: the JSON of `message` and a newline."""
    return _encoder.encode(message) + b"\n"


def decode_command(line: bytes) -> ProgramCommand:
    """The command in one program line (without its newline). Raises
    `msgspec.DecodeError` (not JSON) or `msgspec.ValidationError` (not a command)."""
    return _decoder.decode(line)


class _Bucket:
    """`rate` tokens a second, at most `burst` held; times in seconds on one clock."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate, self.burst, self.tokens, self.at = rate, burst, burst, now

    def take(self, now: float, tokens: int = 1) -> bool:
        """Take `tokens` if there are as many."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= tokens:
            self.tokens -= tokens
            return True
        return False

    def wait(self) -> float:
        """Seconds until the next token (as of the last `take`)."""
        return max(0.0, 1.0 - self.tokens) / self.rate


class ProgramLink:
    """One program's lines and its lobby session (`session`), without the transport.

    `received(data, now)` takes bytes as they come (lines may be split anywhere). Each whole
    line is a command sent to the lobby, or an `Error` written back with `write` (bytes of one
    line), in order and within the rate: past `COMMANDS_PER_SECOND` the lines are held, never
    dropped, and `pump(now)` hands them on as the rate allows (it says when to call it again).
    A program is `flooding` — an `Error` "too_much_input" is written and nothing more is read
    — once it holds lines back for `FLOOD_SECONDS` without a break, holds more than
    `MAX_HELD` lines, or sends more than `BYTES_PER_SECOND` (above `BYTES_BURST`): memory and
    time stay bounded whatever it sends, without flow control (asyncssh's window opens again
    whole at each resume of a paused channel, so pausing does not bound its buffer).

    `event(event, now)` gives the line of an event for the program and notes whether the table
    now waits for it; `overdue(now)` says when it has waited `ANSWER_SECONDS` with no line from
    the program. Times are seconds on one monotonic clock, given by the caller."""

    MAX_HELD = 64
    """Lines held for the rate at most (`MAX_LINE` bytes each)."""

    def __init__(
        self,
        session: LobbySession,
        write: Callable[[bytes], None],
        now: float,
        *,
        rate: float = COMMANDS_PER_SECOND,
        burst: int = COMMANDS_BURST,
        answer_seconds: float = ANSWER_SECONDS,
        flood_seconds: float = FLOOD_SECONDS,
    ) -> None:
        self.session = session
        self._write = write
        self._bucket = _Bucket(rate, burst, now)
        self._answer_seconds = answer_seconds
        self._flood_seconds = flood_seconds
        self._partial = bytearray()
        self._skipping = False  # inside a line longer than MAX_LINE: dropped to its end
        self._lines = 0
        self._held: deque[tuple[int, bytes]] = deque()  # (line number, line) for the rate
        self._held_since: float | None = None  # lines held for the rate since, no break
        self._heard = now  # when the program last sent a line
        self._bytes = _Bucket(BYTES_PER_SECOND, BYTES_BURST, now)
        self._waits_since: float | None = None  # the table waits for the program since
        self.flooding = False

    @property
    def held(self) -> int:
        """Lines waiting for the rate."""
        return len(self._held)

    def received(self, data: bytes, now: float) -> float | None:
        """Take `data` from the program; what `pump(now)` returns."""
        if self.flooding:
            return None
        if not self._bytes.take(now, len(data)):
            self._flood(f"more than {BYTES_PER_SECOND} bytes a second")
            return None
        start = 0
        while not self.flooding:
            end = data.find(b"\n", start)
            if end < 0:
                self._keep(data[start:])
                break
            self._line_ended(data[start:end], now)
            start = end + 1
        return self.pump(now)

    def _keep(self, rest: bytes) -> None:
        if self._skipping:
            return
        self._partial += rest
        if len(self._partial) > MAX_LINE:
            self._partial.clear()
            self._skipping = True

    def _line_ended(self, tail: bytes, now: float) -> None:
        self._lines += 1
        if self._skipping or len(self._partial) + len(tail) > MAX_LINE:
            self._skipping = False
            self._partial.clear()
            self._heard = now
            self._error("line_too_long", f"a line is at most {MAX_LINE} bytes")
            return
        line = bytes(self._partial) + tail
        self._partial.clear()
        if line.strip():  # an empty line: nothing, not even a reply
            self._heard = now
            if len(self._held) >= self.MAX_HELD:
                self.pump(now)  # what the rate allows goes first
            if len(self._held) >= self.MAX_HELD:
                self._flood(f"more than {self.MAX_HELD} lines waiting for the rate")
                return
            self._held.append((self._lines, line))

    def pump(self, now: float) -> float | None:
        """Hand the held lines on as the rate allows: seconds until more may go, None when
        none is held (or the program is `flooding`)."""
        while self._held and not self.flooding:
            if not self._bucket.take(now):
                if self._held_since is None:
                    self._held_since = now
                elif now - self._held_since > self._flood_seconds:
                    self._flood(
                        f"more than {COMMANDS_PER_SECOND:g} lines a second for "
                        f"{self._flood_seconds:g} seconds"
                    )
                    return None
                return self._bucket.wait()
            number, line = self._held.popleft()
            self._handle(number, line)
        self._held_since = None
        return None

    def _flood(self, why: str) -> None:
        """End it: `why` the program is flooding, in an `Error` line."""
        self.flooding = True
        self._held.clear()
        self._partial.clear()
        message = f"{why}: the session ends"
        self._write(encode_line(Error(code="too_much_input", message=message)))

    def _handle(self, number: int, line: bytes) -> None:
        try:
            command = decode_command(line.removesuffix(b"\r"))
            protocol.encode(command)  # numbers past 64 bits cannot cross to the lobby
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            self._error("malformed", str(error), number)
            return
        except OverflowError:
            self._error("malformed", "a number is out of range", number)
            return
        self.session.send(command)

    def _error(self, code: ErrorCode, message: str, line: int | None = None) -> None:
        number = self._lines if line is None else line
        self._write(encode_line(Error(code=code, message=message, line=number)))

    def event(self, event: protocol.Event, now: float) -> bytes:
        """The line of `event` for the program; notes whether the table now waits for it
        (its turn to bid or call, or a reveal it has not confirmed)."""
        match event:
            case protocol.TableState():
                waits = waits_for(event)
                if not waits:
                    self._waits_since = None
                elif self._waits_since is None:
                    self._waits_since = now
            case protocol.LeftTable():
                self._waits_since = None
        return encode_line(event)

    def overdue(self, now: float) -> bool:
        """Whether the table has waited for the program `ANSWER_SECONDS` and it sent no line
        in that time."""
        since = self._waits_since
        if since is None:
            return False
        return now - max(since, self._heard) >= self._answer_seconds


def waits_for(table: protocol.TableState) -> bool:
    """Whether `table` waits for its recipient, seated at it: their turn to bid or call
    (RULES.md §3), or a reveal they have not confirmed (`TableState.waiting_for` lists seat
    names: a second session `robo-2` that took `robo`'s seat over plays as `robo`)."""
    if table.paused or table.me is None or table.game is None:
        return False
    if table.seats[table.me].name in table.waiting_for:
        return True
    game = table.game
    return table.status == "playing" and game.phase == "bidding" and game.turn == table.me


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the bot API: `$defs` every message, and two
    entry points, `ProgramLine` (what a program sends) and `ServerLine` (what it gets)."""
    (program, server), components = msgspec.json.schema_components(
        [ProgramCommand, ServerLine], ref_template="#/$defs/{name}"
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"perudo-ssh bot API ({PROTOCOL})",
        "description": "Newline-delimited JSON over `ssh HOST play`: see docs/BOT-API.md.",
        "$defs": {**components, "ProgramLine": program, "ServerLine": server},
        "oneOf": [{"$ref": "#/$defs/ProgramLine"}, {"$ref": "#/$defs/ServerLine"}],
    }


def schema_text() -> str:
    """`schema()` as the text of docs/bot-api.schema.json (sorted keys, 2-space indent)."""
    return json.dumps(schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m perudo_ssh.botapi > docs/bot-api.schema.json
    sys.stdout.write(schema_text())
