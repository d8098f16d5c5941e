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
from perudo_ssh.rules.options import check_options

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
    assert str(info.value) == info.value.message_id.format(**info.value.message_args)
    assert isinstance(info.value, ValueError)


def test_options_decode_strictly():
    raw = msgspec.json.encode(PRESETS["club"])
    assert msgspec.json.decode(raw, type=Options) == PRESETS["club"]
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"preset": "classic", "bogus": 1}', type=Options)


def test_refusals_carry_a_message_id_and_its_args():
    with pytest.raises(OptionsError) as info:
        options_for("classic", stake=101)
    err = info.value
    assert (err.message_id, err.message_args) == (
        "the stake must be between {low} and {high} tokens",
        {"low": 0, "high": 100},
    )
    assert str(err) == "the stake must be between 0 and 100 tokens"
    assert options_for("classic", stake=100).stake == 100
    with pytest.raises(OptionsError) as info:
        options_for("classic", calza="sometimes")
    assert str(info.value) == "calza is one of: off, on-turn, anytime"
    assert info.value.message_args == {"option": "calza", "choices": "off, on-turn, anytime"}
    with pytest.raises(OptionsError) as info:
        options_for("classic", dice_per_player="5")
    assert str(info.value) == "dice_per_player must be a whole number"
    with pytest.raises(OptionsError) as info:
        options_for("nope")
    assert str(info.value) == "unknown preset 'nope'"


@pytest.mark.parametrize(
    ("overrides", "seats", "message"),
    [
        ({"dice_per_player": 1}, 3, "jonti needs at least 2 dice per player: its caller "
         "must have lost a die"),
        ({"dice_per_player": 1, "jonti": False}, 3, "show and reroll needs at least 2 dice "
         "per player: one shown, one re-rolled"),
    ],
)  # fmt: skip
def test_a_table_never_using_an_option_is_refused(overrides, seats, message):
    """check_options' docstring lists them; club is the preset with jonti and reroll on.
    The engine and game records may play such options (they are merely never used)."""
    options = options_for("club", **overrides)
    check_options(options)
    with pytest.raises(OptionsError) as info:
        check_options(options, seats=seats)
    assert str(info.value) == message
    assert info.value.message_id.format(**info.value.message_args) == message


@pytest.mark.parametrize(
    ("preset", "overrides", "seats"),
    [
        ("club", {"calza_min_players": 6, "jonti": False}, 2),  # calza off: limits unused
        ("gamerules", {"special_round": "off", "calza_in_special_round": True}, 3),
        ("club", {"special_round": "off"}, 3),  # face change unused without special rounds
        ("classic", {"dice_per_player": 1, "opening_roll_dice": 5}, 2),  # palifico never comes
        ("gamerules", {"dice_per_player": 1}, 4),  # calza only ever costs a die
        ("club", {"calza": "anytime", "calza_min_players": 3}, 3),  # calza and jonti both on
        ("classic", {"stake": 100}, 6),  # tokens with dudo alone
        ("gamerules", {}, 3),  # calza needs 3 players: a 3-seat table may use it
    ],
)
def test_options_merely_unused_are_not_refused(preset, overrides, seats):
    options = options_for(preset, **overrides)
    check_options(options, seats=seats)


@pytest.mark.parametrize(("preset", "seats"), [(p, n) for p in PRESET_NAMES for n in range(2, 7)])
def test_every_preset_is_playable_at_every_table_size(preset, seats):
    """A preset whose exact calls need more players (gamerules' calza, the club's jonti) still
    makes a 2-seat table: those calls are simply never offered (check_options' Decision)."""
    check_options(options_for(preset), seats=seats)
