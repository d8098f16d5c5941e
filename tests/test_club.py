"""The club table (RULES.md §4–§6, seed 002): a whole game with jonti, calzone and show and
reroll, token balances checked by hand; leaving mid-round (the cup stays until the round ends);
bots playing club tables to the end, legally.

Balances are computed by hand from the fixed dice, per RULES.md §6: everyone pays the stake
(10) into the bank; whoever loses a die pays by how wrong they were (doubled on pacos when
pacos were wild); a perfect bid costs the dudo caller 1; a correct jonti takes 1 back; the
winner takes the bank.
"""

from __future__ import annotations

import json
import random

import pytest

from perudo_ssh import protocol as P
from perudo_ssh.lobby import bot_turns
from perudo_ssh.lobby.game_log import GameLog
from perudo_ssh.lobby.table import Table
from perudo_ssh.record import decode_record, encode_record
from perudo_ssh.referee import verdict_of
from perudo_ssh.rules import (
    Bid,
    Call,
    DeclareCalzone,
    PlaceBid,
    Reroll,
    Resign,
    Roll,
    RuleError,
    Tokens,
    apply,
    new_game,
    options_for,
)
from tests.test_lobby_support import connected, running_lobby

ANA, BEN, CYD = 0, 1, 2
NAMES = ("ana", "ben", "cyd")


def bid(seat: int, count: int, face: int) -> PlaceBid:
    return PlaceBid(seat=seat, bid=Bid(count=count, face=face))


def reroll(seat: int, reveal: tuple[int, ...], new: tuple[int, ...]) -> Reroll:
    return Reroll(seat=seat, reveal=reveal, new_faces=new)


def drop(dice: dict[int, tuple[int, ...]]) -> Roll:
    return Roll(dice=tuple(dice.get(seat, ()) for seat in range(3)))


# Two dice each so that a player drops to one die (calzone) and jonti is open (fewer dice
# than at the start) within a few rounds. Each round: its dice, its actions, then by hand the
# dice counts, the tokens each seat paid (negative: took back), and the bank after it.
CLUB_GAME = [
    (  # ana bids, shows her 3 and rerolls a paco; cyd doubts ben's 3×3: exactly 3 (one 3,
        # two pacos): a perfect bid, cyd pays 1 and drops to one die
        drop({ANA: (3, 5), BEN: (2, 4), CYD: (1, 6)}),
        [bid(ANA, 2, 3), reroll(ANA, (3,), (1,)), bid(BEN, 3, 3), Call(seat=CYD, call="dudo")],
        (2, 2, 1), (0, 0, 1), 31,
    ),
    (  # cyd declares calzone; ana may not change face; cyd calls jonti out of turn on ana's
        # 3×4: exactly three 4s (pacos not wild): cyd gains a die and takes 1 back
        drop({ANA: (4, 4), BEN: (2, 6), CYD: (4,)}),
        [DeclareCalzone(seat=CYD), bid(CYD, 2, 4), bid(ANA, 3, 4), Call(seat=CYD, call="jonti")],
        (2, 2, 2), (0, 0, -1), 30,
    ),
    (  # cyd shows a 5 and rerolls a 3; ana's 2 pacos, doubted by ben: one paco, ana pays
        # (2 − 1) × 2 = 2 (pacos wild, bid on pacos: doubled)
        drop({ANA: (2, 2), BEN: (6, 1), CYD: (5, 5)}),
        [bid(CYD, 2, 5), reroll(CYD, (5,), (3,)), bid(ANA, 2, 1), Call(seat=BEN, call="dudo")],
        (1, 2, 2), (2, 0, 0), 32,
    ),
    (  # ana (one die) lets the calzone go; ben bids 2 pacos and shows a 3, rerolling a paco;
        # ana's jonti fails (one paco, not two): she pays |2 − 1| × 2 = 2 and is out
        drop({ANA: (6,), BEN: (3, 3), CYD: (4, 2)}),
        [bid(ANA, 2, 3), bid(BEN, 2, 1), reroll(BEN, (3,), (1,)), Call(seat=ANA, call="jonti")],
        (0, 2, 2), (2, 0, 0), 34,
    ),
    (  # three 5s exactly: cyd's dudo on a perfect bid costs 1 and a die
        drop({BEN: (5, 5), CYD: (5, 2)}),
        [bid(BEN, 3, 5), Call(seat=CYD, call="dudo")],
        (0, 2, 1), (0, 0, 1), 35,
    ),
    (  # calzone again: cyd opens on pacos (allowed, not wild); ben's 2 pacos is one short:
        # ben pays 1, not doubled (pacos were not wild)
        drop({BEN: (6, 6), CYD: (1,)}),
        [DeclareCalzone(seat=CYD), bid(CYD, 1, 1), bid(BEN, 2, 1), Call(seat=CYD, call="dudo")],
        (0, 1, 1), (0, 1, 0), 36,
    ),
    (  # cyd's 2×4 is one short: cyd pays 1 and is out; ben wins and takes the bank, 37
        drop({BEN: (4,), CYD: (3,)}),
        [bid(BEN, 1, 4), bid(CYD, 2, 4), Call(seat=BEN, call="dudo")],
        (0, 1, 0), (0, -37, 1), 0,
    ),
]  # fmt: skip

