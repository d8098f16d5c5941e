"""The screens' words without Textual: the bid parser, refusals, the reveal's sentences."""

from __future__ import annotations

import pytest

from perudo_ssh.i18n import translator
from perudo_ssh.rules import Bid, observe
from screens.bidtext import BID_EXAMPLE, BidSyntaxError, format_bid, parse_bid
from screens.rulestext import rules_summary
from screens.wording import (
    bid_refusal,
    finishing_order,
    raise_hint,
    reveal_story,
    tally_line,
)
from tests.test_screens_fakes import NAMES, bid, call, rolled

EN = translator("en")
TERMS = EN.terms(None)


@pytest.mark.parametrize(
    ("text", "count", "face"),
    [
        ("5x4", 5, 4),
        ("5 x 4", 5, 4),
        ("5×4", 5, 4),
        ("5*4", 5, 4),
        ("5 4", 5, 4),
        ("  5X4 ", 5, 4),
        ("5 fours", 5, 4),
        ("5 4s", 5, 4),
        ("five fours", 5, 4),
        ("2 sixes", 2, 6),
        ("3 pacos", 3, 1),
        ("3p", 3, 1),
        ("3 P", 3, 1),
        ("1 paco", 1, 1),
        ("3 aces", 3, 1),
        ("12x6", 12, 6),
    ],
)
def test_parse_bid_is_tolerant(text, count, face):
    assert parse_bid(text) == Bid(count=count, face=face)


@pytest.mark.parametrize("text", ["", "hello", "5", "5 x", "x4", "dudo", "4 of a kind!"])
def test_parse_bid_refuses_garbage_with_an_example(text):
    with pytest.raises(BidSyntaxError, match="Type a bid like 5x4: five dice showing 4"):
        parse_bid(text)
    assert "5x4" in BID_EXAMPLE


def test_parse_bid_names_an_impossible_face_or_count():
    with pytest.raises(BidSyntaxError, match="There is no face 7"):
        parse_bid("5x7")
    with pytest.raises(BidSyntaxError, match="at least one die"):
        parse_bid("0x4")


def test_format_bid():
    assert format_bid(Bid(count=4, face=5)) == "4×5"
    assert format_bid(Bid(count=3, face=1)) == "3 pacos"
    assert format_bid(Bid(count=1, face=1)) == "1 paco"


def test_refusals_in_the_players_words():
    view = observe(bid(rolled(), 0, 5, 4), 1)
    assert raise_hint(EN, view) == (
        "After 5×4 you must raise: more dice, or the same count of a higher face, or 3 pacos"
    )
    assert bid_refusal(EN, view, Bid(count=6, face=4), NAMES) is None
    assert (
        bid_refusal(EN, view, Bid(count=5, face=3), NAMES)
        == f"5×3 is not allowed. {raise_hint(EN, view)}"
    )
    assert bid_refusal(EN, view, Bid(count=16, face=4), NAMES).startswith("There are only 15 dice")
    assert bid_refusal(EN, observe(rolled(), 1), Bid(count=2, face=3), NAMES) == (
        "It is not your turn: ana is to play"
    )
    assert "opened on pacos" in bid_refusal(EN, observe(rolled(), 0), Bid(count=2, face=1), NAMES)
    after_pacos = observe(bid(bid(rolled(), 0, 5, 4), 1, 3, 1), 2)
    assert raise_hint(EN, after_pacos) == (
        "After 3 pacos you must raise: 4 pacos or more, or 7 dice of another face"
    )


def test_reveal_sentences():
    state = call(bid(rolled(), 0, 4, 5), 1)  # ana 2 4 4 1 6, ben 5 5 3 3 2, carl 1 6 6 4 3
    result = state.results[-1]
    assert tally_line(EN, TERMS, result) == "Counted 4 — bid was 4×5 (pacos wild)"
    assert reveal_story(EN, TERMS, result, NAMES) == (
        "ben called Dudo on ana's 4×5: there were 4, so ben loses a die"
    )
    short = call(bid(rolled(), 0, 6, 5), 1).results[-1]
    assert reveal_story(EN, TERMS, short, NAMES).endswith("there were 4, so ana loses a die")


def test_finishing_order_and_rules_summary():
    state = rolled(dice=((6,), (5,), (4,)), dice_per_player=1)
    state = call(bid(state, 0, 1, 6), 1)  # ben doubts a true bid: ben is out
    view = observe(state, 0)
    assert finishing_order(view) == [1]
    lines = rules_summary(view.options)
    assert any("Palifico" in line for line in lines)
    assert not any(line.startswith("Calza") for line in lines)
