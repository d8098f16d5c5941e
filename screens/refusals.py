"""Why a command was refused, in the player's language.

The lobby refuses with `protocol.Refused(code, message, args)`. For its own codes
("no_table", "table_full", …) `message` is an English message id with named `args`, which
the session translates as it is. For a rule error code (RECORD.md "Error codes",
`perudo_ssh.rules.state.ERROR_CODES`) `message` is the engine's own English sentence, which
no catalog holds: `rule_reason` turns each sentence the engine says (perudo_ssh/rules/legality.py,
also the view's `choices.calza_why` / `jonti_why`) into a translated one, and any other into
a sentence for its code. Pure text functions; no Textual.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from perudo_ssh.i18n import Terms, Translator
from perudo_ssh.rules import ERROR_CODES

_Words = Callable[[Translator, Terms], str]

# The engine's exact sentences. A lambda per sentence keeps each id a literal for Babel.
_SENTENCES: dict[str, _Words] = {
    "the game is over": lambda tr, t: tr._("the game is over"),
    "that player has no dice in this game": lambda tr, t: tr._("you have no dice in this game"),
    "the round is over; wait for the next roll": lambda tr, t: tr._(
        "the round is over; wait for the next roll"
    ),
    "it is not your turn to bid": lambda tr, t: tr._("it is not your turn to bid"),
    "it is not your turn": lambda tr, t: tr._("it is not your turn"),
    "calza is called on your turn, instead of bidding": lambda tr, t: tr._(
        "{calza} is called on your turn, instead of bidding", calza=t.calza
    ),
    "a face is between 1 and 6": lambda tr, t: tr._("a face is between 1 and 6"),
    "a normal round may not be opened on pacos": lambda tr, t: tr._(
        "a normal round may not be opened on pacos"
    ),
    "the bid must be higher than the last one": lambda tr, t: tr._(
        "the bid must be higher than the last one"
    ),
    "there is no bid to call yet": lambda tr, t: tr._("there is no bid to call yet"),
    "calza is not played at this table": lambda tr, t: tr._(
        "{calza} is not played at this table", calza=t.calza
    ),
    "you cannot call calza on your own bid": lambda tr, t: tr._(
        "you cannot call {calza} on your own bid", calza=t.calza
    ),
    "calza is not allowed in a palifico round": lambda tr, t: tr._(
        "{calza} is not allowed in a {palifico} round", calza=t.calza, palifico=t.palifico
    ),
    "jonti is not played at this table": lambda tr, t: tr._(
        "{jonti} is not played at this table", jonti=t.jonti
    ),
    "jonti needs at least three players with dice": lambda tr, t: tr._(
        "{jonti} needs at least three players with dice", jonti=t.jonti
    ),
    "jonti needs fewer dice than you started with": lambda tr, t: tr._(
        "{jonti} needs fewer dice than you started with", jonti=t.jonti
    ),
    "you cannot call jonti on your own bid": lambda tr, t: tr._(
        "you cannot call {jonti} on your own bid", jonti=t.jonti
    ),
    "it is your turn: jonti is called out of turn": lambda tr, t: tr._(
        "it is your turn: {jonti} is called out of turn", jonti=t.jonti
    ),
    "calzone is not played at this table": lambda tr, t: tr._(
        "{calzone} is not played at this table", calzone=t.calzone
    ),
    "calzone is declared before the round's first bid": lambda tr, t: tr._(
        "{calzone} is declared before the round's first bid", calzone=t.calzone
    ),
    "only the player who just dropped to one die may declare it": lambda tr, t: tr._(
        "only the player who just dropped to one die may declare {calzone}", calzone=t.calzone
    ),
    "show and reroll is not played at this table": lambda tr, t: tr._(
        "{reroll} is not played at this table", reroll=t.reroll
    ),
    "you may show and reroll right after your own bid": lambda tr, t: tr._(
        "you may {reroll} right after your own bid", reroll=t.reroll
    ),
    "show one or more of your hidden dice": lambda tr, t: tr._(
        "show one or more of your hidden dice"
    ),
    "keep at least one die hidden to re-roll": lambda tr, t: tr._(
        "keep at least one die hidden to re-roll"
    ),
    "the re-rolled dice do not match": lambda tr, t: tr._("the re-rolled dice do not match"),
    "the round has not ended with a call": lambda tr, t: tr._(
        "the round has not ended with a call"
    ),
    "a player's cup stays on the table until the round ends": lambda tr, t: tr._(
        "a player's cup stays on the table until the round ends"
    ),
    "each player rolls exactly their dice, faces 1 to 6": lambda tr, t: tr._(
        "each player rolls exactly their dice, faces 1 to 6"
    ),
}

# The engine's sentences with a number in them.
_PATTERNS: tuple[tuple[re.Pattern[str], Callable[[Translator, Terms, int], str]], ...] = (
    (
        re.compile(r"a count is between 1 and the (\d+) dice in play"),
        lambda tr, t, n: tr.n_(
            "a count is between 1 and the {n} die in play",
            "a count is between 1 and the {n} dice in play",
            n,
        ),
    ),
    (
        re.compile(r"in this round the face stays (\d+)"),
        lambda tr, t, n: tr._("in this round the face stays {face}", face=n),
    ),
    (
        re.compile(r"calza needs at least (\d+) players left"),
        lambda tr, t, n: tr.n_(
            "{calza} needs at least {n} player left",
            "{calza} needs at least {n} players left",
            n,
            calza=t.calza,
        ),
    ),
)

# For a sentence the engine may say one day that is not above: one per code.
_CODES: dict[str, _Words] = {
    "game_over": lambda tr, t: tr._("the game is over"),
    "unknown_player": lambda tr, t: tr._("you have no dice in this game"),
    "dice_mismatch": lambda tr, t: tr._("each player rolls exactly their dice, faces 1 to 6"),
    "action_after_call": lambda tr, t: tr._("the round is over; wait for the next roll"),
    "not_your_turn": lambda tr, t: tr._("it is not your turn"),
    "face_out_of_range": lambda tr, t: tr._("a face is between 1 and 6"),
    "count_out_of_range": lambda tr, t: tr._("there are not that many dice in play"),
    "opening_on_pacos": lambda tr, t: tr._("a normal round may not be opened on pacos"),
    "face_locked": lambda tr, t: tr._("in this round the face may not change"),
    "bid_not_higher": lambda tr, t: tr._("the bid must be higher than the last one"),
    "nothing_to_call": lambda tr, t: tr._("there is no bid to call yet"),
    "calza_not_allowed": lambda tr, t: tr._("{calza} is not allowed now", calza=t.calza),
    "jonti_not_allowed": lambda tr, t: tr._("{jonti} is not allowed now", jonti=t.jonti),
    "calzone_not_allowed": lambda tr, t: tr._("{calzone} is not allowed now", calzone=t.calzone),
    "reroll_not_allowed": lambda tr, t: tr._("{reroll} is not allowed now", reroll=t.reroll),
    "round_unfinished": lambda tr, t: tr._("the round has not ended with a call"),
}


def is_rule_code(code: str) -> bool:
    """Whether `code` is a rule error code (RECORD.md), whose message is the engine's."""
    return code in ERROR_CODES


