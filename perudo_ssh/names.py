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