BALANCES_AFTER = [
    (-10, -10, -11),
    (-10, -10, -10),
    (-12, -10, -10),
    (-14, -10, -10),
    (-14, -10, -11),
    (-14, -11, -11),
    (-14, 26, -12),  # cyd pays 1 and is out; ben: −11 + the bank of 37
]
SPECIALS = [None, "calzone", None, None, None, "calzone", None]


def club_options():
    return options_for("club", dice_per_player=2)


def play_club_game():
    state = new_game(club_options(), 3, ANA)
    assert state.tokens == Tokens(bank=30, balances=(-10, -10, -10))
    log = GameLog(options=state.options, players=NAMES, first_opener=ANA, opening=((6, 2, 4),))
    for roll, actions, *_ in CLUB_GAME:
        for action in [roll, *actions]:
            state = apply(state, action)
            log.add(action)
    return state, log


def test_club_game_to_the_end_with_exact_token_balances():
    state, _ = play_club_game()
    assert len(state.results) == len(CLUB_GAME)
    for result, (_, _, dice, paid, bank), balances, special in zip(
        state.results, CLUB_GAME, BALANCES_AFTER, SPECIALS, strict=True
    ):
        assert result.dice == dice
        assert result.payments == paid
        assert result.tokens == Tokens(bank=bank, balances=balances)
        assert result.special == special
    assert [r.call for r in state.results] == [
        "dudo", "jonti", "dudo", "jonti", "dudo", "dudo", "dudo"
    ]  # fmt: skip
    assert state.results[1].gainer == CYD and state.results[3].loser == ANA
    assert state.results[-1].bank_won == 37 and state.results[0].bank_won == 0
    assert state.phase == "over" and state.winner == BEN
    assert state.eliminated == (ANA, CYD)
    assert state.tokens == Tokens(bank=0, balances=(-14, 26, -12))
    assert sum(state.tokens.balances) == 0  # every token came from a player


def test_club_game_record_passes_the_referee_with_the_same_balances():
    state, log = play_club_game()
    record = decode_record(encode_record(log.to_record()))
    assert log.replay() == state
    verdict = verdict_of(record)
    assert verdict.legal and verdict.winner == "ben" and verdict.eliminated == ("ana", "cyd")
    assert [r.tokens.bank for r in verdict.rounds] == [31, 30, 32, 34, 35, 36, 0]
    assert verdict.rounds[-1].tokens.balances == {"ana": -14, "ben": 26, "cyd": -12}
    assert [r.special for r in verdict.rounds] == SPECIALS
    assert b'"left"' not in encode_record(record)  # the extension only when someone left


# ---- leaving (RULES.md §6) --------------------------------------------------------------


def three_club_players():
    state = new_game(options_for("club"), 3, ANA)
    return apply(state, Roll(dice=((2, 3, 4, 5, 6), (1, 1, 2, 2, 3), (6, 6, 6, 5, 4))))


