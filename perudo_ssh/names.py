"""Player display names derived from SSH user names."""

from __future__ import annotations

import unicodedata

MAX_NAME_LENGTH = 16
"""Longest display name, in characters."""

DEFAULT_NAME = "player"
"""Name given when nothing usable is left of the SSH user name."""

_PUNCTUATION = frozenset("_.-")

# Hangul filler letters are category Lo (so `isalnum`) yet render as blank space:
# a name made of them would be invisible at the table.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")


def clean_name(username: str) -> str:
    """Turn a raw SSH user name into a display name.

    Keeps letters, digits (any script, after NFKC normalisation, so `Ｂｏｂ` is
    `Bob` and `é` typed as `e` + combining accent stays `é`) and `_.-`; cuts the
    result to 16 characters. Returns `"player"` when nothing is left.
    Uniqueness among seated players is the lobby's job, not this function's.
    """
    normalised = unicodedata.normalize("NFKC", username)
    kept = [
        char
        for char in normalised
        if (char.isalnum() and char not in _BLANK_LETTERS) or char in _PUNCTUATION
    ]
    return "".join(kept)[:MAX_NAME_LENGTH] or DEFAULT_NAME


# A small subset of Unicode's confusables (UTS #39, confusables.txt), not the whole: the
# Cyrillic and Greek letters that look like a Latin letter in a terminal font, capital and
# small apart (Greek `Ν` looks like `N` but `ν` like `v`, Cyrillic `Н` like `H` but `н` like
# a small `H`). Fullwidth and mathematical letters need no entry: NFKC makes them Latin.
# Our own decisions beyond confusables.txt: the small-capital-shaped Cyrillic `в к м н т`
# map like their capitals (`b k m h t`), and Greek `μ` maps to `u` (it reads as a `u`
# with a tail). Look-alikes within Latin (`l`/`I`, `rn`/`m`, `0`/`O`) are not folded.
_HOMOGLYPHS = str.maketrans(
    {
        # Cyrillic capitals
        "А": "A", "В": "B", "Е": "E", "Ѕ": "S", "І": "I", "Ј": "J", "К": "K", "М": "M",
        "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ү": "Y",
        "Һ": "H", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
        # Cyrillic small letters
        "а": "a", "в": "b", "е": "e", "ѕ": "s", "і": "i", "ј": "j", "к": "k", "м": "m",
        "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ү": "y",
        "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "i",
        # Greek capitals
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        # Greek small letters
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v",
        "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    }
)  # fmt: skip


def skeleton(name: str) -> str:
    """The shape of `name`, for telling look-alike names apart: two names with the same
    skeleton look the same (or nearly) on screen, so the store gives an account a name only
    if its skeleton is free.

    Steps: NFKD (fullwidth `ａ` is `a`, `ѐ` is `е` + grave accent), each Cyrillic or Greek
    letter of the `_HOMOGLYPHS` table to the Latin letter it looks like — before
    `str.casefold`, since a capital and its small letter may look like different Latin
    letters —, then casefold and NFC. So `skeleton("аna")` (Cyrillic `а`) is `"ana"`, as is
    `skeleton("ΑΝΑ")` (Greek capitals); `skeleton("Иван")` is `"иbah"`, which only a name
    looking like "Иван" shares. A subset of Unicode's confusables (UTS #39), not the whole.
    """
    decomposed = unicodedata.normalize("NFKD", name)
    return unicodedata.normalize("NFC", decomposed.translate(_HOMOGLYPHS).casefold())
