"""Ratings in the store (issue 4, item 4): a finished rated game over the lobby moves the
stored ratings exactly as `perudo_ssh.ratings` computes them from its finishing order; an
unrated table, or one account holder among bots, moves nothing; a player who leaves mid-game
is ranked when they left; games finishing together chain their ratings."""

from __future__ import annotations

import asyncio
import random

import msgspec
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.lobby.archive import GameArchive, shown_ratings, update_ratings
from perudo_ssh.ratings import DEFAULT, Rating, finishing_order, ordinal, rate
from perudo_ssh.records import Account, GamePlayer, NewGame
from perudo_ssh.referee import Verdict
from perudo_ssh.store import Store
from tests.test_lobby_support import Player, play_randomly, running_lobby
from tests.test_moderation import Member, member
from tests.test_screens_history import calza_game, one_die_game, store_game

pytestmark = pytest.mark.timeout(90)


async def sit_down(
    lobby, archive: GameArchive, accounts: list[Account], **table
) -> tuple[list[Player], P.TableState]:
    """`accounts` connect; the first creates a table (`table`: CreateTable fields), the others
    join it. Returns the players and the table as its creator first saw it (full, the game
    starts by itself)."""
    players = []
    for account in accounts:
        player = Player(lobby, account.name)
        archive.session_joined(player.session, account)
        await player.joined()
        players.append(player)
    players[0].send(P.CreateTable(**table))
    created = await players[0].expect(P.TableState)
    for player in players[1:]:
        player.send(P.JoinTable(table=created.id))
    return players, created


async def play_out(players: list[Player], created: P.TableState, seed: int) -> list[P.TableState]:
    """Every player plays randomly until the game has a winner; their last table states."""
    return await asyncio.gather(
        *(
            play_randomly(p, random.Random(seed + k), start=created if k == 0 else None)
            for k, p in enumerate(players)
        )
    )


async def stored_rating(store: Store, account: Account, game_id: int) -> tuple[float, float]:
    """`account`'s stored (mu, sigma) after game `game_id`."""
    rows = [r for r in await store.rating_history(account.id) if r.game_id == game_id]
    assert len(rows) == 1
    return rows[0].mu, rows[0].sigma


async def expected_after(
    store: Store, game_id: int, before: dict[int, Rating]
) -> dict[int, Rating]:
    """What `perudo_ssh.ratings` says each account's rating is after stored game `game_id`,
    from `before` (account id → rating; absent: a newcomer)."""
    game = await store.game(game_id)
    assert game is not None
    verdict = msgspec.json.decode(game.verdict, type=Verdict)
    left = {p.name: p.left_round for p in game.players if p.left_round is not None}
    order = finishing_order(verdict, left)
    account_of = {p.name: p.account_id for p in game.players}
    ids = [account_of[name] for name in order]
    new = rate([None if i is None else before.get(i, DEFAULT) for i in ids])
    return {i: r for i, r in zip(ids, new, strict=True) if i is not None and r is not None}


async def test_finished_rated_games_over_the_lobby_move_ratings_as_the_library_says(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store, after_game=update_ratings)
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    try:
        async with running_lobby(on_game_over=archive.game_over) as lobby:
            for i in range(2):
                players, created = await sit_down(lobby, archive, [ana, ben], seats=3, bots=1)
                finals = await play_out(players, created, 10 * i)
                assert all(final.game.winner is not None for final in finals)
                await archive.drain()
                for player in players:
                    player.session.close()
        ratings: dict[int, Rating] = {}
        for game_id in (1, 2):
            ratings = {**ratings, **await expected_after(store, game_id, ratings)}
            assert set(ratings) == {ana.id, ben.id}
            for account in (ana, ben):
                want = ratings[account.id]
                assert await stored_rating(store, account, game_id) == (want.mu, want.sigma)
        assert [r.game_id for r in await store.rating_history(ana.id)] == [1, 2]
        latest = await store.rating_of(ben.id)
        assert latest is not None and (latest.mu, latest.sigma) == (
            ratings[ben.id].mu,
            ratings[ben.id].sigma,
        )
        assert ratings[ana.id] != ratings[ben.id]
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("seats", "table"),
    [
        ("ana ben", {"seats": 3, "bots": 1, "rated": False}),  # an unrated table
        ("ana", {"seats": 3, "bots": 2}),  # one account holder: nobody to rank against
    ],
)
async def test_an_unrated_game_is_stored_but_moves_no_persons_rating(tmp_path, seats, table):
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store, after_game=update_ratings)
    accounts = [(await store.claim_key(f"SHA256:{n}", n)).account for n in seats.split()]
    try:
        async with running_lobby(on_game_over=archive.game_over) as lobby:
            players, created = await sit_down(lobby, archive, accounts, **table)
            await play_out(players, created, 5)
            await archive.drain()
        (game,) = await store.games_of(accounts[0].id)
        assert game.rated is table.get("rated", True)
        for account in accounts:
            assert await store.rating_history(account.id) == []
        # at a rated table the bots' level is rated against ana (issue 14); she is not
        levels = [a.name for a, _ in await store.current_ratings()]
        assert levels == ([] if table.get("rated") is False else ["bot-medium"])
    finally:
        await store.close()


