"""Bids as players write them: `format_bid` for display, `parse_bid` and `parse_call` for the
bid input.

Pure text functions; no Textual. The parser is tolerant and reads English, French and
Russian alike: `5x4`, `5 x 4`, `5×4`, `5*4`, `5 4`, `5 fours`, `5 4s`, `3 pacos`, `3p`,
`3 aces`, `cinq quatre`, `3 as`, `пять шестёрок`, `5х6`, `3 туза` are all understood
(RULES.md §1: face 1 is the paco). Whether a parsed bid is *legal* is not decided here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from perudo_ssh.i18n import N_
from perudo_ssh.rules import Bid

if TYPE_CHECKING:
    from perudo_ssh.i18n import Terms, Translator

BID_EXAMPLE = N_("Type a bid like 5x4: five dice showing 4 (or 3p for three pacos)")

_FACE_WORDS: dict[str, int] = {
    # English
    "p": 1, "pa": 1, "paco": 1, "pacos": 1, "ace": 1, "aces": 1, "one": 1, "ones": 1,
    "two": 2, "twos": 2, "three": 3, "threes": 3, "four": 4, "fours": 4,
    "five": 5, "fives": 5, "six": 6, "sixes": 6,
    # French ("as" is the ace; "paco" as above)
    "as": 1, "un": 1, "uns": 1, "deux": 2, "trois": 3, "quatre": 4, "quatres": 4,
    "cinq": 5, "cinqs": 5,
    # Russian (ё is read as е): the ace is туз ("A" in the club seed), or пако
    "а": 1, "a": 1, "пако": 1, "туз": 1, "туза": 1, "тузы": 1, "тузов": 1,
    "единица": 1, "единицы": 1, "единиц": 1,
    "двойка": 2, "двойки": 2, "двоек": 2, "тройка": 3, "тройки": 3, "троек": 3,
    "четверка": 4, "четверки": 4, "четверок": 4, "пятерка": 5, "пятерки": 5, "пятерок": 5,
    "шестерка": 6, "шестерки": 6, "шестерок": 6,
}  # fmt: skip

_COUNT_WORDS: dict[str, int] = {
    w: n
    for words in (
        "zero one two three four five six seven eight nine ten eleven twelve",
        "zéro un deux trois quatre cinq six sept huit neuf dix onze douze",
        "ноль один два три четыре пять шесть семь восемь девять десять одиннадцать двенадцать",
    )
    for n, w in enumerate(words.split())
} | {"une": 1, "одна": 1, "одну": 1, "две": 2}

_CALL_WORDS: dict[str, str] = {
    "dudo": "dudo", "doodoo": "dudo", "не верю": "dudo", "неверю": "dudo", "дудо": "dudo",
    "calza": "calza", "кальса": "calza",
    "jonti": "jonti", "джонти": "jonti",
}  # fmt: skip
"""Call words in any of the three languages; "точно" (exactly) is the club's jonti (seed 002)
and calza elsewhere, see `parse_call`."""

# count, an optional separator, then a face (digits, optionally plural "4s", or a word);
# х is the Cyrillic letter the Russian seed writes bids with (5х6s)
_LETTERS = r"[^\W\d_]+"
_BID = re.compile(
    rf"^(?P<count>\d+|{_LETTERS})\s*(?:[xх×*,:]|d'|(?:by|of|de|по)(?=[\s\d]))?\s*"
    rf"(?P<face>\d+|{_LETTERS}?)(?:'?s)?$"
)
_LONGEST_BID = 64
"""Characters (after `_cleaned`) beyond which a text is no bid: "двенадцать шестерок" is 19."""


class BidSyntaxError(ValueError):
    """The text is not a bid. `str(err)` tells the player how to type one, in English;
    `message_id` and `args` say it for `text(tr)` in the player's language."""

    def __init__(self, message_id: str, **args: str | int) -> None:
        super().__init__(message_id.format(**args) if args else message_id)
        self.message_id = message_id
        self.message_args = args

    def text(self, tr: Translator) -> str:
        """The hint in `tr`'s language."""
        return tr._(self.message_id, **self.message_args)


def face_name(face: int, count: int = 2, terms: Terms | None = None) -> str:
    """`pacos`/`paco` for face 1, `4s` for the others (for `count` dice). With `terms`, in
    their language and the table's word for pacos (`туза` at a Russian club table)."""
    if terms is None:
        if face == 1:
            return "paco" if count == 1 else "pacos"
        return f"{face}s"
    if face == 1:  # the word of "3 pacos" without its number
        return terms.pacos(count).replace(str(count), "", 1).strip()
    tr: Translator = terms._tr  # the language the terms are in
    return tr.np_("face", "{face}", "{face}s", count, face=face)


def format_bid(bid: Bid, terms: Terms | None = None) -> str:
    """`4×5`, or `3 pacos` / `1 paco` for face 1 (with `terms`, `terms.pacos(3)`)."""
    if bid.face == 1:
        if terms is not None:
            return terms.pacos(bid.count)
        return f"{bid.count} {face_name(1, bid.count)}"
    return f"{bid.count}×{bid.face}"


def _number(word: str, words: dict[str, int]) -> int | None:
    # isdecimal, as the pattern's \d: "²" is a digit but no number int() reads; past 9
    # digits no bid is meant (and past 4300 int() raises)
    if word.isdecimal():
        return int(word) if len(word) <= 9 else None
    return words.get(word)


def _cleaned(text: str) -> str:
    return " ".join(text.strip().lower().replace("ё", "е").split())


def parse_call(text: str, terms: Terms | None = None) -> str | None:
    """The call ("dudo", "calza" or "jonti") written in `text`, in any language or as the
    table's own word in `terms` ("Не верю" at a Russian club table), else None. Whether the
    call is allowed now is not decided here."""
    cleaned = _cleaned(text).strip("!.")
    if terms is not None:
        for call, word in (("dudo", terms.dudo), ("calza", terms.calza), ("jonti", terms.jonti)):
            if cleaned == _cleaned(word):
                return call
    if cleaned == "точно":
        return "jonti" if terms is not None and terms.club else "calza"
    return _CALL_WORDS.get(cleaned)


def parse_bid(text: str) -> Bid:
    """The bid written in `text`. Raises `BidSyntaxError` with a hint when it is not one.

    Only the shape is checked here, plus a face between 1 and 6 and a count of at least 1;
    the count's upper bound and the raise rules are the table's business.
    """
    cleaned = _cleaned(text)
    # the pattern backtracks quadratically on a long run of digits or letters; no bid is long
    match = _BID.match(cleaned) if len(cleaned) <= _LONGEST_BID else None
    if match is None:
        raise BidSyntaxError(BID_EXAMPLE)
    count = _number(match["count"], _COUNT_WORDS)
    face_word = match["face"]
    face = _number(face_word, _FACE_WORDS)
    if face is None and face_word + "s" in _FACE_WORDS:  # "sixe" from "sixes" split as "sixe"+"s"
        face = _FACE_WORDS[face_word + "s"]
    if count is None or face is None:
        raise BidSyntaxError(BID_EXAMPLE)
    if not 1 <= face <= 6:
        raise BidSyntaxError(N_("There is no face {face}: faces go from 1 (paco) to 6"), face=face)
    if count < 1:
        raise BidSyntaxError(N_("A bid needs at least one die"))
    return Bid(count=count, face=face)
