"""Pilot and text tests for what a newcomer reported at 80×24: stale notifications, the
game-over wording, a spectator's title and game-over box, the reveal's hint, a refused bid."""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox

from perudo_ssh import protocol as P
from perudo_ssh.i18n import translator
from perudo_ssh.rules import Roll, apply, observe
from screens import tableview
from screens.app import make_app
from screens.choice import Choice
from screens.create import CreateTableDialog
from screens.gameover import GameOverScreen
from screens.invite import ChallengeDialog, InviteCodeDialog
from screens.quickplay import QuickPlayDialog
from screens.table import TableScreen
from tests.test_screens_fakes import (
    FakeSession,
    bid,
    call,
    rolled,
    screen_text,
    table_state,
    wait_until,
)

SIZE = (80, 24)
EN = translator("en")


def ana_won():
    """A one-die game that ana (seat 0) has won: ben out first, then carl."""
    state = rolled(dice=((6,), (5,), (4,)), dice_per_player=1)
    state = call(bid(state, 0, 1, 6), 1)  # one 6: ben is out
    state = apply(state, Roll(dice=((3,), (), (3,))))
    state = call(bid(state, 2, 2, 4), 0)  # no 4 at all: carl is out
    assert state.winner == 0
    return state


def start(session: FakeSession, *events: P.Event):
    session.feed(P.Welcome(name=session.name), *events)
    return make_app(session)


async def game_over_screen(pilot, app) -> str:
    await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
    await pilot.press("space")
    await wait_until(pilot, lambda: isinstance(app.screen, GameOverScreen))
    await pilot.pause()
    return screen_text(app)


