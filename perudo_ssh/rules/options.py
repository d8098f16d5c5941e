"""Table options and the four presets of RULES.md §7.

A table's rules are one `Options` value: a preset name plus every option of RULES.md fixed.
`options_for(preset, **overrides)` builds one; `check_options` refuses combinations that
cannot be played. Nothing here does I/O.
"""

from __future__ import annotations

from typing import Literal

import msgspec

RaiseRule = Literal["count-or-face", "one-at-a-time", "monotone"]
SpecialRound = Literal["palifico", "calzone", "off"]
FaceChange = Literal["nobody", "one-die-players"]
CalzaMode = Literal["off", "on-turn", "anytime"]
PresetName = Literal["classic", "calza-anytime", "gamerules", "club"]

PRESET_NAMES: tuple[str, ...] = ("classic", "calza-anytime", "gamerules", "club")


class OptionsError(ValueError):
    """An unknown preset, option name or option value, or an impossible combination.

    `str(err)` is a sentence for the person who asked for it.
    """


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Every rule option of RULES.md, fixed (RULES.md §2–§7).

    Fields use the option names of RULES.md; `preset` is the preset they started from.
    `stake` is in tokens (0 = no tokens). `dice_per_player` is 1–5.
    """

    preset: PresetName = "classic"
    dice_per_player: int = 5
    opening_roll_dice: int = 2
    raise_rule: RaiseRule = "count-or-face"
    special_round: SpecialRound = "palifico"
    special_face_change: FaceChange = "nobody"
    calza: CalzaMode = "off"
    calza_in_special_round: bool = True
    calza_min_players: int = 2
    jonti: bool = False
    show_and_reroll: bool = False
    stake: int = 0


PRESETS: dict[str, Options] = {
    "classic": Options(preset="classic"),
    "calza-anytime": Options(
        preset="calza-anytime", opening_roll_dice=1, raise_rule="one-at-a-time", calza="anytime"
    ),
    "gamerules": Options(
        preset="gamerules",
        opening_roll_dice=1,
        calza="on-turn",
        calza_in_special_round=False,
        calza_min_players=3,
    ),
    "club": Options(
        preset="club",
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

OPTION_NAMES: tuple[str, ...] = tuple(f for f in Options.__struct_fields__ if f != "preset")


def check_options(options: Options) -> None:
    """Refuse an options value that cannot be played.

    Raises `OptionsError` with the reason: dice per player outside 1–5, opening roll dice
    outside 1–5, stake below 0, calza_min_players outside 2–6.
    """
    if not 1 <= options.dice_per_player <= 5:
        raise OptionsError("dice per player must be between 1 and 5")
    if not 1 <= options.opening_roll_dice <= 5:
        raise OptionsError("opening roll dice must be between 1 and 5")
    if options.stake < 0:
        raise OptionsError("the stake cannot be negative")
    if not 2 <= options.calza_min_players <= 6:
        raise OptionsError("calza needs between 2 and 6 players left")


def options_for(preset: str = "classic", **overrides: object) -> Options:
    """The options of `preset` (RULES.md §7) with `overrides` by option name.

    Raises `OptionsError` for an unknown preset, option name or value, or a refused combination.
    """
    if preset not in PRESETS:
        raise OptionsError(f"unknown preset {preset!r}")
    unknown = sorted(set(overrides) - set(OPTION_NAMES))
    if unknown:
        raise OptionsError(f"unknown option {unknown[0]!r}")
    raw = msgspec.to_builtins(PRESETS[preset])
    raw.update(overrides)
    try:
        options = msgspec.convert(raw, Options, strict=True)
    except msgspec.ValidationError as exc:
        raise OptionsError(f"bad option value: {exc}") from None
    check_options(options)
    return options


def overrides_of(options: Options) -> dict[str, object]:
    """The options that differ from `options.preset`, as `{name: value}` (RECORD.md `rules`)."""
    base = msgspec.to_builtins(PRESETS[options.preset])
    mine = msgspec.to_builtins(options)
    return {k: v for k, v in mine.items() if k != "preset" and base.get(k) != v}
