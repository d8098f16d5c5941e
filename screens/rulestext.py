"""A table's rules in plain words, generated from its `Options` (RULES.md §2–§7), and the
words of the create dialog: option names, their values, refusal reasons; then the table's
settings that are not rules (issue 5): its turn timer and disconnect grace (`settings_lines`).

Pure functions of `Options` and a `Translator` (perudo_ssh.i18n); no Textual. Every sentence
is a message id with named fields; the game's own words come from `tr.terms(options)`, so a
Russian club table reads its seed's terms. Nothing here is written per preset: each option
gives its own line, whatever preset it came from, and the rules panel (screens/rules.py),
the help screen and the create dialog all read them from here.
"""

from __future__ import annotations

from perudo_ssh.i18n import N_, Terms, Translator, translator
from perudo_ssh.rules import (
    OPTION_NAMES,
    PRESET_NAMES,
    PRESETS,
    Options,
    OptionsError,
    overrides_of,
)
from screens.wording import duration

PRESET_BLURBS: dict[str, str] = {
    "classic": N_("the published rules: palifico, calza off"),
    "calza-anytime": N_("count or face, one at a time; calza any time"),
    "gamerules": N_("classic + calza on your turn (not in palifico)"),
    "club": N_("calzone, jonti, show and reroll, 10-token bank"),
}
"""What each preset is, in a few words (message ids; `preset_blurb` translates)."""

CALZA_MODES: dict[str, str] = {
    "off": N_("off"),
    "on-turn": N_("on your turn"),
    "anytime": N_("any time"),
}
"""The calza modes in words (English message ids; `value_label` translates them)."""

OPTION_ORDER: tuple[str, ...] = OPTION_NAMES
"""The options in the order the dialog and the rules list them (RULES.md §2–§6)."""


def preset_blurb(tr: Translator, preset: str) -> str:
    """What preset `preset` is, in a few words ("" for an unknown name)."""
    blurb = PRESET_BLURBS.get(preset)
    return tr._(blurb) if blurb is not None else ""


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def option_label(tr: Translator, terms: Terms, name: str) -> str:
    """The short name of option `name` (a RULES.md option name), as the dialog labels it."""
    match name:
        case "dice_per_player":
            return tr._("Dice per player")
        case "opening_roll_dice":
            return tr._("Opening roll")
        case "raise_rule":
            return tr._("Raise")
        case "special_round":
            return tr._("Special round")
        case "special_face_change":
            return tr._("Face change")
        case "calza":
            return terms.calza
        case "calza_in_special_round":
            return tr._("{calza} in special round", calza=terms.calza)
        case "calza_min_players":
            return tr._("{calza} needs", calza=terms.calza)
        case "jonti":
            return terms.jonti
        case "show_and_reroll":
            return _cap(terms.reroll)
        case "stake":
            return tr._("Stake")
    return name


def value_label(tr: Translator, terms: Terms, name: str, value: object) -> str:
    """Option `name`'s `value` in a word or two, as the dialog's choices show it."""
    match name, value:
        case "raise_rule", "count-or-face":
            return tr._("count or face")
        case "raise_rule", "one-at-a-time":
            return tr._("one at a time")
        case "raise_rule", "monotone":
            return tr._("count, face or both")
        case "special_round", "palifico":
            return terms.palifico
        case "special_round", "calzone":
            return terms.calzone
        case "special_round", "off":
            return tr.p_("special round", "none")
        case "special_face_change", "nobody":
            return tr.p_("face change", "nobody")
        case "special_face_change", "one-die-players":
            return tr._("one-die players")
        case "calza", str() if value in CALZA_MODES:
            return tr._(CALZA_MODES[value])
        case (("calza_in_special_round" | "jonti" | "show_and_reroll"), bool()):
            return tr.p_("option", "on") if value else tr.p_("option", "off")
        case "calza_min_players", int():
            return tr.n_("{n} player", "{n} players", value)
        case "stake", int():
            return tr.n_("{n} token", "{n} tokens", value)
    return str(value)


