"""Pilot tests of the create-table dialog (RULES.md §7: every option may be overridden per
table), at 80×24, keyboard only where a player would use it, in English, French and Russian.

The French and Russian catalogs are filled by translators: texts are checked against the
same message ids translated by that language's `Translator` (equal to English until then),
and the game's terms against `tr.terms(options)`.
"""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, Input

from perudo_ssh import protocol as P
from perudo_ssh.i18n import translator
from perudo_ssh.rules import PRESETS
from screens.app import make_app
from screens.choice import Choice
from screens.create import CreateTableDialog
from screens.lobby import LobbyScreen
from screens.rules import RulesScreen
from screens.rulestext import value_label
from tests.test_screens_fakes import FakeSession, lobby_state, screen_text, wait_until

SIZE = (80, 24)


async def opened(pilot, app) -> CreateTableDialog:
    await wait_until(pilot, lambda: app.lobby is not None)
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, CreateTableDialog)
    return dialog


def start(language: str = "en") -> tuple[FakeSession, object]:
    session = FakeSession()
    app = make_app(session, language)
    session.feed(P.Welcome(name="ana"), lobby_state())
    return session, app


def status(dialog: CreateTableDialog) -> str:
    return str(dialog.query_one("#create-status").render())


async def choose(pilot, dialog: CreateTableDialog, field: str, steps: int) -> None:
    """Focus `field` (a Select) and move `steps` down (negative: up) in its list, by keys."""
    dialog.query_one(f"#{field}").focus()
    await pilot.press("enter")
    await pilot.press(*(["down"] * steps if steps > 0 else ["up"] * -steps), "enter")
    await pilot.pause()


async def test_the_dialog_fits_80x24_and_marks_the_chosen_preset_by_text():
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app)
        lines = screen_text(app).splitlines()
        text = "\n".join(lines)
        assert "(•) classic       the published rules: palifico, calza off" in text
        assert "( ) club          calzone, jonti, show and reroll, 10-token bank" in text
        for label in (
            "Seats", "Bots", "Dice per player", "Opening roll", "Raise", "Special round",
            "Face change", "Calza needs", "[x] Calza in special round", "[ ] Jonti",
            "[ ] Show and reroll", "Stake", "Name", "The classic preset, unchanged",
            "Create", "Cancel",
        ):  # fmt: skip
            assert label in text, label
        assert lines[-1].split() == ["esc", "Cancel", "^s", "Create", "i", "Rules", "?", "Help"]
        assert "count or face" in text and "Palifico" in text and "2 players" in text


