"""Chat: cleaning a line, the rate limit, and the lobby's routing (real `Lobby`, no sleeps)."""

from __future__ import annotations

import random

import pytest

from perudo_ssh import protocol as P
from perudo_ssh.chat import HISTORY, MAX_CHAT_LENGTH, MAX_RAW_LENGTH, RateLimit, clean_chat
from perudo_ssh.lobby import chat as lobby_chat
from tests.test_lobby_support import Player, connected, play_randomly, running_lobby

# ---- clean_chat --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("hello", "hello"),
        ("  two   spaces\tand\na line  ", "two spaces and a line"),
        # OSC: set the window title, ended by BEL or by ST, payload and all
        ("a\x1b]0;pwned\x07b", "ab"),
        ("a\x1b]2;pwned\x1b\\b", "ab"),
        ("a\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\", "alink"),
        # CSI: clear the screen, move the cursor, colours, private modes
        ("x\x1b[2Jy", "xy"),
        ("x\x1b[10;20Hy\x1b[31;1mz\x1b[0m", "xyz"),
        ("x\x1b[?1049hy", "xy"),
        # 8-bit C1 forms of CSI and OSC
        ("x\x9b2Jy", "xy"),
        ("x\x9d0;pwned\x9cy", "xy"),
        # DCS and APC strings, and two-byte escapes (reset, charset)
        ("x\x1bPq#0;2;0;0;0\x1b\\y", "xy"),
        ("x\x1b_payload\x1b\\y", "xy"),
        ("x\x1bcy\x1b(0z", "xyz"),
        # an unterminated string swallows the rest, as a terminal would
        ("ok\x1b]0;pwned", "ok"),
        # a lone ESC, BEL, backspace, carriage return, DEL, NUL, C1
        ("a\x1b\x07b\x08c\rd\x7fe\x00f\x85g\x1b", "abc def g"),
        # an ESC hidden behind an escape sequence is still only text afterwards
        ("\x1b\x1b[2J[2J", "[2J"),
        # bidi overrides and isolates, zero-width characters, BOM, soft hyphen, tags
        ("abc\u202edcba\u202c", "abcdcba"),
        ("a\u2066b\u2069c\u200bd\u200de\ufefff\u00adg\U000e0041h", "abcdefgh"),
        # blank letters and exotic spaces count as spaces
        ("a\u3164\u3164b\u2800c\u00a0d\u2028e\u3000f", "a b c d e f"),
        # markup is text
        ("[red]x[/red] [link=http://a]b[/link]", "[red]x[/red] [link=http://a]b[/link]"),
        # at most two combining marks on a letter, none on a space or at the start
        ("a" + "\u0316" * 5 + "b\u0316", "a\u0316\u0316b\u0316"),
        ("\u0301a \u0301b", "a b"),
        # NFC: a letter typed as base + accent is one character
        ("e\u0301", "é"),
        ("Привет, 世界 🎲", "Привет, 世界 🎲"),
    ],
)
def test_clean_chat(raw: str, clean: str) -> None:
    assert clean_chat(raw) == clean


@pytest.mark.parametrize("raw", ["", "   ", "\x1b[2J", "\x1b]0;x\x07\u200b\u202e", "\u3164\n\t"])
def test_clean_chat_leaves_nothing(raw: str) -> None:
    assert clean_chat(raw) is None


def test_clean_chat_leaves_no_control_or_format_character() -> None:
    raw = "".join(chr(c) for c in range(0x00, 0x250)) + "\u200b\u200e\u202a\u2066\ufeff"
    cleaned = clean_chat(raw)
    assert cleaned is not None
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in cleaned)
    assert not set(cleaned) & set("\u200b\u200e\u202a\u2066\ufeff")


# ---- RateLimit ---------------------------------------------------------------------------


def test_rate_limit_three_lines_then_one_a_second() -> None:
    limit = RateLimit(lines=3, seconds=3.0)
    assert [limit.allow(100.0) for _ in range(4)] == [True, True, True, False]
    assert limit.wait(100.0) == 1.0
    assert limit.wait(100.25) == 0.75
    assert not limit.allow(100.5)
    assert limit.allow(101.0)
    assert not limit.allow(101.0)
    # a long silence refills the bucket, no further than full
    assert [limit.allow(200.0) for _ in range(4)] == [True, True, True, False]
    assert limit.wait(300.0) == 0.0


