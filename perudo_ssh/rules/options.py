"""Table options and the four presets of RULES.md §7.

A table's rules are one `Options` value: a preset name plus every option of RULES.md fixed.
`options_for(preset, **overrides)` builds one; `check_options` refuses values and
combinations that cannot be played (with the table's seats, also options the table could never
use). Errors carry an English message id and args (`N_`), translated by the screens. Nothing
here does I/O.
"""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

from perudo_ssh.i18n import N_

RaiseRule = Literal["count-or-face", "one-at-a-time", "monotone"]
SpecialRound = Literal["palifico", "calzone", "off"]
FaceChange = Literal["nobody", "one-die-players"]
CalzaMode = Literal["off", "on-turn", "anytime"]
PresetName = Literal["classic", "calza-anytime", "gamerules", "club"]

PRESET_NAMES: tuple[str, ...] = ("classic", "calza-anytime", "gamerules", "club")


class OptionsError(ValueError):
    """An unknown preset, option name or option value, or an impossible combination.

    `str(err)` is a sentence for the person who asked for it, in English. `message_id` is
    the same sentence as an English message id (perudo_ssh.i18n `N_`) and `message_args`
    its named fields (`str | int`), so that a screen may translate it: `str(err) ==
    message_id.format(**message_args)`. (Not `args`: that is the exception's own tuple.)
    """

    def __init__(self, message_id: str, /, **message_args: str | int) -> None:
        super().__init__(message_id.format(**message_args))
        self.message_id = message_id
        self.message_args: dict[str, str | int] = dict(message_args)


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


CHOICES: dict[str, tuple[str, ...]] = {
    "raise_rule": get_args(RaiseRule),
    "special_round": get_args(SpecialRound),
    "special_face_change": get_args(FaceChange),
    "calza": get_args(CalzaMode),
}
"""The allowed values of each option whose value is a word, in RULES.md's order."""

LIMITS: dict[str, tuple[int, int]] = {
    "dice_per_player": (1, 5),
    "opening_roll_dice": (1, 5),
    "calza_min_players": (2, 6),
    "stake": (0, 100),
}
"""The lowest and highest value of each whole-number option, inclusive (see check_options)."""

FLAGS: tuple[str, ...] = ("calza_in_special_round", "jonti", "show_and_reroll")
"""The options that are true or false."""


def check_options(options: Options, seats: int | None = None) -> None:
    """Refuse an options value that cannot be played; with `seats` (2–6: a table being made
    with that many seats), also an option turned on that this table could never use.

    Raises `OptionsError` (with a message id and args) for a whole-number option outside
    `LIMITS`: `dice_per_player` 1–5 (RULES.md §2.1), `opening_roll_dice` 1–5 (§2.2),
    `calza_min_players` 2–6 (a table seats 2–6, §2.1), `stake` 0–100 tokens (§6;
    *Decision*: 100 is our cap, ten times the club's 10, so that a bank of six stakes and
    every balance stay readable).

    With `seats` (the lobby and the create dialog; not the engine nor a game record, which
    may play such options, merely never using them), also for:

    - `jonti` with `dice_per_player` 1: the caller must hold fewer dice than they started
      with (§5), so nobody could ever call it;
    - `show_and_reroll` with `dice_per_player` 1: at least one die is set aside and one kept
      hidden (§6), which takes two dice;

    *Decision*: `jonti` at a 2-seat table and `calza_min_players` above the table's seats are
    *not* refused: every preset must be playable at every table size (the `gamerules` and
    `club` presets at 2 seats simply never offer calza or jonti, as their seeds say: "заявка
    Точно недействительна, если играют два человека"); the rules panel says so.

    *Decision*, never refused (the option is merely unused; the create dialog shows it
    disabled): `calza_in_special_round` and `calza_min_players` while calza is off (the
    club preset itself, §7 "—" cells); `special_face_change` and `calza_in_special_round`
    while `special_round` is off (turning the club's calzone off must not also demand a new
    face-change value); a special round with `dice_per_player` 1 (nobody ever drops from two
    dice to one); calza with `dice_per_player` 1 (a right calza gains nothing, a wrong one
    costs the die: still a call, §5); `opening_roll_dice` above `dice_per_player` (the
    opening roll is a roll of its own, §2.2); calza and jonti both on (§5 defines them
    independently and the engine plays both); a stake without jonti (dudo alone moves
    tokens, §6).
    """
    for name, (low, high) in LIMITS.items():
        if not low <= getattr(options, name) <= high:
            raise OptionsError(_OUT_OF_RANGE[name], low=low, high=high)
    if seats is None:
        return
    if options.dice_per_player == 1 and options.jonti:
        raise OptionsError(
            N_("jonti needs at least 2 dice per player: its caller must have lost a die")
        )
    if options.dice_per_player == 1 and options.show_and_reroll:
        raise OptionsError(
            N_("show and reroll needs at least 2 dice per player: one shown, one re-rolled")
        )


_OUT_OF_RANGE: dict[str, str] = {
    "dice_per_player": N_("dice per player must be between {low} and {high}"),
    "opening_roll_dice": N_("opening roll dice must be between {low} and {high}"),
    "calza_min_players": N_("calza needs between {low} and {high} players left"),
    "stake": N_("the stake must be between {low} and {high} tokens"),
}


def _check_value(name: str, value: object) -> None:
    """Refuse `value` for option `name` when it has the wrong kind (not its range)."""
    if name in CHOICES:
        if value not in CHOICES[name] or not isinstance(value, str):
            raise OptionsError(
                N_("{option} is one of: {choices}"),
                option=name,
                choices=", ".join(CHOICES[name]),
            )
    elif name in LIMITS:
        if not isinstance(value, int) or isinstance(value, bool):
            raise OptionsError(N_("{option} must be a whole number"), option=name)
    elif not isinstance(value, bool):
        raise OptionsError(N_("{option} must be true or false"), option=name)


def options_for(preset: str = "classic", /, **overrides: object) -> Options:
    """The options of `preset` (RULES.md §7) with `overrides` by option name.

    Raises `OptionsError` for an unknown preset, option name or value, or a refused combination
    (an override named "preset" is an unknown option: the preset is the first argument).
    """
    if not isinstance(preset, str) or preset not in PRESETS:
        raise OptionsError(N_("unknown preset {preset}"), preset=repr(preset)[:40])
    unknown = sorted(set(overrides) - set(OPTION_NAMES))
    if unknown:
        raise OptionsError(N_("unknown option {option}"), option=repr(unknown[0])[:40])
    for name, value in overrides.items():
        _check_value(name, value)
    raw = msgspec.to_builtins(PRESETS[preset])
    raw.update(overrides)
    try:
        options = msgspec.convert(raw, Options, strict=True)
    except msgspec.ValidationError as exc:  # _check_value let through what it should not
        raise OptionsError(N_("bad option value: {why}"), why=str(exc)) from None
    check_options(options)
    return options


def overrides_of(options: Options) -> dict[str, object]:
    """The options that differ from `options.preset`, as `{name: value}` (RECORD.md `rules`)."""
    base = msgspec.to_builtins(PRESETS[options.preset])
    mine = msgspec.to_builtins(options)
    return {k: v for k, v in mine.items() if k != "preset" and base.get(k) != v}