async def test_a_player_who_leaves_mid_game_is_ranked_when_they_left(tmp_path):
    """…and the bot that played on in her seat, kept for the next game, does not play that
    game as her."""
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store, after_game=update_ratings)
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    try:
        async with running_lobby(on_game_over=archive.game_over) as lobby:
            (quitter, stayer), _ = await sit_down(lobby, archive, [ana, ben], seats=3, bots=1)
            await quitter.expect(P.TableState, lambda e: e.game is not None)
            quitter.send(P.LeaveTable())  # in round 0: a bot plays her seat on
            await quitter.expect(P.LeftTable)
            final = await play_randomly(stayer, random.Random(3))
            assert final.game.winner is not None
            # another game at the table: the bot in her seat plays it under her name
            stayer.send(P.PlayAgain())
            again = await stayer.expect(
                P.TableState, lambda e: e.game is not None and e.game.winner is None
            )
            final = await play_randomly(stayer, random.Random(4), start=again)
            assert final.game.winner is not None
            await archive.drain()
        second = await store.game(2)
        assert second is not None and "ana" in [p.name for p in second.players]
        assert second.seat_of(ana.id) is None  # not her game: her name, a bot's play
        assert [p.bot for p in second.players if p.name == "ana"] == [True]
        assert [g.id for g in await store.games_of(ana.id)] == [1]
        assert [r.game_id for r in await store.rating_history(ben.id)] == [1]  # ben alone
        game = await store.game(1)
        assert game is not None
        seat = game.seat_of(ana.id)
        assert seat is not None and seat.left_round == 0 and seat.place == 3  # last: left first
        assert game.seat_of(ben.id).left_round is None  # type: ignore[union-attr]
        ben_after, ana_after = rate([DEFAULT, DEFAULT])  # ben finished above her
        assert ben_after is not None and ana_after is not None
        assert await stored_rating(store, ben, 1) == (ben_after.mu, ben_after.sigma)
        assert await stored_rating(store, ana, 1) == (ana_after.mu, ana_after.sigma)
    finally:
        await store.close()


async def test_games_finishing_together_chain_their_ratings(tmp_path):
    """Two hooks at once: the second game starts from the ratings the first one wrote."""
    store = await Store.open(tmp_path / "perudo.db")
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    games = []
    accounts = {"ana": ana.id, "ben": ben.id}
    for n, (record, verdict) in enumerate((one_die_game(), calza_game())):
        new = NewGame(
            finished=1000.0 + n,
            preset="classic",
            rated=True,
            record=msgspec.json.encode(record),
            verdict=msgspec.json.encode(verdict),
            players=tuple(
                GamePlayer(seat=i, name=name, account_id=accounts.get(name), place=1)
                for i, name in enumerate(record.players)
            ),
        )  # fmt: skip
        games.append((await store.add_game(new), new, verdict))
    try:
        await asyncio.gather(*(update_ratings(store, *game) for game in games))
        ben1, ana1, _ = rate([DEFAULT, DEFAULT, None])  # game 1: ben, ana, cyd (a guest)
        ana2, ben2 = rate([ana1, ben1])  # game 2: ana, ben
        assert ana2 is not None and ben2 is not None
        assert await stored_rating(store, ana, 2) == (ana2.mu, ana2.sigma)
        assert await stored_rating(store, ben, 2) == (ben2.mu, ben2.sigma)
        rows = await store.rating_history(ana.id)
        assert [row.at for row in rows] == [1000.0, 1001.0]  # dated when each game finished
    finally:
        await store.close()


