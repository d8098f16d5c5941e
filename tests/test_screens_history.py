"""Pilot tests of the history, replay, leaderboard and profile screens (issue 4, items 3–4),
at 80×24, with a real store on `tmp_path` holding games built with the rules engine and
rated by the server's own hook (`perudo_ssh.lobby.archive.update_ratings`).

The stored games (fixed dice, `T0` = 2023-11-14 22:13 UTC, a day apart):
1. classic, one die each, ana ben cyd (cyd a guest): ben wins, ana second — rated;
2. classic with calza on-turn, two dice each, ana ben: ben's wrong calza, ana's right calza
   in a palifico round, ben's wrong dudo — ana wins — rated;
3. game 1 again, at an unrated table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from textual.widgets import DataTable, Sparkline

from perudo_ssh import protocol as P
from perudo_ssh.i18n import translator
from perudo_ssh.lobby.archive import places, update_ratings
from perudo_ssh.ratings import DEFAULT, Rating, ordinal, rate
from perudo_ssh.record import Record, RecordBuilder, encode_record
from perudo_ssh.records import Account, GamePlayer, NewGame
from perudo_ssh.referee import Verdict, encode_verdict, verdict_of
from perudo_ssh.rules import Action, Bid, Call, PlaceBid, Roll, options_for
from perudo_ssh.store import Store
from screens.account import AccountScreen
from screens.app import make_app
from screens.create import CreateTableDialog
from screens.history import HistoryScreen
from screens.leaderboard import LeaderboardScreen
from screens.profile import ProfileScreen
from screens.replay import ReplayScreen, replay_frames
from screens.stored import GUEST
from tests.test_screens_fakes import FakeSession, lobby_state, screen_text, wait_until

SIZE = (80, 24)
T0 = 1_700_000_000.0
DAY = 86_400.0


# ---- stored games ------------------------------------------------------------------------


def built(options, players: tuple[str, ...], actions: Sequence[Action]) -> tuple[Record, Verdict]:
    """The record of `actions` (the first opener is seat 0) and its referee's verdict."""
    builder = RecordBuilder(options, players, 0)
    for action in actions:
        builder.add(action)
    record = builder.record()
    return record, verdict_of(record)


def bid(seat: int, count: int, face: int) -> PlaceBid:
    return PlaceBid(seat=seat, bid=Bid(count=count, face=face))


def one_die_game() -> tuple[Record, Verdict]:
    """ana opens 1×5, ben 2×5, cyd's dudo is wrong (2: ben's 5 and cyd's paco): cyd out;
    ana 1×3, ben 2×3, ana's dudo is wrong: ana out, ben wins."""
    return built(
        options_for("classic", dice_per_player=1),
        ("ana", "ben", "cyd"),
        [
            Roll(dice=((2,), (5,), (1,))),
            bid(0, 1, 5),
            bid(1, 2, 5),
            Call(seat=2, call="dudo"),
            Roll(dice=((3,), (3,), ())),
            bid(0, 1, 3),
            bid(1, 2, 3),
            Call(seat=0, call="dudo"),
        ],
    )


def calza_game() -> tuple[Record, Verdict]:
    """ana 2×3, ben's calza is wrong (3 counted): ben down to one die; a palifico round: ben
    1×4, ana's calza is right (but she has every die); ana 2×2, ben's dudo is wrong: ana wins.
    """
    return built(
        options_for("classic", calza="on-turn", dice_per_player=2),
        ("ana", "ben"),
        [
            Roll(dice=((3, 3), (3, 5))),
            bid(0, 2, 3),
            Call(seat=1, call="calza"),
            Roll(dice=((6, 2), (4,))),
            bid(1, 1, 4),
            Call(seat=0, call="calza"),
            Roll(dice=((1, 1), (2,))),
            bid(0, 2, 2),
            Call(seat=1, call="dudo"),
        ],
    )