def test_rate_limit_ignores_a_clock_going_back() -> None:
    limit = RateLimit(lines=1, seconds=1.0)
    assert limit.allow(10.0)
    assert not limit.allow(5.0)
    assert not limit.allow(10.5)
    assert limit.allow(11.0)


def test_rate_limit_needs_a_rate() -> None:
    with pytest.raises(ValueError):
        RateLimit(lines=0, seconds=1.0)
    with pytest.raises(ValueError):
        RateLimit(lines=1, seconds=0.0)


# ---- the lobby's routing -----------------------------------------------------------------


def lines(player: Player) -> list[tuple[str, str, str, int | None]]:
    """The chat lines `player` has read so far: scope, name, text, table."""
    return [(e.scope, e.name, e.text, e.table) for e in player.events if isinstance(e, P.ChatLine)]


async def barrier(*players: Player) -> None:
    """Every command sent so far by `players` (in the lobby) has been handled, and every
    event it caused read: each asks something always refused there (to leave a table)."""
    for player in players:
        player.send(P.LeaveTable())
    for player in players:
        await player.expect(P.Refused, lambda e: e.code == "not_seated")


async def test_lobby_chat_reaches_the_lobby_not_the_tables() -> None:
    async with running_lobby(bot_delay=(30.0, 30.0)) as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        cyd = await connected(lobby, "cyd")
        cyd.send(P.CreateTable(preset="classic", seats=3, bots=1))
        table = await cyd.expect(P.TableState)
        ana.send(P.Say(text="  hola\x1b]0;pwned\x07 [red]todos[/red] "))
        said = await ben.expect(P.ChatLine)
        assert said == P.ChatLine(
            id=said.id, scope="lobby", name="ana", text="hola [red]todos[/red]", table=None
        )
        assert (await ana.expect(P.ChatLine)) == said  # the speaker sees the line as sent
        # table chat: the table's players and spectators, nobody in the lobby
        ben.send(P.SpectateTable(table=table.id))
        await ben.expect(P.TableState)
        cyd.send(P.Say(text="hi table"))
        for player in (cyd, ben):
            line = await player.expect(P.ChatLine)
            assert (line.scope, line.name, line.text, line.table) == (
                "table",
                "cyd",
                "hi table",
                table.id,
            )
        ben.send(P.Say(text="watching"))
        assert (await cyd.expect(P.ChatLine)).text == "watching"
        await barrier(ana)
        assert lines(ana) == [("lobby", "ana", "hola [red]todos[/red]", None)]
        assert lines(cyd) == [("table", "cyd", "hi table", 1), ("table", "ben", "watching", 1)]


async def test_newcomers_get_the_recent_lines_of_where_they_arrive() -> None:
    async with running_lobby(bot_delay=(30.0, 30.0)) as lobby:
        lobby.chat_clock = iter(range(0, 10_000, 10)).__next__  # never too fast
        ana = await connected(lobby, "ana")
        for i in range(HISTORY + 5):
            ana.send(P.Say(text=f"line {i}"))
        await ana.expect(P.ChatLine, lambda e: e.text == f"line {HISTORY + 4}")
        ben = Player(lobby, "ben")
        await ben.expect(P.Welcome)
        history = await ben.expect(P.ChatHistory)
        assert (history.scope, history.table) == ("lobby", None)
        assert [line.text for line in history.lines] == [f"line {i}" for i in range(5, HISTORY + 5)]
        ids = [line.id for line in history.lines]
        assert ids == sorted(ids) and len(set(ids)) == HISTORY
        # at a table: its own lines; back in the lobby: the lobby's again, newer ones too
        ana.send(P.CreateTable(preset="classic", seats=3, bots=0))
        table = await ana.expect(P.TableState)
        ana.send(P.Say(text="at my table"))
        await ana.expect(P.ChatLine)
        ben.send(P.Say(text="while you were away"))
        await ben.expect(P.ChatLine, lambda e: e.text == "while you were away")
        ben.send(P.JoinTable(table=table.id))
        joined = await ben.expect(P.ChatHistory)
        assert (joined.scope, joined.table) == ("table", table.id)
        assert [(x.name, x.text) for x in joined.lines] == [("ana", "at my table")]
        ana.send(P.LeaveTable())
        await ana.expect(P.LeftTable)
        back = await ana.expect(P.ChatHistory)
        assert back.scope == "lobby" and back.lines[-1].text == "while you were away"
        # the last one out closes the table: its lines are gone with it
        ben.send(P.LeaveTable())
        await ben.expect(P.LeftTable)
        assert table.id not in lobby._chat
        cyd = Player(lobby, "cyd")
        await cyd.expect(P.Welcome)
        assert (await cyd.expect(P.ChatHistory)).lines[-1].text == "while you were away"


