"""Pilot tests of the admin screen (issue 4, item 6) with a fake lobby session, 80×24: who
reaches it, what it shows, and the command each key sends."""

from __future__ import annotations

import msgspec
import pytest
from textual.widgets import DataTable, Input

from perudo_ssh import protocol as P
from perudo_ssh.rules import observe
from screens.admin import AdminScreen
from screens.app import make_app
from screens.dialogs import ConfirmDialog
from screens.lobby import LobbyScreen
from screens.table import TableScreen
from tests.test_screens_fakes import (
    FakeSession,
    rolled,
    screen_text,
    table_state,
    wait_until,
)

SIZE = (80, 24)
KEY = "SHA256:" + "B" * 43

STATE = P.AdminState(
    sessions=(
        P.AdminSession(
            id=1, name="ana", fingerprint=KEY, address="10.0.0.7", table=2, place="seated"
        ),
        P.AdminSession(
            id=4,
            name="[red]guest-1[/red]",
            fingerprint=None,
            address="10.0.0.8",
            table=None,
            place="lobby",
            muted="spam",
            muted_until=None,
        ),
        P.AdminSession(
            id=5,
            name="boss",
            fingerprint="SHA256:" + "A" * 43,
            address="127.0.0.1",
            table=None,
            place="lobby",
            admin=True,
        ),
    ),
    tables=(
        P.AdminTable(
            id=2,
            name="ana's",
            preset="classic",
            status="playing",
            paused=True,
            players=("ana", "bot-Luis"),
            spectators=1,
        ),
    ),
    audit=(
        P.AuditRow(
            at=1_750_000_000.0,
            admin="boss (SHA256:x)",
            action="mute",
            target="guest-1 (guest, 10.0.0.8)",
            reason="spam",
        ),
    ),
    bans=(P.BanRow(id=3, kind="address", value="10.9.9.9", reason="bot farm", until=None),),
)


def admin_app(admin: bool = True):
    session = FakeSession("boss")
    session.feed(P.Welcome(name="boss", admin=admin), P.LobbyState(tables=(), online=("boss",)))
    return session, make_app(session)


async def open_admin(pilot, app, session) -> AdminScreen:
    await wait_until(pilot, lambda: app.admin)
    await pilot.press("A")
    await wait_until(pilot, lambda: isinstance(app.screen, AdminScreen))
    session.feed(STATE)
    screen = app.screen
    assert isinstance(screen, AdminScreen)
    await wait_until(pilot, lambda: screen.state is not None)
    await pilot.pause()
    return screen


async def test_a_non_admin_has_no_admin_key():
    session, app = admin_app(admin=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.player_name == "boss" and app.lobby is not None)
        await pilot.press("A", "ctrl+a")
        await pilot.pause()
        assert isinstance(app.screen, LobbyScreen) and session.sent == []
        assert app.check_action("admin", ()) is False
        app.action_admin()  # even called directly
        await pilot.pause()
        assert isinstance(app.screen, LobbyScreen) and session.sent == []


async def test_the_admin_screen_shows_sessions_tables_and_the_audit_log():
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_admin(pilot, app, session)
        assert session.sent == [P.WatchAdmin(on=True)]
        text = screen_text(app)
        assert "Admin · 3 sessions · 1 table · 1 ban" in text
        assert "ana" in text and "10.0.0.7" in text and "table 2" in text
        assert "[red]guest-1[/red]" in text  # a name is never markup
        assert "until for ever" in text  # guest-1's mute
        assert "playing, paused" in text and "ana, bot-Luis" in text
        assert "06-15 15:06  boss" in text and "spam" in text
        await pilot.press("v")  # the bans instead of the audit log
        await pilot.pause()
        text = screen_text(app)
        assert "10.9.9.9" in text and "bot farm" in text and "for ever" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert session.sent[-1] == P.WatchAdmin(on=False)


