"""Hostile text for the bid parser (`screens.bidtext`, issue 5 "hostile input"): whatever a
player types or pastes — random unicode, control characters, escape sequences, huge strings,
near-bids in three languages — `parse_bid` gives a bid of a shape the rules allow (RULES.md §1:
a face 1–6, a count of at least 1) or refuses it with a hint in every language; it never
raises anything else, answers the same twice, and reads back every bid it formats."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perudo_ssh.i18n import LANGUAGES, translator
from perudo_ssh.rules import PRESETS, Bid, options_for
from screens.bidtext import (
    _COUNT_WORDS,
    _FACE_WORDS,
    BidSyntaxError,
    face_name,
    format_bid,
    parse_bid,
    parse_call,
)

HINTS = {
    "Type a bid like 5x4: five dice showing 4 (or 3p for three pacos)",
    "There is no face {face}: faces go from 1 (paco) to 6",
    "A bid needs at least one die",
}
TERMS = [translator(lang).terms(options_for(p)) for lang in LANGUAGES for p in PRESETS]
TRANSLATORS = [translator(lang) for lang in LANGUAGES]

# Pieces that look like a bid, to get past the pattern as well as fail it: numbers in any
# script (Arabic-Indic ٣, superscript ², Roman Ⅷ, mathematical 𝟓), words of every language,
# separators, escape sequences and controls, and runs of digits too long for int().
NUMBERS = st.one_of(
    st.integers(-10, 10**12).map(str),
    st.sampled_from(["²", "٣", "𝟓", "Ⅷ", "½", "٠", "0" * 30 + "4", "9" * 5000, "¹²", "߃"]),
    st.sampled_from(sorted(_COUNT_WORDS)),
    st.sampled_from(sorted(_FACE_WORDS)),
    st.text(st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=4),
)
GLUE = st.sampled_from(
    ["", " ", "x", "X", "х", "×", "*", ",", ":", "d'", " by ", " of ", " de ", " по ", "  ",
     "\t", "\n", "\x00", "\x1b", "\x1b[A", "\x1b[200~", "\x9b", "\u202e", "\u200b", "'s", "s",
     "!", ".", "ё", "\r\n", "\x7f"]
)  # fmt: skip
BIDLIKE = st.lists(st.one_of(NUMBERS, GLUE), min_size=1, max_size=8).map("".join)
ANY_TEXT = st.one_of(
    st.text(),  # every code point but surrogates, controls included
    st.text(st.characters(codec="utf-8"), max_size=200),
    BIDLIKE,
    st.builds(lambda piece, n: (piece * n)[:60_000], BIDLIKE, st.integers(1, 3000)),  # huge
)


def outcome(text: str) -> Bid | tuple[str, dict]:
    """What `parse_bid` answers: the bid, or the refusal's message id and args. Anything
    else it raises fails the test."""
    try:
        return parse_bid(text)
    except BidSyntaxError as err:
        return err.message_id, err.message_args


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_any_text_is_a_bid_of_a_legal_shape_or_a_hint(text: str) -> None:
    answer = outcome(text)
    if isinstance(answer, Bid):
        assert type(answer.count) is int and type(answer.face) is int
        assert answer.count >= 1 and 1 <= answer.face <= 6
    else:
        message_id, args = answer
        assert message_id in HINTS
        for tr in TRANSLATORS:  # the hint is said in every language without a format error
            hint = BidSyntaxError(message_id, **args).text(tr)
            assert hint and "\n" not in hint
    assert outcome(text) == answer  # the same answer twice
    # the table screen lowers and strips before parsing; that text too is answered
    outcome(text.strip().lower())


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT, st.sampled_from([None, *TERMS]))
def test_any_text_is_a_call_word_or_none(text: str, terms) -> None:
    call = parse_call(text, terms)
    assert call in (None, "dudo", "calza", "jonti")
    assert parse_call(text, terms) == call


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 999_999_999),
    st.integers(1, 6),
    st.sampled_from([None, *TERMS]),
    st.sampled_from(["", " ", "  \t"]),
)
def test_a_formatted_bid_reads_back(count: int, face: int, terms, pad: str) -> None:
    bid = Bid(count=count, face=face)
    shown = format_bid(bid, terms)
    assert parse_bid(shown) == bid
    assert parse_bid(pad + shown.upper() + pad) == bid
    assert parse_bid(f"{count} {face_name(face, count, terms)}") == bid


@pytest.mark.parametrize(
    "text",
    [
        "5 ²",  # "²".isdigit() but int("²") raised ValueError: the bid box crashed the session
        "² 4",
        "5x" + "4" * 5000,  # int() refuses more than 4300 digits (ValueError)
        "9" * 5000 + "x4",
    ],
)
def test_digits_int_cannot_read_are_refused_with_the_hint(text: str) -> None:
    with pytest.raises(BidSyntaxError) as err:
        parse_bid(text)
    assert err.value.message_id in HINTS


@pytest.mark.parametrize("text", ["1" * 20_000 + "!", "a" * 20_000 + "!", "5 " + "я" * 20_000])
def test_a_huge_text_is_refused_at_once(text: str) -> None:
    """The pattern backtracks quadratically over a long run of digits or letters (20 000
    digits took 12 s); no bid is that long."""
    start = time.perf_counter()
    with pytest.raises(BidSyntaxError):
        parse_bid(text)
    assert time.perf_counter() - start < 0.5