def test_a_leaver_is_resigned_only_once_the_round_has_ended():
    state = apply(three_club_players(), bid(ANA, 4, 6))
    with pytest.raises(RuleError) as err:
        apply(state, Resign(seat=BEN))
    assert err.value.code == "round_unfinished"
    state = apply(state, Call(seat=BEN, call="dudo"))  # six 6s or pacos: ben is wrong
    assert state.results[-1].loser == BEN and state.tokens.balances == (-10, -12, -10)
    state = apply(state, Resign(seat=BEN))
    assert state.counts == (5, 0, 5) and state.eliminated == (BEN,)
    assert state.opener == CYD and state.turn == CYD  # ben would have opened: next seat
    assert state.one_die_seat is None and state.phase == "rolling"
    # the round's result says so; ben's payments stay in the bank
    assert state.results[-1].left == (BEN,) and state.results[-1].dice == (5, 0, 5)
    assert state.tokens == Tokens(bank=32, balances=(-10, -12, -10))
    with pytest.raises(RuleError) as err:
        apply(state, Resign(seat=BEN))
    assert err.value.code == "unknown_player"


def test_the_last_one_left_wins_and_takes_the_bank():
    state = apply(three_club_players(), bid(ANA, 4, 6))
    state = apply(state, Call(seat=BEN, call="dudo"))
    state = apply(state, Resign(seat=BEN))
    state = apply(state, Resign(seat=ANA))
    assert state.phase == "over" and state.winner == CYD
    assert state.tokens == Tokens(bank=0, balances=(-10, -12, 22))
    last = state.results[-1]
    assert last.left == (BEN, ANA) and last.bank_won == 32
    assert last.payments == (0, 2, -32) and last.tokens == state.tokens
    with pytest.raises(RuleError) as err:
        apply(state, Resign(seat=CYD))
    assert err.value.code == "game_over"


def club_table(seats: int, seed: int) -> tuple[Table, random.Random]:
    """A club table of `seats`: session 1, "ana", at seat 0, bots in the others."""
    rng = random.Random(seed)
    table = Table(1, "ana", options_for("club"), seats, creator=1)
    table.sit(1, "ana")
    for _ in range(seats - 1):
        table.add_bot(rng)
    return table, rng


def play_out(table: Table, rng: random.Random) -> None:
    """Let the bots and the rolls move the table on until its game is over."""
    for _ in range(5000):
        if table.status == "over":
            return
        if table.bot_to_move() is not None:
            bot_turns.bot_move(table, rng)
        elif table.in_reveal:
            table.roll(rng)
        else:
            raise AssertionError("the table waits for nobody")
    raise AssertionError("the game did not finish")


def test_a_club_player_leaving_mid_round_keeps_the_cup_until_the_round_ends():
    table, rng = club_table(3, seed=5)
    table.start(rng)
    assert table.state is not None and table.state.phase == "bidding"
    dice_before = table.state.counts[0]
    assert table.leave(1) == "leaving"
    seat = table.seats[0]
    assert seat.leaving and seat.bot and seat.sid is None
    assert table.state.counts[0] == dice_before  # the cup stays; its dice count
    # a bot makes ana's moves until the round's call; then she is out
    while table.state.phase == "bidding":
        assert table.bot_to_move() is not None
        bot_turns.bot_move(table, rng)
    assert table.state.counts[0] == 0 and table.state.eliminated[-1] == 0
    assert not seat.leaving and table.state.results[0].left == (0,)
    assert table.log is not None and table.log.rounds[0].left == [0]
    play_out(table, rng)
    record = table.log.to_record()
    assert record.rounds[0].left == ("ana",)
    assert all(not r.left for r in record.rounds[1:])
    verdict = verdict_of(decode_record(encode_record(record)))
    assert verdict.legal and verdict.eliminated[0] == "ana"
    assert verdict.winner == table.seats[table.state.winner].name
    assert table.log.replay() == table.state


