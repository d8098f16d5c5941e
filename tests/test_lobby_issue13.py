"""What players missed (issue 13), in the lobby: quick play (one command seats a player at
the best open table, or opens one that bots fill after the wait chosen), private tables and
challenges, and a second session taking its account's name back."""

from __future__ import annotations

import random

import pytest

from perudo_ssh import bots
from perudo_ssh import protocol as P
from perudo_ssh.lobby import bot_turns
from perudo_ssh.lobby.table import Table
from perudo_ssh.rules import observe
from tests.test_lobby_support import connected, running_lobby
from tests.test_moderation import Member, member

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


async def test_a_private_table_is_unlisted_and_joined_with_its_invite_code():
    """Issue 13: a private table is not in the lobby list; its seated players get its invite
    code; joining or watching it by number is refused as if it did not exist, quick play
    passes it by, and the code (any case) seats a player."""
    async with running_lobby() as lobby:
        ana, ben, cyd = [await connected(lobby, name) for name in ("ana", "ben", "cyd")]
        ana.send(P.CreateTable(seats=3, bots=0, private=True))
        mine = await ana.expect(P.TableState)
        code = mine.code
        assert code is not None and len(code) == 6 and code.isupper()
        ben.send(P.Say(text="still here"))  # the lobby list sent with the table is settled
        await ben.expect(P.ChatLine)
        listed = ben.events[-1]
        assert not any(isinstance(e, P.LobbyState) and e.tables for e in ben.events), listed
        for command in (P.JoinTable(table=mine.id), P.SpectateTable(table=mine.id)):
            ben.send(command)
            refused = await ben.expect(P.Refused)
            assert (refused.code, refused.message) == ("no_table", "there is no such table")
        ben.send(P.JoinPrivate(code="ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY"))
        assert (await ben.expect(P.Refused)).message == "no table has the invite code {code}"
        cyd.send(P.QuickPlay())
        assert (await cyd.expect(P.TableState)).id != mine.id
        ben.send(P.JoinPrivate(code=f" {code.lower()} "))
        seated = await ben.expect(P.TableState)
        assert (seated.id, seated.code, [s.name for s in seated.seats]) == (
            mine.id,
            code,
            ["ana", "ben"],
        )


async def test_a_challenge_opens_a_private_table_of_two_and_the_challenged_may_say_no():
    async with running_lobby() as lobby:
        ana, ben = [await connected(lobby, name) for name in ("ana", "ben")]
        for name, message in (("ana", "you cannot challenge yourself"),
                              ("dan", "nobody called {name} is online")):  # fmt: skip
            ana.send(P.Challenge(name=name))
            assert (await ana.expect(P.Refused)).message == message
        ana.send(P.Challenge(name="BEN", preset="gamerules"))
        told = await ana.expect(P.Notice)  # said in the batch, before the table is sent
        assert (told.text, told.args) == (
            "You challenged {name}; the table waits for them.",
            {"name": "ben"},
        )
        table = await ana.expect(P.TableState)
        assert (table.size, table.options.preset, table.name) == (2, "gamerules", "ana – ben")
        challenged = await ben.expect(P.Challenged)
        assert (challenged.by, challenged.table, challenged.code, challenged.preset) == (
            "ana",
            table.id,
            table.code,
            "gamerules",
        )
        ben.send(P.DeclineChallenge(code=challenged.code))
        declined = await ana.expect(P.Notice)
        assert (declined.text, declined.args) == ("{name} declined the challenge.", {"name": "ben"})
        ben.send(P.JoinPrivate(code=challenged.code))  # changed their mind: the table waits
        started = await ben.expect(P.TableState)
        assert started.id == table.id and started.status == "playing"


async def test_a_second_session_takes_the_accounts_name_back_once_the_first_is_gone():
    """Issue 13, item 1: `ben-2` (a second session of ben's account) becomes `ben` when the
    first session ends: told so, its seat at a waiting table renamed, the online list too.
    A guest's suffix stays (nobody to be)."""
    async with running_lobby() as lobby:
        first = await member(lobby, "ben", "SHA256:ben", account=5)
        second = Member(lobby, "ben", "SHA256:phone", account=5)
        assert (await second.expect(P.Welcome)).name == "ben-2"
        guest = Member(lobby, "ben", None)
        assert (await guest.expect(P.Welcome)).name == "ben-3"
        second.send(P.CreateTable(seats=3, bots=1))
        table = await second.expect(P.TableState)
        assert [s.name for s in table.seats] == ["ben-2", table.seats[1].name]
        first.session.close()
        welcome = await second.expect(P.Welcome)
        told = await second.expect(P.Notice)
        renamed = await second.expect(P.TableState)
        assert welcome.name == "ben" and renamed.seats[0].name == "ben"
        assert (told.text, told.args) == (
            "Your other session ended: you play as {name} again.",
            {"name": "ben"},
        )
        online = await guest.expect(P.LobbyState, lambda s: "ben-2" not in s.online)
        assert online.online == ("ben", "ben-3")


async def test_bots_are_seated_at_the_level_asked_and_show_it():
    """Issue 14: a table's bots play at the level it was created with (`bot_level`); `b`
    adds one of that level, or of the level asked; the seats say which; an unknown level
    is refused and seats nobody."""
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(seats=5, bots=1, bot_level="wizard"))
        assert (await ana.expect(P.Refused)).message == "unknown bot level {level}"
        ana.send(P.CreateTable(seats=5, bots=1, bot_level="hard"))
        table = await ana.expect(P.TableState)
        assert [(s.bot, s.level) for s in table.seats] == [(False, None), (True, "hard")]
        ana.send(P.AddBot())
        ana.send(P.AddBot(level="easy"))
        ana.send(P.AddBot(level="wizard"))
        assert (await ana.expect(P.Refused)).message == "unknown bot level {level}"
        seated = await ana.expect(P.TableState, lambda s: len(s.seats) == 4)
        assert [s.level for s in seated.seats] == [None, "hard", "hard", "easy"]
        assert lobby.tables[table.id].seats[3].level == "easy"


def test_a_bot_decides_at_its_own_level_and_one_in_a_humans_seat_as_medium(monkeypatch):
    """`bot_turns.bot_move` asks `bots.choose` at the seat's level; a bot playing the seat of a
    human who left has no level of its own and plays as medium."""
    asked: list[str] = []
    choose = bots.choose

    def spy(view, rng, level="medium"):
        asked.append(level)
        return choose(view, rng, level=level)

    monkeypatch.setattr(bots, "choose", spy)
    rng = random.Random(3)
    table = Table.create(1, P.CreateTable(seats=3, bots=1, bot_level="easy"), 1, "ana", rng)
    table.sit(2, "ben", None)
    table.start(rng)
    table.leave(2)  # ben leaves mid-game: a bot plays his seat
    while table.state is not None and table.state.phase != "over" and len(set(asked)) < 2:
        if table.bot_to_move() is not None:
            bot_turns.bot_move(table, rng)
        elif table.state.phase == "rolling":
            table.roll(rng)
        else:  # ana's turn
            table.play(bots.automatic_move(observe(table.state, 0)), 0, rng)
    assert set(asked) == {"easy", "medium"}
    assert table.seats[1].level == "easy" and table.seats[2].level is None