async def test_game_counts_count_games_and_wins(tmp_path):
    store = await Store.open(tmp_path / "perudo.db")
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    carl = (await store.claim_key("SHA256:carl", "carl")).account
    accounts = {"ana": ana.id, "ben": ben.id}
    try:
        await store_game(store, one_die_game(), accounts, 1000.0)  # ben wins
        await store_game(store, calza_game(), accounts, 2000.0)  # ana wins
        await store_game(store, one_die_game(), accounts, 3000.0, rated=False)  # ben wins
        assert await store.game_counts([ana.id, ben.id, carl.id]) == {
            ana.id: (3, 1),
            ben.id: (3, 2),
            carl.id: (0, 0),
        }
        assert await store.game_counts([]) == {}
    finally:
        await store.close()


async def test_a_game_played_from_a_second_session_is_the_accounts(tmp_path):
    """Issue 13, item 1: ben's key online twice; the second session (ben-2) plays a whole
    game while the first stays in the lobby. The game is ben's: stored under his account,
    in his games; a second session of his cannot take a second seat at his table (one
    account, one seat a game: it never rates a game against itself)."""
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store, after_game=update_ratings)
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    try:
        async with running_lobby(on_game_over=archive.game_over) as lobby:
            first = Member(lobby, "ben", "SHA256:ben", account=ben.id)
            await first.joined()
            second = Member(lobby, "ben", "SHA256:ben", account=ben.id)
            await second.joined()
            for session in (first, second):
                archive.session_joined(session.session, ben)
            assert second.session.name == "ben-2"
            second.send(P.CreateTable(seats=3, bots=1))
            created = await second.expect(P.TableState)
            first.send(P.JoinTable(table=created.id))
            refused = await first.expect(P.Refused)
            assert refused.message == "you already sit at this table, from another session"
            second.send(P.StartGame())
            await play_out([second], created, 5)
            await archive.drain()
        (summary,) = await store.games_of(ben.id)
        game = await store.game(summary.id)
        assert game is not None
        held = [(p.name, p.account_id) for p in game.players if p.account_id is not None]
        assert held == [("ben-2", ben.id)]
    finally:
        await store.close()


async def test_ratings_show_beside_names_and_a_rated_game_tells_its_table_the_changes(tmp_path):
    """Issue 13: the lobby shows each account holder's rating beside its name (1000 before
    any rated game, none for a guest), the seats show them, and once a rated game is stored
    everyone at the table gets each player's rating before and after it, as stored."""
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store, after_game=update_ratings)
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    try:
        async with running_lobby(on_game_over=archive.game_over) as lobby:
            lobby.ratings = await shown_ratings(store)
            assert lobby.ratings == {}
            archive.on_rated = lobby.rated
            guest = await member(lobby, "cyd")  # no account
            players = []
            for account in (ana, ben):
                player = await member(lobby, account.name, f"SHA256:{account.name}",
                                      account=account.id)  # fmt: skip
                archive.session_joined(player.session, account)
                players.append(player)
            seen = await guest.expect(P.LobbyState, lambda s: len(s.online) == 3)
            assert (seen.online, seen.ratings) == (("ana", "ben", "cyd"), (1000, 1000, None))
            players[0].send(P.CreateTable(seats=3, bots=1))
            created = await players[0].expect(P.TableState)
            assert [(s.rating, s.bot) for s in created.seats] == [(1000, False), (None, True)]
            players[1].send(P.JoinTable(table=created.id))
            finals = await play_out(players, created, 7)
            assert all(final.game.winner is not None for final in finals)
            assert all(final.rating_changes == () for final in finals)  # not rated yet
            await archive.drain()
            after = await expected_after(store, 1, {})
            want = {
                (name, 1000, round(ordinal(after[account.id])))
                for name, account in (("ana", ana), ("ben", ben))
            }
            for player in players:
                rated = await player.expect(P.TableState, lambda s: bool(s.rating_changes))
                assert {(c.name, c.before, c.after) for c in rated.rating_changes} == want
                assert {(s.name, s.rating) for s in rated.seats if not s.bot} == {
                    (name, new) for name, _, new in want
                }
            assert lobby.ratings == {a.id: round(ordinal(after[a.id])) for a in (ana, ben)}
            shown = dict(zip(seen.online, seen.ratings, strict=True))
            assert shown == {"ana": 1000, "ben": 1000, "cyd": None}  # before the game
            while shown != {"ana": lobby.ratings[ana.id], "ben": lobby.ratings[ben.id],
                            "cyd": None}:  # fmt: skip
                seen = await asyncio.wait_for(guest.expect(P.LobbyState), 5)
                shown = dict(zip(seen.online, seen.ratings, strict=True))
    finally:
        await store.close()
