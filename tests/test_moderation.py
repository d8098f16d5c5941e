"""Moderation in the lobby (issue 4, item 6): every admin command works for an admin and is
refused for anyone else, changing nothing; the audit log, bans and mutes reach the store.
Real `Lobby`, no sleeps: every wait is on an event."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from perudo_ssh import protocol as P
from perudo_ssh.bans import banner_text, clean_text, host_of, parse_duration, until_text
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.moderation import AdminList, Moderation
from perudo_ssh.store import Store
from tests.test_lobby_support import Player, running_lobby

NOW = 1_750_000_000.0
ADMIN_KEY = "SHA256:" + "A" * 43
ANA_KEY = "SHA256:" + "B" * 43
OTHER_KEY = "SHA256:" + "C" * 43


class Member(Player):
    """A `Player` connected with a key, an address, an account and maybe admin rights, as
    the server connects them."""

    def __init__(
        self,
        lobby: Lobby,
        name: str,
        key: str | None = None,
        address: str | None = "10.0.0.1",
        admin: bool = False,
        account: int | None = None,
    ) -> None:
        self.session = lobby.connect(name, key, admin=admin, address=address, account_id=account)
        self.events: list[P.Event] = []


async def member(lobby: Lobby, name: str, key: str | None = None, **kwargs: object) -> Member:
    player = Member(lobby, name, key, **kwargs)  # type: ignore[arg-type]
    await player.joined()
    return player


async def settled(player: Player) -> None:
    """Wait until the lobby has handled everything `player` sent so far (a refused command
    answers at once, after what was sent before it)."""
    player.send(P.JoinTable(table=10**6))  # refused wherever the player is
    await player.expect(P.Refused)


def moderation() -> Moderation:
    return Moderation(clock=lambda: NOW)


# ---- admins and everyone else --------------------------------------------------------------


async def test_welcome_says_who_is_an_admin():
    async with running_lobby() as lobby:
        admin = Member(lobby, "boss", ADMIN_KEY, admin=True)
        guest = Player(lobby, "ana")
        assert (await admin.expect(P.Welcome)).admin is True
        assert (await guest.expect(P.Welcome)).admin is False


EVERY_ADMIN_COMMAND = [
    P.WatchAdmin(),
    P.Kick(session=1, reason="spam"),
    P.Ban(kind="key", session=1, reason="spam"),
    P.Ban(kind="address", value="10.0.0.1", reason="spam", seconds=60),
    P.Unban(ban=1),
    P.Mute(session=1, reason="spam"),
    P.Unmute(session=1),
    P.RemovePlayer(session=1),
    P.PauseTable(table=1),
    P.ResumeTable(table=1),
    P.CloseTable(table=1),
    P.Announce(text="free drinks"),
]


async def test_a_non_admin_is_refused_every_admin_command_and_nothing_changes():
    mod = moderation()
    mod.ban("key", OTHER_KEY, "earlier", None)  # so that Unban has a ban to lift
    async with running_lobby(moderation=mod) as lobby:
        ana = await member(lobby, "ana", ANA_KEY, account=1)  # session 1
        ana.send(P.CreateTable(seats=3, bots=1))
        await ana.expect(P.TableState)
        mallory = await member(lobby, "mallory", OTHER_KEY + "x")
        for command in EVERY_ADMIN_COMMAND:
            mallory.send(command)
            refused = await mallory.expect(P.Refused)
            assert (refused.code, refused.message) == ("not_admin", "only an admin may do that")
        await settled(ana)
        assert [type(e) for e in mallory.events].count(P.AdminState) == 0
        assert [type(e) for e in mallory.events].count(P.Announcement) == 0
        assert not any(isinstance(e, (P.Goodbye, P.LeftTable)) for e in ana.events)
        assert lobby.paused == set() and 1 in lobby.tables
        assert mod.audit_rows() == ()
        assert [b.value for b in mod.bans()] == [OTHER_KEY]
        assert mod.muted(1, 1) is None


async def test_admin_rights_come_from_connect_only():
    """A session connected without `admin=True` stays refused whatever it sends."""
    async with running_lobby() as lobby:
        ana = await member(lobby, "ana", ADMIN_KEY)  # an admin's key, but not said so
        ana.send(P.WatchAdmin())
        assert (await ana.expect(P.Refused)).code == "not_admin"


# ---- the admin's view ----------------------------------------------------------------------


async def test_watching_admin_sees_sessions_tables_and_audit():
    async with running_lobby(moderation=moderation()) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, address="127.0.0.1", admin=True)
        ana = await member(lobby, "ana", ANA_KEY, address="10.0.0.7", account=3)
        guest = await member(lobby, "guest-1", None, address="10.0.0.8")
        ana.send(P.CreateTable(seats=3, bots=1, name="ana's"))
        await ana.expect(P.TableState)
        guest.send(P.SpectateTable(table=1))
        await guest.expect(P.TableState)
        boss.send(P.WatchAdmin())
        state = await boss.expect(P.AdminState)
        assert state.sessions == (
            P.AdminSession(
                id=1,
                name="boss",
                fingerprint=ADMIN_KEY,
                address="127.0.0.1",
                table=None,
                place="lobby",
                admin=True,
            ),
            P.AdminSession(
                id=2, name="ana", fingerprint=ANA_KEY, address="10.0.0.7", table=1, place="seated"
            ),
            P.AdminSession(
                id=3,
                name="guest-1",
                fingerprint=None,
                address="10.0.0.8",
                table=1,
                place="watching",
            ),
        )
        (table,) = state.tables
        assert (table.id, table.name, table.status, table.paused, table.spectators) == (
            1,
            "ana's",
            "waiting",
            False,
            1,
        )
        assert table.players[0] == "ana" and len(table.players) == 2
        assert state.audit == () and state.bans == ()
        # a change is sent to the watching admin; after WatchAdmin(on=False), nothing more
        guest.send(P.LeaveTable())
        later = await boss.expect(P.AdminState)
        assert later.sessions[2].place == "lobby"
        boss.send(P.WatchAdmin(on=False))
        await settled(boss)
        ana.send(P.LeaveTable())
        await ana.expect(P.LeftTable)
        await settled(boss)
        assert [type(e) for e in boss.events].count(P.AdminState) == 2


# ---- each command --------------------------------------------------------------------------


async def test_kick_ends_the_session_with_the_reason_and_is_audited():
    mod = moderation()
    async with running_lobby(moderation=mod) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana", ANA_KEY, address="10.0.0.7")
        ana.send(P.CreateTable(seats=3, bots=1))
        await ana.expect(P.TableState)
        boss.send(P.Kick(session=ana.session.id, reason="  rude\x1b[31m  words "))
        goodbye = await ana.expect(P.Goodbye)
        assert goodbye == P.Goodbye(
            reason="an admin ended your session: {reason}", args={"reason": "rude[31m words"}
        )
        listed = await boss.expect(P.LobbyState, lambda e: "ana" not in e.online)
        assert listed.tables == ()  # ana's table had only her: it closed
        assert mod.audit_rows() == (
            P.AuditRow(
                at=NOW,
                admin=f"boss ({ADMIN_KEY})",
                action="kick",
                target=f"ana ({ANA_KEY}, 10.0.0.7)",
                reason="rude[31m words",
            ),
        )
        boss.send(P.Kick(session=ana.session.id, reason="again"))
        assert (await boss.expect(P.Refused)).code == "no_session"
        boss.send(P.Kick(session=boss.session.id, reason="me"))
        assert (await boss.expect(P.Refused)).message == "that is an admin's session"
        other = await member(lobby, "ben")
        boss.send(P.Kick(session=other.session.id, reason=" \t "))
        assert (await boss.expect(P.Refused)).message == "give a reason"


async def test_ban_a_key_ends_its_sessions_and_is_in_force():
    mod = moderation()
    async with running_lobby(moderation=mod) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana", ANA_KEY, address="10.0.0.7")
        ana2 = await member(lobby, "ana", ANA_KEY, address="10.0.0.9")  # her second session
        ben = await member(lobby, "ben", OTHER_KEY, address="10.0.0.7")
        boss.send(P.Ban(kind="key", session=ana.session.id, reason="cheating", seconds=3600))
        for session in (ana, ana2):
            goodbye = await session.expect(P.Goodbye)
            assert goodbye.reason == "you are banned from this server: {reason}"
            assert goodbye.args == {"reason": "cheating"}
        ban = mod.active_ban(ANA_KEY, "192.168.1.1")
        assert ban == P.BanRow(id=1, kind="key", value=ANA_KEY, reason="cheating", until=NOW + 3600)
        assert mod.active_ban(OTHER_KEY, "10.0.0.7") is None  # the address is not banned
        (row,) = mod.audit_rows()
        assert (row.action, row.target, row.reason) == ("ban", f"key {ANA_KEY}", "cheating")
        assert row.detail == f"until {NOW + 3600:.0f}; ended: ana, ana-2"
        await settled(ben)
        assert not any(isinstance(e, P.Goodbye) for e in ben.events)
        boss.send(P.Unban(ban=1))
        boss.send(P.WatchAdmin())
        state = await boss.expect(P.AdminState)
        assert state.bans == () and mod.active_ban(ANA_KEY, None) is None
        assert [r.action for r in state.audit] == ["unban", "ban"]


async def test_ban_an_address_by_value_and_what_is_refused():
    mod = moderation()
    async with running_lobby(moderation=mod) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, address="127.0.0.1", admin=True)
        guest = await member(lobby, "guest-1", None, address="10.0.0.8")
        boss.send(P.Ban(kind="key", session=guest.session.id, reason="spam"))
        refused = await boss.expect(P.Refused)
        assert refused.message == "a guest has no key to ban: ban the address"
        boss.send(P.Ban(kind="address", value="127.0.0.1", reason="oops"))
        assert (await boss.expect(P.Refused)).message == "that would ban an admin"
        boss.send(P.Ban(kind="address", value="not an address", reason="spam"))
        assert (await boss.expect(P.Refused)).code == "bad_command"
        boss.send(P.Ban(kind="key", value="SHA256:short", reason="spam"))
        assert (await boss.expect(P.Refused)).code == "bad_command"
        boss.send(P.Ban(kind="address", value="10.0.0.8", reason="spam", seconds=0))
        refused = await boss.expect(P.Refused)
        assert refused.message == "a duration is from 1 second to 10 years, or for ever"
        assert mod.bans() == ()
        boss.send(P.Ban(kind="address", value="::ffff:10.0.0.8", reason="spam"))
        assert (await guest.expect(P.Goodbye)).args == {"reason": "spam"}
        assert mod.active_ban(None, "10.0.0.8") == P.BanRow(
            id=1, kind="address", value="10.0.0.8", reason="spam", until=None
        )


async def test_mute_refuses_chat_until_unmuted():
    mod = moderation()
    async with running_lobby(moderation=mod) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana", ANA_KEY, account=5)
        guest = await member(lobby, "guest-1", None)
        boss.send(P.Mute(session=ana.session.id, reason="shouting", seconds=600))
        notice = await ana.expect(P.Notice)
        until = time.strftime("%Y-%m-%d %H:%M", time.gmtime(NOW + 600))
        assert notice == P.Notice(
            text="an admin muted your chat until {until} UTC: {reason}",
            args={"until": until, "reason": "shouting"},
        )
        ana.send(P.Say(text="hello"))
        refused = await ana.expect(P.Refused)
        assert (refused.code, refused.message) == (
            "muted",
            "you may not chat until {until} UTC: {reason}",
        )
        assert refused.args == {"until": until, "reason": "shouting"}
        assert mod.muted(5, 999) == mod.muted(5, ana.session.id)  # the account is muted
        boss.send(P.Mute(session=guest.session.id, reason="spam"))  # a guest: this session
        assert await guest.expect(P.Notice) == P.Notice(
            text="an admin muted your chat for ever: {reason}", args={"reason": "spam"}
        )
        guest.send(P.Say(text="hi"))
        assert (await guest.expect(P.Refused)).code == "muted"
        boss.send(P.Unmute(session=ana.session.id))
        assert (await ana.expect(P.Notice)).text == "an admin lifted your chat mute"
        ana.send(P.Say(text="sorry"))
        line = await ana.expect(P.ChatLine)
        assert (line.name, line.text) == ("ana", "sorry")
        boss.send(P.Unmute(session=ana.session.id))
        assert (await boss.expect(P.Refused)).message == "that player is not muted"
        assert [r.action for r in mod.audit_rows()] == ["unmute", "mute", "mute"]
        assert mod.audit_rows()[2].detail == f"until {NOW + 600:.0f}"


async def test_remove_player_a_bot_takes_the_seat():
    async with running_lobby(bot_delay=(30.0, 30.0), moderation=moderation()) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana", ANA_KEY)
        ben = await member(lobby, "ben", OTHER_KEY)
        ana.send(P.CreateTable(seats=3, bots=1))
        created = await ana.expect(P.TableState)
        ben.send(P.JoinTable(table=created.id))
        await ben.expect(P.TableState, lambda e: e.status == "playing")
        boss.send(P.RemovePlayer(session=ben.session.id, reason="afk"))
        await ben.expect(P.LeftTable)
        notice = await ben.expect(P.Notice, lambda e: "removed" in e.text)
        assert notice.args == {"table": "ana", "reason": "afk"}
        state = await ana.expect(P.TableState, lambda e: e.seats[2].bot)
        assert state.seats[2] == P.SeatInfo(name="ben", bot=True)
        assert state.status == "playing"
        boss.send(P.RemovePlayer(session=ben.session.id))
        assert (await boss.expect(P.Refused)).code == "not_seated"


async def test_pause_refuses_moves_and_holds_the_bots_until_resumed():
    async with running_lobby(moderation=moderation()) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana", ANA_KEY)
        ana.send(P.CreateTable(seats=4, bots=2))
        created = await ana.expect(P.TableState)
        tid = created.id
        boss.send(P.PauseTable(table=tid, reason="checking"))
        notice = await ana.expect(P.Notice)
        assert notice == P.Notice(
            text="an admin paused the table: {reason}", args={"reason": "checking"}
        )
        ana.send(P.StartGame())
        refused = await ana.expect(P.Refused)
        assert refused.code == "paused"
        # the last seat is taken, but the table does not start by itself while paused
        ben = await member(lobby, "ben")
        ben.send(P.JoinTable(table=tid))
        full = await ben.expect(P.TableState)
        assert (full.status, len(full.seats)) == ("waiting", 4)
        assert tid not in lobby._timers
        boss.send(P.PauseTable(table=tid))
        assert (await boss.expect(P.Refused)).message == "that table is already paused"
        boss.send(P.ResumeTable(table=tid))
        assert (await ana.expect(P.Notice)).text == "an admin resumed the table"
        playing = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert playing.game is not None
        # paused mid-game: the bots' timer is cancelled, moves refused, until resumed
        boss.send(P.PauseTable(table=tid))
        await ana.expect(P.Notice, lambda e: e.text == "an admin paused the table")
        epoch = lobby.tables[tid].epoch
        ana.send(P.MakeCall(call="dudo"))
        assert (await ana.expect(P.Refused)).code == "paused"
        assert tid not in lobby._timers and lobby.tables[tid].epoch == epoch
        boss.send(P.ResumeTable(table=tid))
        await ana.expect(P.Notice, lambda e: e.text == "an admin resumed the table")
        boss.send(P.ResumeTable(table=tid))
        assert (await boss.expect(P.Refused)).message == "that table is not paused"
        boss.send(P.WatchAdmin())
        state = await boss.expect(P.AdminState)
        assert [r.action for r in state.audit] == ["resume", "pause", "resume", "pause"]
        assert state.audit[3].target == f"table {tid} (ana)"


async def test_close_table_sends_everyone_back_with_the_reason():
    async with running_lobby(moderation=moderation()) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana", ANA_KEY)
        ben = await member(lobby, "ben")
        ana.send(P.CreateTable(seats=3, bots=1, name="late"))
        created = await ana.expect(P.TableState)
        ben.send(P.SpectateTable(table=created.id))
        await ben.expect(P.TableState)
        boss.send(P.PauseTable(table=created.id))
        boss.send(P.CloseTable(table=created.id, reason="closing time"))
        for player in (ana, ben):
            notice = await player.expect(P.Notice, lambda e: "closed" in e.text)
            assert notice == P.Notice(
                text="an admin closed table {table}: {reason}",
                args={"table": "late", "reason": "closing time"},
            )
            await player.expect(P.LeftTable)
        listed = await boss.expect(P.LobbyState, lambda e: not e.tables)
        assert listed.tables == () and lobby.paused == set()
        boss.send(P.CloseTable(table=created.id))
        assert (await boss.expect(P.Refused)).code == "no_table"


async def test_announcement_reaches_every_session():
    mod = moderation()
    async with running_lobby(moderation=mod) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana")
        ben = await member(lobby, "ben")
        ben.send(P.CreateTable(seats=2, bots=1))
        await ben.expect(P.TableState)
        boss.send(P.Announce(text="Restart in [b]5[/b] minutes\x07"))
        for player in (boss, ana, ben):
            said = await player.expect(P.Announcement)
            assert said == P.Announcement(text="Restart in [b]5[/b] minutes", by="boss")
        boss.send(P.Announce(text="\x1b "))
        assert (await boss.expect(P.Refused)).message == "an announcement needs some text"
        (row,) = mod.audit_rows()
        assert (row.action, row.target, row.detail) == (
            "announce",
            "everyone",
            "Restart in [b]5[/b] minutes",
        )


# ---- the store -----------------------------------------------------------------------------


async def test_audit_bans_and_mutes_are_stored_and_loaded_again(tmp_path: Path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        account = (await store.claim_key(ANA_KEY, "ana")).account
        mod = Moderation(store)
        lobby = Lobby(bot_delay=(0, 0), rng=random.Random(7), moderation=mod)
        lobby.start()
        try:
            boss = await member(lobby, "boss", ADMIN_KEY, admin=True)
            ana = await member(lobby, "ana", ANA_KEY, account=account.id)
            boss.send(P.Mute(session=ana.session.id, reason="shouting"))
            await ana.expect(P.Notice)
            boss.send(P.Ban(kind="address", value="10.9.9.9", reason="bot farm", seconds=86400))
            boss.send(P.Ban(kind="key", value=OTHER_KEY, reason="old"))
            boss.send(P.Unban(ban=2))
            await settled(boss)
        finally:
            await lobby.stop()  # drains the writes
        audit = await store.list_audit()
        assert [(a.admin, a.action, a.target, a.reason) for a in audit] == [
            (f"boss ({ADMIN_KEY})", "unban", f"key {OTHER_KEY}", ""),
            (f"boss ({ADMIN_KEY})", "ban", f"key {OTHER_KEY}", "old"),
            (f"boss ({ADMIN_KEY})", "ban", "address 10.9.9.9", "bot farm"),
            (f"boss ({ADMIN_KEY})", "mute", f"ana ({ANA_KEY}, 10.0.0.1)", "shouting"),
        ]
        (ban,) = await store.bans()
        assert (ban.kind, ban.value, ban.reason) == ("address", "10.9.9.9", "bot farm")
        assert (await store.active_mute(account.id)).reason == "shouting"
        again = Moderation(store)
        await again.load()  # as a restarted server does
        assert again.active_ban(None, "10.9.9.9").reason == "bot farm"
        assert again.active_ban(OTHER_KEY, None) is None
        assert again.muted(account.id, 1).reason == "shouting"
        assert [r.action for r in again.audit_rows()] == ["unban", "ban", "ban", "mute"]
        assert again.lift_ban(again.bans()[0].id) is not None
        await again.drain()
        assert await store.bans() == []
    finally:
        await store.close()


# ---- the helpers ---------------------------------------------------------------------------


def test_parse_duration():
    assert parse_duration("10m") == 600
    assert parse_duration(" 1h30m ") == 5400
    assert parse_duration("1d") == 86400
    assert parse_duration("2w") == 1_209_600
    assert parse_duration("Forever") is None
    assert parse_duration("toujours", forever=("toujours",)) is None
    for bad in ("", "0m", "10", "m", "1x", "1h-", "5000w"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_clean_text_and_addresses():
    assert clean_text("a\x1b]0;pwned\x07b\u202e c\u200b\n d", 200) == "a]0;pwnedb c d"
    assert clean_text("x" * 300) == "x" * 200
    assert host_of("1.2.3.4:5678") == "1.2.3.4"
    assert host_of("[::1]:22") == "::1"
    assert host_of("[::ffff:10.0.0.1]:22") == "10.0.0.1"
    assert host_of("unknown") is None


def test_banner_says_until_when_and_why():
    timed = P.BanRow(id=1, kind="key", value=ANA_KEY, reason="cheating", until=NOW)
    assert until_text(NOW) == "2025-06-15 15:06 UTC"
    assert banner_text(timed) == (
        "perudo-ssh: This key is banned from this server until 2025-06-15 15:06 UTC.\n"
        "Reason: cheating\n"
    )
    ever = P.BanRow(id=2, kind="address", value="1.2.3.4", reason="spam", until=None)
    assert banner_text(ever) == (
        "perudo-ssh: Your address is banned from this server for ever.\nReason: spam\n"
    )


def test_admin_list_follows_the_file(tmp_path: Path):
    path = tmp_path / "perudo.toml"
    admins = AdminList(path)
    assert not admins.is_admin(ADMIN_KEY) and not admins.is_admin(None)
    path.write_text(f'[admins]\n"{ADMIN_KEY}" = "boss"\n')
    assert admins.is_admin(ADMIN_KEY)
    path.write_text("[admins\n")  # broken: the last good list stays
    assert admins.is_admin(ADMIN_KEY)
    path.unlink()
    assert not admins.is_admin(ADMIN_KEY)
    assert AdminList(admins={ANA_KEY: "ana"}).is_admin(ANA_KEY)


async def test_a_paused_table_says_so_to_everyone_at_it_until_it_resumes():
    """Players and spectators see the pause in every table state (a newcomer too), not only
    in a passing notice; the table screen shows it as its banner."""
    from perudo_ssh.i18n import translator
    from screens.tableview import banner_line

    async with running_lobby(moderation=moderation(), bot_delay=(30.0, 30.0)) as lobby:
        admin = await member(lobby, "boss", ADMIN_KEY, admin=True)
        ana = await member(lobby, "ana", ANA_KEY)
        ana.send(P.CreateTable(seats=3, bots=2))
        created = await ana.expect(P.TableState, lambda e: e.status == "playing")
        assert not created.paused
        admin.send(P.PauseTable(table=created.id, reason="lunch"))
        held = await ana.expect(P.TableState, lambda e: e.paused)
        assert banner_line(translator("en"), held, held.game) == (
            "PAUSED by an admin: no move until the table resumes"
        )
        ben = await member(lobby, "ben", None)
        ben.send(P.SpectateTable(table=created.id))
        assert (await ben.expect(P.TableState)).paused
        admin.send(P.ResumeTable(table=created.id))
        assert not (await ana.expect(P.TableState, lambda e: not e.paused)).paused


async def test_an_admin_is_told_a_table_is_private_and_may_watch_it():
    """A private table is in nobody's lobby list; the admin state marks it `private`, and an
    admin may watch it (README, Moderation); anyone else asking is told there is no such table."""
    async with running_lobby(moderation=moderation()) as lobby:
        boss = await member(lobby, "boss", ADMIN_KEY, address="127.0.0.1", admin=True)
        ana = await member(lobby, "ana", ANA_KEY, address="10.0.0.7", account=3)
        guest = await member(lobby, "guest-1", None, address="10.0.0.8")
        ana.send(P.CreateTable(seats=3, bots=0, private=True))
        await ana.expect(P.TableState)
        boss.send(P.WatchAdmin())
        (table,) = (await boss.expect(P.AdminState)).tables
        assert (table.id, table.private) == (1, True)
        guest.send(P.SpectateTable(table=1))
        assert (await guest.expect(P.Refused)).code == "no_table"
        boss.send(P.SpectateTable(table=1))
        watched = await boss.expect(P.TableState)
        assert watched.id == 1 and "boss" in watched.spectators
