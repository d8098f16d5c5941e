"""One table's seating and reveal pacing (perudo_ssh.lobby.table), without the actor."""

from __future__ import annotations

import random

from msgspec.structs import replace

from perudo_ssh.lobby.table import Table
from perudo_ssh.rules import options_for


def started_table() -> Table:
    """ana (session 1), ben (session 2) and one bot, game started, first round rolled."""
    table = Table(id=1, name="t", options=options_for("classic"), size=3, creator=1)
    table.sit(1, "ana")
    table.sit(2, "ben")
    table.add_bot(random.Random(0))
    table.start(random.Random(0))
    return table


def in_reveal_with_ben_out(table: Table) -> None:
    """Put the table at a reveal where ben (seat 1) has just lost his last die."""
    assert table.state is not None
    table.state = replace(table.state, phase="rolling", counts=(3, 0, 2), eliminated=(1,))


def test_the_reveal_waits_only_for_humans_who_still_have_dice() -> None:
    table = started_table()
    in_reveal_with_ben_out(table)
    assert table.waiting_for() == [0]
    assert table.confirm(0, table.state.round_index - 1)
    assert table.waiting_for() == []


def test_a_player_who_is_out_leaves_without_a_bot_taking_the_seat_over() -> None:
    table = started_table()
    in_reveal_with_ben_out(table)
    assert table.leave(2) == "out"
    assert table.leave(1) == "bot"  # ana still has dice: a bot plays on for her


def test_bot_names_never_echo_a_player_at_the_table() -> None:
    for seed in range(50):
        table = Table(id=1, name="t", options=options_for("classic"), size=6, creator=1)
        table.sit(1, "ana")
        table.sit(2, "Luis")
        names = [table.add_bot(random.Random(seed)) for _ in range(4)]
        assert "bot-Ana" not in names and "bot-Luis" not in names
        assert len(set(names)) == 4


def test_once_every_human_is_out_the_reveal_waits_for_them_watching() -> None:
    table = started_table()
    assert table.state is not None
    table.state = replace(table.state, phase="rolling", counts=(0, 0, 2), eliminated=(0, 1))
    assert table.waiting_for() == [0, 1]
