"""Isolation (issue 5, item 5): an exception in one session's app ends that session with a
short message, logged, while every other session goes on; an exception while the lobby
actor handles one command refuses that command to its sender, logged, and the actor goes on."""

from __future__ import annotations

import logging
import re

import pytest

from perudo_ssh import protocol as P
from perudo_ssh.lobby import commands as lobby_commands
from screens.app import PerudoApp
from tests.sshterm import Terminal
from tests.test_lobby_support import connected, running_lobby

pytestmark = pytest.mark.timeout(60)


@pytest.mark.slow
async def test_a_crash_in_one_app_ends_that_session_only(game_server, monkeypatch, caplog) -> None:
    help_action = PerudoApp.action_help

    def help_unless_ben(app: PerudoApp) -> None:
        if app.player_name == "ben":
            raise RuntimeError("ben's help broke")
        help_action(app)

    monkeypatch.setattr(PerudoApp, "action_help", help_unless_ben)
    ana, ben = Terminal(), Terminal()
    await ana.connect(game_server.port, "ana", None)
    await ben.connect(game_server.port, "ben", None)
    try:
        await ana.wait_for("welcome, ana")
        await ben.wait_for("welcome, ben")
        await ana.wait_for("Online (2)")
        with caplog.at_level(logging.ERROR, logger="perudo_ssh"):
            ben.send("?")
            assert await ben.ended() == 1
        assert "perudo-ssh: something went wrong and this session ended. Sorry!" in ben.raw.decode()
        (crash,) = [r for r in caplog.records if getattr(r, "event", None) == "session_crashed"]
        assert "RuntimeError: ben's help broke" in crash.fields["exc"]
        # ana goes on: the lobby sees ben gone, her help opens, she creates a table
        await ana.wait_for("Online (1)")
        assert re.search(r"\bben\b", ana.text) is None
        ana.send("?")
        await ana.wait_for("Keys")
        ana.send("escape")
        await ana.wait_for(lambda t: "Keys" not in t)
        ana.send("c")
        await ana.wait_for("Create a table")
        ana.send("\x13")  # ctrl+s: create
        await ana.wait_for("Waiting for")
        (table,) = game_server.lobby.tables.values()
        assert [seat.name for seat in table.seats if not seat.bot] == ["ana"]
    finally:
        await ana.close()
        await ben.close()


async def test_a_command_that_fails_in_the_lobby_is_refused_to_its_sender_only(
    monkeypatch, caplog
) -> None:
    async with running_lobby() as lobby:
        ana, ben = await connected(lobby, "ana"), await connected(lobby, "ben")
        handle = lobby_commands.on_command

        def fail_for_ben(lobby, client, command) -> None:
            if client.name == "ben" and isinstance(command, P.CreateTable):
                raise RuntimeError("ben's table broke")
            handle(lobby, client, command)

        monkeypatch.setattr(lobby_commands, "on_command", fail_for_ben)
        with caplog.at_level(logging.ERROR, logger="perudo_ssh.lobby"):
            ben.send(P.CreateTable(seats=2, bots=0))
            refused = await ben.expect(P.Refused)
        assert refused.code == "bad_command"
        assert any(
            "ben's table broke" in (r.exc_text or str(getattr(r, "fields", {}).get("exc", "")))
            for r in caplog.records
        )
        assert lobby.tables == {}  # nothing half made
        # the actor goes on: ana's table, and ben's next command
        ana.send(P.CreateTable(seats=2, bots=0))
        created = await ana.expect(P.TableState)
        assert created.status == "waiting" and [s.name for s in created.seats] == ["ana"]
        ben.send(P.JoinTable(table=created.id))
        joined = await ben.expect(P.TableState)
        assert [s.name for s in joined.seats] == ["ana", "ben"]
