"""What others see of a table: `table_state`, the table as one seat (or a spectator) may see
it, and `summary`, its line in the lobby list (RULES.md §2.2; issue 13 for the ratings shown).

Functions taking the `Table`, like lobby/snapshot.py: the table holds its seats and its game;
turning them into events for a recipient is the lobby's (lobby/broadcast.py). The game part
goes through the per-player observation (`observe`), so a seat sees only its own hidden dice.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from perudo_ssh import protocol
from perudo_ssh.lobby.table import Table
from perudo_ssh.rules import observe

NEW_RATING = 1000
"""The rating shown for an account before its first rated game (`perudo_ssh.ratings`:
`ordinal(DEFAULT)`)."""


def rating_of(owner: str | None, ratings: Mapping[int, int] | None) -> int | None:
    """The rating shown for a seat's `owner` (`Seat.owner`): its account's in `ratings` (by
    account id), `NEW_RATING` for an account not yet rated; None for a key without an
    account, a guest, or when `ratings` is None (no store: nobody is rated)."""
    if ratings is None or owner is None or not owner.startswith("account:"):
        return None
    return ratings.get(int(owner.removeprefix("account:")), NEW_RATING)


def is_program(owner: str | None, programs: Collection[int]) -> bool:
    """Whether a seat's or a session's `owner` (`Seat.owner`) is one of the bot accounts
    `programs` (account ids; issue 14)."""
    return (
        owner is not None
        and owner.startswith("account:")
        and int(owner.removeprefix("account:")) in programs
    )


def table_state(
    table: Table,
    seat: int | None,
    names: dict[int, str],
    paused: bool = False,
    clock: protocol.TurnClock | None = None,
    grace: dict[int, float] | None = None,
    ratings: Mapping[int, int] | None = None,
    fill_in: float | None = None,
    programs: Collection[int] = (),
) -> protocol.TableState:
    """The table as `seat` (None: a spectator) may see it; `names` by session id;
    `paused` while an admin holds the table; `clock` the turn timer running; `grace`
    the seconds left to the seats held for disconnected players (by seat); `ratings`
    the shown rating of each rated account by account id (an account not in it shows
    `NEW_RATING`; a bot or a guest none: issue 13); `fill_in` the seconds left until bots
    take the free seats of a quick-play table (`protocol.QuickPlay`); `programs` the
    account ids of bot accounts (their seats are marked `SeatInfo.bot_account`)."""
    grace = grace or {}
    return protocol.TableState(
        id=table.id,
        name=table.name,
        status=table.status,
        seats=tuple(
            protocol.SeatInfo(
                name=s.name,
                bot=s.bot,
                away=s.away,
                grace=None if s.bot or not s.away else round(grace.get(i, 0.0), 1),
                rating=None if s.bot else rating_of(s.owner, ratings),
                level=s.level if s.bot else None,
                bot_account=is_program(s.owner, programs),
            )
            for i, s in enumerate(table.seats)
        ),
        size=table.size,
        me=seat,
        creator=table.seat_of(table.creator) if table.creator is not None else None,
        spectators=tuple(names[sid] for sid in table.spectators if sid in names),
        game=None if table.state is None else observe(table.state, seat),
        opening=table.opening,
        play_again=tuple(table.seats[i].name for i in sorted(table.play_again)),
        waiting_for=tuple(table.seats[i].name for i in table.waiting_for()),
        options=table.options,
        paused=paused,
        clock=clock,
        automatic=tuple(table.automatic),
        turn_seconds=table.turn_seconds,
        grace_seconds=table.grace_seconds,
        rating_changes=table.rating_changes,
        fill_in=fill_in,
        code=table.code if seat is not None else None,
    )


def summary(table: Table) -> protocol.TableSummary:
    """The table's line in the lobby list."""
    return protocol.TableSummary(
        id=table.id,
        name=table.name,
        preset=table.options.preset,
        calza=table.options.calza,
        status=table.status,
        seats=table.size,
        players=tuple(seat.name for seat in table.seats if not seat.gone),
        bots=sum(1 for seat in table.seats if seat.bot),
        free=table.free,
        spectators=len(table.spectators),
        options=table.options,
        custom=table.custom,
        turn_seconds=table.turn_seconds,
        away=len(table.away()),
    )
