"""Hostile input for the record reader and the referee (RECORD.md, issue 5 "hostile input"):
random bytes, random JSON, and valid records mutated one place at a time (wrong types, huge
numbers, NaN, deep nesting, duplicated keys, unicode names). `decode_record` returns a record
or raises `MalformedRecord`, nothing else; the verdict on any record it returns never raises;
`perudo-ssh referee` answers 0, 1 or 2 as RECORD.md says, never with a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from perudo_ssh.cli import referee_command
from perudo_ssh.record import MalformedRecord, Record, decode_record, encode_record
from perudo_ssh.referee import encode_verdict, verdict_of
from perudo_ssh.rules import options_for
from tests.test_referee import play

ROOT = Path(__file__).parent.parent
SAMPLE = json.loads((ROOT / "tests" / "records" / "sample.json").read_text())


def _played(preset: str, players: int, seed: int, **overrides: Any) -> Any:
    return json.loads(encode_record(play(options_for(preset, **overrides), players, seed)[1]))


# Valid records to mutate: RECORD.md's sample and whole games written by `RecordBuilder`
# (club with tokens, rerolls and calzone; classic at 2 and 6 seats; calza anytime).
VALID = [
    SAMPLE,
    _played("club", 4, 1, dice_per_player=2),
    _played("classic", 2, 2, dice_per_player=2),
    _played("classic", 6, 3, dice_per_player=1),
    _played("calza-anytime", 3, 4, dice_per_player=2),
]


class Pairs(list):
    """A JSON object written as these (key, value) pairs, duplicated keys included."""


def dumps(value: Any) -> str:
    """JSON text of `value`, with `Pairs` objects and NaN/Infinity written as Python's json
    writes them (not JSON: the reader must refuse them)."""
    if isinstance(value, Pairs):
        return "{" + ",".join(f"{json.dumps(k)}:{dumps(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return dumps(Pairs(value.items()))
    if isinstance(value, list):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([0, -1, 7, 2**63, -(2**63) - 1, 10**30, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 4.0, -0.0, math.nan, math.inf]),
    st.text(max_size=20),
    st.sampled_from(["", "dudo", "calza", "classic", "club", "calzone", "perudo-record/1"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.text(max_size=10), inner, max_size=5),
    ),
    max_leaves=20,
)
DEEP = st.builds(
    lambda n, opening, closing: opening * n + "1" + closing * n,
    st.integers(1, 5000),
    st.sampled_from(["[", '{"a":', '[{"b":']),
    st.sampled_from(["]", "}", "}]", ""]),
)  # nested beyond msgspec's depth, balanced or not


def _paths(value: Any, here: tuple = ()) -> list[tuple]:
    """Every place in a JSON tree, as key/index paths (the root is `()`)."""
    found = [here]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*here, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += _paths(child, (*here, i))
    return found


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def _renamed(value: Any, old: str, new: str) -> Any:
    """`value` with the name `old` replaced by `new` everywhere: values and keys."""
    if isinstance(value, dict):
        return {(new if k == old else k): _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    return new if value == old and isinstance(value, str) else value


_WORDS = {"dudo", "calza", "jonti", "calzone", "classic", "club", "gamerules", "on-turn", "off"}
NAMES = st.one_of(
    st.text(min_size=0, max_size=30),
    st.sampled_from(["", " ", "ana", "\x1b[2J", "\u202eana", "а" * 1000, "ana\x00", "🎲"]),
)


ANY_CHANGE = ("replace", "delete", "add", "wrap", "dup", "typed", "rename")
TYPED_CHANGE = ("typed", "rename")
"""Mutations that keep each value's JSON type (a number for a number, a name for a name): the
record mostly still reads, and the referee judges it."""


@st.composite
def mutated(draw: st.DrawFn, kinds: tuple[str, ...] = ANY_CHANGE) -> str:
    """A valid record with one to three mutations of `kinds`, as JSON text."""
    record = json.loads(json.dumps(draw(st.sampled_from(VALID))))
    dup: tuple | None = None
    for _ in range(draw(st.integers(1, 3))):
        # deepest first (Hypothesis favours the first few); the root is random JSON's business
        paths = _paths(record)[:0:-1]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(kinds))
        parent = _at(record, path[:-1]) if path else None
        if kind == "rename":
            old = draw(
                st.sampled_from(
                    record["players"]
                    if isinstance(record, dict)
                    and isinstance(record.get("players"), list)
                    and record["players"]
                    else ["ana"]
                )
            )
            if isinstance(old, str):
                record = _renamed(record, old, draw(NAMES))
        elif kind == "dup":
            dup = path
        elif kind == "delete":
            del parent[path[-1]]
        elif kind == "add" and isinstance(_at(record, path), dict):
            _at(record, path)[draw(st.text(max_size=12))] = draw(JSON)
        elif kind == "add" and isinstance(_at(record, path), list):
            target = _at(record, path)
            target.insert(draw(st.integers(0, len(target))), draw(JSON))
        elif kind == "wrap":
            parent[path[-1]] = draw(
                st.sampled_from([[_at(record, path)], {"v": _at(record, path)}])
            )
        elif kind == "typed" and isinstance(_at(record, path), bool):
            parent[path[-1]] = not _at(record, path)
        elif kind == "typed" and isinstance(_at(record, path), int):
            parent[path[-1]] = draw(
                st.one_of(
                    st.integers(-2, 8),
                    st.sampled_from([10**30, -(10**30), 2**63, 10**400, 1.5, math.nan, True]),
                )
            )
        elif kind == "typed" and isinstance(_at(record, path), str):
            parent[path[-1]] = draw(st.one_of(st.sampled_from(sorted(_WORDS)), NAMES))
        elif kind == "typed" and isinstance(_at(record, path), list):
            items = _at(record, path)
            parent[path[-1]] = draw(st.permutations(items)) + draw(
                st.lists(st.sampled_from(items or [1]), max_size=3)
            )
        elif kind == "typed" and isinstance(_at(record, path), dict):
            items = list(_at(record, path).items())
            parent[path[-1]] = dict(draw(st.permutations(items)))
        elif kind != "typed":
            parent[path[-1]] = draw(JSON)
    if dup is None:
        return dumps(record)
    # a duplicated key: the object at `dup` (or its parent) says one of its keys twice
    try:
        target = _at(record, dup)
    except (KeyError, IndexError, TypeError):
        return dumps(record)
    if not isinstance(target, dict) or not target:
        return dumps(record)
    pairs = Pairs(target.items())
    key = draw(st.sampled_from(sorted(target)))
    pairs.insert(draw(st.integers(0, len(pairs))), (key, draw(JSON)))
    text = dumps(target)
    whole = dumps(record)
    return whole.replace(text, dumps(pairs), 1) if text in whole else whole


def run_referee(data: bytes) -> tuple[int, bytes, str]:
    """`perudo-ssh referee -` in this process, `data` on standard input: (exit status,
    standard output, standard error)."""
    stdin = io.TextIOWrapper(io.BytesIO(data))
    stdout, stderr = io.TextIOWrapper(io.BytesIO()), io.StringIO()
    saved = sys.stdin
    sys.stdin = stdin
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = referee_command(["-"])
    finally:
        sys.stdin = saved
    stdout.flush()
    return status, stdout.buffer.getvalue(), stderr.getvalue()  # type: ignore[attr-defined]


def judged(data: bytes | str) -> Record | None:
    """Check everything promised about `data`; returns the record it reads as, if any."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        record = decode_record(raw)
    except MalformedRecord as err:
        message = str(err)
        assert message and "\n" not in message
        status, out, err_text = run_referee(raw)
        assert (status, out) == (2, b"")
        assert err_text.startswith("perudo-ssh referee: malformed record: ")
        assert err_text.count("\n") == 1
        return None
    verdict = verdict_of(record)
    assert verdict.legal == (verdict.error is None)
    assert verdict_of(record) == verdict  # the same verdict twice
    assert decode_record(encode_record(record)) == record
    status, out, err_text = run_referee(raw)
    assert (status, err_text) == (0 if verdict.legal else 1, "")
    assert out == encode_verdict(verdict) + b"\n"
    json.loads(out)
    return record


FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.binary(max_size=300))
def test_random_bytes(data: bytes) -> None:
    judged(data)


@FAST
@given(JSON)
def test_random_json(value: Any) -> None:
    judged(dumps(value))


@FAST
@given(
    st.dictionaries(
        st.sampled_from(["format", "rules", "players", "first_opener", "rounds", "x"]), JSON
    ).map(lambda d: {**d, "format": "perudo-record/1"})
)
@pytest.mark.slow
def test_random_json_with_the_record_format(value: Any) -> None:
    judged(dumps(value))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
@pytest.mark.slow
def test_mutated_valid_records(text: str) -> None:
    record = judged(text)
    event("malformed" if record is None else f"legal={verdict_of(record).legal}")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(TYPED_CHANGE))
def test_valid_records_with_wrong_values(text: str) -> None:
    record = judged(text)
    event("malformed" if record is None else f"legal={verdict_of(record).legal}")


@settings(max_examples=30, deadline=None)
@given(DEEP)
def test_deep_nesting(text: str) -> None:
    judged(text)
    judged('{"format":"perudo-record/1","rules":' + text + "}")


def test_the_valid_records_are_legal() -> None:
    for value in VALID:
        record = judged(json.dumps(value))
        assert record is not None and verdict_of(record).legal


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000,  # msgspec raised RecursionError: a traceback and exit 1
        b'{"format":"perudo-record/1","rules":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"format":"perudo-record/1","format":"perudo-record/1","rules":{"preset":"classic"},'
        b'"players":["a\\u0000","\xf0\x9f\x8e\xb2"],"first_opener":"a\\u0000","rounds":[]}',
        json.dumps({**SAMPLE, "rules": {"preset": "classic", "stake": 10**400}}).encode(),
        b"\xff\xfe\x00\x00",
    ],
    ids=["deep-list", "deep-rules", "dup-keys-unicode", "huge-int", "bom-bytes"],
)
@pytest.mark.slow
def test_the_referee_command_never_shows_a_traceback(data: bytes) -> None:
    with tempfile.NamedTemporaryFile(suffix=".json") as file:
        file.write(data)
        file.flush()
        done = subprocess.run(
            [sys.executable, "-m", "perudo_ssh", "referee", file.name],
            capture_output=True,
            cwd=ROOT,
            timeout=20,
        )
    assert done.returncode in (0, 1, 2)
    assert b"Traceback" not in done.stderr
    if done.returncode == 2:
        assert done.stdout == b"" and done.stderr.count(b"\n") == 1
    else:
        assert done.stderr == b"" and json.loads(done.stdout)["format"] == "perudo-verdict/1"
