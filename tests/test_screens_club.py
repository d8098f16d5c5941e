"""Pilot tests of the club table (RULES.md §4–§6, seed 002) at 80×24, in English, French and
Russian: balances and the bank always on screen, every payment at the reveal with its reason,
the calzone question, jonti's reason when it is refused, dice set aside beside the cup, the
winner taking the bank, and the opening roll.

Expected texts are built with the session's translator (`tr._` of the same message id, the
table's `terms`): in English they are the exact sentences; in French and Russian they check
that the screen speaks the session's language with the table's own words, whatever the
catalogs hold today.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from perudo_ssh import protocol as P
from perudo_ssh.i18n import translator
from perudo_ssh.rules import (
    DeclareCalzone,
    Reroll,
    Resign,
    Roll,
    apply,
    new_game,
    observe,
    options_for,
)
from screens.app import make_app
from screens.calzone import CalzoneDialog
from screens.dialogs import ConfirmDialog
from screens.gameover import GameOverScreen
from screens.reveal import RevealPanel
from screens.table import TableScreen
from screens.widgets import BidHistory, CupsPanel, DiceRow
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
LANGUAGES = ("en", "fr", "ru")
CLUB = options_for("club")


def start(session: FakeSession, language: str, *events: P.Event):
    app = make_app(session, language)
    session.feed(P.Welcome(name=session.name), *events)
    return app


async def at_table(pilot, app) -> TableScreen:
    await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
    await pilot.pause()
    assert isinstance(app.screen, TableScreen)
    return app.screen


def reveal_text(app) -> list[str]:
    return [line.plain for line in app.screen.query_one(RevealPanel)._lines]


def status_of(app) -> str:
    return str(app.screen.query_one("#status").render())


def fits(text: str) -> None:
    """Every line of the screen is within 80 columns (nothing pushed off the right)."""
    assert all(len(line.rstrip()) <= 80 for line in text.splitlines())


@pytest.mark.parametrize("language", LANGUAGES)
async def test_balances_and_the_bank_are_always_on_screen(language):
    tr = translator(language)
    session = FakeSession()
    state = bid(rolled("club"), 0, 3, 4)
    app = start(session, language, table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        text = screen_text(app)
        assert tr._("bank ¤{bank}", bank=30) in text.splitlines()[0]
        assert text.count("¤-10") == 3  # every seat's balance: the stake paid
        cups = app.screen.query_one(CupsPanel)._cups
        assert [cup.tokens for cup in cups] == [-10, -10, -10]
        fits(text)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.slow
async def test_the_reveal_gives_each_payment_its_reason_and_the_bank(language):
    tr = translator(language)
    terms = tr.terms(CLUB)
    session = FakeSession()
    # ana 2 4 4 1 6, ben 5 5 3 3 2, carl 1 6 6 4 3: four 5s with pacos, exactly ana's bid
    perfect = call(bid(rolled("club"), 0, 4, 5), 1)
    app = start(session, language, table_state(observe(perfect, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        lines = reveal_text(app)
        paid = tr._(
            "{name} pays {amount}: a perfect bid — {dudo} on an exact bid",
            name="ben", amount=1, dudo=terms.dudo,
        )  # fmt: skip
        bank = tr._("Bank: ¤{bank}", bank=31)
        if language == "en":
            assert "ben pays 1: a perfect bid — Dudo on an exact bid · Bank: ¤31" in lines
            text = screen_text(app)
            assert "ben pays 1: a perfect bid — Dudo on an exact bid · Bank: ¤31" in text
            assert "ben              [5] [5]  3   3   2     ¤-11" in text  # balance after
            fits(text)
        else:
            assert f"{paid} · {bank}" in lines or (paid in lines and bank in lines)
    # a bid on pacos while pacos are wild: the difference counts double
    short = call(bid(bid(rolled("club"), 0, 3, 4), 1, 3, 1), 2)  # two pacos, not three
    app = start(FakeSession(), language, table_state(observe(short, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        lines = reveal_text(app)
        paid = tr._(
            "{payment}, doubled on pacos",
            payment=tr._(
                "{name} pays {amount}: the bid {bid} was {short} short",
                name="ben", amount=2, bid=terms.pacos(3), short=1,
            ),
        )  # fmt: skip
        assert any(line.startswith(paid) for line in lines), lines
        if language == "en":
            assert "ben pays 2: the bid 3 pacos was 1 short, doubled on pacos · Bank: ¤32" in lines


def club_state_with_jonti():
    """ana has lost a die (4 left): jonti is open to her out of turn (RULES.md §5)."""
    state = replace(new_game(CLUB, 3, 0), counts=(4, 5, 5))
    return apply(state, Roll(dice=((2, 4, 4, 1), (5, 5, 3, 3, 2), (1, 6, 6, 4, 3))))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.slow
async def test_jonti_is_offered_out_of_turn_and_refused_with_its_reason(language):
    tr = translator(language)
    terms = tr.terms(CLUB)
    session = FakeSession()
    state = bid(club_state_with_jonti(), 0, 3, 4)  # ana's own bid: no jonti on it
    app = start(session, language, table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        assert f"j {terms.jonti}" not in screen_text(app)  # offered only while allowed
        await pilot.press("j")
        await pilot.pause()
        why = tr._("you cannot call {jonti} on your own bid", jonti=terms.jonti)
        assert status_of(app) == tr._("No {jonti} now: {why}", jonti=terms.jonti, why=why)
        if language == "en":
            assert status_of(app) == "No Jonti now: you cannot call Jonti on your own bid"
        # ben raised: it is carl's turn, ana may call jonti out of turn
        session.feed(table_state(observe(bid(state, 1, 4, 4), 0)))
        await wait_until(pilot, lambda: f"j {terms.jonti}" in screen_text(app))
        await pilot.press("j")
        await pilot.pause()
        assert session.sent == [P.MakeCall(call="jonti")]
        # carl raised: now it is ana's turn, and jonti is called out of turn only
        session.feed(table_state(observe(bid(bid(state, 1, 4, 4), 2, 5, 4), 0)))
        await wait_until(pilot, lambda: f"j {terms.jonti}" not in screen_text(app))
        await pilot.press("j")
        await pilot.pause()
        why = tr._("it is your turn: {jonti} is called out of turn", jonti=terms.jonti)
        assert status_of(app) == tr._("No {jonti} now: {why}", jonti=terms.jonti, why=why)
        assert session.sent == [P.MakeCall(call="jonti")]


def one_die_opening():
    """ana just dropped from two dice to one: she opens and may declare calzone."""
    state = replace(new_game(CLUB, 3, 0), counts=(2, 5, 5))
    state = apply(state, Roll(dice=((3, 3), (2, 2, 2, 2, 2), (4, 4, 4, 4, 4))))
    state = call(bid(state, 0, 3, 3), 1)  # two 3s: ana drops to one die and opens
    return apply(state, Roll(dice=((5,), (2, 2, 2, 2, 2), (4, 4, 4, 4, 4))))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.slow
async def test_the_calzone_question_is_asked_before_any_bid(language):
    tr = translator(language)
    terms = tr.terms(CLUB)
    session = FakeSession()
    state = one_die_opening()
    app = start(session, language, table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, CalzoneDialog))
        await pilot.pause()
        text = screen_text(app)
        question = tr._("You dropped to one die. Declare {calzone}?", calzone=terms.calzone)
        assert question in text
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        assert session.sent == [P.DeclareCalzone()]
        # the round is then special; everyone is told who may change face
        declared = apply(state, DeclareCalzone(seat=0))
        session.feed(table_state(observe(declared, 0)))
        await pilot.pause()
        banner = str(app.screen.query_one("#banner").render())
        special = terms.calzone.upper()
        assert banner == tr._(
            "{special} — pacos not wild; may change face: {names}",
            special=special, names=tr._("you"),
        )  # fmt: skip
        session.feed(table_state(observe(bid(declared, 0, 1, 5), None), me=None))
        await pilot.pause()
        banner = str(app.screen.query_one("#banner").render())
        assert banner == tr._(
            "{special} — pacos not wild; may change face: {names}", special=special, names="ana"
        )
        if language == "en":
            assert banner == "CALZONE — pacos not wild; may change face: ana"


async def test_declining_calzone_plays_a_normal_round_and_is_not_asked_again():
    session = FakeSession()
    state = one_die_opening()
    app = start(session, "en", table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, CalzoneDialog))
        await pilot.pause()
        text = screen_text(app)
        assert "pacos are not wild" in text and "may change the face" in text
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        session.feed(table_state(observe(state, 0), spectators=("zoe",)))  # another update
        await pilot.pause()
        assert isinstance(app.screen, TableScreen) and session.sent == []
        assert "z Calzone" in screen_text(app)  # still there, until the first bid
        await pilot.press("enter")  # a normal bid
        await pilot.pause()
        assert session.sent == [P.MakeBid(count=1, face=2)]


async def test_the_calzone_question_waits_for_the_reveal_to_close():
    session = FakeSession()
    state = one_die_opening()
    before = replace(state, phase="rolling", round_index=1)  # the reveal of the drop
    app = start(session, "en", table_state(observe(before, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        await pilot.pause()
        assert isinstance(app.screen, TableScreen)  # not asked over the reveal
        await pilot.press("space")  # closes the reveal: not asked while the dice roll
        await wait_until(pilot, lambda: not app.screen.has_class("-reveal"))
        assert isinstance(app.screen, TableScreen)
        session.feed(table_state(observe(state, 0)))  # rolled again: ana opens, asked first
        await wait_until(pilot, lambda: isinstance(app.screen, CalzoneDialog))


async def test_a_reveal_left_open_gives_way_to_the_calzone_question_when_the_round_starts():
    """The reveal timed out and the round waits on ana's opening: the reveal closes (the
    turn clock runs) and the calzone question, hers before any bid, is asked."""
    session = FakeSession()
    state = one_die_opening()
    before = replace(state, phase="rolling", round_index=1)
    app = start(session, "en", table_state(observe(before, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        session.feed(table_state(observe(state, 0)))
        await wait_until(pilot, lambda: isinstance(app.screen, CalzoneDialog))
        assert session.sent == []  # no Ready: the round had gone on without it


async def test_set_aside_dice_are_shown_beside_the_cup_to_everyone():
    session = FakeSession()
    state = bid(rolled("club"), 0, 3, 4)
    state = apply(state, Reroll(seat=0, reveal=(4, 4), new_faces=(3, 3, 5)))
    app = start(session, "en", table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        assert "│ [?][?][?][4][4] 5 dice   ¤-10" in screen_text(app)
        cups = app.screen.query_one(CupsPanel)._cups
        assert cups[0].shown == (4, 4) and cups[1].shown == ()
        # ana sees her hidden dice and, apart, the ones she set aside
        session.feed(table_state(observe(state, 0)))
        await pilot.pause()
        row = app.screen.query_one(DiceRow)
        assert (row._faces, row._shown) == ((3, 3, 5), (4, 4))
        text = screen_text(app)
        assert "┃ 4 ┃ ┃ 4 ┃" in text and "2 set aside" in text and "3 in cup" in text


def club_game_won_by_carl():
    """One die each left: ben doubts a perfect bid and is out; ana doubts a true one."""
    state = replace(new_game(CLUB, 3, 0), counts=(1, 1, 1))
    state = apply(state, Roll(dice=((6,), (5,), (4,))))
    state = call(bid(state, 0, 1, 6), 1)  # one 6: a perfect bid, ben pays 1 and is out
    state = apply(state, Roll(dice=((3,), (), (3,))))
    # carl opens (next after ben); two 3s for his 1×3: ana pays 1 and is out, carl wins
    return call(bid(state, 2, 1, 3), 0)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.slow
async def test_the_winner_takes_the_bank(language):
    tr = translator(language)
    session = FakeSession()
    state = club_game_won_by_carl()
    assert state.tokens is not None and state.tokens.balances == (-11, -11, 22)
    app = start(session, language, table_state(observe(state, 0), status="over"))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        lines = reveal_text(app)
        assert tr._("{name} wins and takes the bank: ¤{bank}", name="carl", bank=32) in lines
        if language == "en":
            assert "ana pays 1: called Dudo on 1×3, but there was 1 more" in lines
            assert "carl wins and takes the bank: ¤32" in lines
        await pilot.press("space")
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverScreen))
        await pilot.pause()
        order = str(app.screen.query_one("#over-order").render()).splitlines()
        assert order[:3] == [
            " 1. " + tr._("{name} (bot)", name="carl") + "   ¤22",
            " 2. " + tr._("{name} (you)", name="ana") + "   ¤-11",
            " 3. " + tr._("{name} (bot)", name="ben") + "   ¤-11",
        ]
        assert order[-1] == tr._("{name} took the bank: ¤{bank}", name="carl", bank=32)
        fits(screen_text(app))


async def test_six_seats_and_the_opening_roll_fit_80_by_24():
    session = FakeSession()
    names = ("ana", "bernadette", "carl", "dolores", "eusebio", "fatima")
    seats = tuple(P.SeatInfo(name=n, bot=n != "ana") for n in names)
    state = new_game(CLUB, 6, 4)  # eusebio won the roll-off
    state = apply(state, Roll(dice=tuple((2, 3, 4, 5, 6) for _ in range(6))))
    opening = ((6, 2, 6, 6, 6, 1), (5, None, 3, 2, 6, None), (None, None, None, None, 4, None))
    table = table_state(observe(state, 0), seats=seats, size=6, opening=opening)
    app = start(session, "en", table)
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        text = screen_text(app)
        fits(text)
        for name in names:  # every cup with its balance
            (line,) = [line for line in text.splitlines() if line[2:].startswith(f"{name} (")]
            assert "5 dice" in line and "¤-10" in line
        history = [line.plain for line in app.screen.query_one(BidHistory)._lines]
        assert history == [
            "Opening roll: 1 die each",
            "  ana         6 → 5",
            "  bernadette  2",
            "  carl        6 → 3",
            "  dolores     6 → 2",
            "  eusebio     6 → 6 → 4",
            "  fatima      1",
            "  ties roll again",
            "▶ eusebio opens",
        ]
        for line in history:  # the whole opening roll is on screen
            assert line.strip() in text
        assert "eusebio won the opening roll and opens · eusebio to play" in text


async def test_leaving_a_club_table_says_the_cup_stays_until_the_round_ends():
    session = FakeSession()
    app = start(session, "en", table_state(observe(rolled("club"), 0)))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Your cup stays on the table until the round ends" in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
        assert session.sent == [P.LeaveTable()]


@pytest.mark.parametrize("language", ("fr", "ru"))
async def test_a_language_switch_redraws_the_club_table(language):
    tr = translator(language)
    terms = tr.terms(CLUB)
    session = FakeSession()
    state = bid(bid(club_state_with_jonti(), 0, 3, 4), 1, 4, 4)  # ana may call jonti
    app = start(session, "en", table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        screen = await at_table(pilot, app)
        assert "j Jonti" in screen_text(app)
        app.set_language(language)
        await pilot.pause()
        text = screen_text(app)
        # out of turn only jonti would work: dudo is not offered (issue 13, item 6)
        assert f"j {terms.jonti}" in text and f"d {terms.dudo}" not in text
        placeholder = tr._(
            "Tab, then type a bid like 5x4 or 3p (or {dudo}), Enter", dudo=terms.dudo
        )
        assert screen.query_one("#bid-input").placeholder == placeholder
        title = str(screen.query_one("#table-title").render())
        assert tr._("bank ¤{bank}", bank=30) in title
        assert tr.n_("{n} die in play", "{n} dice in play", 14) in title
        assert screen.describe_binding(screen._bindings.key_to_bindings["j"][0]) == terms.jonti


@pytest.mark.parametrize("language", LANGUAGES)
async def test_the_reveal_says_who_left_and_a_language_switch_redraws_it(language):
    tr = translator(language)
    session = FakeSession()
    state = call(bid(rolled("club"), 0, 4, 5), 1)  # a perfect bid: ben pays 1
    state = apply(state, Resign(seat=2))  # carl left during the round: out once it ended
    app = start(session, "en", table_state(observe(state, 0)))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        lines = reveal_text(app)
        assert "carl left the table: out of the game; their tokens stay in the bank" in lines
        assert "carl             [1]  6   6   4   3     ¤-10" in lines
        app.set_language(language)
        await pilot.pause()
        left = tr._(
            "{name} left the table: out of the game; their tokens stay in the bank", name="carl"
        )
        assert left in reveal_text(app)
        assert reveal_text(app)[-1] == tr._("Press Space to continue")
        assert app.screen.has_class("-reveal")  # still the reveal, now in the new language


async def test_a_language_switch_redraws_the_cups_and_the_bids_at_once():
    """F2 at a table: the cups' words and the bids' heading change at once, not at the next
    move (their data has not changed; found by the French review)."""
    session = FakeSession()
    state = bid(rolled("club"), 0, 3, 4)
    app = start(session, "en", table_state(observe(state, 1), me=1))
    async with app.run_test(size=SIZE) as pilot:
        await at_table(pilot, app)
        assert "Bids this round" in screen_text(app)
        await pilot.press("f2")
        await pilot.pause()
        text = screen_text(app)
        fr = translator("fr")
        assert fr._("Bids this round") in text and "Bids this round" not in text
        assert "(you)" not in text