async def test_notifications_are_cleared_when_the_game_starts():
    session = FakeSession()
    app = start(session, table_state(None, status="waiting"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        session.feed(P.Refused(code="bad_command", message="a game needs at least 2 players"))
        await wait_until(pilot, lambda: len(app._notifications) == 1)
        session.feed(table_state(observe(rolled(), 0)))
        await wait_until(pilot, lambda: "your turn" in screen_text(app))
        assert not app._notifications


async def test_the_winner_reads_the_result_once_and_no_rolling():
    session = FakeSession()
    app = start(session, table_state(observe(ana_won(), 0), status="over"))
    async with app.run_test(size=SIZE) as pilot:
        text = await game_over_screen(pilot, app)
        assert "Game over: you win!" in text and "ana wins" not in text
        assert "Rolling…" not in text and "in cup" not in text
        assert "a: play again · l: back to the lobby" in text


async def test_a_spectator_is_offered_only_the_way_out():
    session = FakeSession()
    app = start(session, table_state(observe(ana_won(), None), me=None, status="over"))
    async with app.run_test(size=SIZE) as pilot:
        text = await game_over_screen(pilot, app)
        assert "Game over: ana wins." in text
        assert "l: back to the lobby" in text and "play again" not in text


def test_a_bot_that_took_a_seat_over_is_named_as_a_bot():
    state = ana_won()
    seats = tuple(P.SeatInfo(name=n, bot=True) for n in ("ana", "ben", "carl"))
    table = table_state(observe(state, 2), me=2, seats=seats, status="over")
    assert tableview.game_over_line(EN, table, observe(state, 2)) == "Game over: ana (bot) wins."


def test_a_spectators_title_fits_80_columns():
    for preset in ("classic", "calza-anytime", "gamerules", "club"):
        state = rolled(preset)
        table = table_state(observe(state, None), me=None, name="a table name of 24 chars")
        title = tableview.title_line(EN, table)
        assert len(title) <= 78 and "15 dice in play" in title, title  # 80 less padding
    gamerules = rolled("gamerules")
    watching = table_state(observe(gamerules, None), me=None, name="ana's table")
    assert tableview.title_line(EN, watching).endswith("watching · round 1 · 15 dice in play · "
                                                   "calza: on turn")  # fmt: skip
    playing = table_state(observe(gamerules, 0), name="ana's table")
    assert tableview.title_line(EN, playing).endswith("gamerules · calza: on turn")


async def test_the_reveal_shows_no_bidding_hint():
    session = FakeSession()
    state = call(bid(rolled(), 0, 3, 4), 1)
    app = start(session, table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        await pilot.pause()
        text = screen_text(app)
        assert "Press Space" in text and "type a bid like" not in text


async def test_enter_on_a_bid_not_allowed_says_why():
    session = FakeSession()
    app = start(session, table_state(observe(bid(rolled(), 0, 3, 4), 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("down")  # 3×4: not a raise
        await pilot.pause()
        assert "✗ not allowed" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert session.sent == []
        assert "3×4 is not allowed. After 3×4 you must raise" in screen_text(app)


def test_the_title_says_who_watches_where_there_is_room():
    """Issue 13: the spectators' names end the title (`watched by spy, tom`), the rule words
    (preset, then calza mode: the help has them) giving way to them; when the names cannot
    fit, how many watch. In English, French and Russian, within 78 columns."""
    state = observe(rolled("classic"), 0)
    two = table_state(state, name="ana's table", spectators=("spy", "tom"))
    nine = table_state(state, name="ana's table", spectators=tuple(f"watcher{i}" for i in range(9)))
    fr, ru = translator("fr"), translator("ru")
    expected = {
        (EN, two): "Table 1 · ana's table · round 1 · 15 dice in play · watched by spy, tom",
        (EN, nine): "Table 1 · ana's table · round 1 · 15 dice in play · calza: off · 9 watching",
        (fr, two): "Table 1 · ana's table · manche 1 · 15 dés en jeu · regardée par spy, tom",
        (fr, nine): (
            "Table 1 · ana's table · manche 1 · 15 dés en jeu · calza : non · 9 spectateurs"
        ),
        (ru, two): "Стол 1 · ana's table · раунд 1 · 15 костей в игре · смотрят: spy, tom",
        (ru, nine): "Стол 1 · ana's table · раунд 1 · 15 костей в игре · calza: выкл · 9 зрителей",
    }
    for (tr, table), title in expected.items():
        assert tableview.title_line(tr, table) == title
        assert len(title) <= 78
    wide = tableview.title_line(EN, two, width=118)  # a wider terminal: every word
    assert wide == (
        "Table 1 · ana's table · round 1 · 15 dice in play · classic · calza: off"
        " · watched by spy, tom"
    )
    waiting = table_state(None, status="waiting", name="ana's table", spectators=("spy",))
    assert tableview.title_line(EN, waiting) == "Table 1 · ana's table · waiting · watched by spy"
    alone = table_state(state, name="ana's table")  # nobody watching: as before
    assert tableview.title_line(EN, alone).endswith("15 dice in play · classic · calza: off")


async def test_between_rounds_the_title_names_the_round_revealed_not_the_next():
    """Issue 13, item 12: while the reveal of round 1 shows (the next roll not made yet),
    the title said "round 2" above it; it says "round 1" until round 2 is rolled."""
    called = call(bid(rolled(), 0, 3, 4), 1)  # ben calls dudo on ana's 3×4: round 1 ends
    assert called.phase == "rolling"
    title = tableview.title_line(EN, table_state(observe(called, 0)))
    assert " · round 1 · " in title and "round 2" not in title
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), table_state(observe(called, 0)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "Press Space" in screen_text(app))
        first_line = screen_text(app).splitlines()[0]
        assert " · round 1 · " in first_line
    rolled_again = apply(called, Roll(dice=((1, 2, 3, 4, 5), (2, 3, 4, 5), (6, 6, 5, 4, 3))))
    assert " · round 2 · " in tableview.title_line(EN, table_state(observe(rolled_again, 0)))


async def test_your_turn_rings_and_titles_the_terminal_when_you_are_elsewhere():
    """Issue 13, "your turn, when you are elsewhere": it becomes ana's turn while she reads
    the help: the terminal rings (BEL) and its title says so, and is its own again when she
    is back; at the table itself nothing rings; the table chat open counts as elsewhere;
    turned off in the account dialog (`b`), nothing rings."""
    from screens.account import AccountScreen
    from screens.help import HelpScreen

    session = FakeSession()
    app = make_app(session)
    first = rolled(opener=1)  # ben opens; ana (seat 0) plays third
    ours = bid(bid(first, 1, 2, 4), 2, 3, 4)
    session.feed(P.Welcome(name="ana"), table_state(observe(first, 0)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        table = app.screen
        written: list[str] = []  # what went to the terminal about its title
        rung: list[int] = []
        write = app._driver.write  # type: ignore[union-attr]

        def spy(text: str) -> None:
            if "[22;0t" in text or "[23;0t" in text:
                written.append(text)
            write(text)

        app._driver.write = spy  # type: ignore[union-attr,method-assign]
        app.bell = lambda: rung.append(1)  # type: ignore[method-assign]

        async def turn_comes(elsewhere: bool) -> None:
            session.feed(table_state(observe(first, 0)))
            await pilot.pause()
            session.feed(table_state(observe(ours, 0)))
            await wait_until(pilot, lambda: table._my_turn)
            await pilot.pause()

        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await turn_comes(elsewhere=True)
        assert rung == [1]
        assert written == ["\x1b[22;0t\x1b]2;Your turn · perudo-ssh\x07"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is table)
        await wait_until(pilot, lambda: written[-1:] == ["\x1b[23;0t"])  # its own title
        written.clear()
        await turn_comes(elsewhere=False)  # looking at the table: nothing rings
        assert rung == [1] and written == []
        await pilot.press("t")  # the table chat open: elsewhere
        await wait_until(pilot, lambda: table.has_class("-chat"))
        await turn_comes(elsewhere=True)
        assert rung == [1, 1]
        await pilot.press("escape")
        await wait_until(pilot, lambda: written[-1:] == ["\x1b[23;0t"])
        app.push_screen(AccountScreen())
        await wait_until(pilot, lambda: "Bell on your turn: on" in screen_text(app))
        await pilot.press("b")
        await wait_until(pilot, lambda: "Bell on your turn: off" in screen_text(app))
        assert app.turn_bell is False
        await turn_comes(elsewhere=True)  # under the account dialog, but turned off
        assert rung == [1, 1]


async def test_the_round_log_tells_the_rounds_before_newest_first_and_closes_again():
    """Issue 13, "the round log during play": `g` opens over the bids every finished round
    in words, newest first (who called what on whom, the tally), also for a player who
    arrives mid-game; Escape closes it without leaving the table; it follows the language.
    Before any round has ended it is not offered."""
    session = FakeSession()
    app = make_app(session)
    first = rolled()
    session.feed(P.Welcome(name="ana"), table_state(observe(first, 0)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        table = app.screen
        assert "g Rounds" not in screen_text(app).splitlines()[-1]  # no round ended yet
        one = call(bid(first, 0, 3, 4), 1)  # round 1: ben calls dudo on ana's 3×4
        two = apply(one, Roll(dice=((1, 2, 3, 4, 5), (2, 3, 4, 5), (6, 6, 5, 4, 3))))
        two = call(bid(two, two.turn, 2, 6), (two.turn + 1) % 3)  # round 2
        session.feed(table_state(observe(two, 0)))
        await wait_until(pilot, lambda: "Press Space" in screen_text(app))
        await pilot.press("space")
        await wait_until(pilot, lambda: "g Rounds" in screen_text(app).splitlines()[-1])
        await pilot.press("g")
        await wait_until(pilot, lambda: table.has_class("-log"))
        text = screen_text(app)
        assert "Rounds · g closes" in text
        assert text.index("Round 2: Dudo!") < text.index("Round 1: Dudo!")  # newest first
        assert "ben called Dudo on ana's 3×4" in text.replace("\n", " ").replace("│", "")
        await pilot.press("f2")  # French
        await wait_until(pilot, lambda: "Manche 2" in screen_text(app))
        await pilot.press("escape")  # closes the log; the table stays
        await wait_until(pilot, lambda: not table.has_class("-log"))
        assert app.screen is table and session.sent == [P.Ready(round=1)]


async def test_ratings_show_beside_names_in_the_lobby_at_the_table_and_change_at_game_over():
    """Issue 13: the online column puts each rating at its right (none for a guest), a seat's
    box its rating in the top border, and the game-over box each player's rating before and
    after the game once it is rated."""
    session = FakeSession("carl")
    lobby = P.LobbyState(tables=(), online=("ana", "ben", "carl"), ratings=(1014, None, 987))
    seats = (
        P.SeatInfo(name="ana", bot=False, rating=1014),
        P.SeatInfo(name="ben", bot=True),
        P.SeatInfo(name="carl", bot=False, rating=987),
    )
    over = table_state(observe(ana_won(), 2), me=2, status="over", seats=seats)
    app = start(session, lobby)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Online (3)" in screen_text(app))
        lines = screen_text(app).splitlines()
        assert [line.split("▏ ")[-1].rstrip() for line in lines[2:5]] == [
            "ana         1014",  # 16 columns: the name at the left, the rating at the right
            "ben",
            "carl         987",
        ]
        playing = table_state(observe(bid(rolled(), 0, 2, 3), 2), me=2, seats=seats)
        session.feed(playing)
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        text = screen_text(app)
        assert "╭─ ana " in text and "─ 1014 ─╮" in text
        assert "╭─ carl (you) " in text and "─ 987 ─╮" in text
        session.feed(over)
        text = await game_over_screen(pilot, app)
        assert " 1. ana" in text and "→" not in text  # not rated yet
        changes = (
            P.RatingChange(name="ana", before=1014, after=1028),
            P.RatingChange(name="carl", before=987, after=978),
        )
        session.feed(table_state(observe(ana_won(), 2), me=2, status="over", seats=seats,
                                 rating_changes=changes))  # fmt: skip
        await wait_until(pilot, lambda: "→" in screen_text(app))
        order = [line.split("│")[-2].strip() for line in screen_text(app).splitlines()
                 if " 1. " in line or " 2. " in line or " 3. " in line]  # fmt: skip
        assert order == [
            "1. ana          1014 → 1028 (+14)",
            "2. carl (you)   987 → 978 (−9)",
            "3. ben (bot)",
        ]


async def test_quick_play_picks_a_preset_and_a_wait_and_the_table_counts_the_wait_down():
    """Issue 13: `g` in the lobby opens quick play at any preset and 30 s; ←/→ and ↑/↓ change
    them, Enter sends them (and the next quick play starts from them); a quick-play table
    waiting says when bots take its free seats."""
    session = FakeSession("ana")
    app = start(session, P.LobbyState(tables=(), online=("ana",)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "g Quick play" in screen_text(app))
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, QuickPlayDialog))
        await pilot.pause()
        text = screen_text(app)
        assert "Preset      ◀ any preset ▶   ←/→" in text
        assert "Bots after  ◀ 30 s ▶   ↑/↓" in text
        await pilot.press("right", "up", "up", "up")  # the longest wait is 120 s
        await pilot.pause()
        text = screen_text(app)
        assert "◀ classic ▶" in text and "the published rules: palifico, calza off" in text
        assert "◀ 120 s ▶" in text
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, QuickPlayDialog))
        assert session.sent == [P.QuickPlay(preset="classic", wait_seconds=60)]
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, QuickPlayDialog))
        await pilot.pause()
        assert "◀ classic ▶" in screen_text(app) and "◀ 60 s ▶" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, QuickPlayDialog))
        assert len(session.sent) == 1
        seats = (P.SeatInfo(name="ana", bot=False),)
        session.feed(table_state(None, status="waiting", seats=seats, size=4, fill_in=60.0))
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await wait_until(pilot, lambda: "Bots take the free seats in" in screen_text(app))
        text = " ".join(screen_text(app).split())
        assert "Waiting for 3 more players." in text
        assert "Bots take the free seats in 1:00 unless players come first." in text or (
            "Bots take the free seats in 0:59 unless players come first." in text
        )


async def test_private_tables_and_challenges_from_the_lobby():
    """Issue 13: the create dialog's Private box, `i` to join by invite code, `x` to
    challenge a player with a preset (↑/↓), a challenge answered y or n; a private table's
    title and waiting hint give its code."""
    session = FakeSession("ben")
    app = start(session, P.LobbyState(tables=(), online=("ana", "ben")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Online (2)" in screen_text(app))
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        await pilot.pause()
        assert "[ ] Private" in screen_text(app) or "☐ Private" in screen_text(app)
        app.screen.query_one("#private", Checkbox).value = True
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(session.sent) == 1)
        assert session.sent[0].private is True
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, InviteCodeDialog))
        await pilot.pause()
        assert "Join a private table" in screen_text(app)
        await pilot.press("enter")  # nothing typed: nothing sent
        await pilot.press(*"k7p2qx", "enter")
        await wait_until(pilot, lambda: len(session.sent) == 2)
        assert session.sent[1] == P.JoinPrivate(code="k7p2qx")
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ChallengeDialog))
        await pilot.pause()
        assert "Preset  ◀ classic ▶   ↑/↓" in screen_text(app)
        await pilot.press(*"ana", "down", "enter")
        await wait_until(pilot, lambda: len(session.sent) == 3)
        assert session.sent[2] == P.Challenge(name="ana", preset="calza-anytime")
        for key, answer in (("y", P.JoinPrivate(code="ABCDEF")),
                            ("n", P.DeclineChallenge(code="ABCDEF"))):  # fmt: skip
            session.feed(P.Challenged(by="ana", table=4, code="ABCDEF", preset="gamerules"))
            await wait_until(pilot, lambda: "ana challenges you" in screen_text(app))
            assert "ana challenges you to a game of gamerules. Play?" in screen_text(app)
            await pilot.press(key)
            await wait_until(pilot, lambda answer=answer: session.sent[-1] == answer)
        seats = (P.SeatInfo(name="ana", bot=False), P.SeatInfo(name="ben", bot=False))
        session.feed(table_state(None, status="waiting", seats=seats, size=3, me=1, code="K7P2QX"))
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert "Table 1 · ana's table · private, code K7P2QX · waiting" in text
        assert "A private table: the others press e in the lobby and type its code K7P2QX." in text