async def test_a_mute_arriving_later_widens_its_column_to_show_until_when():
    # Seen over SSH: muting ben updated his cell in place, and the column, as wide as
    # "Muted", showed only "until".
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_admin(pilot, app, session)
        quiet = STATE.sessions[0]
        assert quiet.muted is None
        muted = msgspec.structs.replace(quiet, muted="spam", muted_until=1_750_000_600.0)
        session.feed(msgspec.structs.replace(STATE, sessions=(muted, *STATE.sessions[1:])))
        await wait_until(pilot, lambda: bool(screen.state and screen.state.sessions[0].muted))
        await pilot.pause()
        assert "until 06-15 15:16" in screen_text(app)
        assert "until for ever" in screen_text(app)


async def test_a_key_ban_shows_its_reason_and_until_when_at_80_columns():
    # Seen over SSH: a key's whole fingerprint came before them and pushed the reason off.
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_admin(pilot, app, session)
        ban = P.BanRow(id=4, kind="key", value=KEY, reason="repeated abuse", until=1_750_000_000.0)
        session.feed(msgspec.structs.replace(STATE, bans=(ban, *STATE.bans)))
        await wait_until(pilot, lambda: screen.state is not None and len(screen.state.bans) == 2)
        await pilot.press("v")
        await pilot.pause()
        text = screen_text(app)
        assert " 4  key      06-15 15:06  repeated abuse  SHA256:BBBB" in text
        assert " 3  address  for ever     bot farm        10.9.9.9" in text


async def test_the_cursor_stays_on_its_session_when_one_above_it_leaves():
    # Seen over SSH: the cursor on ben (row 2); a session above him left and the cursor,
    # kept at row 2, was on the next one: the admin's k or b would have hit them.
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_admin(pilot, app, session)
        sessions = screen.query_one("#admin-sessions", DataTable)
        sessions.move_cursor(row=1)  # guest-1, id 4
        await pilot.pause()
        session.feed(msgspec.structs.replace(STATE, sessions=STATE.sessions[1:]))  # ana left
        await wait_until(
            pilot, lambda: screen.state is not None and len(screen.state.sessions) == 2
        )
        await pilot.pause()
        assert sessions.cursor_row == 0
        screen.query_one("#admin-reason", Input).value = "rude"
        session.sent.clear()
        await pilot.press("k")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Kick [red]guest-1[/red]? Reason: rude" in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: bool(session.sent))
        assert session.sent == [P.Kick(session=4, reason="rude")]