async def store_game(
    store: Store,
    game: tuple[Record, Verdict],
    accounts: dict[str, int],
    finished: float,
    rated: bool = True,
) -> int:
    """Store a finished game as the archive does, then run the ratings hook."""
    record, verdict = game
    place = places(record.players, verdict)
    new = NewGame(
        finished=finished,
        preset=record.options.preset,
        rated=rated,
        record=encode_record(record),
        verdict=encode_verdict(verdict),
        players=tuple(
            GamePlayer(seat=i, name=name, account_id=accounts.get(name), place=place[name])
            for i, name in enumerate(record.players)
        ),
    )
    game_id = await store.add_game(new)
    await update_ratings(store, game_id, new, verdict)
    return game_id


async def seeded(tmp_path: Path) -> tuple[Store, Account, Account]:
    """A store with ana's and ben's accounts and the three games of the module docstring."""
    store = await Store.open(tmp_path / "perudo.db")
    ana = (await store.claim_key("SHA256:ana", "ana")).account
    ben = (await store.claim_key("SHA256:ben", "ben")).account
    accounts = {"ana": ana.id, "ben": ben.id}
    assert await store_game(store, one_die_game(), accounts, T0) == 1
    assert await store_game(store, calza_game(), accounts, T0 + DAY) == 2
    assert await store_game(store, one_die_game(), accounts, T0 + 2 * DAY, rated=False) == 3
    return store, ana, ben


def expected_ratings() -> dict[str, list[Rating]]:
    """ana's and ben's ratings after each rated game, straight from `perudo_ssh.ratings`."""
    ben1, ana1, _ = rate([DEFAULT, DEFAULT, None])  # game 1: ben, ana, cyd (a guest)
    ana2, ben2 = rate([ana1, ben1])  # game 2: ana, ben
    assert ana2 is not None and ben2 is not None and ana1 is not None and ben1 is not None
    return {"ana": [ana1, ana2], "ben": [ben1, ben2]}


def points(rating: Rating) -> int:
    return round(ordinal(rating))


def start(store: Store | None, account: Account | None, language: str = "en"):
    session = FakeSession(account.name if account else "guest-1")
    app = make_app(session, language)
    app.store = store
    app.account = account
    session.feed(P.Welcome(name=session.name), lobby_state())
    return session, app


async def open_screen(pilot, app, key: str, kind: type) -> None:
    await wait_until(pilot, lambda: app.lobby is not None)
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause()


def lines_of(app) -> list[str]:
    lines = screen_text(app).splitlines()
    assert len(lines) == SIZE[1] and all(len(line) <= SIZE[0] for line in lines)
    return lines


def line_with(app, *words: str) -> list[str]:
    """The words of the one screen line that starts with `words`."""
    found = [line.split() for line in lines_of(app) if line.split()[: len(words)] == list(words)]
    assert len(found) == 1, (words, screen_text(app))
    return found[0]


# ---- history -----------------------------------------------------------------------------


async def test_history_lists_your_games_newest_first_with_place_and_rating_change(tmp_path):
    store, ana, _ = await seeded(tmp_path)
    ana1, ana2 = expected_ratings()["ana"]
    change1 = points(ana1) - 1000
    change2 = points(ana2) - points(ana1)
    try:
        _, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            await open_screen(pilot, app, "h", HistoryScreen)
            grid = app.screen.query_one("#history-games", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 3)
            await pilot.pause()
            lines = lines_of(app)
            assert lines[0].strip() == "Games of ana"
            assert [line.split() for line in lines[1:5]] == [
                ["Game", "Date", "Preset", "Players", "Place", "Rated", "Rating", "±"],
                ["3", "2023-11-16", "classic", "ana,", "ben,", "cyd", "2/3", "–"],
                ["2", "2023-11-15", "classic", "ana,", "ben", "1/2", "✓", f"{change2:+d}"],
                ["1", "2023-11-14", "classic", "ana,", "ben,", "cyd", "2/3", "✓", f"{change1:+d}"],
            ]  # the game's number first: the one `ssh ... record N` takes (issue 13)
            assert change1 < 0 < change2  # lost to ben, then beat him
            assert lines[-2].strip() == "3 games · Enter replays the chosen one"
            assert lines[-1].split() == [
                "r/⏎", "Replay", "p", "Profile", "l", "Leaders", "k", "Account", "esc", "Back",
                "F2", "Language", "?", "Help",
            ]  # fmt: skip
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, HistoryScreen))
    finally:
        await store.close()


