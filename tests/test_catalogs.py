"""The gettext catalogs (issue 3, item 4): every message the code uses is in each catalog,
every French and Russian message is translated with the same {fields}, the committed .mo
files are compiled from the .po files as they are; and how a client's locale picks the
session language."""

from __future__ import annotations

import gettext
import importlib
import inspect
import io
import pkgutil
import string
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

import screens
from perudo_ssh.catalogs import KEYWORDS
from perudo_ssh.i18n import DOMAIN, LANGUAGES, LOCALE_DIR, language_of, next_language, translator
from perudo_ssh.ssh.client_text import locale_of

ROOT = Path(__file__).resolve().parents[1]
TRANSLATED = LANGUAGES[1:]

Key = tuple[str | None, str]
"""A message: (context, id); the id of a plural message is its singular."""


def _extracted() -> dict[Key, str | None]:
    """Every message the code uses, as `python -m perudo_ssh.catalogs` extracts them:
    (context, id) -> the plural id (None for a message without plural)."""
    keywords = parse_keywords(list(KEYWORDS))
    found: dict[Key, str | None] = {}
    for directory in ("perudo_ssh", "screens"):
        for _file, _line, message, _comments, context in extract_from_dir(
            ROOT / directory, [("**.py", "python")], keywords=keywords
        ):
            if isinstance(message, tuple):
                found[(context, message[0])] = message[1]
            else:
                found[(context, message)] = None
    return found


def _po(code: str) -> Catalog:
    with (LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as file:
        return read_po(file, locale=code)


def _keys(catalog: Catalog) -> dict[Key, str | None]:
    return {
        (m.context, m.id[0] if isinstance(m.id, tuple) else m.id): (
            m.id[1] if isinstance(m.id, tuple) else None
        )
        for m in catalog
        if m.id
    }


def _listed(keys: list) -> str:
    """At most 20 of `keys`, for a failure message that stays readable."""
    return f"{len(keys)}: {keys[:20]}" + (" …" if len(keys) > 20 else "")


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.fixture(scope="module")
def extracted() -> dict[Key, str | None]:
    return _extracted()


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_message_of_the_code_is_in_the_catalog_and_no_other(code, extracted):
    catalog = _keys(_po(code))
    missing = sorted(set(extracted) - set(catalog), key=str)
    stale = sorted(set(catalog) - set(extracted), key=str)
    assert not missing, f"run python -m perudo_ssh.catalogs; not in {code}: {_listed(missing)}"
    assert not stale, f"run python -m perudo_ssh.catalogs; unused in {code}: {_listed(stale)}"
    plurals = {key: plural for key, plural in extracted.items() if plural is not None}
    assert {key: catalog[key] for key in plurals} == plurals


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_message_is_translated_and_none_is_fuzzy(code):
    catalog = _po(code)
    untranslated = [
        m.id
        for m in catalog
        if m.id and (not m.string or (isinstance(m.string, tuple) and not all(m.string)) or m.fuzzy)
    ]
    assert not untranslated, f"untranslated in {code}: {_listed(untranslated)}"


@pytest.mark.parametrize("code", TRANSLATED)
def test_translations_keep_the_fields_and_every_plural_form(code):
    catalog = _po(code)
    wrong = []
    for m in catalog:
        if not m.id:
            continue
        if isinstance(m.id, tuple):
            wanted = _fields(m.id[0]) | _fields(m.id[1])
            forms = m.string if isinstance(m.string, tuple) else (m.string,)
            if len(forms) != catalog.num_plurals:
                wrong.append((m.id, f"{len(forms)} forms, not {catalog.num_plurals}"))
            wrong += [(m.id, form) for form in forms if form and _fields(form) != wanted]
        elif m.string and _fields(m.string) != _fields(m.id):
            wrong.append((m.id, m.string))
    assert not wrong, f"fields differ from the English in {code}: {_listed(wrong)}"


@pytest.mark.parametrize("code", TRANSLATED)
def test_the_committed_mo_is_compiled_from_the_po(code):
    compiled = io.BytesIO()
    write_mo(compiled, _po(code))
    compiled.seek(0)
    fresh = gettext.GNUTranslations(compiled)
    with (LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.mo").open("rb") as file:
        committed = gettext.GNUTranslations(file)
    assert committed._catalog == fresh._catalog, "run python -m perudo_ssh.catalogs"  # type: ignore[attr-defined]


def _bindings() -> list[tuple[str, str]]:
    """(class, description) of every key binding the screens' own classes declare and the
    footer shows (`show=True`); Textual's own hidden ones are not our words."""
    found = []
    for module_info in pkgutil.iter_modules(screens.__path__):
        module = importlib.import_module(f"screens.{module_info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            for binding in cls.__dict__.get("BINDINGS", ()):
                description = getattr(binding, "description", "")
                if description and getattr(binding, "show", True):
                    found.append((f"{module.__name__}.{name}", description))
    return found


def test_every_key_label_is_a_message_of_the_catalog(extracted):
    """The footer translates binding descriptions (screens/footer.py): each must be
    extracted, i.e. written as `N_("...")`, or be one of the game's terms (Dudo, Calza…),
    which the screen names itself with `describe_binding`."""
    ids = {message for _context, message in extracted}
    missing = [(where, text) for where, text in _bindings() if text not in ids]
    assert not missing, f"wrap these key labels in N_(): {missing}"


# ---- the session's language ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "language"),
    [
        ("fr_FR.UTF-8", "fr"),
        ("fr_CA", "fr"),
        ("fr", "fr"),
        ("ru_RU.UTF-8", "ru"),
        ("ru_UA.KOI8-U", "ru"),
        ("RU_ru", "ru"),
        ("en_GB.UTF-8", "en"),
        ("de_DE.UTF-8", "en"),
        ("C", "en"),
        ("C.UTF-8", "en"),
        ("POSIX", "en"),
        ("", "en"),
        (None, "en"),
        ("  fr_BE@euro ", "fr"),
    ],
)
def test_language_of_a_locale(value, language):
    assert language_of(value) == language


@pytest.mark.parametrize(
    ("env", "locale"),
    [
        ({"LANG": "fr_FR.UTF-8"}, "fr_FR.UTF-8"),
        ({"LANG": "fr_FR.UTF-8", "LC_MESSAGES": "ru_RU.UTF-8"}, "ru_RU.UTF-8"),
        ({"LANG": "fr_FR.UTF-8", "LC_MESSAGES": "ru_RU", "LC_ALL": "C"}, "C"),
        ({"LANG": "ru_RU.UTF-8", "LC_ALL": ""}, "ru_RU.UTF-8"),
        ({"LC_CTYPE": "fr_FR.UTF-8", "COLORTERM": "truecolor"}, None),
        ({}, None),
        ({"LANG": "x" * 100}, "x" * 64),
    ],
)
def test_locale_of_the_client_environment(env, locale):
    assert locale_of(env) == locale


def test_the_language_key_cycles_through_the_three_languages():
    assert [next_language(c) for c in ("en", "fr", "ru", "xx")] == ["fr", "ru", "en", "en"]
    assert translator("de").code == "en"