@pytest.mark.slow
async def test_each_key_sends_its_admin_command():
    """Every admin key sends its command; kick, both bans, remove and close only once the
    admin answers y to a question naming whom or what (n sends nothing)."""
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_admin(pilot, app, session)
        reason = screen.query_one("#admin-reason", Input)
        session.sent.clear()
        await pilot.press("k")  # no reason yet: nothing is sent, the reason field is focused
        await pilot.pause()
        assert session.sent == [] and screen.focused is reason
        await pilot.press(*"rude", "enter", "k")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Kick ana? Reason: rude" in screen_text(app)
        await pilot.press("n")  # no: nothing sent, the reason kept
        await wait_until(pilot, lambda: app.screen is screen)
        assert session.sent == [] and reason.value == "rude"
        await pilot.press("k")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await wait_until(pilot, lambda: len(session.sent) == 1)
        assert session.sent == [P.Kick(session=1, reason="rude")]
        assert reason.value == ""  # emptied once sent
        sessions = screen.query_one("#admin-sessions", DataTable)
        sessions.move_cursor(row=1)  # guest-1
        reason.value = "spam"
        screen.query_one("#admin-duration", Input).value = "10m"
        await pilot.press("B")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        text = screen_text(app)
        assert "Ban the address 10.0.0.8 ([red]guest-1[/red]) for 10m? Reason: spam" in text
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is screen)
        reason.value = "spam"
        await pilot.press("m")
        await pilot.press("u")
        await pilot.press("r")  # guest-1 is in the lobby: nothing to remove from
        await pilot.pause()
        assert session.sent[1:] == [
            P.Ban(kind="address", reason="spam", session=4, seconds=600),
            P.Mute(session=4, reason="spam", seconds=600),
            P.Unmute(session=4),
        ]
        sessions.move_cursor(row=0)  # ana, at table 2
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Remove ana from table 2?" in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(session.sent) == 5)
        assert session.sent[-1] == P.RemovePlayer(session=1, reason="")
        screen.query_one("#admin-duration", Input).value = "soon"
        reason.value = "x"
        await pilot.press("b")  # not a duration: nothing sent, nothing asked
        await pilot.pause()
        assert len(session.sent) == 5 and app.screen is screen
        duration = screen.query_one("#admin-duration", Input)
        assert screen.focused is duration  # to be mended
        duration.value = "forever"
        await pilot.press("enter", "b")  # back to the lists; ana's key, for ever
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert f"Ban the key of ana ({KEY[:15]}…) for ever? Reason: x" in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(session.sent) == 6)
        assert session.sent[-1] == P.Ban(kind="key", reason="x", session=1, seconds=None)
        session.sent.clear()
        await pilot.press("p", "x")  # table 2 is paused: p resumes it; x asks first
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Close table 2 (ana's)? Everyone at it goes back to the lobby." in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is screen)
        reason.value = "Bar closes"
        await pilot.press("n")
        await pilot.press("U")  # the bans are not shown: nothing
        await pilot.press("v", "U")
        await pilot.pause()
        assert session.sent == [
            P.ResumeTable(table=2),
            P.CloseTable(table=2, reason=""),
            P.Announce(text="Bar closes"),
            P.Unban(ban=3),
        ]


async def test_slash_reaches_the_reason_field_and_a_field_takes_every_letter():
    """`/` goes from the lists to the reason field; typed there, the admin keys (b k x m n r
    p v and capitals) are letters of the reason: nothing is sent, no list moves, no dialog."""
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_admin(pilot, app, session)
        reason = screen.query_one("#admin-reason", Input)
        session.sent.clear()
        assert "/ Reason" in screen_text(app).splitlines()[-1]  # offered in the lists
        await pilot.press("slash")
        await pilot.pause()
        assert screen.focused is reason
        typed = "bkx mnr pv BU ibanned/2"
        await pilot.press(*[{" ": "space", "/": "slash"}.get(c, c) for c in typed])
        await pilot.pause()
        assert reason.value == typed
        assert session.sent == [] and app.screen is screen


async def test_an_announcement_is_shown_as_plain_text():
    session, app = admin_app(admin=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.lobby is not None)
        session.feed(P.Announcement(text="[b]Restart[/b] at noon", by="boss"))
        await wait_until(pilot, lambda: bool(app._notifications))
        (note,) = app._notifications
        assert (note.message, note.title) == ("[b]Restart[/b] at noon", "Announcement from boss")
        assert note.markup is False


async def test_an_admin_at_a_table_opens_the_admin_screen_and_comes_back():
    session = FakeSession("ana")
    session.feed(P.Welcome(name="ana", admin=True), table_state(observe(rolled(), 0)))
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("A")
        await wait_until(pilot, lambda: isinstance(app.screen, AdminScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, TableScreen))
        await pilot.press("ctrl+a")
        await wait_until(pilot, lambda: isinstance(app.screen, AdminScreen))
        watch = [P.WatchAdmin(on=True), P.WatchAdmin(on=False), P.WatchAdmin(on=True)]
        assert session.sent == watch


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("fr", "Bannir la clé de ana (SHA256:BBBBBBBB…) pour toujours ? Raison : triche"),
        ("ru", "Забанить ключ игрока ana (SHA256:BBBBBBBB…) навсегда? Причина: триче"),
    ],
)
async def test_the_ban_question_in_french_and_russian(language, question):
    """The y/n question before a ban, in the admin's language, the duration in its words."""
    session = FakeSession("boss")
    session.feed(P.Welcome(name="boss", admin=True), P.LobbyState(tables=(), online=("boss",)))
    app = make_app(session, language)
    async with app.run_test(size=(100, 24)) as pilot:
        screen = await open_admin(pilot, app, session)
        screen.query_one("#admin-reason", Input).value = "triche" if language == "fr" else "триче"
        screen.query_one("#admin-duration", Input).value = (
            "forever" if language == "fr" else "навсегда"
        )
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert question in screen_text(app)