async def test_history_reads_the_next_page_at_the_end_of_the_list(tmp_path, monkeypatch):
    monkeypatch.setattr("screens.history.PAGE", 2)
    store, ana, _ = await seeded(tmp_path)
    try:
        _, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            await open_screen(pilot, app, "h", HistoryScreen)
            grid = app.screen.query_one("#history-games", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 2)
            await pilot.press("down")  # the last line read: the next page comes
            await wait_until(pilot, lambda: grid.row_count == 3)
            assert [str(key.value) for key in grid.rows] == ["3", "2", "1"]
    finally:
        await store.close()


@pytest.mark.slow
async def test_the_lobby_keys_open_each_screen(tmp_path):
    store, ana, _ = await seeded(tmp_path)
    try:
        _, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            for key, kind in (
                ("h", HistoryScreen),
                ("l", LeaderboardScreen),
                ("p", ProfileScreen),
                ("k", AccountScreen),
            ):
                await open_screen(pilot, app, key, kind)
                await pilot.press("escape")
                await wait_until(pilot, lambda: len(app.screen_stack) == 1)
            # at 80 columns the footer names quick play; h, l, p and k where it has room
            assert "g Quick play" in lines_of(app)[-1]
    finally:
        await store.close()


# ---- replay ------------------------------------------------------------------------------


def test_replay_frames_come_from_the_engine_one_per_roll_and_action():
    record, verdict = calza_game()
    replay = replay_frames(record)
    assert replay.fault_round is None
    assert [(f.round, f.step) for f in replay.frames] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2),
    ]  # fmt: skip
    assert replay.starts == (0, 3, 6)
    last = replay.frames[-1].state
    assert last.phase == "over" and last.winner == 0 and verdict.winner == "ana"
    assert [f.state.special for f in replay.frames[3:5]] == ["palifico"] * 2
    assert replay.frames[5].state.results[-1].special == "palifico"  # the call's reveal


def test_a_long_move_goes_on_under_itself_at_the_moves_column():
    """Issue 13, item 12: "show and reroll: 4 4" wrapped in the replay's moves panel,
    anywhere; a move too long for its 31 columns now goes on under the moves' column, each
    line one line of the panel (in English, French and Russian)."""
    from types import SimpleNamespace

    from perudo_ssh.rules import Reroll
    from screens.replay import MOVES_WIDTH, moves_lines

    state = SimpleNamespace(opener=0)
    reroll = Reroll(seat=1, reveal=(4, 4, 4, 4), new_faces=(2,))
    frames = [
        SimpleNamespace(step=0, state=state, action=None),
        SimpleNamespace(step=1, state=state, action=PlaceBid(seat=0, bid=Bid(3, 4))),
        SimpleNamespace(step=2, state=state, action=reroll),
    ]
    replay = SimpleNamespace(frames=frames)
    club = options_for("club")
    for language in ("en", "fr", "ru"):
        tr = translator(language)
        lines = [c.plain for c in moves_lines(tr, tr.terms(club), replay, 2, ("ana", "bot-Diego"))]
        assert all(len(line) <= MOVES_WIDTH for line in lines), lines
        assert lines[1] == "ana          3×4", lines
        words = " ".join(" ".join(lines[2:]).split())  # split() takes no-break spaces too
        said = tr._("{reroll}: {faces}", reroll=tr.terms(club).reroll, faces="4 4 4 4")
        assert words == f"bot-Diego {said}", lines
        assert lines[-1].replace("\u00a0", " ").endswith(" 4 4 4 4"), lines  # faces together
        assert all(line.startswith(" " * 13) for line in lines[3:]), lines
    english = moves_lines(translator("en"), translator("en").terms(club), replay, 2, ("a", "b"))
    assert [c.plain.replace("\u00a0", " ") for c in english[2:]] == [
        "b            show and reroll:",
        " " * 13 + "4 4 4 4",
    ]