def test_leaving_between_rounds_is_out_at_once_and_may_end_the_game():
    table, rng = club_table(2, seed=3)
    table.start(rng)
    assert table.state is not None
    while table.state.phase == "bidding":  # ana's turns, played by hand: dudo or open
        if table.bot_to_move() is not None:
            bot_turns.bot_move(table, rng)
        elif table.state.last_bid is None:
            table.play(P.MakeBid(count=1, face=2), 0, rng)
        else:
            table.play(P.MakeCall(call="dudo"), 0, rng)
    assert table.in_reveal
    bank = table.state.tokens.bank
    assert table.leave(1) == "resigned"
    assert table.status == "over" and table.state.winner == 1
    assert table.state.results[-1].bank_won == bank
    assert table.state.tokens.bank == 0
    verdict = verdict_of(table.log.to_record())
    assert verdict.legal and verdict.winner == table.seats[1].name
    assert verdict.rounds[-1].tokens.bank == 0


def test_other_presets_still_hand_a_leavers_seat_to_a_bot():
    rng = random.Random(2)
    command = P.CreateTable(preset="classic", seats=3, bots=2)
    table = Table.create(1, command, sid=1, name="ana", rng=rng)
    table.start(rng)
    assert table.leave(1) == "bot" and not table.seats[0].leaving
    play_out(table, rng)
    assert table.log is not None
    assert all(not r.left for r in table.log.to_record().rounds)


async def test_lobby_tells_the_table_and_reports_a_game_ended_by_a_leave():
    ended: list[tuple[Table, GameLog]] = []
    async with running_lobby(on_game_over=lambda t, g: ended.append((t, g))) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        # two seats: jonti needs three players, so this club table plays without it
        ana.send(P.CreateTable(preset="club", seats=2, bots=0, options={"jonti": False}))
        await ana.expect(P.TableState)
        (summary,) = (await ben.expect(P.LobbyState, lambda e: bool(e.tables))).tables
        ben.send(P.JoinTable(table=summary.id))
        state = await ben.expect(P.TableState, lambda e: e.status == "playing")
        assert state.game is not None and state.game.phase == "bidding"
        ana.send(P.LeaveTable())
        notice = await ben.expect(P.Notice)
        assert notice.text == (
            "{name} left; their cup stays until the round ends, then they are out"
        ) and notice.args == {"name": "ana"}
        # ana's cup stays: a bot plays it until somebody calls, then ben has won
        while True:
            state = await ben.expect(P.TableState)
            game = state.game
            assert game is not None
            if game.phase == "over":
                break
            if game.turn == 1 and game.phase == "bidding":
                if game.choices.dudo:
                    ben.send(P.MakeCall(call="dudo"))
                else:
                    first = game.choices.bids[0]
                    ben.send(P.MakeBid(count=first.count, face=first.face))
        assert game.winner == 1 and game.last is not None and game.last.left == (0,)
        assert game.tokens is not None and game.tokens.bank == 0
        ((_, log),) = ended  # reported inside the actor, before the update that says so
        assert verdict_of(log.to_record()).winner == "ben"


# ---- bots at club tables -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_bots_finish_club_games_legally(seed: int):
    rng = random.Random(seed)
    table = Table(1, "bots", options_for("club"), 2 + seed % 5, creator=0)
    for _ in range(table.size):
        table.add_bot(rng)
    table.start(rng)
    play_out(table, rng)
    assert table.log is not None and table.state is not None
    verdict = verdict_of(decode_record(encode_record(table.log.to_record())))
    assert verdict.legal and verdict.winner == table.seats[table.state.winner].name
    final = verdict.rounds[-1].tokens
    assert final is not None and final.bank == 0 and sum(final.balances.values()) == 0
    assert final.balances[verdict.winner] > 0


def test_bots_use_calzone_and_show_and_reroll():
    kinds: set[str] = set()
    for seed in range(4):
        rng = random.Random(seed)
        table = Table(1, "bots", options_for("club"), 4, creator=0)
        for _ in range(4):
            table.add_bot(rng)
        table.start(rng)
        play_out(table, rng)
        assert table.log is not None
        for round_ in table.log.rounds:
            kinds |= {type(a).__name__ for a in round_.actions}
    assert {"Reroll", "DeclareCalzone", "PlaceBid", "Call"} <= kinds