def change_phrase(tr: Translator, terms: Terms, name: str, value: object) -> str:
    """`Calza: on your turn` — one option set to `value`, for the list of changes."""
    return tr._(
        "{option}: {value}",
        option=option_label(tr, terms, name),
        value=value_label(tr, terms, name, value),
    )


def options_refusal(tr: Translator, err: OptionsError) -> str:
    """Why options were refused (`check_options`), translated; its English words when the
    catalog lacks them."""
    return tr._(err.message_id, **err.message_args)


def _preset_line(options: Options, tr: Translator, terms: Terms) -> str:
    blurb = preset_blurb(tr, options.preset)
    changes = overrides_of(options)
    if not changes:
        return tr._("Preset {preset}: {blurb}.", preset=options.preset, blurb=blurb)
    said = "; ".join(
        change_phrase(tr, terms, name, changes[name]) for name in OPTION_ORDER if name in changes
    )
    return tr._(
        "Preset {preset} ({blurb}), changed at this table: {changes}.",
        preset=options.preset,
        blurb=blurb,
        changes=said,
    )


def _raise_line(options: Options, tr: Translator) -> str:
    if options.raise_rule == "one-at-a-time":
        return tr._(
            "Raising: one thing at a time — more dice of the same face, or the same count of "
            "a higher face."
        )
    if options.raise_rule == "monotone":
        return tr._("Raising: more dice, a higher face, or both; never less of either.")
    return tr._("Raising: more dice of any face, or the same count of a higher face.")


def _special_lines(options: Options, tr: Translator, terms: Terms) -> list[str]:
    kind = options.special_round
    if kind == "off":
        return [tr._("No special rounds: face 1 stays wild when a player drops to one die.")]
    if kind == "palifico":
        what = tr._(
            "{palifico}: the round right after a player drops to one die. That player opens; "
            "face 1 is not wild and ranks lowest, and any face may open.",
            palifico=terms.palifico,
        )
    else:
        what = tr._(
            "{calzone}: a player who just dropped to one die may declare it before the "
            "round's first bid; then face 1 is not wild and ranks lowest.",
            calzone=terms.calzone,
        )
    special = terms.special(kind)
    if options.special_face_change == "one-die-players":
        face = tr._(
            "In a {special} round only players with one die may change the face; the others "
            "raise the count of the same face.",
            special=special,
        )
    else:
        face = tr._(
            "In a {special} round nobody changes the face: each bid raises the count of the "
            "opening face.",
            special=special,
        )
    return [what, face]


def _calza_line(options: Options, tr: Translator, terms: Terms) -> str:
    if options.calza == "off":
        if options.jonti:  # the club: its exact call is the jonti (its own line)
            return tr._("No {calza}: the exact call here is {jonti}.", calza=terms.calza,
                        jonti=terms.jonti)  # fmt: skip
        return tr._("No {calza}: nobody may claim that a bid is exact.", calza=terms.calza)
    if options.calza == "on-turn":
        line = tr._(
            "{calza} (instead of bidding, on your turn): claim the last bid is exact. Right, "
            "you gain a die (never above {most}); wrong, you lose one.",
            calza=terms.calza,
            most=options.dice_per_player,
        )
    else:
        line = tr._(
            "{calza} (at any time, by anyone but the last bidder): claim the last bid is "
            "exact. Right, you gain a die (never above {most}); wrong, you lose one.",
            calza=terms.calza,
            most=options.dice_per_player,
        )
    if options.special_round != "off":
        special = terms.special(options.special_round)
        if options.calza_in_special_round:
            line += " " + tr._("Also in a {special} round.", special=special)
        else:
            line += " " + tr._("Not in a {special} round.", special=special)
    if options.calza_min_players > 2:
        line += " " + tr._(
            "Only while at least {players} players have dice.",
            players=options.calza_min_players,
        )
    return line


