"""The bot API's transport-free part (issue 14, item 3): program lines to commands, errors
that change nothing, the rate, a table waiting on a silent program, the schema in docs/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest

from perudo_ssh import botapi
from perudo_ssh import protocol as P
from perudo_ssh.rules import observe
from perudo_ssh.session import LobbySession
from tests.test_screens_fakes import bid, rolled, table_state

ROOT = Path(__file__).resolve().parent.parent


class Sent:
    """A lobby session that keeps what was sent to the lobby."""

    def __init__(self) -> None:
        self.commands: list[object] = []
        self.session = LobbySession(1, "robo", asyncio.Queue(), self.post)

    def post(self, message: object) -> None:
        self.commands.append(message.command)  # type: ignore[attr-defined]


def link(**kwargs) -> tuple[botapi.ProgramLink, Sent, list[dict]]:
    sent, lines = Sent(), []
    written = botapi.ProgramLink(
        sent.session, lambda data: lines.append(json.loads(data)), 0.0, **kwargs
    )
    return written, sent, lines


def test_each_whole_line_is_a_command_however_the_bytes_are_cut():
    program, sent, lines = link()
    program.received(b'{"type":"MakeBid","cou', 0.0)
    assert sent.commands == []
    program.received(b'nt":3,"face":4}\r\n{"type":"MakeCall","call":"dudo"}\n{"type":"Leave', 0.1)
    assert sent.commands == [P.MakeBid(count=3, face=4), P.MakeCall(call="dudo")]
    program.received(b'Table"}\n\n   \n', 0.2)  # blank lines: nothing, not even an error
    assert sent.commands[-1] == P.LeaveTable() and lines == []


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"garbage", "JSON is malformed"),
        (b'{"type":"MakeBid","face":4}', "missing required field `count`"),
        (b'{"type":"MakeBid","count":"3","face":4}', "Expected `int`, got `str` - at `$.count`"),
        (b'{"type":"MakeBid","count":3,"face":4,"x":1}', "unknown field `x`"),
        (b'{"type":"Kick","session":1}', "Invalid value 'Kick' - at `$.type`"),  # admin's
        (b'{"type":"MakeCall","call":"perudo"}', "Invalid enum value 'perudo'"),
        (b"[1, 2]", "Expected `object`, got `array`"),
        (b"\xff\xfe", "malformed"),
    ],
)
def test_a_line_that_is_not_a_command_gets_an_error_naming_it_and_changes_nothing(line, says):
    program, sent, lines = link()
    program.received(b'{"type":"Ready","round":0}\n' + line + b"\n", 0.0)
    assert sent.commands == [P.Ready(round=0)]
    (error,) = lines
    assert error == {"type": "Error", "code": "malformed", "message": error["message"], "line": 2}
    assert says in lines[0]["message"]


def test_a_line_too_long_is_not_read_even_when_it_comes_in_pieces():
    program, sent, lines = link()
    program.received(b'{"type":"Say","text":"' + b"x" * 5000, 0.0)
    program.received(b"y" * 5000, 0.0)  # now past MAX_LINE: dropped as it comes
    program.received(b'"}\n{"type":"StartGame"}\n', 0.0)
    assert [line["code"] for line in lines] == ["line_too_long"] and lines[0]["line"] == 1
    assert sent.commands == [P.StartGame()]  # the next line is read as usual
    program.received(b'{"type":"Say","text":"' + b"z" * botapi.MAX_LINE + b'"}\n', 1.0)
    assert lines[-1] == {
        "type": "Error",
        "code": "line_too_long",
        "message": f"a line is at most {botapi.MAX_LINE} bytes",
        "line": 3,
    }


def test_past_the_rate_lines_wait_their_turn_in_order_and_none_is_lost():
    program, sent, lines = link()
    ready = [b'{"type":"Ready","round":%d}\n' % n for n in range(30)]
    wait = program.received(b"".join(ready), 0.0)  # the burst is 20
    assert len(sent.commands) == botapi.COMMANDS_BURST and program.held == 10
    assert wait == pytest.approx(1 / botapi.COMMANDS_PER_SECOND) and lines == []
    assert program.pump(0.1) == pytest.approx(0.1)  # not yet
    assert program.pump(1.0) == pytest.approx(0.2)  # five more a second
    assert len(sent.commands) == 25 and program.held == 5
    assert program.received(b"garbage\n", 1.0) is not None  # it waits its turn too
    assert program.pump(5.0) is None and program.held == 0
    assert sent.commands == [P.Ready(round=n) for n in range(30)]
    assert [(line["code"], line["line"]) for line in lines] == [("malformed", 31)]


def test_a_program_that_keeps_lines_waiting_for_thirty_seconds_is_ended():
    program, sent, lines = link()
    ready = b'{"type":"Ready","round":0}\n'
    program.received(ready * 40, 0.0)
    for second in range(1, 40):  # 6 lines a second, past the rate: the backlog grows
        program.received(ready * 6, float(second))
        if program.flooding:
            break
    assert program.flooding and second == 31
    assert lines == [
        {
            "type": "Error",
            "code": "too_much_input",
            "message": "more than 5 lines a second for 30 seconds: the session ends",
        }
    ]
    count = len(sent.commands)
    assert count == 20 + 5 * 31
    assert program.received(ready, 100.0) is None and len(sent.commands) == count


def test_too_many_lines_held_or_too_many_bytes_end_the_program_at_once():
    program, sent, lines = link()
    program.received(b'{"type":"Ready","round":0}\n' * (20 + botapi.ProgramLink.MAX_HELD), 0.0)
    assert not program.flooding and program.held == botapi.ProgramLink.MAX_HELD
    program.received(b'{"type":"Ready","round":0}\n', 0.0)
    assert program.flooding and program.held == 0 and len(sent.commands) == 20
    assert lines[-1]["message"] == "more than 64 lines waiting for the rate: the session ends"
    program, _, lines = link()
    chunk = b"x" * 32768  # no newline: skipped as it comes, but counted
    for _ in range(botapi.BYTES_BURST // len(chunk)):
        program.received(chunk, 0.0)
    assert not program.flooding and lines == []
    program.received(chunk, 0.5)  # half a second's worth more would do; this is twice it
    assert program.flooding
    assert lines[-1]["message"] == "more than 16384 bytes a second: the session ends"


def test_a_number_past_64_bits_is_malformed_and_changes_nothing():
    program, sent, lines = link()
    program.received(b'{"type":"MakeBid","count":99999999999999999999999,"face":2}\n', 0.0)
    program.received(b'{"type":"Ready","round":-99999999999999999999}\n', 0.0)
    assert sent.commands == []
    assert [(line["code"], line["message"], line["line"]) for line in lines] == [
        ("malformed", "a number is out of range", 1),
        ("malformed", "a number is out of range", 2),
    ]


def my_turn(me: int, turn: int) -> P.TableState:
    """Seat `me`'s table with seat `turn` to bid (seat 0 opened the round)."""
    state = rolled()
    for seat in range(turn):
        state = bid(state, seat, seat + 1, 3)
    return table_state(observe(state, me), me=me)


