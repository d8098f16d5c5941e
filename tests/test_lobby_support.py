"""Helpers for the lobby tests: a player that reads its events, and a random human.

No tests here. Every wait is on an event, bounded by `WAIT` so a missing event fails fast
instead of running into the 120 s pytest timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Callable

from perudo_ssh import protocol as P
from perudo_ssh.lobby import Lobby

WAIT = 15.0


@contextlib.asynccontextmanager
async def running_lobby(**kwargs: object) -> AsyncIterator[Lobby]:
    """A started `Lobby` with instant bots and a fixed seed, stopped afterwards."""
    kwargs.setdefault("bot_delay", (0.0, 0.0))
    kwargs.setdefault("reveal_timeout", 30.0)
    kwargs.setdefault("rng", random.Random(7))
    lobby = Lobby(**kwargs)  # type: ignore[arg-type]
    lobby.start()
    try:
        yield lobby
    finally:
        await lobby.stop()


class Player:
    """One session and every event it got, in order."""

    def __init__(self, lobby: Lobby, name: str) -> None:
        self.session = lobby.connect(name)
        self.events: list[P.Event] = []

    @property
    def name(self) -> str:
        return self.session.name

    def send(self, command: P.Command) -> None:
        self.session.send(command)

    async def next(self) -> P.Event:
        async with asyncio.timeout(WAIT):
            event = await self.session.next_event()
        self.events.append(event)
        return event

    async def expect(self, kind: type, pred: Callable[..., bool] = lambda e: True):
        """Read until an event of `kind` for which `pred` holds; return it."""
        while True:
            event = await self.next()
            if isinstance(event, kind) and pred(event):
                return event

    async def joined(self) -> P.LobbyState:
        """Wait for Welcome, then the lobby list."""
        await self.expect(P.Welcome)
        return await self.expect(P.LobbyState)

    def table_states(self) -> list[P.TableState]:
        return [e for e in self.events if isinstance(e, P.TableState)]


async def connected(lobby: Lobby, name: str) -> Player:
    player = Player(lobby, name)
    await player.joined()
    return player


async def play_randomly(
    player: Player,
    rng: random.Random,
    *,
    ready: bool = True,
    dudo_chance: float = 0.35,
    start: P.TableState | None = None,
) -> P.TableState:
    """Play `player`'s seat with random legal moves from its own view until the game has a
    winner (or the player is no longer at the table); returns the last `TableState`.

    Acts once per turn (calzone, calza, dudo or a bid), now and then shows and rerolls after
    its bid or calls jonti or calza out of turn; sends `Ready` once per reveal when `ready`.
    `start` is a state already read that may call for a move."""
    acted: set[tuple[int, int]] = set()
    readied: set[int] = set()
    last: P.TableState | None = None
    while True:
        event = start if start is not None else await player.next()
        start = None
        if isinstance(event, P.LeftTable):
            assert last is not None
            return last
        if not isinstance(event, P.TableState) or event.game is None:
            continue
        last = event
        game = event.game
        if game.winner is not None:
            return event
        if event.me is None:
            continue
        if game.phase == "rolling" and ready and game.round_index not in readied:
            readied.add(game.round_index)
            player.send(P.Ready(round=game.round_index - 1))
        key = (game.round_index, len(game.bids), game.special)
        choices = game.choices
        if game.phase != "bidding" or key in acted:
            continue
        if choices.reroll and rng.random() < 0.5:
            acted.add(key)  # show and reroll right after my own bid (club)
            hidden = list(game.seats[event.me].hidden)
            shown = rng.sample(hidden, rng.randint(1, len(hidden) - 1))
            player.send(P.ShowAndReroll(reveal=tuple(shown)))
        elif game.turn != event.me:
            acted.add(key)  # out of turn: now and then a jonti or an anytime calza
            for call in ("jonti", "calza"):
                if getattr(choices, call) and rng.random() < 0.05:
                    player.send(P.MakeCall(call=call))
                    break
        else:
            acted.add(key)
            if choices.calzone and rng.random() < 0.5:
                player.send(P.DeclareCalzone())
            elif choices.calza and rng.random() < 0.1:
                player.send(P.MakeCall(call="calza"))
            elif choices.dudo and (not choices.bids or rng.random() < dudo_chance):
                player.send(P.MakeCall(call="dudo"))
            else:
                bid = rng.choice(choices.bids)
                player.send(P.MakeBid(count=bid.count, face=bid.face))


def assert_private(events: list[P.Event], me: int | None) -> int:
    """Every `TableState` in `events` hides every seat's dice but `me`'s (all of them for a
    spectator, `me` None). Returns how many game views were checked."""
    checked = 0
    for event in events:
        if not isinstance(event, P.TableState) or event.game is None:
            continue
        assert event.me == me
        for seat in event.game.seats:
            if seat.seat != me:
                assert seat.hidden is None, (me, seat)
        checked += 1
    return checked
