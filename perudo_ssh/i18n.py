"""Languages: English, French and Russian, from gettext catalogs (issue 3).

One `Translator` per language, shared by every session that reads it (they are immutable).
The server never translates: what it tells a session (`Notice`, `Refused`, `Goodbye`) is an
English message id marked with `N_` plus its named arguments, and the session's screens
translate it into the player's language. The screens call `tr._`, `tr.n_`, `tr.p_` and
`tr.np_`; Babel extracts those calls (see `babel.cfg`, `python -m perudo_ssh.catalogs`).

Message ids use `str.format` fields by name (`"{name} wins"`); a translation must use the same
fields (tests/test_catalogs.py checks it). The game's own words (dudo, calza, jonti, calzone,
palifico, paco) are *terms*: `Terms` gives them as the table's seed text uses them — in
Russian at a club table "Не верю", "Точно", "Calzone" and "туз" (seed 002), elsewhere the
Spanish words every seed uses (Dudo, Calza, Palifico, Paco).

No I/O beyond reading the compiled catalogs once per language; no Textual.
"""

from __future__ import annotations

import gettext
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perudo_ssh.rules import Options

LANGUAGES: tuple[str, ...] = ("en", "fr", "ru")
"""The languages a session may read, in the order the language key cycles through them."""
LANGUAGE_NAMES: dict[str, str] = {"en": "English", "fr": "Français", "ru": "Русский"}
DOMAIN = "perudo"
LOCALE_DIR = Path(__file__).with_name("locale")


def N_(message: str) -> str:
    """Mark `message` for extraction without translating it (translated by the receiver)."""
    return message


def language_of(value: str | None) -> str:
    """The session language for a POSIX locale value such as `fr_FR.UTF-8`, `ru`, `C`.

    Returns one of `LANGUAGES`; English for None, `C`, `POSIX` and anything not offered.
    """
    if not value:
        return "en"
    code = re.split(r"[_.@:-]", value.strip(), maxsplit=1)[0].lower()
    return code if code in LANGUAGES else "en"


class Translator:
    """The messages of one language. Every method returns the translated text with the named
    `args` filled in (`str.format`); a message missing from the catalog falls back to the
    English id. Immutable; one per language (`translator(code)`)."""

    def __init__(self, code: str) -> None:
        self.code = code
        if code == "en":
            self._t: gettext.NullTranslations = gettext.NullTranslations()
        else:
            self._t = gettext.translation(DOMAIN, LOCALE_DIR, languages=[code])

    def _(self, message: str, /, **args: object) -> str:
        """`message` translated, with `args` filled in."""
        text = self._t.gettext(message)
        return text.format(**args) if args else text

    def n_(self, singular: str, plural: str, n: int, /, **args: object) -> str:
        """The form for `n` (Russian has three), with `n` and `args` filled in."""
        return self._t.ngettext(singular, plural, n).format(n=n, **args)

    def p_(self, context: str, message: str, /, **args: object) -> str:
        """`message` in `context` (two uses of one English word), with `args` filled in."""
        text = self._t.pgettext(context, message)
        return text.format(**args) if args else text

    def np_(self, context: str, singular: str, plural: str, n: int, /, **args: object) -> str:
        """`n_` in `context`."""
        return self._t.npgettext(context, singular, plural, n).format(n=n, **args)

    def terms(self, options: Options | None) -> Terms:
        """The game's words at a table with `options` (None: the lobby, classic words)."""
        club = options is not None and options.preset == "club"
        return _terms(self.code, club)

    def __repr__(self) -> str:
        return f"Translator({self.code!r})"


class Terms:
    """The game's own words in one language for one kind of table (RULES.md §1, §4, §5, §6).

    Attributes are display words: `dudo`, `calza`, `jonti`, `calzone`, `palifico`,
    `reroll` (show and reroll); `pacos(n)` is "n pacos" with the right plural."""

    def __init__(self, tr: Translator, club: bool) -> None:
        self._tr = tr
        self.club = club
        if club:  # literal contexts: Babel extracts only those
            self.dudo = tr.p_("club", "Dudo")
            self.calza = tr.p_("club", "Calza")
            self.jonti = tr.p_("club", "Jonti")
            self.calzone = tr.p_("club", "Calzone")
            self.palifico = tr.p_("club", "Palifico")
            self.reroll = tr.p_("club", "show and reroll")
            self.paco = tr.p_("club", "paco")
        else:
            self.dudo = tr.p_("game", "Dudo")
            self.calza = tr.p_("game", "Calza")
            self.jonti = tr.p_("game", "Jonti")
            self.calzone = tr.p_("game", "Calzone")
            self.palifico = tr.p_("game", "Palifico")
            self.reroll = tr.p_("game", "show and reroll")
            self.paco = tr.p_("game", "paco")

    def pacos(self, n: int) -> str:
        """`3 pacos`, `1 paco` (`3 туза` at a Russian club table)."""
        if self.club:
            return self._tr.np_("club", "{n} paco", "{n} pacos", n)
        return self._tr.np_("game", "{n} paco", "{n} pacos", n)

    def special(self, kind: str | None) -> str:
        """The name of a special round kind ("palifico", "calzone"); "" for None."""
        if kind == "palifico":
            return self.palifico
        if kind == "calzone":
            return self.calzone
        return kind or ""


@cache
def translator(code: str) -> Translator:
    """The shared translator of language `code` (one of `LANGUAGES`; else English)."""
    return Translator(code if code in LANGUAGES else "en")


@cache
def _terms(code: str, club: bool) -> Terms:
    return Terms(translator(code), club)


def next_language(code: str) -> str:
    """The language after `code` in `LANGUAGES`, wrapping round (the language key)."""
    i = LANGUAGES.index(code) if code in LANGUAGES else -1
    return LANGUAGES[(i + 1) % len(LANGUAGES)]