async def test_lobby_reports_a_game_ended_by_leaving_during_the_reveal():
    ended: list[GameLog] = []
    async with running_lobby(on_game_over=lambda t, g: ended.append(g)) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.CreateTable(preset="club", seats=2, bots=0, options={"jonti": False}))
        await ana.expect(P.TableState)
        (summary,) = (await ben.expect(P.LobbyState, lambda e: bool(e.tables))).tables
        ben.send(P.JoinTable(table=summary.id))
        while True:  # both call at once: the first bid is doubted
            state = await ben.expect(P.TableState, lambda e: e.game is not None)
            game = state.game
            assert game is not None
            if game.phase == "rolling":
                break
            player = ben if game.turn == 1 else ana
            if game.bids:
                player.send(P.MakeCall(call="dudo"))
            else:
                player.send(P.MakeBid(count=1, face=2))
        ana.send(P.LeaveTable())  # during the reveal: out at once, ben is the last one left
        notice = await ben.expect(P.Notice)
        assert (notice.text, notice.args) == ("{name} left and is out of the game", {"name": "ana"})
        state = await ben.expect(P.TableState, lambda e: e.status == "over")
        assert state.game is not None and state.game.winner == 1
        assert state.game.last is not None and state.game.last.left == (0,)
        (log,) = ended
        verdict = verdict_of(log.to_record())
        assert verdict.legal and verdict.winner == "ben" and verdict.eliminated == ("ana",)


# ---- the record's `left` extension, as our referee reads it ----------------------------------


def left_record(left_by_round: list[list[str]], calls: bool = True) -> bytes:
    """ana, ben, cyd at a club table: round 0 ana bids 4×6 and (if `calls`) ben doubts it
    (six 6s or pacos: ben loses); then round 1, opened by cyd (ben would have, had he not
    left); `left` per round as given."""
    rounds = [
        {
            "dice": {"ana": [2, 3, 4, 5, 6], "ben": [1, 1, 2, 2, 3], "cyd": [6, 6, 6, 5, 4]},
            "actions": [{"by": "ana", "bid": {"count": 4, "face": 6}}]
            + ([{"by": "ben", "call": "dudo"}] if calls else []),
        },
        {
            "dice": {"ana": [2, 2, 2, 2, 2], "cyd": [3, 3, 3, 3, 3]},
            "actions": [{"by": "cyd", "bid": {"count": 2, "face": 3}}],
        },
    ]
    for round_, left in zip(rounds, left_by_round, strict=False):
        if left:
            round_["left"] = left
    record = {
        "format": "perudo-record/1",
        "rules": {"preset": "club"},
        "players": ["ana", "ben", "cyd"],
        "first_opener": "ana",
        "rounds": rounds,
    }
    return json.dumps(record).encode()


def test_the_referee_reads_who_left_after_a_round():
    record = decode_record(left_record([["ben"]]))
    assert record.rounds[0].left == ("ben",) and record.rounds[1].left == ()
    verdict = verdict_of(record)
    assert verdict.legal and verdict.eliminated == ("ben",) and verdict.next_opener == "cyd"
    assert verdict.rounds[0].dice == {"ana": 5, "cyd": 5}  # ben is out after round 0
    assert verdict.rounds[0].tokens.balances == {"ana": -10, "ben": -12, "cyd": -10}
    assert b'"left":["ben"]' in encode_record(record)


@pytest.mark.parametrize(
    ("left", "calls", "code", "round_"),
    [
        ([["ben"]], False, "round_unfinished", 0),  # nobody leaves a round before its call
        ([["zoe"]], True, "unknown_player", 0),
        ([["ben", "ben"]], True, "unknown_player", 0),  # out already
        ([["ben", "cyd", "ana"]], True, "game_over", 0),  # ana won when cyd left
        ([["ben", "cyd"]], True, "game_over", 1),  # a round after the winner
    ],
)
def test_the_referee_refuses_a_wrong_left(left, calls, code, round_):
    verdict = verdict_of(decode_record(left_record(left, calls)))
    assert not verdict.legal
    assert (verdict.error.code, verdict.error.round, verdict.error.action) == (code, round_, None)
