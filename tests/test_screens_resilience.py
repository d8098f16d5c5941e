"""Pilot tests of what issue 5 shows on screen (80×24): the turn clock counting down, the
seats of disconnected players, automatic moves, the create dialog's turn timer and grace,
the rules panel's and the help's lines about them, in English, French and Russian.

Time is the app's injectable monotonic `clock`: a test moves it and calls the table screen's
`tick` (what the once-a-second timer calls), never sleeps.
"""

from __future__ import annotations

import pytest
from textual.content import Content
from textual.widgets import DataTable

from perudo_ssh import protocol as P
from perudo_ssh.i18n import translator
from perudo_ssh.rules import PRESETS, Roll, apply, new_game, observe, options_for
from screens.app import PerudoApp
from screens.create import CreateTableDialog
from screens.help import HelpScreen, keys_text
from screens.lobby import LobbyScreen, table_detail
from screens.refusals import say
from screens.rules import RulesScreen
from screens.rulestext import settings_lines
from screens.table import TableScreen
from screens.widgets import BidHistory, CupsPanel
from screens.wording import clock_time, duration
from tests.clocks import Clock
from tests.test_screens_fakes import (
    FakeSession,
    bid,
    call,
    lobby_state,
    rolled,
    screen_text,
    summary,
    table_state,
    wait_until,
)

SIZE = (80, 24)


def seats(*infos: P.SeatInfo) -> tuple[P.SeatInfo, ...]:
    """ana (a player), ben, carl (bots) — unless given."""
    return infos or tuple(P.SeatInfo(name=n, bot=n != "ana") for n in ("ana", "ben", "carl"))


HELD = P.SeatInfo(name="ben", bot=False, away=True, grace=104.2)
BOT_FOR_NOW = P.SeatInfo(name="ben", bot=True, away=True)
ANA, CARL = P.SeatInfo(name="ana", bot=False), P.SeatInfo(name="carl", bot=True)


async def start(*events: P.Event, language: str = "en", name: str = "ana"):
    session, clock = FakeSession(name), Clock()
    app = PerudoApp(session, language, clock=clock)
    session.feed(P.Welcome(name=name), *events)
    return session, clock, app


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def styles_of(app, selector: str) -> set[str]:
    content = app.screen.query_one(selector).content
    assert isinstance(content, Content)
    return {str(span.style) for span in content.spans}


def clock_of(app) -> str:
    """The turn clock at the start of the bid line, with its ` ·` ('' without one): the
    clock's words hold a dash (`ben to play — 0:42`), the bid's never do."""
    line = text_of(app, "#current-bid")
    head, dot, _ = line.partition(" · ")
    return head + " ·" if dot and "—" in head else ""


def bid_of(app) -> str:
    """The bid part of the bid line (after the clock, if any)."""
    line = text_of(app, "#current-bid")
    clock = clock_of(app)
    return line[len(clock) + 1 :] if clock else line


def clock_styles(app) -> set[str]:
    """The styles of the turn clock's words on the bid line."""
    content = app.screen.query_one("#current-bid").content
    assert isinstance(content, Content)
    end = len(clock_of(app)) - 2
    return {str(span.style) for span in content.spans if span.start < end}


def cups_text(app) -> list[str]:
    return [line.rstrip() for line in str(app.screen.query_one(CupsPanel).render()).splitlines()]


async def at_table(pilot, app) -> TableScreen:
    await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, TableScreen)
    return screen


async def tick(pilot, screen: TableScreen, clock: Clock, seconds: float) -> None:
    clock.now += seconds
    screen.tick()
    await pilot.pause()


# ---- the turn clock ------------------------------------------------------------------------