@pytest.mark.slow
async def test_keyboard_only_a_changed_table_is_sent_with_its_overrides():
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        # the presets have the focus: gamerules, then Tab through the fields in order
        await pilot.press("down", "down", "enter")
        await pilot.press("tab", "enter", "up", "enter")  # seats 4 -> 3
        await pilot.press("tab", "tab", "enter", "up", "up", "enter")  # dice 5 -> 3
        await pilot.press("tab", "tab", "enter", "down", "down", "enter")  # raise: monotone
        await pilot.pause()
        assert dialog.focused is dialog.query_one("#raise_rule")
        await pilot.press("tab", "tab", "tab", "enter", "down", "enter")  # calza: anytime
        await pilot.press("tab", "enter", "up", "enter")  # calza needs 3 -> 2 players
        await pilot.press("tab", "space")  # calza in special round: on
        await pilot.press("tab", "tab", "tab", *"7")  # jonti, show and reroll, stake 0 -> 7
        await pilot.pause()
        assert dialog.query_one("#stake", Input).value == "7"  # a field's text is selected
        assert status(dialog) == (
            "Changed from gamerules: Dice per player: 3; Raise: count, face or both; "
            "Calza: any time; Calza in special round: on; Calza needs: 2 players; "
            "Stake: 7 tokens"
        )
        # past the turn timer, the grace and the bots' level (issue 14) to the name
        await pilot.press("tab", "tab", "tab", "tab", *"fun", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent == [
            P.CreateTable(
                preset="gamerules",
                seats=3,
                bots=2,
                options={
                    "dice_per_player": 3,
                    "raise_rule": "monotone",
                    "calza": "anytime",
                    "calza_in_special_round": True,
                    "calza_min_players": 2,
                    "stake": 7,
                },
                name="fun",
            )
        ]


@pytest.mark.slow
async def test_choosing_a_preset_resets_every_option_to_its_values():
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        dialog.query_one("#stake", Input).value = "42"
        dialog.query_one("#calza", Choice).value = "anytime"
        dialog.query_one("#dice_per_player", Choice).value = 2
        await pilot.pause()
        assert status(dialog).startswith("Changed from classic: Dice per player: 2; Calza:")
        dialog.query_one("#preset").focus()
        await pilot.press("down", "down", "down", "enter")  # club
        await pilot.pause()
        club = PRESETS["club"]
        for name in ("dice_per_player", "opening_roll_dice", "raise_rule", "special_round",
                     "special_face_change", "calza", "calza_min_players"):  # fmt: skip
            assert dialog.query_one(f"#{name}", Choice).value == getattr(club, name), name
        for name in ("calza_in_special_round", "jonti", "show_and_reroll"):
            assert dialog.query_one(f"#{name}", Checkbox).value == getattr(club, name), name
        assert dialog.query_one("#stake", Input).value == "10"
        assert status(dialog) == "The club preset, unchanged"
        assert "(•) club" in screen_text(app) and "( ) classic" in screen_text(app)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent == [
            P.CreateTable(preset="club", seats=4, bots=2, options={}, name="ana's table")
        ]


async def test_options_that_do_not_apply_are_disabled_not_cleared():
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        minimum = dialog.query_one("#calza_min_players", Choice)
        in_special = dialog.query_one("#calza_in_special_round", Checkbox)
        face = dialog.query_one("#special_face_change", Choice)
        assert minimum.disabled and in_special.disabled and not face.disabled  # calza off
        dialog.query_one("#calza", Choice).value = "on-turn"
        await pilot.pause()
        assert not minimum.disabled and not in_special.disabled
        dialog.query_one("#special_round", Choice).value = "off"
        await pilot.pause()
        assert face.disabled and in_special.disabled and not minimum.disabled
        assert in_special.value is True and face.value == "nobody"  # kept as they were
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent[0].options == {"calza": "on-turn", "special_round": "off"}


@pytest.mark.slow
async def test_a_refused_combination_shows_its_reason_and_sends_nothing():
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        await pilot.press("down", "down", "down", "enter")  # club: jonti on
        await choose(pilot, dialog, "dice_per_player", -4)  # 1 die each
        reason = "jonti needs at least 2 dice per player: its caller must have lost a die"
        assert status(dialog) == f"Cannot create: {reason}"
        shown = " ".join(line.strip(" │") for line in screen_text(app).splitlines())
        assert f"Cannot create: {reason}" in shown  # on two lines
        assert dialog.query_one("#create-status").has_class("-refused")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is dialog and session.sent == []
        assert [n.message for n in app._notifications] == [reason]
        await pilot.press("i")  # no rules panel for rules that cannot be played
        await pilot.pause()
        assert app.screen is dialog
        dialog.query_one("#jonti").focus()
        await pilot.press("space")
        await pilot.pause()
        reroll = "show and reroll needs at least 2 dice per player: one shown, one re-rolled"
        assert status(dialog) == f"Cannot create: {reroll}"  # the next reason, in turn
        dialog.query_one("#show_and_reroll").focus()
        await pilot.press("space")
        await pilot.pause()
        changed = "Dice per player: 1; Jonti: off; Show and reroll: off"
        assert status(dialog) == f"Changed from club: {changed}"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        options = {"dice_per_player": 1, "jonti": False, "show_and_reroll": False}
        assert session.sent == [
            P.CreateTable(preset="club", options=options, name="ana's table")
        ]  # fmt: skip


@pytest.mark.parametrize(
    ("stake", "reason"),
    [
        ("", "the stake is a whole number of tokens, from 0 to 100"),
        ("101", "the stake must be between 0 and 100 tokens"),
    ],
)
@pytest.mark.slow
async def test_a_stake_out_of_range_is_refused(stake, reason):
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        dialog.query_one("#stake", Input).value = stake
        await pilot.pause()
        assert status(dialog) == f"Cannot create: {reason}"
        dialog.query_one("#stake").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is dialog and session.sent == []


async def test_i_shows_the_rules_as_set_so_far_and_comes_back_to_the_same_form():
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        dialog.query_one("#calza", Choice).value = "on-turn"
        dialog.query_one("#stake", Input).value = "3"
        await pilot.pause()
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, RulesScreen))
        panel = app.screen
        assert str(panel.query_one("#rules-title").render()) == "Rules of your new table (classic)"
        text = str(panel.query_one("#rules-text").render())
        assert text.startswith(
            "• Preset classic (the published rules: palifico, calza off), changed at this "
            "table: Calza: on your turn; Stake: 3 tokens."
        )
        assert "• Tokens: everyone pays 3 into the bank" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is dialog)
        assert dialog.query_one("#stake", Input).value == "3"
        assert dialog.query_one("#calza", Choice).value == "on-turn"