@pytest.mark.parametrize(
    ("language", "quick", "waits", "private", "challenged"),
    [
        (
            "fr",
            "Variante    ◀ toute variante ▶   ←/→",
            "Bots après  ◀ 30 s ▶   ↑/↓",
            "Table privée : les autres appuient sur e dans le salon et tapent son code K7P2QX.",
            "ana vous défie à une partie de classic. Jouer ?",
        ),
        (
            "ru",
            "Вариант    ◀ любой вариант ▶   ←/→",
            "Боты через ◀ 30 с ▶   ↑/↓",
            "Закрытый стол: остальные нажимают e в лобби и вводят его код K7P2QX.",
            "ana вызывает вас на партию classic. Играть?",
        ),
    ],
)
async def test_quick_play_challenges_and_private_tables_in_french_and_russian(
    language, quick, waits, private, challenged
):
    """Issue 13: the new texts as a French or a Russian player sees them."""
    session = FakeSession("ben")
    app = make_app(session, language)
    session.feed(P.Welcome(name="ben"), P.LobbyState(tables=(), online=("ana", "ben")))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "(2)" in screen_text(app))
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, QuickPlayDialog))
        await pilot.pause()
        assert quick in screen_text(app) and waits in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, QuickPlayDialog))
        session.feed(P.Challenged(by="ana", table=4, code="ABCDEF", preset="classic"))
        await wait_until(pilot, lambda: challenged in screen_text(app))
        await pilot.press("n")
        seats = (P.SeatInfo(name="ana", bot=False), P.SeatInfo(name="ben", bot=False))
        session.feed(table_state(None, status="waiting", seats=seats, size=3, me=1, code="K7P2QX"))
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await wait_until(pilot, lambda: "K7P2QX" in screen_text(app))
        assert private in " ".join(screen_text(app).split())