async def test_the_turn_clock_counts_down_and_warns_in_the_last_ten_seconds():
    view = observe(bid(rolled(opener=0), 0, 2, 4), 0)  # ben to play
    state = table_state(view, clock=P.TurnClock(seat=1, seconds=60, left=41.6), turn_seconds=60)
    session, clock, app = await start(state)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at_table(pilot, app)
        assert clock_of(app) == "ben to play — 0:42 ·"
        # the clock says whose turn it is: the bid line does not say it twice
        assert bid_of(app) == "Current bid: 2×4 by ana"
        # first on the bid line (notices pile up on the right), then the bid
        assert bid_line(app) == " ben to play — 0:42 · Current bid: 2×4 by ana"
        assert "bold" in clock_styles(app)
        await tick(pilot, screen, clock, 1.0)
        assert clock_of(app) == "ben to play — 0:41 ·"
        await tick(pilot, screen, clock, 30.0)
        assert clock_of(app) == "ben to play — 0:11 ·"
        assert "bold reverse $warning" not in clock_styles(app)
        await tick(pilot, screen, clock, 1.0)
        assert clock_of(app) == "ben to play — 0:10 ·"
        assert "bold reverse $warning" in clock_styles(app)
        await tick(pilot, screen, clock, 60.0)  # never below nothing
        assert clock_of(app) == "ben to play — 0:00 ·"
        # a new state: counted from its own arrival
        view = observe(bid(bid(rolled(opener=0), 0, 2, 4), 1, 3, 4), 0)
        session.feed(
            table_state(view, clock=P.TurnClock(seat=2, seconds=60, left=60.0), turn_seconds=60)
        )
        await wait_until(pilot, lambda: clock_of(app) == "carl to play — 1:00 ·")
        await pilot.pause()
        assert bid_line(app) == " carl to play — 1:00 · Current bid: 3×4 by ben"  # wider
        session.feed(
            table_state(view, clock=P.TurnClock(seat=0, seconds=60, left=5.0), turn_seconds=60)
        )
        await wait_until(pilot, lambda: clock_of(app) == "Your turn — 0:05 ·")
        await pilot.pause()
        assert bid_line(app) == " Your turn — 0:05 · Current bid: 3×4 by ben"  # narrower
        assert session.sent == []


def bid_line(app) -> str:
    """The screen's line with the current bid, as shown (trailing blanks cut)."""
    lines = screen_text(app).splitlines()
    return next(line for line in lines if "Current bid" in line).rstrip()


async def test_your_turn_is_unmistakable_and_no_clock_shows_nothing():
    view = observe(rolled(opener=0), 0)
    timed = table_state(view, clock=P.TurnClock(seat=0, seconds=30, left=29.2), turn_seconds=30)
    session, clock, app = await start(timed)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at_table(pilot, app)
        assert clock_of(app) == "Your turn — 0:30 ·"
        assert clock_styles(app) == {"bold reverse $accent"}
        assert bid_of(app) == "You open the round"
        await tick(pilot, screen, clock, 20.0)
        assert clock_of(app) == "Your turn — 0:10 ·"
        assert clock_styles(app) == {"bold reverse $warning"}
        session.feed(table_state(view))  # no turn timer at this table
        await wait_until(pilot, lambda: clock_of(app) == "")
        assert bid_of(app) == "You open the round · your turn"
        assert "0:" not in screen_text(app)


async def test_a_spectator_sees_the_clock():
    view = observe(rolled(opener=1), None)
    state = table_state(
        view, me=None, clock=P.TurnClock(seat=1, seconds=90, left=75.0), turn_seconds=90
    )
    _, clock, app = await start(state, name="dan")
    async with app.run_test(size=SIZE) as pilot:
        screen = await at_table(pilot, app)
        assert clock_of(app) == "ben to play — 1:15 ·"
        await tick(pilot, screen, clock, 15.5)
        assert clock_of(app) == "ben to play — 1:00 ·"


def test_clock_time_and_durations():
    assert [clock_time(s) for s in (0, 0.2, 9.0, 59.01, 60, 104.2, 600)] == [
        "0:00", "0:01", "0:09", "1:00", "1:00", "1:45", "10:00",
    ]  # fmt: skip
    en, fr, ru = translator("en"), translator("fr"), translator("ru")
    assert [duration(en, s) for s in (30, 60, 90, 120, 300)] == [
        "30 s", "60 s", "90 s", "2 min", "5 min",
    ]  # fmt: skip
    assert duration(fr, 120) == "2 min" and duration(ru, 30) == "30 с"


# ---- disconnected players ------------------------------------------------------------------


