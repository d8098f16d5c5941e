"""Quick play (issue 13): one command seats a player at the best open table, or opens one
that bots fill after the wait chosen."""

from __future__ import annotations

import pytest

from perudo_ssh import protocol as P
from tests.test_lobby_support import connected, running_lobby

pytestmark = pytest.mark.timeout(60)


async def test_quick_play_opens_a_table_the_next_one_joins_it_and_bots_fill_it_in_time():
    """Nobody waiting: a four-seat classic table opens, counting down the wait chosen; the
    next quick player sits at it (the countdown goes on from the opening, not from them);
    when the wait is over bots take the two seats left and the game starts."""
    # timer_scale 0.05: the 30 s wait lasts 1.5 s, and the table still says 30
    async with running_lobby(timer_scale=0.05) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        ana.send(P.QuickPlay(wait_seconds=30))
        opened = await ana.expect(P.TableState)
        assert (opened.size, opened.options.preset, [s.name for s in opened.seats]) == (
            4,
            "classic",
            ["ana"],
        )
        assert opened.status == "waiting" and opened.fill_in == 30.0
        ben.send(P.QuickPlay())
        joined = await ben.expect(P.TableState)
        assert joined.id == opened.id and [s.name for s in joined.seats] == ["ana", "ben"]
        assert joined.fill_in is not None and 0 < joined.fill_in <= 30
        started = await ana.expect(P.TableState, lambda s: s.status == "playing")
        assert [s.bot for s in started.seats] == [False, False, True, True]
        assert started.fill_in is None and started.game is not None


async def test_quick_play_picks_the_table_of_the_preset_with_the_most_people():
    """Of the open tables: those of the preset asked for; of them the one with the most
    people seated (the oldest when even); never a table that is full or playing."""
    async with running_lobby() as lobby:
        ana, ben, cyd, dan, eve, fay = [
            await connected(lobby, name) for name in ("ana", "ben", "cyd", "dan", "eve", "fay")
        ]
        ana.send(P.CreateTable(preset="classic", seats=4, bots=0))
        first = await ana.expect(P.TableState)
        ben.send(P.CreateTable(preset="classic", seats=4, bots=1))
        second = await ben.expect(P.TableState)
        cyd.send(P.CreateTable(preset="gamerules", seats=3, bots=0))
        third = await cyd.expect(P.TableState)
        dan.send(P.JoinTable(table=second.id))  # two people at the second, one bot
        await dan.expect(P.TableState)
        eve.send(P.QuickPlay())
        assert (await eve.expect(P.TableState)).id == second.id  # most people
        fay.send(P.QuickPlay(preset="gamerules"))
        assert (await fay.expect(P.TableState)).id == third.id
        assert first.id not in (second.id, third.id)


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (P.QuickPlay(wait_seconds=7), "bad_command"),
        (P.QuickPlay(preset="poker"), "bad_options"),
    ],
)
async def test_a_quick_play_out_of_range_is_refused_and_changes_nothing(command, code):
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ana.send(command)
        refused = await ana.expect(P.Refused)
        assert refused.code == code
        ana.send(P.QuickPlay())
        assert (await ana.expect(P.TableState)).seats[0].name == "ana"