def test_a_damaged_record_replays_up_to_its_fault():
    record, _ = calza_game()
    rounds = list(record.rounds)
    rounds[1] = rounds[1].__class__(dice={"ana": (6, 2), "ben": (4, 4)}, actions=rounds[1].actions)
    damaged = Record(
        rules=record.rules,
        players=record.players,
        first_opener=record.first_opener,
        rounds=tuple(rounds),
    )
    replay = replay_frames(damaged)
    assert replay.fault_round == 1
    assert [(f.round, f.step) for f in replay.frames] == [(0, 0), (0, 1), (0, 2)]


@pytest.mark.slow
async def test_enter_replays_a_game_move_by_move_and_round_by_round(tmp_path):
    store, ana, _ = await seeded(tmp_path)
    try:
        _, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            await open_screen(pilot, app, "h", HistoryScreen)
            grid = app.screen.query_one("#history-games", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 3)
            await pilot.press("down", "enter")  # game 2
            await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
            replay = app.screen
            assert isinstance(replay, ReplayScreen)
            await wait_until(pilot, lambda: replay.replay is not None)
            await pilot.pause()

            lines = lines_of(app)
            assert lines[0].strip() == "Replay of game 2 · classic · 2023-11-15"
            assert lines[1].split() == ["Round", "1", "▏", "Moves", "this", "round"]
            assert lines[2].split() == ["▏", "ana", "opens"]
            assert line_with(app, "▶", "ana") == ["▶", "ana", "(you)", "3", "3", "▏"]
            assert line_with(app, "ben") == ["ben", "3", "5", "▏"]
            assert lines[-2].strip() == "Round 1 of 3 · move 0 of 2"
            assert lines[-1].split() == [
                "→", "Next", "move", "←", "Move", "back", "]", "Next", "round", "[", "Round",
                "back", "esc", "Back", "?", "Help",
            ]  # fmt: skip

            await pilot.press("right")
            lines = lines_of(app)
            assert lines[3].split() == ["ana", "(you)", "3", "3", "▏", "ana", "2×3"]
            assert lines[4].split() == ["▶", "ben", "3", "5", "▏"]
            assert lines_of(app)[-2].strip() == "Round 1 of 3 · move 1 of 2"

            await pilot.press("right")  # the call: the reveal, every die shown
            lines = lines_of(app)
            assert lines[1].strip() == "Round 1: Calza!"
            text = screen_text(app)
            assert "ben called Calza on ana's 2×3: there were 3, not 2, so ben loses a die" in (
                " ".join(text.split())
            )
            assert "Counted 3 — bid was 2×3 (pacos wild)" in text
            assert line_with(app, "ana", "[3]") == ["ana", "[3]", "[3]"]
            assert line_with(app, "ben", "[3]") == ["ben", "[3]", "5"]
            assert "Press Space" not in text

            await pilot.press("right_square_bracket")  # the next round: a palifico round
            assert lines_of(app)[1].split()[:4] == ["Round", "2:", "Palifico", "round"]
            lines = lines_of(app)
            assert lines[2].split() == ["▏", "ben", "opens"]
            assert lines[3].split() == ["ana", "(you)", "6", "2", "▏"]
            assert lines[4].split() == ["▶", "ben", "4", "▏"]
            assert lines_of(app)[-2].strip() == "Round 2 of 3 · move 0 of 2"

            await pilot.press("left_square_bracket")  # at a round's start: the one before
            assert lines_of(app)[-2].strip() == "Round 1 of 3 · move 0 of 2"
            await pilot.press("pagedown", "pagedown", "right")
            assert lines_of(app)[-2].strip() == "Round 3 of 3 · move 1 of 2"
            await pilot.press("pageup")  # within a round: back to its start
            assert lines_of(app)[-2].strip() == "Round 3 of 3 · move 0 of 2"

            await pilot.press("end")
            text = screen_text(app)
            assert lines_of(app)[1].strip() == "Round 3: Dudo!"
            assert "Game over: ana wins." in text
            assert "Places: 1 ana · 2 ben" in text
            await pilot.press("right")  # nothing after the end
            assert lines_of(app)[-2].strip() == "Round 3 of 3 · move 2 of 2"

            await pilot.press("home", "left")  # nothing before the start
            assert lines_of(app)[-2].strip() == "Round 1 of 3 · move 0 of 2"
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen))
    finally:
        await store.close()


