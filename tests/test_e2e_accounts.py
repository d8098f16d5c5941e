"""End to end over SSH (issue 13, items 1 and 8): a game played from a second session of an
account is the account's, under its name; a game whose last person left mid-game is played
out by its bots and kept in the leaver's records."""

from __future__ import annotations

import asyncio

import pytest

from perudo_ssh.lobby import Lobby
from tests.conftest import StoredServer
from tests.test_identity import flat, login, new_key, play_a_game_against_bots
from tests.test_records_store import records_of

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # the quick loop: -m "not slow"


async def test_a_second_session_plays_as_the_account_and_takes_its_name_back(
    stored_server: StoredServer,
):
    key = new_key()
    port = stored_server.port
    first = await login(port, "ben", key)
    second = None
    try:
        await first.wait_for("welcome, ben")
        second = await login(port, "ben", key)
        await second.wait_for("welcome, ben-2")
        await first.wait_for(lambda t: "ben-2" in t)  # the online column lists both
        await first.close()
        text = await second.wait_for(lambda t: "you play as ben again" in flat(t))
        assert "welcome, ben" in text and "welcome, ben-2" not in text
        await play_a_game_against_bots(second, "ben")
    finally:
        await first.close()
        if second is not None:
            await second.close()
    assert stored_server.archive is not None and stored_server.store is not None
    await stored_server.archive.drain()
    (line,) = await records_of(port, key)
    assert line[5].startswith("ben, bot-")  # the account's name, not ben-2
    account = await stored_server.store.account_for_key(key.get_fingerprint("sha256"))
    assert account is not None
    (game,) = await stored_server.store.games_of(account.id)
    assert str(game.id) == line[0]


async def closed(lobby: Lobby) -> None:
    """Until the lobby has no table left (checked at each turn of the event loop)."""
    while lobby.tables:
        await asyncio.sleep(0)


async def test_a_game_left_to_its_bots_is_finished_and_kept_for_the_leaver(
    stored_server: StoredServer,
):
    key = new_key()
    port = stored_server.port
    ana = await login(port, "ana", key)
    try:
        await ana.wait_for("welcome, ana")
        ana.send("c")
        await ana.wait_for("Create a table")
        ana.send("\x13")  # ctrl+s: create (4 seats, 2 bots)
        await ana.wait_for("Waiting for 1 more player")
        ana.send("s")  # start now, with the bots
        await ana.wait_for(lambda t: "Bids this round" in t)
        ana.send("l")
        await ana.wait_for(lambda t: "y: yes" in t)  # leaving mid-game asks first
        ana.send("y")
        await ana.wait_for(lambda t: "welcome, ana" in t)  # back in the lobby
        # the bots play the game out unseen, then the table closes
        assert stored_server.lobby is not None
        await asyncio.wait_for(closed(stored_server.lobby), 60)
        await ana.wait_for(lambda t: "No tables yet" in t)
    finally:
        await ana.close()
    assert stored_server.archive is not None
    await stored_server.archive.drain()
    (line,) = await records_of(port, key)
    _, _, _, preset, place, players = line
    assert preset == "classic" and place == "3/3"  # ranked when she left: first out
    assert players.startswith("ana, bot-")
