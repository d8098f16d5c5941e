"""The rules panel and its generator (RULES.md §7: "The table's rules are shown to every player
and spectator, and an in-game help page explains the active rules in plain words").

`rules_summary` is generated from the options, one line per rule: the English texts are
checked exactly; French and Russian have the same lines, in the language's translator and
with the table's terms (equal to English until the catalogs are filled).
"""

from __future__ import annotations

import pytest

from perudo_ssh import protocol as P
from perudo_ssh.i18n import translator
from perudo_ssh.rules import PRESET_NAMES, PRESETS, observe, options_for
from screens.app import make_app
from screens.help import HelpScreen, keys_text
from screens.rules import RulesScreen, rules_content
from screens.rulestext import lobby_rules, rules_summary
from tests.test_screens_fakes import (
    FakeSession,
    lobby_state,
    rolled,
    screen_text,
    table_state,
    wait_until,
)

SIZE = (80, 24)

CLASSIC = [
    "Preset classic: the published rules: palifico, calza off.",
    "Everyone starts with 5 dice; the dice are rolled in secret each round.",
    "A bid such as 5×4 claims that at least 5 of all the dice in play show a 4. The opener "
    "bids first; then each player in turn raises the bid or calls.",
    "First opener: everyone rolls 2 dice and the highest total opens; the tied roll again.",
    "Raising: more dice of any face, or the same count of a higher face.",
    "Face 1 (paco) is wild in a normal round: it counts for every face. A bid on face 1 needs "
    "half the count, rounded up (after 5×4: 3 pacos); back to another face, double it and add "
    "one (after 3 pacos: 7×4). A normal round may not open on face 1.",
    "Dudo: on your turn, instead of bidding, doubt the last bid. If fewer dice match it than "
    "bid, the bidder loses a die; otherwise the caller does.",
    "Palifico: the round right after a player drops to one die. That player opens; face 1 is "
    "not wild and ranks lowest, and any face may open.",
    "In a Palifico round nobody changes the face: each bid raises the count of the opening face.",
    "No Calza: nobody may claim that a bid is exact.",
    "A player who leaves mid-game hands the seat to a bot, which plays on.",
    "The last player with dice wins.",
]


def test_the_classic_rules_exactly():
    assert rules_summary(PRESETS["classic"]) == CLASSIC
    assert rules_summary(PRESETS["classic"], translator("en")) == CLASSIC


def test_the_club_rules_say_each_club_option():
    lines = rules_summary(PRESETS["club"])
    assert lines[0] == "Preset club: calzone, jonti, show and reroll, 10-token bank."
    assert lines[1] == "Everyone starts with 5 dice; the dice are rolled in secret each round."
    assert lines[3] == (
        "First opener: everyone rolls 1 die and the highest opens; the tied roll again."
    )
    assert lines[4] == "Raising: more dice, a higher face, or both; never less of either."
    assert lines[7:] == [
        "Calzone: a player who just dropped to one die may declare it before the round's first "
        "bid; then face 1 is not wild and ranks lowest.",
        "In a Calzone round only players with one die may change the face; the others raise "
        "the count of the same face.",
        "No Calza: the exact call here is Jonti.",
        "Jonti: an exact call out of turn, while at least three players have dice, by a player "
        "with fewer than 5 dice, on a bid made neither by them nor by the player just before "
        "them. Right, they gain a die; wrong, they lose one.",
        "Show and reroll: right after your own bid you may set some of your hidden dice aside "
        "face up (they count at the end) and re-roll the rest, keeping one or more hidden.",
        "Tokens: everyone pays 10 into the bank at the start. Whoever loses a die on Dudo pays "
        "by how wrong the bid was: the bidder what it was short, the caller what it was over, "
        "1 for doubting an exact bid (double on face 1 while it is wild). Balances may go "
        "below zero. A wrong Jonti pays the difference; a right one takes 1 back.",
        "Leaving mid-round: your cup stays on the table until the round ends and your dice "
        "count; then you are out, and what you paid stays in the bank.",
        "The last player with dice wins and takes the bank.",
    ]


def test_the_calza_presets_say_when_calza_is_allowed():
    anytime = rules_summary(PRESETS["calza-anytime"])
    assert anytime[4] == (
        "Raising: one thing at a time — more dice of the same face, or the same count of a "
        "higher face."
    )
    assert anytime[9] == (
        "Calza (at any time, by anyone but the last bidder): claim the last bid is exact. "
        "Right, you gain a die (never above 5); wrong, you lose one. Also in a Palifico round."
    )
    assert rules_summary(PRESETS["gamerules"])[9] == (
        "Calza (instead of bidding, on your turn): claim the last bid is exact. Right, you "
        "gain a die (never above 5); wrong, you lose one. Not in a Palifico round. Only while "
        "at least 3 players have dice."
    )