async def test_a_game_you_did_not_play_is_not_replayed(tmp_path):
    store, ana, ben = await seeded(tmp_path)
    carl = (await store.claim_key("SHA256:carl", "carl")).account
    game_id = await store_game(store, calza_game(), {"ben": ben.id}, T0 + 3 * DAY)
    try:
        _, app = start(store, carl)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.lobby is not None)
            replay = ReplayScreen(game_id)
            app.push_screen(replay)
            await wait_until(pilot, lambda: replay._problem is not None)
            await pilot.pause()
            lines = lines_of(app)
            assert lines[-2].strip() == "That game is not one of yours."
            assert not any("▶" in line or "[3]" in line for line in lines)
    finally:
        await store.close()


# ---- leaderboard and profile -------------------------------------------------------------


async def test_the_leaderboard_ranks_by_rating_and_opens_a_players_profile(tmp_path):
    store, ana, _ = await seeded(tmp_path)
    final = {name: points(ratings[-1]) for name, ratings in expected_ratings().items()}
    best, second = sorted(final, key=lambda name: -final[name])
    counts = {"ana": ("3", "1"), "ben": ("3", "2")}
    try:
        session, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            await open_screen(pilot, app, "l", LeaderboardScreen)
            grid = app.screen.query_one("#leaders", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 2)
            await pilot.pause()
            lines = lines_of(app)
            assert lines[0].strip() == "Leaderboard"
            assert lines[1].split() == ["#", "Player", "Rating", "Games", "Wins"]
            assert lines[2].split() == ["1", best, str(final[best]), *counts[best]]
            assert lines[3].split() == ["2", second, str(final[second]), *counts[second]]
            assert grid.cursor_row == [best, second].index("ana")  # on your own line

            grid.move_cursor(row=[best, second].index("ben"))
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, ProfileScreen))
            profile = app.screen
            assert isinstance(profile, ProfileScreen)
            await wait_until(pilot, lambda: profile.profile is not None)
            await pilot.pause()
            assert lines_of(app)[0].strip() == "Profile of ben"
            rating = str(final["ben"])
            assert line_with(app, "Rating", rating) == [
                "Rating",
                rating,
                *"after 2 rated games".split(),
            ]
            assert line_with(app, "Games") == ["Games", "3"]
            assert line_with(app, "Wins") == ["Wins", "2", "(67%)"]
            assert line_with(app, "Dudo") == ["Dudo", "1", "called", "·", "0", "right", "(0%)"]
            assert line_with(app, "Calza", "and", "Jonti") == [
                "Calza", "and", "Jonti", "1", "called", "·", "0", "right", "(0%)",
            ]  # fmt: skip
            # another's profile offers a challenge, the name filled in (issue 13)
            assert "x Challenge" in lines_of(app)[-1]
            await pilot.press("x", "enter")
            await wait_until(pilot, lambda: bool(session.sent))
            assert session.sent == [P.Challenge(name="ben", preset="classic")]
    finally:
        await store.close()


async def test_your_profile_shows_games_wins_calls_and_the_rating_over_time(tmp_path):
    store, ana, _ = await seeded(tmp_path)
    shown = [points(r) for r in expected_ratings()["ana"]]
    try:
        _, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            await open_screen(pilot, app, "p", ProfileScreen)
            profile = app.screen
            assert isinstance(profile, ProfileScreen)
            await wait_until(pilot, lambda: profile.profile is not None)
            await pilot.pause()
            assert lines_of(app)[0].strip() == "Profile of ana"
            assert "Challenge" not in lines_of(app)[-1]  # not oneself
            rating = str(shown[-1])
            assert line_with(app, "Rating", rating) == [
                "Rating",
                rating,
                *"after 2 rated games".split(),
            ]
            assert line_with(app, "Games") == ["Games", "3"]
            assert line_with(app, "Wins") == ["Wins", "1", "(33%)"]
            assert line_with(app, "Dudo") == ["Dudo", "2", "called", "·", "0", "right", "(0%)"]
            assert line_with(app, "Calza", "and", "Jonti") == [
                "Calza", "and", "Jonti", "1", "called", "·", "1", "right", "(100%)",
            ]  # fmt: skip
            assert line_with(app, "Rating", "over", "time") == ["Rating", "over", "time"]
            sparkline = profile.query_one(Sparkline)
            line = [1000, *shown]  # from where every account starts (issue 13)
            assert list(sparkline.data or ()) == [float(p) for p in line]
            assert sparkline.region.height == 4 and sparkline.region.width > 60
            assert line_with(app, "from") == [
                "from", "1000", "to", str(shown[-1]), "·", "lowest", str(min(line)), "·",
                "highest", str(max(line)),
            ]  # fmt: skip
    finally:
        await store.close()


