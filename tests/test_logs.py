"""Structured logs (issue 5, item 6): one JSON object a line with the event's fields, from the
SSH layer's connections, logins and sessions, and from `perudo-ssh serve --log-file`."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh.logs import JsonFormatter, TextFormatter, log_event, setup_logging
from perudo_ssh.ssh.server import start_server
from tests.sshterm import Terminal, until
from tests.test_limits import HelloApp

pytestmark = pytest.mark.timeout(30)

SCRIPT = Path(sys.executable).with_name("perudo-ssh")


def record(msg: object = "m", args: object = None, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("perudo_ssh.test", logging.INFO, __file__, 1, msg, args, None)  # type: ignore[arg-type]
    made.created = 1700000000.25  # 2023-11-14T22:13:20.250Z
    made.__dict__.update(extra)
    return made


def test_an_event_is_one_json_object_with_its_fields() -> None:
    logger = logging.getLogger("perudo_ssh.test.json")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        log_event(logger, "table_created", table=3, preset="classic", seats=["ana", None])
        log_event(logger, "client_dropped", level=logging.WARNING, reason="flood")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first.pop("ts").endswith("Z")
    assert first == {
        "level": "INFO",
        "logger": "perudo_ssh.test.json",
        "event": "table_created",
        "message": "table_created",
        "table": 3,
        "preset": "classic",
        "seats": ["ana", None],
    }
    assert (second["level"], second["event"], second["reason"]) == (
        "WARNING",
        "client_dropped",
        "flood",
    )


def test_a_plain_record_a_traceback_and_odd_values() -> None:
    formatter = JsonFormatter()
    plain = json.loads(formatter.format(record("hello %s", ("ana",))))
    assert plain == {
        "ts": "2023-11-14T22:13:20.250Z",
        "level": "INFO",
        "logger": "perudo_ssh.test",
        "event": "message",
        "message": "hello ana",
    }
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        failed = record("it failed", exc_info=sys.exc_info())
    assert json.loads(formatter.format(failed))["exc"].endswith("RuntimeError: boom")
    odd = record(
        "odd %d",  # a format that fails: the parts are written as they are
        ("x",),
        event="odd",
        fields={
            "obj": Path("/x"),
            "nan": float("nan"),
            "surrogate": "\udcff",
            "nested": {(1, 2): {3}},
            "message": "a field named like a key",
            "exc": "Traceback (most recent call last): ...",
        },
    )
    line = formatter.format(odd)
    assert "\n" not in line
    data = json.loads(line)
    assert data["message"] == "'odd %d' % ('x',)"
    assert data["obj"] == "PosixPath('/x')"
    assert data["nan"] == "nan"
    assert data["surrogate"] == "\\udcff"
    assert data["nested"] == {"(1, 2)": [3]}
    assert data["field_message"] == "a field named like a key"
    assert data["exc"] == "Traceback (most recent call last): ..."


def test_the_text_format_is_one_line_with_the_fields() -> None:
    line = TextFormatter().format(
        record("login_ok", event="login_ok", fields={"peer": "1.2.3.4:5", "name": "a b"})
    )
    assert line.endswith(" INFO perudo_ssh.test: login_ok peer=1.2.3.4:5 name='a b'")
    crashed = record("x", event="x", fields={"peer": "p", "exc": "Traceback\n  boom"})
    assert TextFormatter().format(crashed).endswith(": x peer=p\nTraceback\n  boom")
    assert TextFormatter().format(record("odd %d", ("x",))).endswith(": 'odd %d' % ('x',)")


@contextmanager
def restored_logging() -> Iterator[None]:
    root, asyncssh_logger = logging.getLogger(), logging.getLogger("asyncssh")
    handlers, level, asyncssh_level = root.handlers[:], root.level, asyncssh_logger.level
    try:
        yield
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
                handler.close()
        root.setLevel(level)
        asyncssh_logger.setLevel(asyncssh_level)


def test_setup_logging_writes_json_lines_to_a_file_and_replaces_itself(tmp_path: Path) -> None:
    path = tmp_path / "perudo.log"
    with restored_logging():
        first = setup_logging(path, "info")
        second = setup_logging(path, logging.INFO)
        root = logging.getLogger()
        assert first not in root.handlers and second in root.handlers
        assert logging.getLogger("asyncssh").level == logging.WARNING
        log_event(logging.getLogger("perudo_ssh.test"), "hello", n=1)
        logging.getLogger("perudo_ssh.test").debug("not at INFO")
        second.flush()
        with pytest.raises(ValueError, match="unknown log level 'LOUD'"):
            setup_logging(path, "LOUD")
    (line,) = path.read_text().splitlines()
    assert json.loads(line)["event"] == "hello" and json.loads(line)["n"] == 1


def test_each_line_of_a_lobby_or_front_process_names_its_process() -> None:
    """`perudo-ssh lobby` / `front` (the children of `serve --workers` share one log file):
    every line says which process wrote it; a field named `process` does not hide it."""
    record = logging.LogRecord("perudo_ssh.x", logging.INFO, __file__, 1, "hi", None, None)
    record.fields = {"process": "forged"}  # type: ignore[attr-defined]
    data = json.loads(JsonFormatter("front 4242").format(record))
    assert data["process"] == "front 4242" and data["field_process"] == "forged"
    assert "process" not in json.loads(JsonFormatter().format(record))  # one process: as before
    text = TextFormatter("lobby 7").format(record)
    assert " INFO [lobby 7] perudo_ssh.x: hi " in text


async def test_logins_and_sessions_are_logged_as_events(tmp_path: Path) -> None:
    key = asyncssh.generate_private_key("ssh-ed25519")
    banned = asyncssh.generate_private_key("ssh-ed25519")
    fingerprint, banned_fp = key.get_fingerprint("sha256"), banned.get_fingerprint("sha256")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("perudo_ssh")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)

    def bans(key: str | None, address: str | None, linked: object) -> str | None:
        return "banned for testing\r\n" if key == banned_fp else None

    try:
        acceptor = await start_server(HelloApp, port=0, host_key_dir=tmp_path, bans=bans)
        port = acceptor.get_port()
        ana, guest = Terminal(), Terminal()
        await ana.connect(port, "ana", key)
        await guest.connect(port, "zoe", None)
        await ana.wait_for("Hello ana")
        await guest.wait_for("Hello zoe")
        ana.send("q")
        assert await ana.ended() == 0
        await ana.close()
        await guest.close()
        with pytest.raises(asyncssh.DisconnectError):
            await Terminal().connect(port, "eve", banned)
        acceptor.close()
        await acceptor.wait_closed()

        def events() -> list[dict[str, object]]:
            return [json.loads(line) for line in stream.getvalue().splitlines()]

        await until(
            lambda: sum(e["event"] == "session_ended" for e in events()) == 2,
            "both sessions to end",
            timeout=10,
        )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    seen = events()
    names = [e["event"] for e in seen]
    (listening,) = [e for e in seen if e["event"] == "listening"]
    assert listening["port"] == port
    logins = {e["username"]: e for e in seen if e["event"] == "login_ok"}
    assert logins["ana"]["fingerprint"] == fingerprint and logins["ana"]["guest"] is False
    assert logins["zoe"]["fingerprint"] is None and logins["zoe"]["guest"] is True
    assert "eve" not in logins
    (refused,) = [e for e in seen if e["event"] == "login_refused"]
    assert (refused["fingerprint"], refused["reason"]) == (banned_fp, "banned")
    started = {e["peer"]: e for e in seen if e["event"] == "session_started"}
    ended = {e["peer"]: e for e in seen if e["event"] == "session_ended"}
    assert started.keys() == ended.keys() and len(started) == 2
    assert sorted(e["name"] for e in started.values()) == ["ana", "zoe"]
    assert {e["status"] for e in ended.values()} == {0}
    assert names.count("connection_opened") == names.count("connection_closed") == 3
    for event in seen:
        assert {"ts", "level", "logger", "event", "message"} <= event.keys()


@pytest.mark.slow
async def test_serve_writes_json_lines_to_its_log_file(tmp_path: Path) -> None:
    log = tmp_path / "perudo.log"
    server = await asyncio.create_subprocess_exec(
        SCRIPT, "serve", "--port", "0", "--host-keys", str(tmp_path / "keys"),
        "--db", str(tmp_path / "p.db"), "--config", str(tmp_path / "none.toml"),
        "--log-file", str(log),
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip

    def events() -> list[dict[str, object]]:
        text = log.read_text() if log.exists() else ""
        return [json.loads(line) for line in text.splitlines() if line.endswith("}")]

    try:
        await until(
            lambda: any(e["event"] == "listening" for e in events()), "listening", timeout=20
        )
        (listening,) = [e for e in events() if e["event"] == "listening"]
        guest = Terminal()
        await guest.connect(int(listening["port"]), "zoe", None)  # type: ignore[call-overload]
        await guest.wait_for("welcome, guest-1")
        await guest.close()
        await until(
            lambda: any(e["event"] == "session_ended" for e in events()), "the end", timeout=20
        )
        server.send_signal(signal.SIGTERM)
        async with asyncio.timeout(20):
            assert await server.wait() == 0
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    assert server.stderr is not None
    assert await server.stderr.read() == b""  # everything went to the file
    lines = log.read_text().splitlines()
    seen = [json.loads(line) for line in lines]  # every line is one JSON object
    names = [e["event"] for e in seen]
    for name in ("listening", "connection_opened", "login_ok", "session_started", "session_ended"):
        assert name in names
