"""The screens' words in three languages without Textual: bids typed and shown in English,
French and Russian, call words, and every refusal the engine can say, translated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perudo_ssh.i18n import translator
from perudo_ssh.rules import ERROR_CODES, Bid, options_for
from screens.bidtext import (
    BID_EXAMPLE,
    BidSyntaxError,
    face_name,
    format_bid,
    parse_bid,
    parse_call,
)
from screens.refusals import is_rule_code, knows, refusal_text, rule_reason, say

ENGINE = Path(__file__).resolve().parents[1] / "perudo_ssh" / "rules" / "legality.py"
EN = translator("en")
CLASSIC = EN.terms(options_for("classic"))


@pytest.mark.parametrize(
    ("text", "count", "face"),
    [
        ("cinq quatre", 5, 4),
        ("5 deux", 5, 2),
        ("5 de 4", 5, 4),
        ("huit six", 8, 6),
        ("douze six", 12, 6),
        ("3 as", 3, 1),
        ("3 pacos", 3, 1),
        ("une paco", 1, 1),
        ("пять шестёрок", 5, 6),
        ("пять шестерок", 5, 6),
        ("5х6s", 5, 6),  # the Russian seed's own notation, with a Cyrillic х
        ("3 туза", 3, 1),
        ("2 тузов", 2, 1),
        ("3 пако", 3, 1),
        ("3A", 3, 1),
        ("одна двойка", 1, 2),
        ("7 по 3", 7, 3),
        ("ДВЕ ТРОЙКИ", 2, 3),
    ],
)
def test_parse_bid_reads_french_and_russian(text, count, face):
    assert parse_bid(text) == Bid(count=count, face=face)


def test_a_bid_syntax_error_carries_its_message_for_the_translator():
    with pytest.raises(BidSyntaxError) as refused:
        parse_bid("5x9")
    assert str(refused.value) == "There is no face 9: faces go from 1 (paco) to 6"
    assert refused.value.message_id == "There is no face {face}: faces go from 1 (paco) to 6"
    assert refused.value.message_args == {"face": 9}
    assert refused.value.text(EN) == str(refused.value)
    with pytest.raises(BidSyntaxError) as garbage:
        parse_bid("bonjour")
    assert garbage.value.message_id == BID_EXAMPLE and garbage.value.message_args == {}


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("dudo", "dudo"),
        ("Dudo!", "dudo"),
        ("не верю", "dudo"),
        ("Не  верю", "dudo"),
        ("calza", "calza"),
        ("точно", "calza"),
        ("jonti", "jonti"),
        ("5x4", None),
        ("", None),
    ],
)
def test_parse_call_in_any_language(text, call):
    assert parse_call(text) == call


def test_parse_call_reads_the_tables_own_words():
    club = translator("ru").terms(options_for("club"))
    assert parse_call("точно", club) == "jonti"  # the club's "Точно" is jonti (seed 002)
    assert parse_call(club.dudo, club) == "dudo"
    assert parse_call(club.jonti.upper(), club) == "jonti"


def test_format_bid_and_face_name_default_to_english_and_take_terms():
    assert format_bid(Bid(count=3, face=1)) == "3 pacos"
    assert format_bid(Bid(count=3, face=1), CLASSIC) == "3 pacos"
    assert format_bid(Bid(count=1, face=1), CLASSIC) == "1 paco"
    assert format_bid(Bid(count=4, face=5), CLASSIC) == "4×5"
    assert [face_name(1, 1), face_name(1, 3), face_name(4)] == ["paco", "pacos", "4s"]
    assert [face_name(1, 1, CLASSIC), face_name(1, 3, CLASSIC), face_name(4, 2, CLASSIC)] == [
        "paco",
        "pacos",
        "4s",
    ]
    assert face_name(4, 1, CLASSIC) == "4"


# ---- refusals --------------------------------------------------------------------------------

_FAULT = re.compile(r'_fault\(\s*"(\w+)",\s*(f?)"((?:[^"\\]|\\.)*)"', re.S)


def _engine_faults() -> list[tuple[str, str]]:
    """(code, sentence) of every refusal written in the engine, numbers filled in with 3."""
    faults = _FAULT.findall(ENGINE.read_text())
    assert len(faults) >= 30  # the probe still finds the engine's refusals
    return [(code, re.sub(r"\{[^}]*\}", "3", text) if f else text) for code, f, text in faults]


def test_every_engine_refusal_has_its_own_translated_sentence():
    """A sentence the engine says that `rule_reason` does not know would fall back to its
    code's general sentence: add it to screens/refusals.py."""
    assert [(code, sentence) for code, sentence in _engine_faults() if not knows(sentence)] == []


@pytest.mark.parametrize(
    ("code", "message", "said"),
    [
        ("bid_not_higher", "the bid must be higher than the last one",
         "the bid must be higher than the last one"),
        ("count_out_of_range", "a count is between 1 and the 15 dice in play",
         "a count is between 1 and the 15 dice in play"),
        ("count_out_of_range", "a count is between 1 and the 1 dice in play",
         "a count is between 1 and the 1 die in play"),
        ("face_locked", "in this round the face stays 4", "in this round the face stays 4"),
        ("calza_not_allowed", "calza needs at least 3 players left",
         "Calza needs at least 3 players left"),
        ("calza_not_allowed", "calza is not allowed in a palifico round",
         "Calza is not allowed in a Palifico round"),
        ("jonti_not_allowed", "it is your turn: jonti is called out of turn",
         "it is your turn: Jonti is called out of turn"),
        ("unknown_player", "that player has no dice in this game", "you have no dice in this game"),
        ("jonti_not_allowed", "some new reason", "Jonti is not allowed now"),
    ],
)  # fmt: skip
def test_rule_reasons_in_english(code, message, said):
    assert rule_reason(EN, code, message, CLASSIC) == said


def test_refusal_text_translates_lobby_ids_with_args_and_rule_codes_by_code():
    assert is_rule_code("bid_not_higher") and not is_rule_code("table_full")
    assert all(is_rule_code(code) for code in ERROR_CODES)
    assert (
        refusal_text(EN, "bad_command", "a table of {seats} takes 0 to {most} bots",
                     {"seats": 3, "most": 2}, None)
        == "A table of 3 takes 0 to 2 bots"
    )  # fmt: skip
    assert refusal_text(EN, "not_your_turn", "it is not your turn", {}, None) == (
        "It is not your turn"
    )
    assert refusal_text(EN, "weird_code", "something {odd}", {}, None) == "Something {odd}"
    assert say(EN, "{name} left", {}) == "{name} left"  # a bad message is shown, never raised