@pytest.mark.parametrize("language", ["en", "fr", "ru"])
@pytest.mark.slow
async def test_the_dialog_speaks_the_session_language_and_the_preset_terms(language):
    tr = translator(language)
    session, app = start(language)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        text = screen_text(app)
        for msgid in ("Create a table", "Seats", "Bots", "Dice per player", "Stake", "Name"):
            assert tr._(msgid) in text, msgid
        for msgid in ("Create a table", "Dice per player", "Name"):  # "Bots" is French too
            assert (tr._(msgid) == msgid) == (language == "en"), msgid
        assert tr._("The {preset} preset, unchanged", preset="classic") in text
        await pilot.press("down", "down", "down", "enter")  # club: its own words
        await pilot.pause()
        terms = tr.terms(PRESETS["club"])
        assert str(dialog.query_one("#jonti", Checkbox).label) == terms.jonti
        assert str(dialog.query_one("#calza-label").render()) == terms.calza
        special = dialog.query_one("#special_round", Choice)
        assert special.value == "calzone"
        assert terms.calzone in screen_text(app)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent[0].name == tr._("{name}'s table", name="ana")  # as the field said


@pytest.mark.slow
async def test_a_language_switch_keeps_what_was_entered():
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        await pilot.press("down", "enter")  # calza-anytime
        dialog.query_one("#stake", Input).value = "5"
        dialog.query_one("#table-name", Input).value = "mine"
        dialog.query_one("#raise_rule", Choice).value = "monotone"
        await pilot.pause()
        for language in ("fr", "ru", "en"):  # F2, the language key, cycles through them
            await pilot.press("f2")
            await pilot.pause()
            assert app.language == language
            tr = translator(language)
            assert str(dialog.query_one("#create-title").render()) == tr._("Create a table")
            assert str(dialog.query_one("#seats-label").render()) == tr._("Seats")
            # a choice still at its list's first entry is redrawn in the new words too
            shown = str(dialog.query_one("#special_face_change", Choice).render())
            assert shown.startswith(tr.p_("face change", "nobody")), shown
            # a range whose choices are words ("2 players") is rewritten too
            terms = tr.terms(PRESETS["calza-anytime"])
            needs = value_label(tr, terms, "calza_min_players", 2)
            shown = str(dialog.query_one("#calza_min_players", Choice).render())
            assert shown.startswith(needs), shown
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent == [
            P.CreateTable(
                preset="calza-anytime",
                seats=4,
                bots=2,
                options={"raise_rule": "monotone", "stake": 5},
                name="mine",
            )
        ]


@pytest.mark.slow
async def test_a_choice_opens_its_list_and_picks_by_keys_typing_or_mouse():
    """A `Choice` (the dialog's one-widget list field): ▼ closed, ▲ open with every option,
    Esc closes it unchanged, typing jumps to an option by its first letters, a click opens
    it, and a value not among the options is refused."""
    session, app = start()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await opened(pilot, app)
        turn = dialog.query_one("#turn_seconds", Choice)
        assert turn.value == 60 and "▼" in str(turn.render())
        turn.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "▲" in screen_text(app))
        assert "5 min" in screen_text(app) and "off" in screen_text(app)
        await pilot.press("down", "escape")  # moved, then closed: nothing chosen
        await wait_until(pilot, lambda: "▲" not in screen_text(app))
        assert turn.value == 60 and app.focused is turn
        await pilot.press("space")
        await wait_until(pilot, lambda: "▲" in screen_text(app))
        await pilot.press("o", "enter")  # "off", the first option starting with o
        await wait_until(pilot, lambda: turn.value == 0)
        assert app.focused is turn and "▲" not in screen_text(app)
        await pilot.click(turn)
        await wait_until(pilot, lambda: "▲" in screen_text(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: "▲" not in screen_text(app))
        with pytest.raises(ValueError):
            turn.value = 7  # not a choice
        assert turn.value == 0
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent[0].turn_seconds == 0


def test_a_list_asked_open_on_a_choice_not_mounted_opens_nothing():
    """The key that opens a choice's list can reach a choice that is not mounted (its dialog
    composed or taken down while a loaded server's keys wait: the load bench's one crashed
    session, its client gone): no list is mounted on it, and nothing fails (it raised
    MountError and ended the session)."""
    seats = Choice([("2", 2), ("3", 3)], value=2)
    seats.action_open()
    assert seats.expanded and not seats.children
