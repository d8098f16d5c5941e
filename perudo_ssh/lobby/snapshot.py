"""A playing table saved after every accepted move, and rebuilt from it (issue 5, item 3):
`save_table` writes a `TableSnapshot` (JSON, hidden dice included: it goes to the server's own
database only, never to a session), `restore_table` replays it through the engine. Imports neither
textual nor asyncssh."""

from __future__ import annotations

import msgspec

from perudo_ssh import bots, protocol
from perudo_ssh.lobby.game_log import GameLog, RoundLog
from perudo_ssh.lobby.table import Seat, Table
from perudo_ssh.rules import Action, Options, Resign


def save_table(table: Table, paused: bool = False) -> bytes:
    """The table as JSON (`TableSnapshot`) from which `restore_table` rebuilds it exactly: its
    settings, seats and the game's whole log (every roll and move: the hidden dice too —
    it goes to the server's own database only, never to a session). Only a playing
    table is saved; the reveal confirmations and play-again requests are not kept."""
    assert table.log is not None
    return _SNAPSHOT_ENCODER.encode(
        TableSnapshot(
            id=table.id,
            name=table.name,
            options=table.options,
            size=table.size,
            rated=table.rated,
            turn_seconds=table.turn_seconds,
            grace_seconds=table.grace_seconds,
            paused=paused,
            code=table.code,
            seats=tuple(
                SeatSnapshot(
                    name=s.name,
                    owner=s.owner,
                    bot=s.bot,
                    human=s.away or s.sid is not None,
                    leaving=s.leaving,
                    left_round=s.left_round,
                    level=s.level,
                )
                for s in table.seats
            ),
            bots_at_start=tuple(sorted(table.bots_at_start)),
            opening=table.opening,
            first_opener=table.log.first_opener,
            rounds=tuple(
                RoundSnapshot(dice=r.dice, actions=tuple(r.actions), left=tuple(r.left))
                for r in table.log.rounds
            ),
            automatic=tuple(table.automatic),
        )
    )


def restore_table(data: bytes) -> tuple[Table, bool]:
    """The table saved as `data` by `save_table`, and whether it was paused. Its game is
    replayed through the engine (`GameLog.replay`), so the state is exactly the saved
    one. Every human seated then is disconnected now: a seat with an identity is held for
    its player (`away`; a bot already standing in for one goes on), a guest's is played
    by a bot from now on (a guest cannot come back; ranked as having left in this round)
    — at a club table by the club's leaving rule (RULES.md §6: the cup stays until the
    round ends, then the guest is out; between rounds, out at once).
    Raises `msgspec.ValidationError` or `msgspec.DecodeError` for data that is not a
    snapshot, `RuleError` for a log that does not replay."""
    snap = _SNAPSHOT_DECODER.decode(data)
    table = Table(snap.id, snap.name, snap.options, snap.size, creator=0)
    table.creator = None
    table.rated = snap.rated
    table.turn_seconds = snap.turn_seconds
    table.grace_seconds = snap.grace_seconds
    table.code = snap.code
    table.bots_at_start = frozenset(snap.bots_at_start)
    table.opening = snap.opening
    table.log = GameLog(
        options=snap.options,
        players=tuple(s.name for s in snap.seats),
        first_opener=snap.first_opener,
        opening=snap.opening,
        rounds=[
            RoundLog(dice=r.dice, actions=list(r.actions), left=list(r.left)) for r in snap.rounds
        ],
    )
    table.state = table.log.replay()
    table.status = "over" if table.state.phase == "over" else "playing"
    table.automatic = list(snap.automatic)
    for i, s in enumerate(snap.seats):
        returning = s.human and s.owner is not None
        guest_gone = s.human and s.owner is None and not s.bot
        seat = Seat(
            name=s.name,
            sid=None,
            bot=s.bot or guest_gone,
            leaving=s.leaving,
            left_round=s.left_round,
            owner=s.owner if returning else None,
            away=returning,
            level=s.level if s.level in bots.LEVELS else None,
        )
        if guest_gone and table.state.counts[i] > 0:
            seat.left_round = table.state.round_index
        table.seats.append(seat)
    if snap.options.preset == "club":
        # a bot does not play a stake: the guest leaves by the club's rule (RULES.md §6)
        for i, s in enumerate(snap.seats):
            if s.human and s.owner is None and not s.bot and table.state.counts[i] > 0:
                if table.state.phase == "bidding":
                    table.seats[i].leaving = True
                elif table.state.phase == "rolling":
                    table.act(Resign(seat=i))
    return table, snap.paused


class SeatSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """A seat in a `TableSnapshot`: `human` True for a human's seat, connected or not when
    saved (a bot may be playing it for them: `bot`)."""

    name: str
    owner: str | None
    bot: bool
    human: bool
    leaving: bool = False
    left_round: int | None = None
    level: str | None = None


class RoundSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """A round of a saved game: its roll, its moves, the seats that left during it."""

    dice: tuple[tuple[int, ...], ...]
    actions: tuple[Action, ...]
    left: tuple[int, ...] = ()


class TableSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """A playing table as saved after every accepted move (issue 5, item 3): `save_table`
    writes it, `restore_table` reads it. Format `version` 1."""

    version: int = 1
    id: int
    name: str
    options: Options
    size: int
    rated: bool
    turn_seconds: int
    grace_seconds: int
    paused: bool = False
    seats: tuple[SeatSnapshot, ...]
    bots_at_start: tuple[int, ...]
    opening: tuple[tuple[int | None, ...], ...]
    first_opener: int
    rounds: tuple[RoundSnapshot, ...]
    automatic: tuple[protocol.AutoMove, ...] = ()
    code: str | None = None
    """A private table's invite code (issue 13); None for a listed table."""


_SNAPSHOT_ENCODER = msgspec.json.Encoder()
_SNAPSHOT_DECODER = msgspec.json.Decoder(TableSnapshot)