async def test_a_held_seat_counts_down_then_says_a_bot_plays_it():
    view = observe(rolled(opener=0), 0)
    state = table_state(view, seats=seats(ANA, HELD, CARL), grace_seconds=120)
    session, clock, app = await start(state)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at_table(pilot, app)
        assert cups_text(app)[3].startswith("╭─ ben · disconnected, seat held 1:45 ───")
        assert "bold $warning" in str(app.screen.query_one(CupsPanel).render().spans)
        await tick(pilot, screen, clock, 5.0)
        assert cups_text(app)[3].startswith("╭─ ben · disconnected, seat held 1:40 ───")
        session.feed(table_state(view, seats=seats(ANA, BOT_FOR_NOW, CARL), grace_seconds=120))
        await wait_until(pilot, lambda: "away, a bot plays for now" in cups_text(app)[3])
        assert cups_text(app)[3].startswith("╭─ ben · away, a bot plays for now ───")
        assert "(bot)" not in cups_text(app)[3]
        assert cups_text(app)[6].startswith("╭─ carl (bot) ───")  # a bot of its own


async def test_held_seats_on_one_line_each_when_the_table_is_crowded():
    names = ("ana", "benedetta", "carl", "dora", "eve", "fritz")
    state = apply(new_game(options_for("classic"), 6, 0), Roll(dice=((1, 2, 3, 4, 5),) * 6))
    infos = tuple(
        P.SeatInfo(name=n, bot=n == "dora", away=n in ("benedetta", "dora"), grace=None)
        for n in names
    )
    infos = (infos[0], P.SeatInfo(name="benedetta", bot=False, away=True, grace=95.0), *infos[2:])
    table = table_state(observe(state, 0), seats=infos, size=6)
    _, _, app = await start(table)
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        lines = [line for line in cups_text(app) if line]
        assert lines[1] == "  benedetta · held 1:35 [?][?][?][?][?] 5 dice"
        assert lines[3] == "  dora · away: bot      [?][?][?][?][?] 5 dice"


async def test_the_waiting_room_marks_a_disconnected_seat():
    waiting = table_state(None, status="waiting", seats=seats(ANA, HELD))
    _, _, app = await start(waiting)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "ben" in text_of(app, "#waiting-seats"))
        assert text_of(app, "#waiting-seats").splitlines()[1] == "  2. ben (disconnected)"


# ---- automatic moves -----------------------------------------------------------------------


async def test_an_automatic_bid_is_marked_in_the_rounds_bids():
    view = observe(bid(bid(rolled(opener=0), 0, 2, 4), 1, 3, 4), 0)
    automatic = (P.AutoMove(round=0, seat=1, bids=1), P.AutoMove(round=5, seat=0, bids=0))
    _, _, app = await start(table_state(view, automatic=automatic))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        lines = str(app.screen.query_one(BidHistory).render()).splitlines()
        assert [line.rstrip() for line in lines[-2:]] == [
            "ana            2×4",
            "ben            3×4 ◷ auto",
        ]
        assert "ben            3×4 ◷ auto" in screen_text(app)


async def test_the_reveal_says_the_call_was_automatic():
    ended = call(bid(bid(rolled(opener=0), 0, 2, 4), 1, 3, 4), 2)
    automatic = (P.AutoMove(round=0, seat=2, bids=2, call="dudo"),)
    _, _, app = await start(table_state(observe(ended, 0), automatic=automatic))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Round 1" in text_of(app, "#reveal"))
        lines = text_of(app, "#reveal").splitlines()
        assert lines[0] == "Round 1: automatic Dudo (time ran out)"
        assert lines[1] == "carl called Dudo on ben's 3×4: there were 5, so carl loses a die"


# ---- the create dialog ---------------------------------------------------------------------


