"""Every finished game goes into the store: its `perudo-record/1` record, the referee's
verdict, and who played it (issue 4, item 3; RECORD.md). A game without a single account
holder (guests and bots only) is not kept: nobody could read it back, and nothing of a
guest's is kept.

`GameArchive.game_over` is the lobby's `on_game_over`: inside the actor it only takes what it
needs from the table and starts a task; the verdict is computed off the loop and the game is
written by the store's thread, so the actor never waits. `drain()` waits for the games still
being written (a clean stop loses none).

Who sat where: a seat's account is the one of the lobby session sitting there
(`session_joined` tells the archive), else the account with the seat's name — a person who
left mid-game keeps their name on the seat a bot plays on. That is unambiguous because
account names never look like the lobby's own (`store.claimable_name`): `guest-N` is a guest,
`bot-…` a bot, `ana-2` a second session of ana (stored under ana's account). Imports neither
textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from perudo_ssh import ratings
from perudo_ssh.lobby.game_log import GameLog
from perudo_ssh.lobby.table import Table
from perudo_ssh.names import claimable_name
from perudo_ssh.ratings import finishing_order
from perudo_ssh.record import encode_record
from perudo_ssh.records import Account, GamePlayer, NewGame
from perudo_ssh.referee import Verdict, encode_verdict, verdict_of
from perudo_ssh.session import LobbySession
from perudo_ssh.store import Store

log = logging.getLogger(__name__)

RatingChanges = Mapping[int, tuple[str, int, int]]
"""What a rated game did to ratings: by account id, (name, before, after) in shown points."""

AfterGame = Callable[[Store, int, NewGame, Verdict], Awaitable[RatingChanges | None]]
"""Called once a finished game is stored: `(store, game_id, game, verdict)`; returns the
rating changes it made (None or empty: none)."""


@dataclass(frozen=True, slots=True)
class _SeatAtEnd:
    """A seat as the game ended: its name, the session sitting there (None: a bot plays it),
    whether a bot plays it, the round its human left in (None: they stayed), and whether a
    bot played it from the start (then it is nobody's account, whatever its name)."""

    name: str
    sid: int | None
    bot: bool
    left_round: int | None = None
    bot_from_start: bool = False
    level: str | None = None  # a bot seated as such: its level (issue 14)


def places(
    players: tuple[str, ...], verdict: Verdict, left: Mapping[str, int] | None = None
) -> dict[str, int]:
    """Each player's finishing place in a finished game: the winner 1, then the players in the
    reverse of the order they went out (the first out is last). RECORD.md verdict `winner`,
    `eliminated`. A player in `left` (name: index of the round they left in, a bot playing
    on) finishes when they left (`perudo_ssh.ratings.finishing_order`, as the ratings rank
    them). Raises ValueError for a game with no winner."""
    if verdict.winner is None:
        raise ValueError("the game is not finished")
    if left:
        return {name: i + 1 for i, name in enumerate(finishing_order(verdict, left))}
    n = len(players)
    result = {name: n - i for i, name in enumerate(verdict.eliminated)}
    result[verdict.winner] = 1
    return result


class GameArchive:
    """Stores the games a lobby finishes into `store`; `after_game` (if given) runs once each
    is stored — the ratings update — and `on_rated(table_id, changes)` (if set) is told
    what it changed (the lobby's `Lobby.rated`: issue 13)."""

    def __init__(self, store: Store, after_game: AfterGame | None = None) -> None:
        self.store = store
        self.after_game = after_game
        self.on_rated: Callable[[int, RatingChanges], None] | None = None
        self._accounts: dict[int, Account] = {}  # lobby session id -> its account
        self._pending: set[asyncio.Task[int | None]] = set()
        self._last: asyncio.Task[int | None] | None = None  # stored in the order they finish

    def session_joined(self, session: LobbySession, account: Account | None) -> None:
        """`session` plays as `account` (None: a guest). Forgotten with the session.

        A second session of the account (the lobby names it `ana-2` while the first is
        online) plays as the account: its games are the account's (issue 13). The lobby
        seats one session of an account at a table, so one account never holds two seats
        of a game nor rates a game against itself."""
        if account is not None:
            self._accounts[session.id] = account
            weakref.finalize(session, self._accounts.pop, session.id, None)

    def game_over(self, table: Table, game: GameLog) -> None:
        """The lobby's `on_game_over(table, log)`: store the game in a task (never waits).
        The table's `save_key` (the game saved as unfinished by the lobby, issue 5) is
        forgotten in the transaction that stores the game, so that a crash in between loses
        nothing (a game left unfinished in the store is handed over again at the next start)."""
        seats = tuple(
            _SeatAtEnd(
                s.name,
                s.sid,
                s.bot,
                s.left_round,
                i in table.bots_at_start,
                s.level if i in table.bots_at_start else None,
            )
            for i, s in enumerate(table.seats)
        )
        rated = bool(getattr(table, "rated", False))
        key = getattr(table, "save_key", None)
        task = asyncio.get_running_loop().create_task(
            self._store(
                game, seats, table.options.preset, rated, time.time(), self._last, key, table.id
            ),
            name=f"store game of table {table.id}",
        )
        self._last = task
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        """Wait until every finished game handed over so far is stored (or failed, logged)."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def _store(
        self,
        game: GameLog,
        seats: tuple[_SeatAtEnd, ...],
        preset: str,
        rated: bool,
        finished: float,
        previous: asyncio.Task[int | None] | None = None,
        save_key: int | None = None,
        table_id: int | None = None,
    ) -> int | None:
        try:
            record = game.to_record()
            verdict = await asyncio.to_thread(verdict_of, record)
            if previous is not None:  # game ids (and rating history) follow the finishing order
                await asyncio.wait([previous])
            if not verdict.legal or verdict.winner is None:
                # the engine made every move: this is a bug, and the record says where
                log.error("finished game judged %s: %s", verdict.error, encode_record(record))
            left = {s.name: s.left_round for s in seats if s.left_round is not None}
            place = places(record.players, verdict, left)
            players = []
            for i, seat in enumerate(seats):
                account = await self._account_of(seat)
                players.append(
                    GamePlayer(
                        seat=i,
                        name=seat.name,
                        account_id=account,
                        place=place[seat.name],
                        bot=seat.bot_from_start
                        or (seat.bot and seat.name.casefold().startswith("bot-")),
                        left_round=seat.left_round,
                        level=seat.level,
                    )
                )
            if all(p.account_id is None for p in players):
                # only guests and bots: nobody could ever read it back
                if save_key is not None:
                    await self.store.save_tables({save_key: None})
                return None
            new = NewGame(
                finished=finished,
                preset=preset,
                rated=rated,
                record=encode_record(record),
                verdict=encode_verdict(verdict),
                players=tuple(players),
            )
            game_id = await self.store.add_game(new, forget=save_key)
            log.info("stored game %d: %s", game_id, ", ".join(record.players))
            if self.after_game is not None:
                changes = await self.after_game(self.store, game_id, new, verdict)
                if changes and self.on_rated is not None and table_id is not None:
                    self.on_rated(table_id, changes)
            return game_id
        except Exception:
            log.exception("could not store a finished game")
            return None

    async def _account_of(self, seat: _SeatAtEnd) -> int | None:
        if seat.bot_from_start:
            return None  # a bot may play on under the name of a human gone since last game
        if seat.sid is not None and seat.sid in self._accounts:
            return self._accounts[seat.sid].id  # `ana-2` too: a second session of ana
        if claimable_name(seat.name) != seat.name:
            return None  # a guest, a bot or a second session: never an account's name
        named = await self.store.account_named(seat.name)
        return None if named is None else named.id


# ---- the ratings hook (issue 4, item 5; issue 13; issue 14) ---------------------------------


_RATING_LOCKS: weakref.WeakKeyDictionary[Store, asyncio.Lock] = weakref.WeakKeyDictionary()
"""One lock per store: two games finishing together must not both start from the same
ratings (read, rate, write is one step)."""


async def update_ratings(
    store: Store, game_id: int, game: NewGame, verdict: Verdict
) -> RatingChanges | None:
    """The ratings hook: called once each finished game is stored as `game_id` (`game` as
    stored, `verdict` its referee's verdict).

    A game of a rated table (`game.rated`, the table option) with at least two account
    holders (`perudo_ssh.ratings.is_rated`) moves their ratings by `perudo_ssh.ratings.rate`
    over the finishing order (`finishing_order`, a player who left mid-game placed when they
    left: `GamePlayer.left_round`); bots and guests (no account) are left out
    of the ranking. People and bot accounts (issue 14) are rated apart: the people are
    ranked among the people, the bot accounts among the bot accounts (each pool needs two to
    be rated), so a program's games never move a person's rating nor the reverse. The
    built-in bots of each level share one rating (`Store.level_account`): it moves by the
    game's whole finishing order, everyone rated at the table counted at their rating (the
    level's seats at its own; several seats of a level: their new ratings averaged), while
    nobody else's moves for it — so a level's rating says how it fares against people and
    programs, and beating bots never farms a rating. Each
    account starts from its latest stored rating (`ratings.DEFAULT` for a
    newcomer); the new ones are written in one transaction, dated when the game finished.
    An illegal or unfinished verdict rates nothing. Returns what it changed, by account
    id: (name, before, after) in shown points (`ratings.ordinal`, rounded); None if the game
    was not rated."""
    if not game.rated or not verdict.legal or verdict.winner is None:
        return None
    account_of = {p.name: p.account_id for p in game.players}
    level_of: dict[str, str] = {
        p.name: p.level for p in game.players if p.level is not None and p.account_id is None
    }
    left = {p.name: p.left_round for p in game.players if p.left_round is not None}
    order = ratings.finishing_order(verdict, left)
    accounts = [account for account in account_of.values() if account is not None]
    lock = _RATING_LOCKS.setdefault(store, asyncio.Lock())
    async with lock:
        programs = await store.bot_accounts(accounts)
        levels = {level: await store.level_account(level) for level in set(level_of.values())}
        rated_as = {name: account for name, account in account_of.items() if account is not None}
        rated_as.update((name, levels[level].id) for name, level in level_of.items())
        before: dict[str, ratings.Rating] = {}
        for name in order:
            if name in rated_as:
                row = await store.rating_of(rated_as[name])
                before[name] = (
                    ratings.DEFAULT if row is None else ratings.Rating(mu=row.mu, sigma=row.sigma)
                )
        new: dict[int, tuple[float, float]] = {}
        changes: dict[int, tuple[str, int, int]] = {}
        # two pools: people among people, bot accounts among bot accounts (issue 14)
        for pool in (False, True):
            entries = [
                before[name]
                if account_of.get(name) is not None and (account_of[name] in programs) == pool
                else None
                for name in order
            ]
            if not ratings.is_rated(game.rated, entries):
                continue
            for name, old, rating in zip(order, entries, ratings.rate(entries), strict=True):
                account = account_of.get(name)
                if rating is not None and account is not None and old is not None:
                    new[account] = (rating.mu, rating.sigma)
                    changes[account] = (name, shown(old), shown(rating))
        # each level of built-in bots against everyone rated at the table, who stay as they are
        everyone = [before.get(name) for name in order]
        if levels and ratings.is_rated(game.rated, everyone):
            after = ratings.rate(everyone)
            for level, level_account in levels.items():
                seats = [after[i] for i, name in enumerate(order) if level_of.get(name) == level]
                rated = [rating for rating in seats if rating is not None]
                new[level_account.id] = (
                    sum(r.mu for r in rated) / len(rated),
                    sum(r.sigma for r in rated) / len(rated),
                )
        if not new:
            return None
        await store.add_ratings(game_id, new, at=game.finished)
    return changes or None


def shown(rating: ratings.Rating) -> int:
    """A rating as players see it, in whole points (`ratings.ordinal`, rounded)."""
    return round(ratings.ordinal(rating))


async def shown_ratings(store: Store) -> dict[int, int]:
    """Every rated account's shown rating (`shown`), by account id: the lobby's start."""
    return {
        account.id: shown(ratings.Rating(mu=row.mu, sigma=row.sigma))
        for account, row in await store.current_ratings()
    }
