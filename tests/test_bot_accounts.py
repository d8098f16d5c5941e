"""Bot accounts (issue 14, item 3): made by their player or by the admin command, marked BOT
in the lobby and at tables, rated apart from people, listed apart on the leaderboard."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import DataTable

from perudo_ssh import protocol as P
from perudo_ssh.cli import main
from perudo_ssh.i18n import translator
from perudo_ssh.lobby.archive import update_ratings
from perudo_ssh.ratings import DEFAULT, rate
from perudo_ssh.record import encode_record
from perudo_ssh.records import GamePlayer, NewGame
from perudo_ssh.referee import encode_verdict
from perudo_ssh.store import Store
from screens.account import AccountScreen
from screens.leaderboard import LeaderboardScreen
from screens.profile import profile_lines, read_profile
from screens.tableview import seat_names
from tests.test_lobby_support import Player, running_lobby
from tests.test_ratings_store import stored_rating
from tests.test_screens_fakes import screen_text
from tests.test_screens_history import (
    calza_game,
    lines_of,
    one_die_game,
    open_screen,
    start,
    store_game,
    wait_until,
)

pytestmark = pytest.mark.timeout(60)


async def test_an_account_becomes_a_bot_account_and_back(tmp_path: Path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        robo = (await store.claim_key("SHA256:robo", "robo")).account
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        assert robo.bot is False
        assert await store.set_bot(robo.id, True)
        assert (await store.claim_key("SHA256:robo", "x")).account.bot is True
        assert (await store.account_for_key("SHA256:robo")).bot is True  # type: ignore[union-attr]
        assert (await store.account_named("ROBO")).bot is True  # type: ignore[union-attr]
        assert (await store.account(ana.id)).bot is False  # type: ignore[union-attr]
        assert await store.bot_accounts([robo.id, ana.id, 999]) == {robo.id}
        assert await store.bot_accounts([]) == set()
        assert not await store.set_bot(999, True)
        assert await store.set_bot(robo.id, False)
        assert await store.bot_accounts([robo.id]) == set()
    finally:
        await store.close()


async def bot_ids(db: Path, account_id: int | None = None) -> set[int]:
    """Of `account_id` (None: make robo's account first), the bot accounts in `db`."""
    store = await Store.open(db)
    try:
        if account_id is None:
            account_id = (await store.claim_key("SHA256:robo", "robo")).account.id
        return await store.bot_accounts([account_id]) | {-account_id}
    finally:
        await store.close()


def test_the_admin_command_marks_a_bot_account(tmp_path: Path, capsys):
    db = tmp_path / "perudo.db"
    (robo,) = {-n for n in asyncio.run(bot_ids(db))}
    config = ["--config", str(tmp_path / "none.toml"), "--db", str(db)]

    def admin(*args: str) -> tuple[int, str, str]:
        status = main(["admin", "bot", *args, *config])
        out, err = capsys.readouterr()
        return status, out, err

    assert admin("Robo") == (0, "robo is now a bot account\n", "")
    assert admin("robo") == (0, "robo is already a bot account\n", "")
    assert asyncio.run(bot_ids(db, robo)) == {robo, -robo}
    assert admin("robo", "--remove") == (0, "robo is now a person's account\n", "")
    status, out, err = admin("nobody")
    assert (status, out) == (
        2,
        "",
    ) and err == f"perudo-ssh admin: no player called nobody in {db}\n"
    status, _, err = (
        main(["admin", "bot", "x", "--db", str(tmp_path / "no.db")]),
        *capsys.readouterr(),
    )
    assert status == 2 and "no player database" in err


async def test_people_and_bot_accounts_are_rated_apart(tmp_path: Path):
    """one_die_game: ben wins, ana second, cyd last. With cyd a bot account, ana and ben are
    ranked as if cyd were a bot; with ben and cyd bot accounts, they are ranked among
    themselves and ana (alone among people) is not rated."""
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana, ben, cyd = [
            (await store.claim_key(f"SHA256:{n}", n)).account for n in ("ana", "ben", "cyd")
        ]
        accounts = {"ana": ana.id, "ben": ben.id, "cyd": cyd.id}
        await store.set_bot(cyd.id, True)
        first = await store_game(store, one_die_game(), accounts, 1000.0)
        ben1, ana1, none = rate([DEFAULT, DEFAULT, None])
        assert ben1 and ana1 and none is None
        assert await stored_rating(store, ana, first) == (ana1.mu, ana1.sigma)
        assert await stored_rating(store, ben, first) == (ben1.mu, ben1.sigma)
        assert await store.rating_of(cyd.id) is None  # alone in its pool
        await store.set_bot(ben.id, True)
        second = await store_game(store, one_die_game(), accounts, 1001.0)
        ben2, none, cyd2 = rate([ben1, None, DEFAULT])
        assert ben2 and cyd2
        assert await stored_rating(store, ben, second) == (ben2.mu, ben2.sigma)
        assert await stored_rating(store, cyd, second) == (cyd2.mu, cyd2.sigma)
        assert [row.game_id for row in await store.rating_history(ana.id)] == [first]
        # two people of a game with no bot account: rated as ever
        third = await store_game(store, calza_game(), {"ana": ana.id, "ben": ben.id}, 1002.0)
        assert [row.game_id for row in await store.rating_history(ana.id)] == [first]
        assert third not in [row.game_id for row in await store.rating_history(ben.id)]
    finally:
        await store.close()


async def test_the_lobby_marks_a_bot_accounts_name_and_seat():
    async with running_lobby() as lobby:
        robo = Player.__new__(Player)  # a program's session: the server read its account
        robo.session = lobby.connect("robo", "SHA256:robo", account_id=7, bot_account=True)
        robo.events = []
        await robo.joined()
        ana = Player(lobby, "ana")
        online = await ana.joined()
        assert online.online == ("ana", "robo") and online.bot_accounts == ("robo",)
        robo.send(P.CreateTable(seats=3, bots=1))
        created = await robo.expect(P.TableState)
        ana.send(P.JoinTable(table=created.id))
        table = await ana.expect(P.TableState, lambda e: e.game is not None)
        assert [(s.name, s.bot_account) for s in table.seats] == [
            ("robo", True),
            (table.seats[1].name, False),
            ("ana", False),
        ]
        assert seat_names(translator("en"), table)[:3:2] == ["BOT robo", "ana"]


async def test_the_lobby_screen_marks_bot_accounts_online():
    session, app = start(None, None)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.lobby is not None)
        session.feed(P.LobbyState(tables=(), online=("ana", "robo"), bot_accounts=("robo",)))
        await wait_until(pilot, lambda: "BOT robo" in screen_text(app))
        assert "BOT ana" not in screen_text(app)


