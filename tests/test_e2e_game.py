"""End to end: the real server on a loopback port, two players over SSH with PTYs and one bot
play a whole game through the screens while a third client watches, and nobody ever receives
another's hidden dice before the reveal (spectators: nobody's)."""

from __future__ import annotations

import asyncio
import re

import asyncssh
import pytest

from perudo_ssh import protocol
from tests.sshterm import Terminal, create_three_seats_one_bot

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # the quick loop: -m "not slow"

CUP = re.compile(r"^│ ((?:\[.\])+) +\d dic?e? ", re.MULTILINE)


async def play_until_over(term: Terminal) -> str:
    """Play one seat through the screens: dudo when there is a bid, else the composer's bid;
    dismiss each reveal. Returns the game-over screen."""
    while True:
        text = await term.wait_for(
            # `your turn`; with the table's turn timer, `Your turn — 0:42`
            lambda t: "Press Space" in t or "your turn" in t.lower() or "Game over" in t,
            timeout=60,
        )
        if "Game over" in text:
            return text
        if "Press Space" in text:
            term.send(" ")
        elif re.search(r"Current bid: \d", text):
            term.send("d")
        else:
            term.send("enter")
        await term.wait_for(lambda t, before=text: t != before, timeout=60)


def assert_no_hidden_dice_of_others(events: list[protocol.Event]) -> None:
    tables = [e for e in events if isinstance(e, protocol.TableState) and e.game is not None]
    assert tables, "the player never saw a game"
    for event in tables:
        for seat in event.game.seats:
            if seat.seat != event.me:
                assert seat.hidden is None, f"seat {seat.seat}'s dice sent to seat {event.me}"


async def test_two_players_and_a_bot_play_a_whole_game_over_ssh(game_server):
    port, lobby, received = game_server.port, game_server.lobby, game_server.received
    ana, ben, cyd = Terminal(), Terminal(), Terminal()
    await ana.connect(port, "ana", asyncssh.generate_private_key("ssh-ed25519"))
    await ben.connect(port, "ben", None)  # a keyboard-interactive guest
    try:
        await ana.wait_for("welcome, ana")
        ana.send("c")
        await ana.wait_for("Create a table")
        await create_three_seats_one_bot(ana)
        await ben.wait_for(lambda t: re.search(r"1\s+ana.*classic\s+2/3", t) is not None)
        ben.send("enter")
        await ben.wait_for("ben (you)")
        await cyd.connect(port, "cyd", None)
        await cyd.wait_for(lambda t: re.search(r"1\s+ana.*classic\s+3/3\s+playing", t) is not None)
        cyd.send("s")  # watch the table
        await cyd.wait_for("Current bid")

        over = await asyncio.gather(play_until_over(ana), play_until_over(ben))
        (table,) = lobby.tables.values()
        winner = table.state.winner
        assert winner is not None
        winner_name = [s.name for s in table.seats][winner]
        for name, screen in zip(("ana", "ben"), over, strict=True):
            said = "Game over: you win!" if name == winner_name else f"Game over: {winner_name}"
            assert said in screen
        await cyd.wait_for(f"Game over: {winner_name}", timeout=60)
        for name in ("ana", "ben", "cyd"):
            assert_no_hidden_dice_of_others(received[name])
        # on screen, every cup stays closed: faces appear only in the reveal panel
        for term in (ana, ben, cyd):
            cups = [cup for screen in term.screens for cup in CUP.findall(screen)]
            assert len(cups) > 20
            assert all(set(cup) <= set("[?]") for cup in cups), cups
    finally:
        for term in (ana, ben, cyd):
            await term.close()