async def test_the_create_dialog_picks_the_bots_level_and_the_seats_show_it():
    """Issue 14: the create dialog's "Bot level" (medium unless changed) goes with the table;
    a bot seated as such shows its level beside its name, in the player's language, at the
    waiting table and in its cup; a bot in a human's seat is only a bot."""
    session = FakeSession("ana")
    app = start(session, P.LobbyState(tables=(), online=("ana",)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Online (1)" in screen_text(app))
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        await pilot.pause()
        assert "Bot level medium" in " ".join(screen_text(app).split())
        app.screen.query_one("#bot_level", Choice).value = "hard"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(session.sent) == 1)
        assert session.sent[0].bot_level == "hard"
        seats = (
            P.SeatInfo(name="ana", bot=False),
            P.SeatInfo(name="bot-Elena", bot=True, level="hard"),
        )
        session.feed(table_state(None, status="waiting", seats=seats, size=3))
        await wait_until(pilot, lambda: "bot-Elena" in screen_text(app))
        assert "2. bot-Elena (hard bot)" in screen_text(app)
        seats = (*seats, P.SeatInfo(name="ben", bot=True))  # ben left: a bot plays for him
        session.feed(table_state(observe(rolled(), 0), seats=seats))
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.pause()
        assert "╭─ bot-Elena (hard bot) " in screen_text(app)
        assert "╭─ ben (bot) " in screen_text(app)
        await pilot.press("f2")  # French
        await wait_until(pilot, lambda: "bot-Elena (bot difficile)" in screen_text(app))
