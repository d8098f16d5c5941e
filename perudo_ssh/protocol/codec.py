"""Messages to and from bytes: one module-level msgpack encoder, one decoder per direction
(STYLE.md 3), and the cache that decodes a broadcast once per process (issue 10). Apart from
the message types so that their modules hold only what travels, not how.
"""

from __future__ import annotations

from collections import OrderedDict

import msgspec

from perudo_ssh.protocol.commands import Command
from perudo_ssh.protocol.events import Event
from perudo_ssh.protocol.views import LobbyState, TableSummary

_encoder = msgspec.msgpack.Encoder()
_event_decoder = msgspec.msgpack.Decoder(Event)
_command_decoder = msgspec.msgpack.Decoder(Command)


def encode(message: Command | Event) -> bytes:
    """msgpack bytes of a command or an event."""
    return _encoder.encode(message)


DECODED_EVENTS = 32
"""How many of the latest distinct event encodings `decode_event` keeps decoded."""
_decoded: OrderedDict[bytes, Event] = OrderedDict()


_summaries: OrderedDict[TableSummary, TableSummary] = OrderedDict()
SUMMARIES_KEPT = 2048
"""How many distinct table lines `_same_summaries` keeps (more than a lobby list holds)."""


def _same_summaries(tables: tuple[TableSummary, ...]) -> tuple[TableSummary, ...]:
    """`tables` with each line that a lobby list decoded before also held replaced by that
    line's object: a lobby screen tells the lines it shows already by identity (one table in
    a hundred changes in most lists; comparing each line field by field in every lobby screen
    was ~1 % of a loaded server, issue 10)."""
    same = []
    for table in tables:
        kept = _summaries.get(table)
        if kept is None:
            kept = _summaries[table] = table
            if len(_summaries) > SUMMARIES_KEPT:
                _summaries.popitem(last=False)
        else:
            _summaries.move_to_end(table)
        same.append(kept)
    return tuple(same)


def decode_event(data: bytes) -> Event:
    """The event in `data`; raises msgspec.DecodeError/ValidationError if it is not one.

    The lobby encodes a broadcast once and puts the same bytes in every recipient's outbox
    (the lobby list to everyone in the lobby, a notice or chat line to a whole table), so the
    last `DECODED_EVENTS` distinct encodings are kept decoded and each is decoded once per
    process, not once per session (issue 10: decoding the lobby list was 4.5 % of the
    server's CPU at 300 sessions). Events are frozen structs and their receivers only read
    them (their `args` / `options` dicts too): one decoded event is shared."""
    event = _decoded.get(data)
    if event is None:
        event = _event_decoder.decode(data)
        if isinstance(event, LobbyState):
            event = msgspec.structs.replace(event, tables=_same_summaries(event.tables))
        _decoded[data] = event
        if len(_decoded) > DECODED_EVENTS:
            _decoded.popitem(last=False)
    else:
        _decoded.move_to_end(data)
    return event


def decode_command(data: bytes) -> Command:
    """The command in `data`; raises msgspec.DecodeError/ValidationError if it is not one."""
    return _command_decoder.decode(data)
