"""Structured logs: one JSON object a line (issue 5, item 6).

`log_event(logger, "table_created", table=3, preset="classic")` logs an INFO record whose
message is the event name and whose fields travel in `record.fields`; the JSON formatter
writes them as top-level keys. Never pass a player's hidden dice as a field.

`JsonFormatter` writes every record, ours and the libraries', as one JSON object a line:

    {"ts": "2025-01-31T18:04:05.123Z", "level": "INFO", "logger": "perudo_ssh.ssh.server",
     "event": "login_ok", "message": "login_ok", "peer": "127.0.0.1:50312", ...}

`ts` is the record's time in UTC (ISO 8601, milliseconds), `event` the record's event name
("message" for a record logged without one), `message` the formatted message, then the
record's fields (a field named like one of those keys is written as `field_<name>`), and
`exc` the traceback when the record has one. Code that must not keep an exception in a log
record (it would keep its frames alive) logs the traceback's text as an `exc` field instead.

In the processes of `perudo-ssh lobby` / `front` (and so of `serve --workers`, whose children
write to one log), each line also says which process wrote it: `"process": "front 4242"`
(role and process id), given to `setup_logging` as `process`.

Every event is also shown to the observers added with `observe_events` (the operator's
metrics count refusals and drops by them: `perudo_ssh.metrics`), whatever the log level.

`setup_logging` sends them to stderr or a file (`perudo-ssh serve --log-file`);
`TextFormatter` is the same on one readable line for a person at a terminal
(`--log-format text`).
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final

import msgspec

__all__ = ["JsonFormatter", "TextFormatter", "log_event", "observe_events", "setup_logging"]

EventObserver = Callable[[str, Mapping[str, object]], None]
"""Called with each event's name and fields (`observe_events`)."""

_observers: list[EventObserver] = []


def observe_events(observer: EventObserver) -> Callable[[], None]:
    """Have `observer(event, fields)` called for every `log_event`, before it is logged and
    whatever the level (it must be quick and must not raise). Returns what removes it."""
    _observers.append(observer)
    return lambda: _observers.remove(observer)


_RESERVED: Final = frozenset({"ts", "level", "logger", "event", "message", "process"})
_ENCODER: Final = msgspec.json.Encoder(enc_hook=repr)


def log_event(
    logger: logging.Logger, event: str, /, *, level: int = logging.INFO, **fields: object
) -> None:
    """Log `event` (a snake_case name) with its `fields` (JSON-able values: str, int, float,
    bool, None, lists of those) at `level`. The observers (`observe_events`) see it first."""
    for observer in _observers:
        observer(event, fields)
    logger.log(level, event, extra={"event": event, "fields": fields})


def _message(record: logging.LogRecord) -> str:
    """The record's formatted message; `repr`s of its parts when formatting fails."""
    try:
        return record.getMessage()
    except Exception:
        return f"{record.msg!r} % {record.args!r}"


def _fields(record: logging.LogRecord) -> Mapping[Any, Any]:
    fields = getattr(record, "fields", None)
    return fields if isinstance(fields, Mapping) else {}


def _plain(value: object, depth: int = 0) -> object:
    """`value` as what any JSON encoder takes: str keys, finite numbers, valid text; `repr`
    for anything else (and below 20 levels of nesting)."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if depth < 20 and isinstance(value, Mapping):
        return {_plain_key(k): _plain(v, depth + 1) for k, v in value.items()}
    if depth < 20 and isinstance(value, list | tuple | set | frozenset):
        return [_plain(v, depth + 1) for v in value]
    return _plain(_safe_repr(value))


def _plain_key(key: object) -> str:
    text = key if isinstance(key, str) else _safe_repr(key)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


class JsonFormatter(logging.Formatter):
    """Formats a record as one line of JSON (see the module docstring for its keys). Never
    raises: a value JSON cannot hold is written as its `repr`. `process`, if given, is
    written in every line as `"process"` (which process of several wrote it)."""

    def __init__(self, process: str | None = None) -> None:
        super().__init__()
        self.process = process

    def format(self, record: logging.LogRecord) -> str:
        created = datetime.fromtimestamp(record.created, UTC)
        data: dict[str, object] = {
            "ts": created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "event": getattr(record, "event", None) or "message",
            "message": _message(record),
        }
        if self.process is not None:
            data["process"] = self.process
        for key, value in _fields(record).items():
            name = key if isinstance(key, str) else _safe_repr(key)
            data[f"field_{name}" if name in _RESERVED else name] = value
        if record.exc_info:
            if not record.exc_text:
                record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            if "exc" in data:
                data["field_exc"] = data["exc"]
            data["exc"] = record.exc_text
        if record.stack_info:
            data["stack"] = self.formatStack(record.stack_info)
        try:
            return _ENCODER.encode(data).decode("utf-8")
        except Exception:  # an odd key or a str JSON cannot hold (a lone surrogate)
            return _ENCODER.encode(_plain(data)).decode("utf-8")


class TextFormatter(logging.Formatter):
    """Formats a record as one line for a person: time, level, logger, message, then the
    event's fields as `name=value` (a traceback, or an `exc` field, on the lines after);
    `process`, if given, in brackets after the level."""

    def __init__(self, process: str | None = None) -> None:
        where = f" [{process}]" if process else ""
        super().__init__(f"%(asctime)s %(levelname)s{where} %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802  (logging's name)
        line = super().formatMessage(record)
        fields = dict(_fields(record))
        exc = fields.pop("exc", None) if isinstance(fields.get("exc"), str) else None
        if fields:
            line += " " + " ".join(f"{key}={_text(value)}" for key, value in fields.items())
        return f"{line}\n{exc}" if exc else line

    def format(self, record: logging.LogRecord) -> str:
        try:
            record.getMessage()
        except Exception:  # logging would raise from format(); say what there was instead
            record.msg, record.args = _message(record), None
        return super().format(record)


def _text(value: object) -> str:
    """A field's value on a text line: a string with a space or a quote quoted (repr)."""
    if isinstance(value, str) and value and not any(c.isspace() or c in "'\"" for c in value):
        return value
    return _safe_repr(value)


def setup_logging(
    stream_or_path: IO[str] | Path | str | None = None,
    level: int | str = logging.INFO,
    *,
    text: bool = False,
    process: str | None = None,
) -> logging.Handler:
    """Send every log record at `level` and above (a name such as "INFO" or a number) to
    `stream_or_path`: a text stream (None: stderr), or a file path, appended to (reopened when
    it is moved away, for logrotate). One JSON object a line (`JsonFormatter`), or a line for a
    person with `text`; `process` names the process in every line (`"front 4242"`). Replaces
    the handler an earlier call installed; returns the new one.

    At INFO, asyncssh's own INFO lines (about ten a connection) are left out: its warnings
    and errors still come through. Raises `ValueError` for an unknown level name, `OSError`
    for a file that cannot be opened."""
    if isinstance(level, str):
        named = logging.getLevelName(level.upper())
        if not isinstance(named, int):
            raise ValueError(f"unknown log level {level!r}")
        level = named
    handler: logging.Handler
    if stream_or_path is None or not isinstance(stream_or_path, Path | str):
        handler = logging.StreamHandler(stream_or_path or sys.stderr)
    else:
        handler = logging.handlers.WatchedFileHandler(stream_or_path, encoding="utf-8")
    handler.setFormatter(TextFormatter(process) if text else JsonFormatter(process))
    handler.set_name("perudo-ssh")
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "perudo-ssh"]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("asyncssh").setLevel(logging.WARNING if level == logging.INFO else level)
    return handler