# ---- guests, languages ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "kind"),
    [("h", HistoryScreen), ("l", LeaderboardScreen), ("p", ProfileScreen)],
)
async def test_a_guest_is_told_to_sign_in_with_a_key(key, kind):
    _, app = start(None, None)
    async with app.run_test(size=SIZE) as pilot:
        await open_screen(pilot, app, key, kind)
        text = " ".join(screen_text(app).split())
        assert " ".join(GUEST.split()) in text
        assert "Date" not in text and "Player Rating" not in text


async def test_a_guest_gets_no_replay():
    _, app = start(None, None)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.lobby is not None)
        app.push_screen(ReplayScreen(1))
        await pilot.pause()
        assert " ".join(GUEST.split()) in " ".join(screen_text(app).split())


async def test_the_screens_follow_a_language_switch(tmp_path):
    store, ana, _ = await seeded(tmp_path)
    fr = translator("fr")
    try:
        _, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            await open_screen(pilot, app, "h", HistoryScreen)
            grid = app.screen.query_one("#history-games", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 3)
            await pilot.press("f2")
            await pilot.pause()
            lines = lines_of(app)
            assert lines[0].strip() == fr._("Games of {name}", name="ana")
            assert lines[1].split()[:3] == [
                fr.p_("history column", "Game"),
                fr.p_("history column", "Date"),
                fr.p_("history column", "Preset"),
            ]
            assert grid.row_count == 3
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
            await wait_until(pilot, lambda: app.screen.replay is not None)
            await pilot.pause()
            where = fr._(
                "Round {round} of {rounds} · move {move} of {moves}",
                round=1,
                rounds=2,
                move=0,
                moves=3,
            )
            assert lines_of(app)[-2].strip() == where
    finally:
        await store.close()


async def test_the_create_dialog_sends_whether_the_table_is_rated():
    session = FakeSession()
    app = make_app(session, "en")
    session.feed(P.Welcome(name="ana"), lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await open_screen(pilot, app, "c", CreateTableDialog)
        assert "[x] Rated" in screen_text(app)
        app.screen.query_one("#rated").focus()
        await pilot.press("enter", "ctrl+s")
        await wait_until(pilot, lambda: bool(session.sent))
        (command,) = session.sent
        assert isinstance(command, P.CreateTable) and command.rated is False
        assert P.CreateTable().rated is True


async def test_the_bell_on_your_turn_is_kept_with_the_account(tmp_path):
    """Issue 13: `b` in the account dialog turns the bell on your turn off, in the store;
    the next session of the account starts with it off, and `b` turns it on again."""
    store, ana, _ = await seeded(tmp_path)

    async def one_session(before: bool) -> None:
        _, app = start(store, ana)
        async with app.run_test(size=SIZE) as pilot:
            await open_screen(pilot, app, "k", AccountScreen)
            await wait_until(pilot, lambda: app.turn_bell is before)
            word = "on" if before else "off"
            await wait_until(pilot, lambda: f"Bell on your turn: {word}" in screen_text(app))
            await pilot.press("b")
            await wait_until(pilot, lambda: app.turn_bell is not before)
            await wait_until(pilot, lambda: len(app.workers) <= 1)  # kept: the worker ended

    try:
        await one_session(before=True)
        assert await store.turn_bell(ana.id) is False
        await one_session(before=False)
        assert await store.turn_bell(ana.id) is True
    finally:
        await store.close()
