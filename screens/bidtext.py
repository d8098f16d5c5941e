"""Bids as players write them: `format_bid` for display, `parse_bid` for the bid input.

Pure text functions; no Textual. The parser is tolerant: `5x4`, `5 x 4`, `5×4`, `5*4`,
`5 4`, `5 fours`, `5 4s`, `3 pacos`, `3p`, `3 aces` are all understood (RULES.md §1: face 1
is the paco). Whether a parsed bid is *legal* is not decided here.
"""

from __future__ import annotations

import re

from perudo_ssh.rules import Bid

BID_EXAMPLE = "Type a bid like 5x4: five dice showing 4 (or 3p for three pacos)"

_FACE_WORDS: dict[str, int] = {
    "p": 1,
    "pa": 1,
    "paco": 1,
    "pacos": 1,
    "ace": 1,
    "aces": 1,
    "one": 1,
    "ones": 1,
    "two": 2,
    "twos": 2,
    "three": 3,
    "threes": 3,
    "four": 4,
    "fours": 4,
    "five": 5,
    "fives": 5,
    "six": 6,
    "sixes": 6,
}

_COUNT_WORDS: dict[str, int] = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}

# count, an optional separator, then a face (digits, optionally plural "4s", or a word)
_BID = re.compile(
    r"^(?P<count>\d+|[a-z]+)\s*(?:x|×|\*|,|:|by|of)?\s*(?P<face>\d+|[a-z]+?)(?:'?s)?$"
)


class BidSyntaxError(ValueError):
    """The text is not a bid. `str(err)` tells the player how to type one."""


def face_name(face: int, count: int = 2) -> str:
    """`pacos`/`paco` for face 1, `4s` for the others."""
    if face == 1:
        return "paco" if count == 1 else "pacos"
    return f"{face}s"


def format_bid(bid: Bid) -> str:
    """`4×5`, or `3 pacos` / `1 paco` for face 1."""
    if bid.face == 1:
        return f"{bid.count} {face_name(1, bid.count)}"
    return f"{bid.count}×{bid.face}"


def _number(word: str, words: dict[str, int]) -> int | None:
    if word.isdigit():
        return int(word)
    return words.get(word)


def parse_bid(text: str) -> Bid:
    """The bid written in `text`. Raises `BidSyntaxError` with a hint when it is not one.

    Only the shape is checked here, plus a face between 1 and 6 and a count of at least 1;
    the count's upper bound and the raise rules are the table's business.
    """
    cleaned = " ".join(text.strip().lower().split())
    match = _BID.match(cleaned)
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
        raise BidSyntaxError(f"There is no face {face}: faces go from 1 (paco) to 6")
    if count < 1:
        raise BidSyntaxError("A bid needs at least one die")
    return Bid(count=count, face=face)