def test_a_custom_table_names_every_change_and_each_rule_follows_it():
    options = options_for(
        "club",
        dice_per_player=3,
        opening_roll_dice=4,
        raise_rule="one-at-a-time",
        special_round="off",
        calza="on-turn",
        calza_min_players=3,
        jonti=False,
        show_and_reroll=False,
        stake=0,
    )
    lines = rules_summary(options)
    assert lines[0].startswith("Preset club (calzone, jonti, show and reroll, 10-token bank), ")
    assert lines[0].endswith(
        "changed at this table: Dice per player: 3; Opening roll: 4; Raise: one at a time; "
        "Special round: none; Calza: on your turn; Calza needs: 3 players; Jonti: off; "
        "Show and reroll: off; Stake: 0 tokens."
    )
    assert "Everyone starts with 3 dice; the dice are rolled in secret each round." in lines
    assert (
        "First opener: everyone rolls 4 dice and the highest total opens; the tied roll again."
        in lines
    )
    assert "No special rounds: face 1 stays wild when a player drops to one die." in lines
    assert (
        "Calza (instead of bidding, on your turn): claim the last bid is exact. Right, you gain "
        "a die (never above 3); wrong, you lose one. Only while at least 3 players have dice."
        in lines
    )
    assert "No Jonti at this table." in lines
    assert "No show and reroll at this table." in lines
    assert "No tokens at this table." in lines
    assert lines[-1] == "The last player with dice wins."
    assert not any("Calzone" in line for line in lines)  # no special round, no face change


# every option against gamerules (calza on turn, palifico): a value of its own changes a rule
# line, not only the line that lists the changes
CHANGES = {
    "dice_per_player": 4,
    "opening_roll_dice": 3,
    "raise_rule": "monotone",
    "special_round": "calzone",
    "special_face_change": "one-die-players",
    "calza": "anytime",
    "calza_in_special_round": True,
    "calza_min_players": 2,
    "jonti": True,
    "show_and_reroll": True,
    "stake": 4,
}


@pytest.mark.parametrize("option", sorted(CHANGES))
def test_every_option_is_reflected_in_the_rules(option):
    before = rules_summary(PRESETS["gamerules"])
    after = rules_summary(options_for("gamerules", **{option: CHANGES[option]}))
    assert after[0] != before[0] and "changed at this table" in after[0]
    assert after[1:] != before[1:]


def test_the_lobby_rules_are_the_classic_rules_and_the_presets():
    lines = lobby_rules(translator("en"))
    assert lines[0] == (
        "Perudo, liar's dice: everyone rolls in secret, then bids on all the dice in play."
    )
    assert lines[1:12] == CLASSIC[1:]
    assert lines[12] == "Tables choose a preset, and may change any of its options:"
    assert lines[13:] == [
        "classic: the published rules: palifico, calza off",
        "calza-anytime: count or face, one at a time; calza any time",
        "gamerules: classic + calza on your turn (not in palifico)",
        "club: calzone, jonti, show and reroll, 10-token bank",
    ]


@pytest.mark.parametrize("language", ["en", "fr", "ru"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_each_language_has_the_same_rules_with_the_tables_terms(language, preset):
    tr = translator(language)
    options = options_for(preset, stake=2) if preset != "club" else PRESETS["club"]
    lines = rules_summary(options, tr)
    english = rules_summary(options)
    assert len(lines) == len(english)  # one line per rule, in every language
    if language != "en":  # every rule translated
        assert not set(lines) & set(english)
    assert all(line.strip() for line in lines)
    terms = tr.terms(options)
    text = "\n".join(lines)
    assert terms.dudo in text and terms.pacos(3) in text and terms.paco in text
    assert terms.special(options.special_round) in text
    assert lines[-1] == tr._("The last player with dice wins and takes the bank.")
    if options.jonti:
        assert terms.jonti in text


async def start(session: FakeSession, *events: P.Event, language: str = "en"):
    app = make_app(session, language)
    session.feed(P.Welcome(name=session.name), *events)
    return app


def panel_text(app) -> str:
    return str(app.screen.query_one("#rules-text").render())


@pytest.mark.parametrize("me", [0, None], ids=["player", "spectator"])
@pytest.mark.slow
async def test_i_opens_the_tables_rules_before_the_game_for_players_and_spectators(me):
    options = options_for("club", stake=3, jonti=False)
    session = FakeSession("ana" if me == 0 else "dan")
    waiting = table_state(None, me=me, status="waiting", options=options)
    app = await start(session, waiting)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.table is not None)
        await pilot.pause()
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        assert str(app.screen.query_one("#rules-title").render()) == "Rules of this table (club)"
        assert panel_text(app).splitlines() == [f"• {line}" for line in rules_summary(options)]
        text = screen_text(app)
        assert "Rules of this table (club)" in text and "• Preset club (" in text
        assert screen_text(app).splitlines()[-1].split() == ["esc", "Close", "?", "Help"]
        await pilot.press("i")
        await wait_until(pilot, lambda: not isinstance(app.screen, RulesScreen))
        assert session.sent == []


async def test_i_during_a_game_shows_the_games_rules():
    session = FakeSession()
    app = await start(session, table_state(observe(rolled("gamerules"), 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.table is not None)
        await pilot.pause()
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        assert panel_text(app) == str(rules_content(translator("en"), PRESETS["gamerules"]))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, RulesScreen))


async def test_i_in_the_lobby_shows_the_rules_in_general():
    session = FakeSession()
    app = await start(session, lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.lobby is not None)
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        assert str(app.screen.query_one("#rules-title").render()) == "Rules"
        assert panel_text(app).splitlines()[0] == f"• {lobby_rules(translator('en'))[0]}"


@pytest.mark.parametrize("language", ["fr", "ru"])
@pytest.mark.slow
async def test_the_panel_and_the_help_follow_a_language_switch(language):
    session = FakeSession()
    options = PRESETS["club"]
    app = await start(session, table_state(None, status="waiting", options=options))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.table is not None)
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        app.set_language(language)
        await pilot.pause()
        tr = translator(language)
        assert panel_text(app) == str(rules_content(tr, options))
        assert str(app.screen.query_one("#rules-title").render()) == tr._(
            "Rules of this table ({preset})", preset="club"
        )
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        assert str(help_screen.query_one("#help-keys").render()) == str(keys_text(tr, options))
        assert str(help_screen.query_one("#help-rules").render()) == str(rules_content(tr, options))
        assert tr._("Keys") == str(help_screen.query_one("#help-keys-title").render())