def test_the_audit_log_shows_how_long_a_ban_or_a_mute_lasts():
    """Issue 13, item 11: a ban's or a mute's row says its reason and how long."""
    from perudo_ssh.i18n import translator
    from screens.adminrows import audit_row

    en, fr = translator("en"), translator("fr")

    def row(action, reason, detail):
        return P.AuditRow(at=1_750_000_000.0, admin="boss (SHA256:x)", action=action,
                          target="key SHA256:y", reason=reason, detail=detail)  # fmt: skip

    assert str(audit_row(row("ban", "cheat", "until 1750003600; ended: ana"), en)[3]) == (
        "cheat · until 06-15 16:06"
    )
    assert str(audit_row(row("mute", "spam", "for ever"), en)[3]) == "spam · for ever"
    assert str(audit_row(row("mute", "spam", "for ever"), fr)[3]) == "spam · pour toujours"
    assert str(audit_row(row("kick", "rude", ""), en)[3]) == "rude"
    assert str(audit_row(row("pause", "", "table 2"), en)[3]) == "table 2"


async def test_a_muted_player_is_told_until_when():
    """Issue 13, item 11: the mute notice says until when, as a sentence."""
    session, app = admin_app(admin=False)
    async with app.run_test(size=SIZE) as pilot:
        session.feed(
            P.Notice(
                text="an admin muted your chat until {until} UTC: {reason}",
                args={"until": "2026-12-03 11:00", "reason": "shouting"},
            )
        )
        await wait_until(pilot, lambda: bool(app._notifications))
        (notice,) = list(app._notifications)
        assert notice.message == "An admin muted your chat until 2026-12-03 11:00 UTC: shouting"


async def test_the_questions_name_the_reason_and_w_watches_the_table_under_the_cursor():
    """A removal and a close name the reason typed (README, Moderation), as a kick does; a
    private table says so in the tables list, and `w` watches the table under the cursor."""
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_admin(pilot, app, session)
        private = msgspec.structs.replace(STATE.tables[0], private=True, paused=False)
        session.feed(msgspec.structs.replace(STATE, tables=(private,)))
        await wait_until(pilot, lambda: "playing, private" in screen_text(app))
        reason = screen.query_one("#admin-reason", Input)
        screen.query_one("#admin-sessions", DataTable).move_cursor(row=0)  # ana, at table 2
        reason.value = "testing removal"
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "Remove ana from table 2? Reason: testing removal" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        text = " ".join(word.strip("│") for word in screen_text(app).split())  # wrapped
        assert (
            "Close table 2 (ana's)? Everyone at it goes back to the lobby. Reason: testing "
            "removal" in " ".join(text.split())
        ), text
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen)
        session.sent.clear()
        await pilot.press("w")
        await wait_until(pilot, lambda: session.sent == [P.SpectateTable(table=2)])


async def test_the_footer_shows_the_keys_of_the_list_with_the_cursor():
    """At 80 columns the footer holds the keys of the list at hand: a session's in the
    sessions list, a table's in the tables list (they were past the line's end before);
    every key still works from any list."""
    session, app = admin_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_admin(pilot, app, session)

        def footer() -> str:
            return screen_text(app).splitlines()[-1]

        assert "k Kick" in footer() and "r Remove" in footer() and "x Close" not in footer()
        await pilot.press("tab")
        await wait_until(pilot, lambda: "x Close table" in footer())
        assert "p Pause/resume" in footer() and "w Watch" in footer()
        assert "k Kick" not in footer()
        await pilot.press("shift+tab", "x")  # back in the sessions list, x still asks
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
