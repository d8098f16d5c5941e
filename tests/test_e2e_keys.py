"""End to end, keys as a real SSH client sends them: a burst typed in one write (a paste, or
a fast typist on a laggy link) must land where slow typing would. (The goodbye on shutdown
is tested with the real `perudo-ssh serve` in test_cli.py.)"""

from __future__ import annotations

import re

import asyncssh
import pytest

from perudo_ssh import protocol
from tests.sshterm import Terminal
from tests.test_e2e_faults import start_against_a_bot

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # the quick loop: -m "not slow"


@pytest.fixture
async def ana(game_server):
    term = Terminal()
    await term.connect(game_server.port, "ana", asyncssh.generate_private_key("ssh-ed25519"))
    yield term
    await term.close()


async def sit_at_a_game_against_one_bot(term: Terminal) -> str:
    """Create a two-seat table with one bot (the game starts at once); return the screen
    once it is this player's turn to bid."""
    await term.wait_for("welcome, ana")
    await start_against_a_bot(term)
    return await term.wait_for("Your bid ▸")  # bids are offered on one's own turn only


async def test_a_typed_bid_sent_in_one_burst_after_tab_is_bid(game_server, ana):
    sent = game_server.sent
    text = await sit_at_a_game_against_one_bot(ana)
    current = re.search(r"Current bid: (\d+)×(\d)", text)
    count, face = (int(current[1]) + 1, int(current[2])) if current else (3, 5)
    before = len(sent["ana"])
    ana.send(f"\t{count}x{face}\r")  # Tab, the bid and Enter in one write
    await ana.wait_for(lambda t: re.search(rf"ana +{count}×{face}", t) is not None)
    # the whole burst was read before its last key, Enter, so any stray key has acted by now
    assert sent["ana"][before:] == [protocol.MakeBid(count=count, face=face)]
    assert "Tab, then type a bid" in ana.text  # the input was emptied by the bid