def test_the_table_waiting_on_a_silent_program_makes_it_overdue():
    program, _, _ = link(answer_seconds=30.0)
    table = my_turn(0, 1)
    assert botapi.waits_for(table) is False
    program.event(table, 0.0)
    assert not program.overdue(100.0)  # not its turn: it may be silent for ever
    mine = my_turn(0, 0)
    assert botapi.waits_for(mine)
    program.event(mine, 100.0)
    assert not program.overdue(129.9) and program.overdue(130.0)
    program.received(b"garbage\n", 125.0)  # a line, even a bad one: it answers
    assert not program.overdue(154.9) and program.overdue(155.0)
    program.event(table, 156.0)  # the turn passed (the turn timer moved for it)
    assert not program.overdue(1000.0)


def test_a_reveal_waits_for_the_program_until_it_is_ready():
    mine = my_turn(0, 1)
    reveal = msgspec.structs.replace(mine, waiting_for=(mine.seats[0].name,))
    assert botapi.waits_for(reveal) and not botapi.waits_for(mine)
    others = msgspec.structs.replace(mine, waiting_for=(mine.seats[1].name,))
    assert not botapi.waits_for(others)
    assert not botapi.waits_for(msgspec.structs.replace(reveal, paused=True))


def test_an_event_line_is_the_event_as_json_with_its_type():
    program, _, _ = link()
    line = program.event(P.Notice(text="{name} left", args={"name": "ben"}), 0.0)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"type": "Notice", "text": "{name} left", "args": {"name": "ben"}}
    assert botapi.encode_line(botapi.Hello(protocol="perudo-bot/1", name="robo")) == (
        b'{"type":"Hello","protocol":"perudo-bot/1","name":"robo"}\n'
    )


def test_a_table_state_line_carries_no_other_seats_dice():
    table = my_turn(0, 0)
    event = json.loads(botapi.encode_line(table))
    hidden = [seat["hidden"] for seat in event["game"]["seats"]]
    assert hidden[0] is not None and all(h is None for h in hidden[1:])


def test_programs_may_send_a_players_commands_and_no_admin_command():
    names = {
        cls.__struct_config__.tag
        for cls in botapi.ProgramCommand.__args__  # type: ignore[attr-defined]
    }
    admin = {cls.__struct_config__.tag for cls in P.AdminCommand.__args__}  # type: ignore[attr-defined]
    assert names & admin == set()
    assert {"CreateTable", "JoinTable", "MakeBid", "MakeCall", "ShowAndReroll"} <= names
    for cls in botapi.ProgramCommand.__args__:  # type: ignore[attr-defined]
        assert cls in P.Command.__args__  # type: ignore[attr-defined]


def test_the_schema_in_docs_is_the_one_the_types_make():
    text = (ROOT / "docs" / "bot-api.schema.json").read_text()
    made = "python -m perudo_ssh.botapi > docs/bot-api.schema.json"
    assert text == botapi.schema_text(), f"run: {made}"
    schema = json.loads(text)
    program = schema["$defs"]["ProgramLine"]
    tags = {ref["$ref"].rsplit("/", 1)[1] for ref in program["anyOf"]}
    assert "MakeBid" in tags and "Kick" not in tags
    events = {ref["$ref"].rsplit("/", 1)[1] for ref in schema["$defs"]["ServerLine"]["anyOf"]}
    assert {"Hello", "Error", "TableState"} <= events and "AdminState" not in events
    bid = schema["$defs"]["MakeBid"]
    assert bid["required"] == ["type", "count", "face"]


def test_the_example_client_is_under_a_hundred_lines():
    example = ROOT / "examples" / "perudo_bot.py"
    assert len(example.read_text().splitlines()) < 100
