"""Pilot tests of the app against the real lobby actor (instant bots), 80×24.

A whole game is played by pressing keys only: create a table with one bot, then bid or
doubt on each turn, dismiss each reveal, until the game-over screen.
"""

from __future__ import annotations

import random

import pytest
from textual.widgets import DataTable

from perudo_ssh import protocol as P
from perudo_ssh.lobby import Lobby
from screens.app import make_app
from screens.create import CreateTableDialog
from screens.gameover import GameOverScreen
from screens.lobby import LobbyScreen
from screens.table import TableScreen
from tests.test_screens_fakes import screen_text, wait_until

SIZE = (80, 24)


@pytest.mark.slow
async def test_whole_game_against_a_bot_by_keys():
    lobby = Lobby(bot_delay=(0, 0), rng=random.Random(11))
    lobby.start()
    try:
        app = make_app(lobby.connect("ana"))
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.lobby is not None)
            await pilot.press("c")
            await wait_until(pilot, lambda: isinstance(app.screen, CreateTableDialog))
            app.screen.query_one("#seats").value = 2
            await pilot.pause()
            await pilot.press("ctrl+s")  # 2 seats, 1 bot: the table fills and starts
            await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
            rounds = 0
            for _ in range(2000):
                screen = app.screen
                if isinstance(screen, GameOverScreen):
                    break
                if isinstance(screen, TableScreen) and screen.has_class("-reveal"):
                    rounds += 1
                    await pilot.press("space")
                elif isinstance(screen, TableScreen) and screen.game is not None:
                    choices = screen.game.choices
                    if choices.dudo and len(screen.game.bids) >= 2:
                        await pilot.press("d")
                    elif choices.bids:
                        await pilot.press("enter")
                await pilot.pause(0.01)
            assert isinstance(app.screen, GameOverScreen), screen_text(app)
            assert rounds >= 5  # two players, five dice each: one die changes per round
            game = app.table.game if app.table is not None else None
            assert game is not None and game.winner is not None
            winner = app.table.seats[game.winner].name
            mine = game.winner == game.me
            said = "Game over: you win!" if mine else f"Game over: {winner} (bot) wins."
            assert said in screen_text(app)
            await pilot.press("a")  # the bot is always ready: a new game starts at once
            await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
            await wait_until(pilot, lambda: app.table.game.phase == "bidding")
            assert app.table.game.last is None
            await pilot.press("l", "y")
            await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
            grid = app.screen.query_one("#tables", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 0)  # the bot's table closed
        assert app.session.closed
    finally:
        await lobby.stop()


async def test_two_players_see_each_other_in_the_lobby_and_refusals():
    lobby = Lobby(bot_delay=(0, 0), rng=random.Random(3))
    lobby.start()
    try:
        ben = lobby.connect("ben")
        ben.send(P.CreateTable(preset="club", seats=3, bots=0, name="ben's [b]club"))
        app = make_app(lobby.connect("ana"))
        async with app.run_test(size=SIZE) as pilot:
            grid = app.screen.query_one("#tables", DataTable)
            await wait_until(pilot, lambda: grid.row_count == 1)
            assert "ben's [b]club" in screen_text(app) and "ben" in screen_text(app)
            await pilot.press("j")
            await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
            await pilot.pause()
            assert "Waiting for 1 more player" in screen_text(app)
            app.send(P.StartGame())  # not the creator: the lobby refuses
            await wait_until(pilot, lambda: len(app._notifications) >= 1)
            await pilot.press("l")
            await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
    finally:
        await lobby.stop()