def _tokens_line(options: Options, tr: Translator, terms: Terms) -> str:
    line = tr._(
        "Tokens: everyone pays {stake} into the bank at the start. Whoever loses a die on "
        "{dudo} pays by how wrong the bid was: the bidder what it was short, the caller what "
        "it was over, 1 for doubting an exact bid (double on face 1 while it is wild). "
        "Balances may go below zero.",
        stake=options.stake,
        dudo=terms.dudo,
    )
    calls = [terms.jonti] if options.jonti else []
    if options.calza != "off":
        calls.append(terms.calza)
    if calls:
        line += " " + tr._(
            "A wrong {call} pays the difference; a right one takes 1 back.",
            call=" / ".join(calls),
        )
    return line


def rules_summary(options: Options, tr: Translator | None = None) -> list[str]:
    """The table's rules in plain words, one rule per line (RULES.md §2–§7), in `tr`'s
    language (English without one).

    The first line names the preset and every option this table changed from it; then a
    line per rule: dice per player, the bid, the opening roll, raising, pacos, dudo, the
    special round and who may change face in it, calza (mode, in special rounds, players
    needed), jonti, show and reroll, tokens, leaving mid-game, and who wins. An option the
    table does not play is said only where the preset plays it or players expect it (calza).
    """
    tr = tr or translator("en")
    terms = tr.terms(options)
    preset = PRESETS.get(options.preset)
    lines = [
        _preset_line(options, tr, terms),
        tr.n_(
            "Everyone starts with {n} die; the dice are rolled in secret each round.",
            "Everyone starts with {n} dice; the dice are rolled in secret each round.",
            options.dice_per_player,
        ),
        tr._(
            "A bid such as 5×4 claims that at least 5 of all the dice in play show a 4. The "
            "opener bids first; then each player in turn raises the bid or calls."
        ),
        tr.n_(
            "First opener: everyone rolls {n} die and the highest opens; the tied roll again.",
            "First opener: everyone rolls {n} dice and the highest total opens; the tied roll "
            "again.",
            options.opening_roll_dice,
        ),
        _raise_line(options, tr),
        tr._(
            "Face 1 ({paco}) is wild in a normal round: it counts for every face. A bid on face "
            "1 needs half the count, rounded up (after 5×4: {three}); back to another face, "
            "double it and add one (after {three}: 7×4). A normal round may not open on "
            "face 1.",
            paco=terms.paco,
            three=terms.pacos(3),
        ),
        tr._(
            "{dudo}: on your turn, instead of bidding, doubt the last bid. If fewer dice match "
            "it than bid, the bidder loses a die; otherwise the caller does.",
            dudo=terms.dudo,
        ),
        *_special_lines(options, tr, terms),
        _calza_line(options, tr, terms),
    ]
    if options.jonti:
        lines.append(
            tr._(
                "{jonti}: an exact call out of turn, while at least three players have dice, "
                "by a player with fewer than {most} dice, on a bid made neither by them nor by "
                "the player just before them. Right, they gain a die; wrong, they lose one.",
                jonti=terms.jonti,
                most=options.dice_per_player,
            )
        )
    elif preset is not None and preset.jonti:
        lines.append(tr._("No {jonti} at this table.", jonti=terms.jonti))
    if options.show_and_reroll:
        lines.append(
            tr._(
                "{reroll}: right after your own bid you may set some of your hidden dice aside "
                "face up (they count at the end) and re-roll the rest, keeping one or more "
                "hidden.",
                reroll=_cap(terms.reroll),
            )
        )
    elif preset is not None and preset.show_and_reroll:
        lines.append(tr._("No {reroll} at this table.", reroll=terms.reroll))
    if options.stake:
        lines.append(_tokens_line(options, tr, terms))
    elif preset is not None and preset.stake:
        lines.append(tr._("No tokens at this table."))
    if options.preset == "club":  # RULES.md §6, as the table plays it (perudo_ssh/lobby/table.py)
        lines.append(
            tr._(
                "Leaving mid-round: your cup stays on the table until the round ends and your "
                "dice count; then you are out, and what you paid stays in the bank."
            )
        )
    else:
        lines.append(tr._("A player who leaves mid-game hands the seat to a bot, which plays on."))
    if options.stake:
        lines.append(tr._("The last player with dice wins and takes the bank."))
    else:
        lines.append(tr._("The last player with dice wins."))
    return lines