def test_a_russian_club_table_reads_the_seeds_terms():
    lines = rules_summary(PRESETS["club"], translator("ru"))
    assert lines[6].startswith("Не верю: ")
    assert lines[10].startswith("Точно: ")
    assert "3 туза" in lines[5]


def test_the_help_keys_use_the_tables_terms():
    tr = translator("en")
    text = str(keys_text(tr, PRESETS["club"]))
    assert "  d          Dudo: doubt the bid" in text
    assert "  i          the rules of the table here" in text
    assert "  r          show and reroll: set dice aside face up" in text
    ru = translator("ru")
    terms = ru.terms(PRESETS["club"])
    assert ru._("{dudo}: doubt the bid", dudo=terms.dudo) in str(keys_text(ru, PRESETS["club"]))


@pytest.mark.slow
async def test_rules_and_help_open_each_other_without_stacking_up():
    """`i` in help opens the rules and `?` in the rules opens help: one replaces the other, so
    a player (or a script) alternating them never piles up screens (found by an attack pass:
    ~80 pairs crashed the session)."""
    session = FakeSession()
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(6):
            await pilot.press("i", "question_mark")
        await pilot.pause()
        assert [type(s) for s in app.screen_stack[1:]] == [RulesScreen, HelpScreen]
        await pilot.press("i")  # back to the rules beneath
        await pilot.pause()
        assert [type(s) for s in app.screen_stack[1:]] == [RulesScreen]
        await pilot.press("i")  # closed
        await pilot.pause()
        assert len(app.screen_stack) == 1


@pytest.mark.slow
async def test_a_closed_panel_is_kept_a_while_and_opens_again_as_new():
    """Help and rules opened again soon after they closed are the same screens, not composed
    again (a key storm, issue 11), yet read as new ones would: the language chosen meanwhile,
    the table now joined, from the top; a few seconds (`PANEL_KEPT`) after closing they are
    gone."""
    session = FakeSession()
    app = await start(session, lobby_state())
    options = PRESETS["club"]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.lobby is not None)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        first = app.screen
        first.query_one("#help-box").scroll_end(animate=False)
        await wait_until(pilot, lambda: first.query_one("#help-box").scroll_y > 0)
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(app.screen_stack) == 1)
        app.set_language("fr")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert app.screen is first
        fr = translator("fr")
        assert str(first.query_one("#help-keys").render()) == str(keys_text(fr))
        await wait_until(pilot, lambda: first.query_one("#help-box").scroll_y == 0)
        await pilot.press("escape")
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        rules = app.screen
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(app.screen_stack) == 1)
        session.feed(table_state(None, status="waiting", options=options))
        await wait_until(pilot, lambda: app.table is not None)
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        assert app.screen is not rules  # the table's settings: another panel
        assert panel_text(app) == str(rules_content(fr, options))
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert app.screen is not first  # the lobby's help has no room for the settings
        assert str(app.screen.query_one("#help-rules").render()) == str(rules_content(fr, options))
        table_help = app.screen
        app.PANEL_KEPT = 0.05
        await pilot.press("escape")  # back to the rules, then closed
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not table_help.is_attached and not app._panels)
