"""A finished game explained (issue 14, item 4): every bid's odds to be true and every call's
to be right, from the mover's own dice and from the table's view, with exact values worked
out by hand; the moves that cost a die; `perudo-ssh analyse` and the replay screen."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import msgspec
import pytest

from perudo_ssh.analysis import analyse, at_least, exactly, percent, replay_frames
from perudo_ssh.cli import main
from perudo_ssh.record import decode_record, encode_record
from screens.replay import ReplayScreen, moves_lines
from tests.test_identity import flat
from tests.test_screens_fakes import screen_text
from tests.test_screens_history import (
    calza_game,
    seeded,
    start,
    wait_until,
)

SAMPLE = Path(__file__).parent / "records" / "sample.json"


def binomial_at_least(k: int, n: int, p: Fraction) -> Fraction:
    """The same chance in exact fractions, summed the other way (1 minus the rest)."""
    from math import comb

    return 1 - sum((comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k)), Fraction(0))


def test_the_binomial_odds():
    assert at_least(0, 5, 1 / 6) == 1.0 and at_least(6, 5, 1 / 6) == 0.0
    assert at_least(3, 10, 1 / 3) == pytest.approx(float(binomial_at_least(3, 10, Fraction(1, 3))))
    assert exactly(1, 3, 1 / 6) == pytest.approx(3 * (1 / 6) * (5 / 6) ** 2)
    assert exactly(-1, 3, 0.5) == 0.0 and exactly(4, 3, 0.5) == 0.0
    assert [percent(x) for x in (0.0, 0.001, 0.5, 0.996, 1.0)] == [
        "0 %",
        "<1 %",
        "50 %",
        ">99 %",
        "100 %",
    ]


def test_the_sample_records_moves_have_their_odds_worked_out_by_hand():
    """RECORD.md's sample: ben 2 2 5 6 6 bids 3×4 (no 4 nor paco: 3 of the 10 dice he cannot
    see, at 1/3 with pacos wild); cyd 1 1 3 4 5 bids 2 pacos (has both); ana 1 3 4 4 6 calls
    dudo: right only if no other paco among her 10 unknown dice, (5/6)**10; it was wrong."""
    record = decode_record(SAMPLE.read_bytes())
    ben, cyd, ana = analyse(replay_frames(record))
    third = Fraction(1, 3)
    assert (ben.seat, ben.cost) == (1, False)
    assert ben.mover == pytest.approx(float(binomial_at_least(3, 10, third)))
    assert ben.table == pytest.approx(float(binomial_at_least(3, 15, third)))
    assert (cyd.mover, cyd.cost) == (1.0, False)
    assert cyd.table == pytest.approx(float(binomial_at_least(2, 15, Fraction(1, 6))))
    assert (ana.seat, ana.cost) == (0, True)
    assert ana.mover == pytest.approx((5 / 6) ** 10)
    assert ana.table == pytest.approx(1 - float(binomial_at_least(2, 15, Fraction(1, 6))))


def test_calza_palifico_and_the_moves_that_cost_a_die():
    """calza_game: ana 3 3 bids 2×3; ben 3 5 calls calza (right if exactly one 3 among ana's
    two dice: 2·1/3·2/3), wrong: ben loses a die. Palifico (pacos not wild): ben 4 bids 1×4;
    ana 6 2 calls calza, right if ben's one die is a 4 (1/6), and it is. ana 1 1 bids 2×2;
    ben 2 calls dudo: right if no 2 nor paco among ana's two dice, (2/3)**2; wrong."""
    record, _ = calza_game()
    moves = analyse(replay_frames(record))
    assert [(m.seat, m.cost) for m in moves] == [
        (0, False),
        (1, True),
        (1, False),
        (0, False),
        (0, False),
        (1, True),
    ]
    bid1, calza1, bid2, calza2, bid3, dudo = moves
    assert bid1.mover == 1.0 and bid1.table == pytest.approx(
        1 - (2 / 3) ** 4 - 4 * (1 / 3) * (2 / 3) ** 3
    )
    assert calza1.mover == pytest.approx(4 / 9)
    assert calza1.table == pytest.approx(6 * (1 / 3) ** 2 * (2 / 3) ** 2)
    assert bid2.mover == 1.0 and bid2.table == pytest.approx(1 - (5 / 6) ** 3)  # 1/6: palifico
    assert calza2.mover == pytest.approx(1 / 6)
    assert calza2.table == pytest.approx(3 * (1 / 6) * (5 / 6) ** 2)
    assert bid3.mover == 1.0
    assert dudo.mover == pytest.approx((2 / 3) ** 2)


def test_analyse_prints_the_game_explained(tmp_path, capsys):
    assert main(["analyse", str(SAMPLE)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Game of ana, ben, cyd (classic)"
    assert out[5:] == [
        "Round 1 · ben opens",
        "  dice: ana 1 3 4 4 6 | ben 2 2 5 6 6 | cyd 1 1 3 4 5",
        "  ben  bids 3 × 4          true  70 %  table  92 %",
        "  cyd  bids 2 × paco       true 100 %  table  74 %",
        "  ana  dudo                right  16 %  table  26 %  ✗",
        "  counted 3 for 2 × paco: ana loses a die",
    ]
    record, _ = calza_game()
    whole = tmp_path / "game.json"
    whole.write_bytes(encode_record(record))
    assert main(["analyse", str(whole)]) == 0
    text = capsys.readouterr().out
    assert "Round 2 · palifico · ben opens" in text and text.endswith("Winner: ana\n")
    # a record the rules refuse: explained up to the round, which is named; exit 1
    broken = msgspec.json.decode(encode_record(record))
    broken["rounds"][1]["actions"][0]["by"] = "ana"  # not ana's turn to open
    bad = tmp_path / "bad.json"
    bad.write_bytes(msgspec.json.encode(broken))
    assert main(["analyse", str(bad)]) == 1
    assert "Round 2: the rules refuse this record from here." in capsys.readouterr().out
    assert main(["analyse", str(tmp_path / "none.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


async def test_the_replay_shows_each_moves_odds_and_marks_the_costly_ones(tmp_path):
    store, ana, _ = await seeded(tmp_path)
    try:
        games = await store.games_of(ana.id)
        game_id = min(g.id for g in games)  # the module's first game: one_die_game
        session, app = start(store, ana)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: app.lobby is not None)
            screen = ReplayScreen(game_id)
            app.push_screen(screen)
            await wait_until(pilot, lambda: screen.replay is not None and screen.analysis)
            await pilot.press("right")  # ana opens 1×5 with a 2: 1 - (2/3)**2 from her view
            await wait_until(pilot, lambda: "likely" in screen_text(app))
            text = flat(screen_text(app))
            assert (
                "1×5 by ana: 56 % likely from ana's own dice, 70 % from the table's view." in text
            )
            for _ in range(2):
                await pilot.press("right")  # ben 2×5; cyd's dudo, wrong
            await wait_until(pilot, lambda: "It cost cyd a die." in flat(screen_text(app)))
            # 2×5 with cyd's paco: wrong if one of the 2 dice cyd cannot see matches, (2/3)**2;
            # to the table, if 2 of 3 do: 1 - 7/27
            said = "Dudo by cyd: 44 % likely right from cyd's own dice, 74 % from the table's view."
            assert said in flat(screen_text(app))
            lines = moves_lines(
                app.tr, app.tr.terms(None), screen.replay, 2, ("ana", "ben", "cyd"), {2}
            )
            assert [line.plain.split() for line in lines][-1] == ["ben", "2×5", "✗"]
    finally:
        await store.close()
