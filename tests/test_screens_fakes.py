"""Test doubles for the screens' tests: a lobby session fed by hand, and game views built
with the real rules engine (fixed dice)."""

from __future__ import annotations

import asyncio

from perudo_ssh import protocol
from perudo_ssh.rules import (
    Bid,
    Call,
    GameView,
    PlaceBid,
    Roll,
    State,
    apply,
    new_game,
    options_for,
)

NAMES = ("ana", "ben", "carl")


class FakeSession:
    """The `LobbySession` API: events are fed by the test, sent commands are recorded."""

    def __init__(self, name: str = "ana") -> None:
        self.name = name
        self.sent: list[protocol.Command] = []
        self.closed = False
        self._events: asyncio.Queue[protocol.Event] = asyncio.Queue()

    def send(self, command: protocol.Command) -> None:
        self.sent.append(command)

    async def next_event(self) -> protocol.Event:
        return await self._events.get()

    def feed(self, *events: protocol.Event) -> None:
        for event in events:
            self._events.put_nowait(event)

    def close(self) -> None:
        self.closed = True


def summary(table_id: int = 1, **changes: object) -> protocol.TableSummary:
    fields: dict[str, object] = dict(
        id=table_id, name=f"table {table_id}", preset="classic", calza="off", status="waiting",
        seats=4, players=("ana",), bots=0, free=3, spectators=0,
    )  # fmt: skip
    fields.update(changes)
    return protocol.TableSummary(**fields)  # type: ignore[arg-type]


def lobby_state(*tables: protocol.TableSummary) -> protocol.LobbyState:
    return protocol.LobbyState(tables=tables, online=("ana", "ben"))


def table_state(
    game: GameView | None, *, me: int | None = 0, status: str = "playing", **changes: object
) -> protocol.TableState:
    seats = tuple(protocol.SeatInfo(name=n, bot=n != "ana") for n in NAMES)
    fields: dict[str, object] = dict(
        id=1, name="ana's table", status=status, seats=seats, size=3, me=me, creator=0,
        spectators=(), game=game,
    )  # fmt: skip
    fields.update(changes)
    return protocol.TableState(**fields)  # type: ignore[arg-type]


DICE = ((2, 4, 4, 1, 6), (5, 5, 3, 3, 2), (1, 6, 6, 4, 3))


def rolled(preset: str = "classic", dice=DICE, opener: int = 0, **overrides: object) -> State:
    """A 3-player game right after the first roll, `opener` to bid."""
    state = new_game(options_for(preset, **overrides), 3, opener)
    return apply(state, Roll(dice=dice))


def bid(state: State, seat: int, count: int, face: int) -> State:
    return apply(state, PlaceBid(seat=seat, bid=Bid(count=count, face=face)))


def call(state: State, seat: int, name: str = "dudo") -> State:
    return apply(state, Call(seat=seat, call=name))  # type: ignore[arg-type]


def screen_text(app) -> str:
    """The screen as plain text, the way a monochrome terminal would show it."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), color_system=None, record=True,
        legacy_windows=False, safe_box=False,
    )  # fmt: skip
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


async def wait_until(pilot, predicate, timeout: float = 5.0) -> None:
    """Let the app run until `predicate()` holds; fail after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {predicate}")
        await pilot.pause(0.01)
