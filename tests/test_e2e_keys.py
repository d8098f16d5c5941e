"""End to end, keys as a real SSH client sends them: a burst typed in one write (a paste, or
a fast typist on a laggy link) must land where slow typing would, and what the server says
on its way out must stay on the screen long enough to be read."""

from __future__ import annotations

import asyncio
import random
import re

import asyncssh
import pytest

from perudo_ssh import protocol
from perudo_ssh.lobby import Lobby
from perudo_ssh.serve import start_game_server
from tests.sshterm import Terminal

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def server(tmp_path):
    """The real server on a free port; yields (port, lobby, commands sent per name)."""
    lobby = Lobby(bot_delay=(0, 0), reveal_timeout=60, rng=random.Random(7))
    sent: dict[str, list[protocol.Command]] = {}
    connect = lobby.connect

    def recording_connect(name, fingerprint=None):
        session = connect(name, fingerprint)
        commands = sent.setdefault(name, [])
        send = session.send

        def send_recorded(command):
            commands.append(command)
            send(command)

        session.send = send_recorded
        return session

    lobby.connect = recording_connect
    acceptor, lobby = await start_game_server("127.0.0.1", 0, tmp_path / "keys", lobby)
    yield acceptor.get_port(), lobby, sent
    acceptor.close()
    await lobby.stop()
    await acceptor.wait_closed()


@pytest.fixture
async def ana(server):
    port, _, _ = server
    term = Terminal()
    await term.connect(port, "ana", asyncssh.generate_private_key("ssh-ed25519"))
    yield term
    await term.close()


async def sit_at_a_game_against_one_bot(term: Terminal) -> str:
    """Create a two-seat table with one bot (the game starts at once); return the screen
    once it is this player's turn to bid."""
    await term.wait_for("welcome, ana")
    term.send("c")
    await term.wait_for("Create a table")
    term.send("tab", "enter")  # seats 4 -> 2; the bots follow to 1
    await term.wait_for("▲")
    term.send("up", "up", "enter")
    await term.wait_for(
        lambda t: re.search(r"Seats\s+2 .*Bots\s+1 ", t) is not None and "Dismiss menu" not in t
    )
    term.send("\x13")  # ctrl+s: create
    return await term.wait_for("Your bid ▸")  # bids are offered on one's own turn only


async def test_a_typed_bid_sent_in_one_burst_after_tab_is_bid(server, ana):
    _, _, sent = server
    text = await sit_at_a_game_against_one_bot(ana)
    current = re.search(r"Current bid: (\d+)×(\d)", text)
    count, face = (int(current[1]) + 1, int(current[2])) if current else (3, 5)
    before = len(sent["ana"])
    ana.send(f"\t{count}x{face}\r")  # Tab, the bid and Enter in one write
    await ana.wait_for(lambda t: re.search(rf"ana +{count}×{face}", t) is not None)
    await asyncio.sleep(0.3)  # time for any stray key to do something
    assert sent["ana"][before:] == [protocol.MakeBid(count=count, face=face)]
    assert "Tab, then type a bid" in ana.text  # the input was emptied by the bid


async def test_goodbye_stays_on_screen_before_the_session_ends(server, ana):
    _, lobby, _ = server
    await ana.wait_for("welcome, ana")
    await lobby.stop()
    await ana.wait_for("server stopping", timeout=5)
    shown = asyncio.get_running_loop().time()
    while not ana.closed:
        await asyncio.sleep(0.05)
    assert asyncio.get_running_loop().time() - shown > 1.0