@pytest.mark.slow
async def test_the_create_dialog_sends_the_turn_timer_and_grace_by_keys_alone():
    session, _, app = await start(lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        await pilot.pause()
        text = screen_text(app)
        # one row, each label before its value (the columns' widths follow the words)
        assert "│ Turn timer 60 s ▼ If disconnected held 2 min ▼ │" in " ".join(text.split())
        dialog = app.screen
        for _ in range(30):  # Tab from the presets to the turn timer
            await pilot.press("tab")
            if dialog.focused is dialog.query_one("#turn_seconds"):
                break
        assert dialog.focused is dialog.query_one("#turn_seconds")
        assert dialog.focused.region.bottom <= SIZE[1] - 1  # in view, above the footer
        await pilot.press("enter", "up", "enter")  # 60 s -> 30 s
        await pilot.press("tab")
        assert dialog.focused is dialog.query_one("#grace_seconds")
        assert dialog.focused.region.bottom <= SIZE[1] - 1
        await pilot.press("enter", "up", "up", "up", "enter")  # 2 min -> a bot at once
        await pilot.pause()
        assert "Turn timer      30 s" in screen_text(app)
        assert "If disconnected bot at once" in screen_text(app)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent == [
            P.CreateTable(
                preset="classic",
                seats=4,
                bots=2,
                options={},
                name="ana's table",
                turn_seconds=30,
                grace_seconds=0,
            )
        ]


@pytest.mark.slow
async def test_the_create_dialog_sends_the_defaults_and_its_rules_show_them():
    session, _, app = await start(lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        assert text_of(app, "#rules-settings").splitlines() == [
            "Turn timer and connection",
            "• Turn timer: 60 s to move; then a move is made for you: the smallest bid your "
            "own dice support, else Dudo.",
            "• A disconnected player's seat is held 2 min for them; then a bot plays it until "
            "they log in again with the same key.",
        ]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
        await pilot.press("f2")  # French, then Russian: the settings' words follow
        await wait_until(pilot, lambda: "Minuteur" in screen_text(app))
        assert "Si déconnecté gardée 2 min" in " ".join(screen_text(app).split())
        await pilot.press("f2")
        await wait_until(pilot, lambda: "Таймер хода 60 с" in " ".join(screen_text(app).split()))
        assert "При отключении место ждёт 2 мин" in " ".join(screen_text(app).split())
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        sent = session.sent[0]
        assert isinstance(sent, P.CreateTable)
        assert (sent.turn_seconds, sent.grace_seconds) == (60, 120)


# ---- the rules panel, the help, the lobby --------------------------------------------------


async def test_the_rules_panel_and_the_help_say_the_tables_timer_and_grace():
    view = observe(rolled(opener=0), 0)
    _, _, app = await start(table_state(view, turn_seconds=0, grace_seconds=30))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        assert text_of(app, "#rules-settings").splitlines()[1:] == [
            "• No turn timer: the table waits for each player.",
            "• A disconnected player's seat is held 30 s for them; then a bot plays it until "
            "they log in again with the same key.",
        ]
        await pilot.press("escape", "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert text_of(app, "#help-settings") == text_of_settings(0, 30)
        keys = text_of(app, "#help-keys")
        assert "  ◷ auto     a move made for a player whose time ran out" in keys
        assert (
            "  ssh        If your connection drops, log in again with the same key within the "
            "grace period: you are seated back."
        ) in keys


def text_of_settings(turn: int, grace: int) -> str:
    lines = settings_lines(translator("en"), PRESETS["classic"], turn, grace)
    return "\n".join(["Turn timer and connection", *(f"• {line}" for line in lines)])


def test_a_club_table_follows_its_leaving_rule_after_the_grace():
    tr = translator("en")
    assert settings_lines(tr, PRESETS["club"], 60, 120)[1] == (
        "A disconnected player's seat is held 2 min for them; then, as when leaving, their cup "
        "stays until the round ends and they are out."
    )
    assert settings_lines(tr, PRESETS["club"], 60, 0)[1] == (
        "A disconnected player leaves at once: their cup stays until the round ends, then they "
        "are out."
    )
    assert settings_lines(tr, PRESETS["classic"], 60, 0)[1] == (
        "A disconnected player's seat is played by a bot at once, until they log in again with "
        "the same key."
    )
    ru = translator("ru")
    club = ru.terms(PRESETS["club"])
    assert club.dudo in settings_lines(ru, PRESETS["club"], 30, 120)[0]  # the table's word


async def test_the_lobby_says_the_chosen_tables_timer_and_who_is_away():
    tables = lobby_state(
        summary(1, turn_seconds=60), summary(2, status="playing", free=0, away=2, turn_seconds=0)
    )
    session, _, app = await start(tables)
    async with app.run_test(size=SIZE) as pilot:
        grid = app.screen.query_one("#tables", DataTable)
        await wait_until(pilot, lambda: grid.row_count == 2)
        await pilot.pause()
        assert text_of(app, "#lobby-hint") == "Table 1 · table 1 · turn timer 60 s"
        await pilot.press("down")
        await wait_until(pilot, lambda: "Table 2" in text_of(app, "#lobby-hint"))
        assert text_of(app, "#lobby-hint") == (
            "Table 2 · table 2 · no turn timer · 2 players disconnected"
        )
        session.feed(lobby_state(summary(1, turn_seconds=60)))  # the chosen table closes
        await wait_until(pilot, lambda: grid.row_count == 1)
        await wait_until(
            pilot, lambda: text_of(app, "#lobby-hint") == "Table 1 · table 1 · turn timer 60 s"
        )
    ru = translator("ru")
    assert str(table_detail(summary(3, turn_seconds=300, away=1), ru)) == (
        "Стол 3 · table 3 · таймер хода 5 мин · 1 игрок отключён"
    )


# ---- French and Russian --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "clock_line", "mine", "held", "bot", "auto"),
    [
        (
            "fr",
            "À ben de jouer — 0:42",
            "À vous — 0:42",
            "╭─ ben · déconnecté, place gardée 1:45 ───",
            "╭─ ben · absent, un bot le remplace ───",
            "ben            3×4 ◷ auto",
        ),
        (
            "ru",
            "Ходит ben — 0:42",
            "Ваш ход — 0:42",
            "╭─ ben · отключён, место ждёт 1:45 ───",
            "╭─ ben · отключён, пока играет бот ───",
            "ben            3×4 ◷ авто",
        ),
    ],
)
async def test_french_and_russian(language, clock_line, mine, held, bot, auto):
    view = observe(bid(bid(rolled(opener=0), 0, 2, 4), 1, 3, 4), 0)
    state = table_state(
        view,
        seats=seats(ANA, HELD, CARL),
        clock=P.TurnClock(seat=1, seconds=60, left=41.6),
        automatic=(P.AutoMove(round=0, seat=1, bids=1),),
    )
    session, clock, app = await start(state, language=language)
    async with app.run_test(size=SIZE) as pilot:
        screen = await at_table(pilot, app)
        assert clock_of(app) == clock_line + " ·"
        assert cups_text(app)[3].startswith(held)
        assert auto in screen_text(app)
        await tick(pilot, screen, clock, 0.0)
        session.feed(
            table_state(
                view,
                seats=seats(ANA, BOT_FOR_NOW, CARL),
                clock=P.TurnClock(seat=0, seconds=60, left=41.6),
            )
        )
        await wait_until(pilot, lambda: clock_of(app) == mine + " ·")
        assert cups_text(app)[3].startswith(bot)


@pytest.mark.parametrize("language", ["fr", "ru"])
def test_the_servers_notices_read_in_every_language(language):
    tr = translator(language)
    notices = [
        ("{name} ran out of time: automatic bid of {count}×{face}",
         {"name": "ben", "count": 3, "face": 4}),
        ("{name} ran out of time: automatic Dudo", {"name": "ben"}),
        ("{name} lost their connection; their seat is held for {seconds} seconds",
         {"name": "ben", "seconds": 120}),
        ("{name} has not come back: a bot plays their seat until they do", {"name": "ben"}),
        ("{name} is not back: their cup stays until this round ends, then they are out",
         {"name": "ben"}),
        ("{name} has not come back and is out of the game", {"name": "ben"}),
        ("{name} is back", {"name": "ben"}),
        ("server stopping: your game is saved; log in again to go on", {}),
        ("the turn timer is off (0) or {low} to {high} seconds", {"low": 10, "high": 600}),
        ("a seat is held for 0 to {high} seconds", {"high": 3600}),
    ]  # fmt: skip
    for text, args in notices:
        said = say(tr, text, args)
        assert said != text.format(**args), text  # translated
        assert all(str(value) in said for value in args.values()), said
    back = {"fr": "ben est de retour", "ru": "ben снова в игре"}[language]
    assert say(tr, "{name} is back", {"name": "ben"}) == back


@pytest.mark.parametrize("language", ["fr", "ru"])
def test_the_help_explains_the_timer_and_reconnecting_in_every_language(language):
    tr = translator(language)
    keys = str(keys_text(tr))
    assert tr._("Turn timer and connection") in keys
    seated_back = tr._(
        "If your connection drops, log in again with the same key within the grace period: "
        "you are seated back."
    )
    assert seated_back in keys
    assert "If your connection drops" not in keys
