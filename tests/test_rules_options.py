"""RULES.md §7: the presets table exactly, per-table overrides, refused values."""

from __future__ import annotations

import msgspec
import pytest

from perudo_ssh.rules import (
    OPTION_NAMES,
    PRESET_NAMES,
    PRESETS,
    Options,
    OptionsError,
    options_for,
    overrides_of,
)

# RULES.md §7, column by column ("—" cells: the value that keeps the option inert).
TABLE = {
    "classic": dict(
        dice_per_player=5,
        opening_roll_dice=2,
        raise_rule="count-or-face",
        special_round="palifico",
        special_face_change="nobody",
        calza="off",
        calza_in_special_round=True,
        calza_min_players=2,
        jonti=False,
        show_and_reroll=False,
        stake=0,
    ),
    "calza-anytime": dict(
        dice_per_player=5,
        opening_roll_dice=1,
        raise_rule="one-at-a-time",
        special_round="palifico",
        special_face_change="nobody",
        calza="anytime",
        calza_in_special_round=True,
        calza_min_players=2,
        jonti=False,
        show_and_reroll=False,
        stake=0,
    ),
    "gamerules": dict(
        dice_per_player=5,
        opening_roll_dice=1,
        raise_rule="count-or-face",
        special_round="palifico",
        special_face_change="nobody",
        calza="on-turn",
        calza_in_special_round=False,
        calza_min_players=3,
        jonti=False,
        show_and_reroll=False,
        stake=0,
    ),
    "club": dict(
        dice_per_player=5,
        opening_roll_dice=1,
        raise_rule="monotone",
        special_round="calzone",
        special_face_change="one-die-players",
        calza="off",
        jonti=True,
        show_and_reroll=True,
        stake=10,
    ),
}


def test_preset_names_and_option_names():
    assert PRESET_NAMES == ("classic", "calza-anytime", "gamerules", "club")
    assert set(PRESETS) == set(PRESET_NAMES)
    assert OPTION_NAMES == (
        "dice_per_player",
        "opening_roll_dice",
        "raise_rule",
        "special_round",
        "special_face_change",
        "calza",
        "calza_in_special_round",
        "calza_min_players",
        "jonti",
        "show_and_reroll",
        "stake",
    )


@pytest.mark.parametrize("name", list(TABLE))
def test_preset_matches_rules_md_table(name):
    preset = PRESETS[name]
    assert preset.preset == name
    for option, value in TABLE[name].items():
        assert getattr(preset, option) == value, option
    assert options_for(name) == preset
    assert overrides_of(preset) == {}


def test_club_calza_cells_are_inert():
    club = PRESETS["club"]
    assert club.calza == "off"
    assert (club.calza_in_special_round, club.calza_min_players) == (True, 2)


def test_default_options_are_classic():
    assert Options() == PRESETS["classic"]
    assert options_for() == PRESETS["classic"]


def test_overrides_change_only_what_is_named():
    opts = options_for("classic", calza="on-turn", stake=4, dice_per_player=3)
    assert opts.preset == "classic"
    assert (opts.calza, opts.stake, opts.dice_per_player) == ("on-turn", 4, 3)
    assert opts.raise_rule == "count-or-face" and opts.opening_roll_dice == 2
    assert overrides_of(opts) == {"calza": "on-turn", "stake": 4, "dice_per_player": 3}
    club = options_for("club", raise_rule="count-or-face", jonti=False)
    assert overrides_of(club) == {"raise_rule": "count-or-face", "jonti": False}
    assert club.special_round == "calzone" and club.stake == 10
    # an override equal to the preset's value is not an override
    assert overrides_of(options_for("gamerules", calza="on-turn")) == {}


def test_overrides_round_trip():
    for name in PRESET_NAMES:
        opts = options_for(name, stake=7, calza_min_players=4)
        assert options_for(opts.preset, **overrides_of(opts)) == opts


def test_options_are_immutable():
    with pytest.raises(AttributeError):
        PRESETS["classic"].stake = 3  # type: ignore[misc]


def test_every_allowed_value_of_the_enum_options():
    for rule in ("count-or-face", "one-at-a-time", "monotone"):
        assert options_for("classic", raise_rule=rule).raise_rule == rule
    for kind in ("palifico", "calzone", "off"):
        assert options_for("classic", special_round=kind).special_round == kind
    for who in ("nobody", "one-die-players"):
        assert options_for("club", special_face_change=who).special_face_change == who
    for mode in ("off", "on-turn", "anytime"):
        assert options_for("club", calza=mode).calza == mode
    for n in (1, 5):
        assert options_for("classic", dice_per_player=n, opening_roll_dice=n).dice_per_player == n
    for n in (2, 6):
        assert options_for("gamerules", calza_min_players=n).calza_min_players == n
    assert options_for("club", stake=0).stake == 0


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [
        ("chess", {}),
        ("Classic", {}),
        ("classic", {"wild_pacos": False}),
        ("classic", {"raise_rule": "anything-goes"}),
        ("classic", {"special_round": "palifico "}),
        ("classic", {"special_face_change": "everybody"}),
        ("classic", {"calza": "sometimes"}),
        ("classic", {"calza": True}),
        ("classic", {"dice_per_player": 0}),
        ("classic", {"dice_per_player": 6}),
        ("classic", {"dice_per_player": "5"}),
        ("classic", {"dice_per_player": 5.0}),
        ("classic", {"opening_roll_dice": 0}),
        ("classic", {"opening_roll_dice": 6}),
        ("classic", {"stake": -1}),
        ("classic", {"stake": True}),
        ("classic", {"stake": None}),
        ("classic", {"calza_min_players": 1}),
        ("classic", {"calza_min_players": 7}),
        ("classic", {"calza_in_special_round": "yes"}),
        ("classic", {"jonti": 1}),
        ("classic", {"show_and_reroll": 0}),
    ],
)
def test_refused_values(preset, overrides):
    with pytest.raises(OptionsError) as info:
        options_for(preset, **overrides)
    assert str(info.value)
    assert isinstance(info.value, ValueError)


def test_options_decode_strictly():
    raw = msgspec.json.encode(PRESETS["club"])
    assert msgspec.json.decode(raw, type=Options) == PRESETS["club"]
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"preset": "classic", "bogus": 1}', type=Options)