def knows(message: str) -> bool:
    """Whether `rule_reason` has words of its own for the engine sentence `message` (else it
    says its code's general sentence)."""
    return message in _SENTENCES or any(p.fullmatch(message) for p, _ in _PATTERNS)


def rule_reason(tr: Translator, code: str, message: str, terms: Terms | None = None) -> str:
    """The engine's refusal `message` (rule error `code`, RECORD.md) in `tr`'s language, the
    game's words taken from `terms` (the lobby's when None). A sentence the engine did not
    say before gets its code's general sentence; an unknown code, `message` unchanged."""
    terms = terms if terms is not None else tr.terms(None)
    words = _SENTENCES.get(message)
    if words is not None:
        return words(tr, terms)
    for pattern, numbered in _PATTERNS:
        found = pattern.fullmatch(message)
        if found is not None:
            return numbered(tr, terms, int(found[1]))
    general = _CODES.get(code)
    return general(tr, terms) if general is not None else message


def refusal_text(
    tr: Translator, code: str, message: str, args: dict[str, str | int], terms: Terms | None
) -> str:
    """The text of `protocol.Refused(code, message, args)` in `tr`'s language, as a sentence
    starting with a capital: a rule code's engine sentence via `rule_reason`, else the
    lobby's message id with its `args` (`say`)."""
    if is_rule_code(code):
        reason = rule_reason(tr, code, message, terms)
        return reason[:1].upper() + reason[1:]  # a sentence, as `say` makes the lobby's
    return say(tr, message, args)


def say(tr: Translator, message: str, args: dict[str, str | int]) -> str:
    """A server message id (`N_`) with its named `args`, translated, as a sentence: its first
    letter a capital (the lobby's ids start lower-case, issue 13), unless the sentence starts
    with one of its fields (a player's name is shown as it is). A message whose fields do not
    match its args is shown as the untranslated id rather than crash the screen."""
    template = tr._(message)
    try:
        text = template.format(**args) if args else template
    except (KeyError, IndexError, ValueError):
        return message
    if template[:1].isalpha():
        return text[:1].upper() + text[1:]
    return text
