"""Player display names derived from SSH user names.

`clean_name` keeps what a name can safely show and `skeleton` tells look-alike names apart.
Both follow Unicode's security recommendations, adapted to a name on a terminal: UTS #39
(Unicode Security Mechanisms, its General Security Profile and "Moderately Restrictive"
level) and UAX #31 (Unicode Identifiers, Table 4 "Recommended" scripts). The Unicode
properties Python's `unicodedata` lacks — Script_Extensions and Default_Ignorable_Code_Point
— come from the `regex` package (`\\p{scx=Latin}`, `\\p{DI}`); what a terminal shows comes
from rich's cell widths, as Textual draws it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex
from rich.cells import get_character_cell_size

MAX_NAME_LENGTH = 16
"""Longest display name, in characters."""

DEFAULT_NAME = "player"
"""Name given when nothing usable is left of the SSH user name."""

MAX_USERNAME_READ = 256
"""Characters of an SSH user name that `clean_name` reads: 16 usable ones are within them
unless the name is mostly junk, and a client sending kilobytes costs no more."""

MAX_MARKS = 4
"""Combining marks kept in a row after a letter or digit, counted decomposed: UTS #39
section 5.4's limit of 4 nonspacing marks. Spacing marks (Mc) count too: rich gives them no
width either. Indic clusters and Tibetan stacks need at most 3, a Myanmar syllable such as
`ကြွေး` 4."""

RECOMMENDED_SCRIPTS = (
    "Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Georgian", "Hangul",
    "Han", "Hiragana", "Katakana", "Bopomofo", "Devanagari", "Bengali", "Gurmukhi",
    "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala", "Thai", "Lao",
    "Tibetan", "Myanmar", "Ethiopic", "Khmer", "Thaana",
)  # fmt: skip
"""The scripts a name may be written in: UAX #31 Table 4, "Recommended Scripts" (plus the
Common and Inherited characters — digits, `_.-`, combining marks — that fit any of them)."""

_PUNCTUATION = frozenset("_.-")

# ---- scripts as bit sets -------------------------------------------------------------------
# One bit per recommended script, and UTS #39's three "augmented" CJK scripts: Han counts as
# Japanese (Jpan), Korean (Kore) and Han-with-Bopomofo (Hanb) writing too, Hiragana and
# Katakana as Jpan, Hangul as Kore, Bopomofo as Hanb — so 日本 + ひらがな + カタカナ resolve to
# {Jpan}, one writing system (UTS #39 section 5.1, "augmented script set").

_BIT = {script: 1 << i for i, script in enumerate(RECOMMENDED_SCRIPTS)}
_JPAN = 1 << len(RECOMMENDED_SCRIPTS)
_KORE = _JPAN << 1
_HANB = _JPAN << 2
_ANY = (_HANB << 1) - 1
"""A Common or Inherited character: fits every script."""
_LATIN = _BIT["Latin"]
_CJK = _JPAN | _KORE | _HANB
_NOT_WITH_LATIN = _BIT["Greek"] | _BIT["Cyrillic"]
_AUGMENTED = {
    "Han": _JPAN | _KORE | _HANB,
    "Hiragana": _JPAN,
    "Katakana": _JPAN,
    "Hangul": _KORE,
    "Bopomofo": _HANB,
}

# One precompiled pattern per script: Script_Extensions, so that `ー` (the prolonged sound
# mark, script Common) counts as Hiragana and Katakana, and U+0951 (a Vedic stress mark) as
# Devanagari and the other Indic scripts that use it. Most characters' Script_Extensions is
# just their Script: `_SCRIPT` finds that in one match, and only the characters of
# `_EXTENDED` (a Script_Extensions beyond the Script) try every pattern.
_BITS = tuple(_BIT[script] | _AUGMENTED.get(script, 0) for script in RECOMMENDED_SCRIPTS)
_SCRIPT_PATTERNS = tuple(
    (regex.compile(rf"\p{{scx={script}}}"), bits)
    for script, bits in zip(RECOMMENDED_SCRIPTS, _BITS, strict=True)
)
_SCRIPT = regex.compile("|".join(rf"(\p{{sc={script}}})" for script in RECOMMENDED_SCRIPTS))
_EXTENDED = regex.compile(
    "(?V1)[" + "".join(rf"[\p{{scx={s}}}--\p{{sc={s}}}]" for s in RECOMMENDED_SCRIPTS) + "]"
)
_COMMON = regex.compile(r"\p{scx=Common}")  # Script_Extensions exactly {Common}
_INHERITED = regex.compile(r"\p{scx=Inherited}")  # Script_Extensions exactly {Inherited}
_DEFAULT_IGNORABLE = regex.compile(r"\p{DI}")

# what `_char_class` makes of a character
_DROP, _BASE, _MARK, _SEPARATOR = range(4)


def _conjoining_jamo(code: int) -> bool:
    """A conjoining jamo that has no width on its own: a vowel or final (U+1160–11FF,
    U+D7B0–D7FF), or an old leading consonant (U+A960–A97F) no font here draws. A modern
    leading consonant (U+1100–115E) left alone is drawn two cells wide, as `ㅎ` (which NFKC
    makes U+1112): `ㅎㅎ` is a name."""
    return 0x1160 <= code <= 0x11FF or 0xA960 <= code <= 0xA97F or 0xD7B0 <= code <= 0xD7FF


_DROPPED = (_DROP, 0, ())


def _is_mark(char: str) -> bool:
    # not Me: enclosing marks are not in UAX #31's XID_Continue
    return unicodedata.category(char) in ("Mn", "Mc")


@lru_cache(maxsize=8192)
def _char_class(char: str) -> tuple[int, int, tuple[str, ...]]:
    """`(kind, scripts, marks)` of one NFKC-normalised character: `kind` is `_DROP` for a
    character a name never keeps, else `_BASE` (a letter or digit), `_MARK` (a combining
    mark) or `_SEPARATOR` (`_.-`); `scripts` its augmented Script_Extensions as bits (`_ANY`
    for Common and Inherited); `marks` the combining marks of its canonical decomposition
    (`é` holds U+0301, a mark holds itself), for counting marks in a row."""
    if char in _PUNCTUATION:
        return _SEPARATOR, _ANY, ()
    category = unicodedata.category(char)
    if _is_mark(char):
        kind = _MARK
    elif category[0] in "LN":
        kind = _BASE
    else:  # punctuation, symbols, spaces, controls, format, private use, unassigned
        return _DROPPED
    if _conjoining_jamo(ord(char)) or _DEFAULT_IGNORABLE.match(char):
        return _DROPPED
    if kind == _BASE and get_character_cell_size(char) == 0:
        return _DROPPED  # shows as nothing
    marks = tuple(m for m in unicodedata.normalize("NFD", char) if _is_mark(m))
    scripts = 0
    if _EXTENDED.match(char):
        for pattern, bits in _SCRIPT_PATTERNS:
            if pattern.match(char):
                scripts |= bits
    elif script := _SCRIPT.match(char):
        scripts = _BITS[script.lastindex - 1]
    if scripts:
        return kind, scripts, marks
    if (kind == _MARK and _INHERITED.match(char)) or (category == "Nd" and _COMMON.match(char)):
        return kind, _ANY, marks
    return _DROPPED  # another script (Cherokee, Runic, ...) or a Common letter (`ʹ`, `❶`)


def _allowed(resolved: int, without_latin: int) -> bool:
    """UTS #39 "Moderately Restrictive", given the resolved script set of a string and that
    of its characters whose Script_Extensions lack Latin (both as bits, `_ANY` for none):
    one script, or Latin with Han and the Japanese, Korean or Bopomofo scripts, or Latin
    with one other script that is not Greek or Cyrillic (as ICU's
    `uspoof_getRestrictionLevel` computes it)."""
    return bool(
        resolved or without_latin & _CJK or (without_latin and not without_latin & _NOT_WITH_LATIN)
    )


_ASCII_DROPPED = str.maketrans(
    dict.fromkeys(chr(c) for c in range(128) if not (chr(c).isalnum() or chr(c) in _PUNCTUATION))
)


def clean_name(username: str) -> str:
    """Turn a raw SSH user name into a display name that shows on screen as what it is.

    NFKC first (so `Ｂｏｂ` is `Bob`, `e` + combining acute is `é`, and a Hangul leading
    consonant + vowel jamo is the syllable `가`), then each character, left to right, is kept
    or dropped:

    - letters and digits (general category L or N) of a recommended script
      (`RECOMMENDED_SCRIPTS`, by Script_Extensions), Common digits, and `_.-` are kept;
      punctuation, symbols, spaces, controls and unassigned code points are not;
    - never a Default_Ignorable_Code_Point (zero-width space and joiners, bidi controls such
      as RLO, variation selectors, Mongolian free variation selectors, Khmer inherent vowels,
      Hangul fillers, tags, soft hyphen), nor a conjoining Hangul jamo left over by NFKC
      other than a modern leading consonant (U+1160–11FF, U+A960–A97F, U+D7B0–D7FF: a
      vowel or final jamo alone has no width and
      `aliceᅡ` would show as `alice`), nor a letter or digit rich measures 0 cells wide;
    - a combining mark (Mn, Mc: accents, the vowel signs and viramas of Indic scripts, so
      `प्रिया` stays whole) only right after a kept letter, digit or mark of the input, at
      most `MAX_MARKS` in a row and never the same mark twice in a row;
    - the name stays "Moderately Restrictive" (UTS #39 section 5.2): one script, or Latin
      with one other recommended script but Greek or Cyrillic, or Latin + Han + Hiragana +
      Katakana, Latin + Han + Bopomofo, Latin + Han + Hangul; Common and Inherited
      characters fit any. A character that would break this is dropped, so the first
      script wins: `alicе` with a Cyrillic `е` is `alic`.

    The result is composed again (NFC: dropping a character may bring a letter and its mark
    together), cut to `MAX_NAME_LENGTH` characters, and is `DEFAULT_NAME` when nothing is
    left. Only the first `MAX_USERNAME_READ` characters of `username` are read.

    Where we differ from UTS #39's General Security Profile: no Identifier_Status data, so
    obsolete, technical or uncommon-use characters of a recommended script are kept when
    they show; digits of different systems may mix (no "mixed-numbers" check); a name may
    begin with a digit or `_.-`; characters breaking a rule are dropped rather than the whole
    name refused (a login never fails over its name); a character this Python's
    `unicodedata` does not know (category Cn) is dropped even where `regex`'s newer Unicode
    knows its script. Look-alikes are `skeleton`'s job and uniqueness among seated players
    the lobby's, not this function's. Cleaning a clean name changes nothing.

    Called on every login: about 1 µs for an ASCII name, 10–20 µs for others (the
    properties of each character are cached), a few hundred µs for one of 64 characters
    never seen before.
    """
    username = username[:MAX_USERNAME_READ]
    if username.isascii():  # the same as below, faster: NFKC changes nothing, all are Latin
        return username.translate(_ASCII_DROPPED)[:MAX_NAME_LENGTH] or DEFAULT_NAME
    normalised = unicodedata.normalize("NFKC", username)
    kept: list[str] = []
    starters = 0  # letters, digits and separators kept
    previous = _DROP  # what the last character of `normalised` became
    run = 0  # marks in a row, counted decomposed (`é` ends in one)
    last_mark = ""  # the last of them
    resolved = without_latin = _ANY  # as `_allowed` takes them
    for char in normalised:
        kind, scripts, marks = _char_class(char)
        if kind == _MARK:
            if previous in (_DROP, _SEPARATOR) or run + len(marks) > MAX_MARKS:
                kind = _DROP
            elif marks[0] == last_mark:
                kind = _DROP
        elif kind != _DROP and starters == MAX_NAME_LENGTH:
            break  # the cut name is known: NFC below never merges two of these
        if kind != _DROP:
            now_resolved = resolved & scripts
            now_without = without_latin if scripts & _LATIN else without_latin & scripts
            if _allowed(now_resolved, now_without):
                resolved, without_latin = now_resolved, now_without
                kept.append(char)
                if kind == _MARK:
                    run += len(marks)
                else:
                    starters += 1
                    run = len(marks)
                last_mark = marks[-1] if marks else ""
            else:
                kind = _DROP
        previous = kind
    name = unicodedata.normalize("NFC", "".join(kept))
    return name[:MAX_NAME_LENGTH] or DEFAULT_NAME


# A small subset of Unicode's confusables (UTS #39, confusables.txt), not the whole: the
# Cyrillic and Greek letters that look like a Latin letter in a terminal font, capital and
# small apart (Greek `Ν` looks like `N` but `ν` like `v`, Cyrillic `Н` like `H` but `н` like
# a small `H`). Fullwidth and mathematical letters need no entry: NFKC makes them Latin.
# Our own decisions beyond confusables.txt: the small-capital-shaped Cyrillic `в к м н т`
# map like their capitals (`b k m h t`), and Greek `μ` maps to `u` (it reads as a `u`
# with a tail). Look-alikes within Latin (`l`/`I`, `rn`/`m`, `0`/`O`) are not folded. The
# separators `_ . -` are one: `alice_2` and `alice.2` pass for alice's second session
# `alice-2` as easily as the lobby's own name does.
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
        # the separators a name may hold
        "_": "-", ".": "-",
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
    looking like "Иван" shares; `_` and `.` are `-` (`skeleton("alice_2")` is `"alice-2"`).
    A subset of Unicode's confusables (UTS #39), not the whole.

    The store keeps each account's skeleton (`accounts.name_skeleton`): a change here needs
    a migration recomputing them (`perudo_ssh.store.MIGRATIONS`).
    """
    decomposed = unicodedata.normalize("NFKD", name)
    return unicodedata.normalize("NFC", decomposed.translate(_HOMOGLYPHS).casefold())


_SEPARATORS = "-_."
"""What `clean_name` keeps between letters; `skeleton` makes them one."""
_LOBBY_SHAPED = re.compile(r"^(guest|bot)[-_.]+|[-_.]+(\d+)$", re.IGNORECASE)


def claimable_name(wanted: str) -> str:
    """The name an account may hold for `wanted` (a `clean_name`): the same, except that
    names shaped like the lobby's own, with any of `-_.` (and any number of them) for its
    hyphen, lose their separators — `guest-3` and `guest_3` (a guest) are `guest3`, `bot-Ana`
    and `bot.Ana` (a bot) `botAna`, `ana-2` and `ana_2` (a second session of ana) `ana2`."""
    name = _LOBBY_SHAPED.sub(lambda m: m.group(1) or m.group(2), wanted)
    return name[:MAX_NAME_LENGTH] or DEFAULT_NAME


def numbered(name: str, number: int) -> str:
    """`name` with `number` after it (`ana2`), `name` cut to fit `MAX_NAME_LENGTH` and
    without separators at its end (`ana-` gives `ana2`, not the lobby-shaped `ana-2`)."""
    suffix = str(number)
    return name[: MAX_NAME_LENGTH - len(suffix)].rstrip(_SEPARATORS) + suffix