def lobby_rules(tr: Translator) -> list[str]:
    """The rules in general, for the lobby (no table yet): the game, the classic rules
    (`rules_summary` without its preset line) and what each preset is."""
    return [
        tr._("Perudo, liar's dice: everyone rolls in secret, then bids on all the dice in play."),
        *rules_summary(PRESETS["classic"], tr)[1:],
        tr._("Tables choose a preset, and may change any of its options:"),
        *(
            tr._("{option}: {value}", option=name, value=preset_blurb(tr, name))
            for name in PRESET_NAMES
        ),
    ]


# ---- the table's settings that are not rules (issue 5) -------------------------------------

TURN_CHOICES: tuple[int, ...] = (0, 30, 60, 90, 120, 300)
"""The turn timers the create dialog offers, in seconds (0: none; `protocol.TURN_SECONDS`)."""
GRACE_CHOICES: tuple[int, ...] = (0, 30, 60, 120, 300, 600)
"""How long the create dialog offers to hold a disconnected player's seat, in seconds (0: a
bot plays it at once; `protocol.GRACE_SECONDS`)."""


def turn_timer_label(tr: Translator, seconds: int) -> str:
    """A turn timer as the create dialog lists it: `off`, `60 s`, `2 min`."""
    return duration(tr, seconds) if seconds else tr.p_("turn timer", "off")


def grace_label(tr: Translator, seconds: int) -> str:
    """What happens to a disconnected player's seat, as the create dialog lists it: `held
    2 min`, or `bot at once`."""
    return tr._("held {time}", time=duration(tr, seconds)) if seconds else tr._("bot at once")


def settings_lines(
    tr: Translator, options: Options | None, turn_seconds: int, grace_seconds: int
) -> list[str]:
    """The table's turn timer and disconnect grace in plain words (issue 5; not rules of
    RULES.md): how long a player has to move and what is played for them after that
    (`perudo_ssh.bots.automatic_move`), then what happens to the seat of a player whose
    connection drops (`perudo_ssh.lobby.held_seats.stand_in`: a bot plays it until they are
    back, or at a club table the club's leaving rule, RULES.md §6)."""
    terms = tr.terms(options)
    if turn_seconds:
        turn = tr._(
            "Turn timer: {time} to move; then a move is made for you: the smallest bid your "
            "own dice support, else {dudo}.",
            time=duration(tr, turn_seconds),
            dudo=terms.dudo,
        )
    else:
        turn = tr._("No turn timer: the table waits for each player.")
    club = options is not None and options.preset == "club"
    if club and grace_seconds:
        grace = tr._(
            "A disconnected player's seat is held {time} for them; then, as when leaving, "
            "their cup stays until the round ends and they are out.",
            time=duration(tr, grace_seconds),
        )
    elif club:
        grace = tr._(
            "A disconnected player leaves at once: their cup stays until the round ends, then "
            "they are out."
        )
    elif grace_seconds:
        grace = tr._(
            "A disconnected player's seat is held {time} for them; then a bot plays it until "
            "they log in again with the same key.",
            time=duration(tr, grace_seconds),
        )
    else:
        grace = tr._(
            "A disconnected player's seat is played by a bot at once, until they log in again "
            "with the same key."
        )
    return [turn, grace]