async def test_the_leaderboard_lists_bot_accounts_apart(tmp_path: Path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        accounts = {}
        for name in ("ana", "ben", "robo", "zed"):
            accounts[name] = (await store.claim_key(f"SHA256:{name}", name)).account
        for name in ("robo", "zed"):
            await store.set_bot(accounts[name].id, True)
        ids = {"ana": accounts["ana"].id, "ben": accounts["ben"].id}
        await store_game(store, calza_game(), ids, 1000.0)  # ana and ben
        bots = {"ana": accounts["robo"].id, "ben": accounts["zed"].id}
        await store_game(store, calza_game(), bots, 1001.0)  # robo and zed in their seats
        session, app = start(store, accounts["ana"])
        async with app.run_test(size=(80, 24)) as pilot:
            await open_screen(pilot, app, "l", LeaderboardScreen)
            grid = app.screen.query_one("#leaders", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 2)
            people = {line.split()[1] for line in lines_of(app)[2:4]}
            assert people == {"ana", "ben"}
            await pilot.press("b")
            await wait_until(pilot, lambda: "bot accounts" in lines_of(app)[0])
            await wait_until(pilot, lambda: grid.row_count == 2)
            await pilot.pause()
            assert {line.split()[1] for line in lines_of(app)[2:4]} == {"robo", "zed"}
            await pilot.press("b")
            await wait_until(pilot, lambda: lines_of(app)[0].strip() == "Leaderboard")
    finally:
        await store.close()


async def test_a_player_makes_their_account_a_bot_account_on_the_account_screen(tmp_path: Path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        robo = (await store.claim_key("SHA256:robo", "robo")).account
        session, app = start(store, robo)
        async with app.run_test(size=(100, 40)) as pilot:
            await open_screen(pilot, app, "k", AccountScreen)
            await wait_until(pilot, lambda: "m makes this account" in screen_text(app))
            await pilot.press("m")
            await wait_until(pilot, lambda: "Press m again" in screen_text(app))
            assert await store.bot_accounts([robo.id]) == set()  # asked, not yet done
            await pilot.press("m")
            await wait_until(pilot, lambda: "This is now a bot account" in screen_text(app))
            assert await store.bot_accounts([robo.id]) == {robo.id}
    finally:
        await store.close()


def rated_game(record, verdict, finished: float, players: tuple[GamePlayer, ...]) -> NewGame:
    """A finished game of a rated classic table, as the archive hands it to the ratings."""
    return NewGame(
        finished=finished,
        preset="classic",
        rated=True,
        record=encode_record(record),
        verdict=encode_verdict(verdict),
        players=players,
    )


async def test_each_level_of_built_in_bots_is_rated_against_everyone_and_moves_nobody(tmp_path):
    """one_die_game with cyd a hard bot: ben wins, ana second, cyd last. The people are ranked
    among themselves as ever; `bot-hard` moves as the third of the whole order; ana alone
    with two hard bots (calza_game: ana wins, ben is a bot) moves only the level."""
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        ben = (await store.claim_key("SHA256:ben", "ben")).account
        record, verdict = one_die_game()
        new = rated_game(record, verdict, 1000.0, (
            GamePlayer(seat=0, name="ana", account_id=ana.id, place=2),
            GamePlayer(seat=1, name="ben", account_id=ben.id, place=1),
            GamePlayer(seat=2, name="cyd", account_id=None, place=3, bot=True, level="hard"),
        ))  # fmt: skip
        game = await store.add_game(new)
        changes = await update_ratings(store, game, new, verdict)
        assert changes is not None and set(changes) == {ana.id, ben.id}  # shown to the table
        ben1, ana1, _ = rate([DEFAULT, DEFAULT, None])
        _, _, hard1 = rate([DEFAULT, DEFAULT, DEFAULT])
        assert ben1 and ana1 and hard1
        assert await stored_rating(store, ana, game) == (ana1.mu, ana1.sigma)
        level = await store.level_account("hard")
        assert (level.name, level.bot) == ("bot-hard", True)
        assert await stored_rating(store, level, game) == (hard1.mu, hard1.sigma)
        assert await store.rated_games([level.id, ana.id]) == {level.id: 1, ana.id: 1}
        # a person against the level alone: the person stays, the level moves
        record, verdict = calza_game()
        new = rated_game(record, verdict, 1001.0, (
            GamePlayer(seat=0, name="ana", account_id=ana.id, place=1),
            GamePlayer(seat=1, name="ben", account_id=None, place=2, bot=True, level="hard"),
        ))  # fmt: skip
        second = await store.add_game(new)
        assert await update_ratings(store, second, new, verdict) is None  # nothing to show
        _, hard2 = rate([ana1, hard1])
        assert hard2 is not None
        assert await stored_rating(store, level, second) == (hard2.mu, hard2.sigma)
        assert [row.game_id for row in await store.rating_history(ana.id)] == [game]
        # its profile: the level sat at no seat, so its games are its two rated games, not
        # "Games 0" under "after 2 rated games"; no wins or calls of its own
        profile = await read_profile(store, level.id)
        assert profile is not None and profile.level and len(profile.ratings) == 2
        lines = [line.plain for line in profile_lines(translator("en"), profile)]
        assert [line.split()[0] for line in lines] == ["Rating", "Games", "the"]
        assert lines[1].split() == ["Games", "2"]
        mine = await read_profile(store, ana.id)
        assert mine is not None and not mine.level and mine.stats.games == 2
    finally:
        await store.close()