async def test_a_quiet_lobby_sends_no_history() -> None:
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        await barrier(ana)
        assert not any(isinstance(e, P.ChatHistory) for e in ana.events)


async def test_rate_limit_refuses_the_fourth_line_within_three_seconds() -> None:
    async with running_lobby() as lobby:
        now = [1000.0]
        lobby.chat_clock = lambda: now[0]
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        for i in range(4):
            ana.send(P.Say(text=f"spam {i}"))
        refused = await ana.expect(P.Refused)
        assert (refused.code, refused.message, refused.args) == (
            "chat_rate",
            "slow down: at most {lines} chat lines every {seconds} seconds",
            {"lines": 3, "seconds": 3},
        )
        await barrier(ana)
        now[0] += 1.0  # one more line a second
        ana.send(P.Say(text="later"))
        ana.send(P.Say(text="too soon"))
        assert (await ana.expect(P.Refused)).code == "chat_rate"
        await barrier(ana, ben)
        assert [text for _, _, text, _ in lines(ben)] == ["spam 0", "spam 1", "spam 2", "later"]


async def test_empty_and_long_lines_are_refused_and_not_counted() -> None:
    async with running_lobby() as lobby:
        lobby.chat_clock = lambda: 0.0  # the bucket never refills
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        for text in ("", "   ", "\x1b[2J\x07", "\u200b"):
            ana.send(P.Say(text=text))
            refused = await ana.expect(P.Refused)
            assert (refused.code, refused.message) == ("chat_empty", "a chat line needs some text")
        for text in ("x" * (MAX_CHAT_LENGTH + 1), "\x1b[0m" * (MAX_RAW_LENGTH // 4 + 1)):
            ana.send(P.Say(text=text))
            refused = await ana.expect(P.Refused)
            assert (refused.code, refused.args) == ("chat_too_long", {"n": MAX_CHAT_LENGTH})
        # escape sequences do not count toward the length, only what is shown
        exact = "y" * MAX_CHAT_LENGTH
        ana.send(P.Say(text="\x1b[1m" + exact + "\x1b[0m"))
        ana.send(P.Say(text="two"))
        ana.send(P.Say(text="three"))  # the refusals cost no line of the three
        await barrier(ana, ben)
        assert [text for _, _, text, _ in lines(ben)] == [exact, "two", "three"]


async def test_the_mute_hook_refuses_and_changes_nothing(monkeypatch) -> None:
    muted: dict[str, str] = {}
    monkeypatch.setattr(lobby_chat, "muted", lambda lobby, client: muted.get(client.name))
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        muted["ana"] = "spam"
        ana.send(P.Say(text="hello"))
        refused = await ana.expect(P.Refused)
        assert (refused.code, refused.message, refused.args) == (
            "muted",
            "you may not chat: {reason}",
            {"reason": "spam"},
        )
        muted["ana"] = ""
        ana.send(P.Say(text="hello"))
        refused = await ana.expect(P.Refused)
        assert (refused.code, refused.message, refused.args) == (
            "muted",
            "you may not chat now",
            {},
        )
        del muted["ana"]
        ana.send(P.Say(text="hello again"))
        await barrier(ana, ben)
        assert lines(ben) == [("lobby", "ana", "hello again", None)]
        assert lobby._chat[None][-1].text == "hello again" and len(lobby._chat[None]) == 1


async def test_names_lose_their_control_characters() -> None:
    async with running_lobby() as lobby:
        evil = Player(lobby, "\x1b]0;pwned\x07eve\x1b[2J")
        assert (await evil.expect(P.Welcome)).name == "eve"
        blank = Player(lobby, "\x1b[2J\u200b")
        assert (await blank.expect(P.Welcome)).name == "player"


async def test_bots_say_nothing() -> None:
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ana.send(P.CreateTable(preset="classic", seats=3, bots=2))
        over = await play_randomly(ana, random.Random(3))
        assert over.game is not None and over.game.winner is not None
        assert lines(ana) == [] and lobby._chat == {}
