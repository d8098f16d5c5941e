"""Game records, `perudo-record/1` (RECORD.md "The record"): read, write, and turn into
engine actions.

A record names players; the engine numbers seats. `decode_record` reads one (refusing only
what RECORD.md calls malformed), `RecordBuilder` writes one as a game is played, and
`engine_action` / `engine_roll` convert a recorded round back into the engine's `Action`s.
Whether a record breaks a rule is the referee's job (`perudo_ssh.referee`), not this module's.

Extension (read and written here, honoured by our referee; other readers ignore unknown
fields): a round may carry `"left": [names]`, the players who left the table during that
round (RULES.md §6 "Leaving"). Their cup stayed until the round's call; they are eliminated
right after it, before the next round's roll, in the order listed; their payments stay in
the bank. The field is omitted when nobody left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

from perudo_ssh.rules import (
    Action,
    Bid,
    Call,
    DeclareCalzone,
    Options,
    OptionsError,
    PlaceBid,
    Reroll,
    Resign,
    Roll,
    options_for,
    overrides_of,
)

FORMAT: Final = "perudo-record/1"

CallName = Literal["dudo", "calza", "jonti"]


class MalformedRecord(ValueError):
    """Input that cannot be read as a record (RECORD.md "Malformed input", exit status 2).

    `str(err)` is one line saying what is wrong and, for a wrong type, where (`$.rounds[0]…`).
    """


class _Base(msgspec.Struct, frozen=True, kw_only=True):
    """Shared settings of record values: immutable, keyword-only. Unknown fields are ignored:
    RECORD.md lists what is malformed, and an extra field is not on that list."""


class RecordedBid(_Base, frozen=True, kw_only=True):
    """`{"count": N, "face": F}`. Any integers: a count of 0 or a face of 9 breaks a rule
    (the referee says so), it does not make the record unreadable."""

    count: int
    face: int


class RecordedAction(_Base, frozen=True, kw_only=True, omit_defaults=True):
    """One action of a round (RECORD.md "rounds[i].actions"): `by` (a player's name) and
    exactly one of `bid`, `call`, `declare`, or `reveal` together with `reroll`.

    `reveal` is the faces set aside, `reroll` the new faces of the dice re-rolled. The fields
    not used are `UNSET` (absent from the JSON; `null` is a wrong type)."""

    by: str
    bid: RecordedBid | UnsetType = UNSET
    call: CallName | UnsetType = UNSET
    declare: Literal["calzone"] | UnsetType = UNSET
    reveal: tuple[int, ...] | UnsetType = UNSET
    reroll: tuple[int, ...] | UnsetType = UNSET


class RecordedRound(_Base, frozen=True, kw_only=True, omit_defaults=True):
    """One round: `dice` maps each player still in the game to the faces they rolled;
    `actions` in the order they were made; `left` (our extension, see the module docstring)
    the players who left during the round, eliminated once it ended (RULES.md §6)."""

    dice: dict[str, tuple[int, ...]]
    actions: tuple[RecordedAction, ...]
    left: tuple[str, ...] = ()


class Record(_Base, frozen=True, kw_only=True):
    """A whole game record, `perudo-record/1` (RECORD.md "The record").

    `rules` is `{"preset": name, **overrides}` by RULES.md option names (see `options_of`);
    `players` the names in seat order; `first_opener` the name that opens round 0."""

    format: Literal["perudo-record/1"] = FORMAT
    rules: dict[str, Any]
    players: tuple[str, ...]
    first_opener: str
    rounds: tuple[RecordedRound, ...]

    @property
    def options(self) -> Options:
        """The table's options (RULES.md §7). Raises `MalformedRecord` if `rules` is bad."""
        return options_of(self.rules)

    @property
    def seat_of(self) -> dict[str, int]:
        """Each player's seat index: `{name: seat}`."""
        return {name: seat for seat, name in enumerate(self.players)}


_ENCODER = msgspec.json.Encoder()


def options_of(rules: Mapping[str, Any]) -> Options:
    """The `Options` of a record's `rules` object: its `preset` plus overrides by option name.

    Raises `MalformedRecord` for a missing or unknown preset, an unknown option name or a bad
    option value (RECORD.md "Malformed input")."""
    preset = rules.get("preset")
    if not isinstance(preset, str):
        raise MalformedRecord("rules: a preset name is required")
    overrides = {k: v for k, v in rules.items() if k != "preset"}
    try:
        return options_for(preset, **overrides)
    except OptionsError as exc:
        raise MalformedRecord(f"rules: {exc}") from None


def rules_of(options: Options) -> dict[str, Any]:
    """The record's `rules` object for `options`: `{"preset": ..., **overrides_of(options)}`."""
    return {"preset": options.preset, **overrides_of(options)}


def _kind_count(action: RecordedAction) -> int:
    kinds = (action.bid, action.call, action.declare, action.reveal)
    return sum(kind is not UNSET for kind in kinds)


def _check(record: Record) -> None:
    players = record.players
    if not 2 <= len(players) <= 6:
        raise MalformedRecord(f"players: 2 to 6 players are needed, not {len(players)}")
    if any(not name for name in players):
        raise MalformedRecord("players: a name is empty")
    if len(set(players)) != len(players):
        raise MalformedRecord("players: a name appears twice")
    if record.first_opener not in players:
        raise MalformedRecord(f"first_opener: {record.first_opener!r} is not one of the players")
    record.options  # noqa: B018 - raises MalformedRecord for bad rules
    for i, round_ in enumerate(record.rounds):
        for j, action in enumerate(round_.actions):
            where = f"rounds[{i}].actions[{j}]"
            if (action.reveal is UNSET) != (action.reroll is UNSET):
                raise MalformedRecord(f"{where}: reveal and reroll go together")
            if _kind_count(action) != 1:
                raise MalformedRecord(f"{where}: needs exactly one of bid, call, declare, reveal")


def decode_record(data: bytes | str) -> Record:
    """Read a `perudo-record/1` JSON document (RECORD.md "The record").

    Raises `MalformedRecord` (one line) for everything RECORD.md calls malformed: not JSON;
    `format` not `perudo-record/1`; an unknown preset, option name or value; `players` not 2–6
    distinct non-empty strings; `first_opener` not among them; a field of the wrong JSON type
    (a string or boolean count, a `null`, a call other than dudo/calza/jonti); an action with
    none or two of bid/call/declare/reveal, or reveal without reroll or the reverse.
    A record that reads but breaks a rule is returned as is: see `perudo_ssh.referee`.
    """
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise MalformedRecord(f"not JSON: {exc}") from None
    except RecursionError:  # msgspec's answer to `[[[[…` nested beyond its depth
        raise MalformedRecord("not a record: JSON nested too deeply") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise MalformedRecord(f"not a {FORMAT} document (its format field is missing or wrong)")
    try:
        record = msgspec.convert(raw, Record, strict=True)
    except msgspec.ValidationError as exc:
        raise MalformedRecord(str(exc).replace("\n", " ")) from None
    except RecursionError:
        raise MalformedRecord("not a record: JSON nested too deeply") from None
    _check(record)
    return record


def encode_record(record: Record) -> bytes:
    """The record as compact JSON bytes (RECORD.md "The record"); `decode_record` reads it."""
    return _ENCODER.encode(record)


# ---- between the record's names and the engine's seats ----------------------------------


def engine_roll(record: Record, round_: RecordedRound) -> Roll:
    """The engine's `Roll` for a recorded round: `dice[seat]` in seat order, `()` for a player
    the round's `dice` leaves out (the engine then says `dice_mismatch` if they hold dice).
    Keys that are not players are dropped: the referee reports them first."""
    return Roll(dice=tuple(tuple(round_.dice.get(name, ())) for name in record.players))


def engine_action(record: Record, action: RecordedAction) -> Action:
    """The engine's action for a recorded one, with `by` turned into a seat.

    Raises `KeyError` if `by` is not one of the record's players (the referee checks first).
    """
    seat = record.seat_of[action.by]
    if not isinstance(action.bid, UnsetType):
        return PlaceBid(seat=seat, bid=Bid(count=action.bid.count, face=action.bid.face))
    if not isinstance(action.call, UnsetType):
        return Call(seat=seat, call=action.call)
    if not isinstance(action.declare, UnsetType):
        return DeclareCalzone(seat=seat)
    assert not isinstance(action.reveal, UnsetType) and not isinstance(action.reroll, UnsetType)
    return Reroll(seat=seat, reveal=action.reveal, new_faces=action.reroll)


def recorded_action(players: Sequence[str], action: Action) -> RecordedAction:
    """The record's form of an engine player action (not a `Roll`), seat turned into a name.

    Raises `TypeError` for a `Roll` or a `Resign` (a round's `dice` and `left`, see
    `RecordBuilder.add`)."""
    match action:
        case PlaceBid(seat=seat, bid=bid):
            bid_ = RecordedBid(count=bid.count, face=bid.face)
            return RecordedAction(by=players[seat], bid=bid_)
        case Call(seat=seat, call=call):
            return RecordedAction(by=players[seat], call=call)
        case DeclareCalzone(seat=seat):
            return RecordedAction(by=players[seat], declare="calzone")
        case Reroll(seat=seat, reveal=reveal, new_faces=new_faces):
            return RecordedAction(by=players[seat], reveal=reveal, reroll=new_faces)
    raise TypeError(f"not a player action: {action!r}")


_RoundParts = tuple[dict[str, tuple[int, ...]], list[RecordedAction], list[str]]


class RecordBuilder:
    """Writes a game's record while it is played (RECORD.md "The record").

    Start it with the table's options, the players' names in seat order and the first
    opener's seat; then `add` every engine action that `apply` accepted, in order — each
    `Roll` starts a round. `record()` is the record so far (a finished or running game).

    Raises `ValueError` for players that are not 2–6 distinct non-empty names or a first
    opener that is not a seat: a record that could not be read back.
    """

    def __init__(self, options: Options, players: Sequence[str], first_opener: int) -> None:
        players = tuple(players)
        if not 2 <= len(players) <= 6 or len(set(players)) != len(players) or "" in players:
            raise ValueError("a record needs 2 to 6 distinct non-empty player names")
        if not 0 <= first_opener < len(players):
            raise ValueError("the first opener must be a seat")
        self._rules = rules_of(options)
        self._players = players
        self._first_opener = players[first_opener]
        self._rounds: list[_RoundParts] = []  # dice, actions, left

    def add(self, action: Action) -> None:
        """Append one engine action: a `Roll` starts a round (seats with `()` — out of the
        game — are left out of its `dice`); a `Resign` goes to the current round's `left`;
        any other is appended to the current round's actions.

        Raises `ValueError` for a player action or a `Resign` before the first `Roll`."""
        if isinstance(action, Roll):
            dice = {self._players[s]: tuple(d) for s, d in enumerate(action.dice) if d}
            self._rounds.append((dice, [], []))
            return
        if not self._rounds:
            raise ValueError("the first action of a record is a roll")
        if isinstance(action, Resign):
            self._rounds[-1][2].append(self._players[action.seat])
            return
        self._rounds[-1][1].append(recorded_action(self._players, action))

    def record(self) -> Record:
        """The record of everything added so far."""
        return Record(
            rules=dict(self._rules),
            players=self._players,
            first_opener=self._first_opener,
            rounds=tuple(
                RecordedRound(dice=dict(dice), actions=tuple(actions), left=tuple(left))
                for dice, actions, left in self._rounds
            ),
        )
