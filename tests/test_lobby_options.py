"""The lobby builds each table's rules from `CreateTable(preset, options)` and checks them
itself, whatever the client checked (RULES.md §7; rules/options.py `check_options`)."""

from __future__ import annotations

import msgspec
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.rules import options_for
from tests.test_lobby_support import connected, running_lobby

REFUSED = [
    (P.CreateTable(preset="nope"), "unknown preset {preset}", {"preset": "'nope'"}),
    (
        P.CreateTable(options={"wild_pacos": False}),
        "unknown option {option}",
        {"option": "'wild_pacos'"},
    ),
    (
        P.CreateTable(options={"stake": True}),
        "{option} must be a whole number",
        {"option": "stake"},
    ),
    (
        P.CreateTable(options={"stake": 500}),
        "the stake must be between {low} and {high} tokens",
        {"low": 0, "high": 100},
    ),
    (
        P.CreateTable(options={"raise_rule": "anything"}),
        "{option} is one of: {choices}",
        {"option": "raise_rule", "choices": "count-or-face, one-at-a-time, monotone"},
    ),
    (
        P.CreateTable(preset="club", options={"dice_per_player": 1}),
        "jonti needs at least 2 dice per player: its caller must have lost a die",
        {},
    ),
]


async def test_the_lobby_refuses_options_a_raw_client_sends_and_makes_no_table():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        for command, message, args in REFUSED:
            ana.send(command)
            refused = await ana.expect(P.Refused)
            assert (refused.code, refused.message, refused.args) == ("bad_options", message, args)
        assert lobby.tables == {}


async def test_a_custom_table_gets_exactly_its_options_and_everyone_sees_them():
    async with running_lobby() as lobby:
        ben = await connected(lobby, "ben")
        ana = await connected(lobby, "ana")
        changes = {"dice_per_player": 3, "calza": "anytime", "stake": 4, "jonti": False}
        ana.send(P.CreateTable(preset="club", seats=3, bots=1, options=changes))
        state = await ana.expect(P.TableState)
        expected = options_for("club", **changes)
        assert state.options == expected and state.game is None  # before the first game
        listed = await ben.expect(P.LobbyState, lambda e: e.tables)
        summary = listed.tables[0]
        assert (summary.preset, summary.calza, summary.custom) == ("club", "anytime", True)
        assert summary.options == expected
        ben.send(P.SpectateTable(table=state.id))
        watched = await ben.expect(P.TableState)
        assert watched.me is None and watched.options == expected
        ana.send(P.StartGame())
        started = await ana.expect(P.TableState, lambda e: e.game is not None)
        assert started.game.options == expected
        assert started.game.dice_in_play == 6  # 3 dice each


async def test_a_preset_table_is_not_custom():
    async with running_lobby() as lobby:
        ben = await connected(lobby, "ben")
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset="gamerules", seats=3, bots=1, options={"calza": "on-turn"}))
        await ana.expect(P.TableState)
        listed = await ben.expect(P.LobbyState, lambda e: e.tables)
        assert listed.tables[0].custom is False  # the preset's own value is no change


def test_options_cross_the_wire_with_their_types():
    command = P.CreateTable(options={"jonti": True, "stake": 1, "calza": "off"})
    decoded = P.decode_command(P.encode(command))
    assert decoded == command
    assert [type(v) for v in decoded.options.values()] == [bool, int, str]
    bad = msgspec.msgpack.encode({"type": "CreateTable", "options": {"stake": [1, 2]}})
    with pytest.raises(msgspec.ValidationError):
        P.decode_command(bad)
