"""Moderation end to end over SSH (issue 4, item 6): an admin bans a key from the admin
screen, and that key's next login is refused with the reason in the authentication banner;
a non-admin can reach neither the admin screen (its key does nothing) nor any admin command
(sent straight into its lobby session)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.bans import until_text
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.archive import GameArchive
from perudo_ssh.lobby.moderation import AdminList
from perudo_ssh.records import LinkRefused
from perudo_ssh.serve import start_game_server
from perudo_ssh.session import LobbySession
from perudo_ssh.store import Store
from tests.conftest import PLAYING_FAST
from tests.sshterm import Terminal, find
from tests.test_identity import run

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # the quick loop: -m "not slow"

BOSS_KEY = asyncssh.generate_private_key("ssh-ed25519")
ANA_KEY = asyncssh.generate_private_key("ssh-ed25519")


@dataclass
class ModeratedServer:
    """The real server with a store and one admin key (`BOSS_KEY`); `sessions` are the lobby
    sessions of the SSH clients, by the name they asked for, in order."""

    port: int
    lobby: Lobby
    store: Store
    sessions: dict[str, list[LobbySession]] = field(default_factory=dict)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ModeratedServer]:
    store = await Store.open(tmp_path / "perudo.db")
    archive = GameArchive(store)
    lobby = Lobby(bot_delay=(0, 0), reveal_timeout=60, rng=random.Random(7))
    running = ModeratedServer(port=0, lobby=lobby, store=store)
    connect = lobby.connect

    def capturing_connect(name: str, fingerprint: str | None = None, **moderation: object):
        session = connect(name, fingerprint, **moderation)  # type: ignore[arg-type]
        running.sessions.setdefault(name, []).append(session)
        return session

    lobby.connect = capturing_connect  # type: ignore[method-assign]
    admins = AdminList(admins={BOSS_KEY.get_fingerprint("sha256"): "boss"})
    acceptor, _ = await start_game_server(
        "127.0.0.1",
        0,
        tmp_path / "keys",
        lobby,
        archive=archive,
        admins=admins,
        limits=PLAYING_FAST,
    )
    running.port = acceptor.get_port()
    yield running
    acceptor.close()
    await lobby.stop()
    await acceptor.wait_closed()
    await archive.drain()
    await store.close()


class BannerReader(asyncssh.SSHClient):
    """Keeps the authentication banner; would log in as a guest if the server let it."""

    banner: str | None = None

    def auth_banner_received(self, msg: str, lang: str) -> None:
        BannerReader.banner = msg

    def kbdint_auth_requested(self) -> str:
        return ""

    def kbdint_challenge_received(self, name, instructions, lang, prompts) -> list[str]:
        return [""] * len(prompts)


async def test_an_admin_bans_a_key_and_its_next_login_is_refused_with_the_reason(server):
    ana, boss = Terminal(), Terminal()
    try:
        await ana.connect(server.port, "ana", ANA_KEY)
        await ana.wait_for("welcome, ana")
        await boss.connect(server.port, "boss", BOSS_KEY)
        await boss.wait_for("You are an admin")
        boss.send("A")
        await boss.wait_for(lambda t: "Admin · 2 sessions · 0 tables" in t and "ana" in t)
        # ana is the first session: the row under the cursor. / goes to the reason field;
        # Enter there goes back to the sessions list, then b asks to ban the key and y does.
        # (typed in the field, its n, i and a are letters: no announcement, no rules)
        boss.send("/", "cheating at dice")
        await boss.wait_for("cheating at dice")  # as a person does: look, then press on
        boss.send("enter", "b")
        await boss.wait_for("Ban the key of ana")
        boss.send("y")
        goodbye = await ana.wait_for("banned from this server")
        assert "cheating at dice" in goodbye
        # the audit log shows the ban (its right half may be under a notification)
        await boss.wait_for(
            lambda t: find(r"^ \d\d-\d\d \d\d:\d\d +boss +ban +cheat", t) is not None
        )
        assert "Admin · 1 session · 0 tables · 1 ban" in boss.text
    finally:
        await ana.close()
        await boss.close()
    # the next login with that key is refused, the banner says why; not even as a guest
    BannerReader.banner = None
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect(
            "127.0.0.1",
            server.port,
            username="ana",
            known_hosts=None,
            config=None,
            client_keys=[ANA_KEY],
            client_factory=BannerReader,
            agent_path=None,
        )
    assert BannerReader.banner is not None
    assert "This key is banned from this server until " in BannerReader.banner
    assert "Reason: cheating at dice" in BannerReader.banner
    await server.lobby.moderation.drain()
    (row,) = await server.store.list_audit()
    fingerprint = ANA_KEY.get_fingerprint("sha256")
    assert (row.action, row.target, row.reason) == ("ban", f"key {fingerprint}", "cheating at dice")
    assert row.admin == f"boss ({BOSS_KEY.get_fingerprint('sha256')})"
    (ban,) = await server.store.bans()
    assert (ban.kind, ban.value, ban.reason) == ("key", fingerprint, "cheating at dice")


async def test_a_non_admin_reaches_neither_the_admin_screen_nor_any_admin_command(server):
    ana, ben = Terminal(), Terminal()
    try:
        await ana.connect(server.port, "ana", ANA_KEY)
        await ana.wait_for("welcome, ana")
        await ben.connect(server.port, "ben", None)  # a guest
        await ben.wait_for("welcome, guest-1")
        # the admin key does nothing for ana: the lobby screen stays, nothing is asked
        (session,) = server.sessions["ana"]
        sent: list[P.Command] = []
        send = session.send
        session.send = lambda command: (sent.append(command), send(command))  # type: ignore[method-assign]
        ana.send("A", "\x01", "c")  # A, ctrl+a, then c opens the create dialog
        await ana.wait_for("Create a table")
        assert "Admin ·" not in ana.text and sent == []
        # admin commands sent straight into ana's lobby session, as raw bytes decoded
        (guest,) = server.sessions["guest-1"]
        raw = [
            P.WatchAdmin(),
            P.Kick(session=guest.id, reason="x"),
            P.Ban(kind="address", session=guest.id, reason="x"),
            P.Mute(session=guest.id, reason="x"),
            P.Announce(text="pwned"),
        ]
        for command in raw:
            send(P.decode_command(P.encode(command)))
        await ana.wait_for("Only an admin may do that")
        ben.send("c")
        await ben.wait_for("Create a table")  # ben is still there, not kicked
        assert "pwned" not in ben.text and "pwned" not in ana.text
        assert server.lobby.moderation.bans() == ()
        assert server.lobby.moderation.audit_rows() == ()
    finally:
        await ana.close()
        await ben.close()


async def test_a_banned_address_is_refused_before_any_key(server):
    server.lobby.moderation.ban("address", "127.0.0.1", "flooding", until=None)
    BannerReader.banner = None
    with pytest.raises(asyncssh.PermissionDenied) as refused:
        await asyncssh.connect(
            "127.0.0.1",
            server.port,
            username="guest",
            known_hosts=None,
            config=None,
            client_keys=None,
            client_factory=BannerReader,
            agent_path=None,
        )
    assert BannerReader.banner == (
        "perudo-ssh: Your address is banned from this server for ever.\nReason: flooding\n"
    )
    # and the server ends the connection (seen over SSH: OpenSSH, left with no method, asked
    # three times for a password there is none of)
    assert refused.value.reason == "banned from this server"


BEN_KEY = asyncssh.generate_private_key("ssh-ed25519")
BEN_PHONE = asyncssh.generate_private_key("ssh-ed25519")


async def refused_banner(port: int, key: asyncssh.SSHKey) -> str | None:
    """Log in with `key`, which must be refused; the authentication banner it was shown."""
    BannerReader.banner = None
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect(
            "127.0.0.1",
            port,
            username="ben",
            known_hosts=None,
            config=None,
            client_keys=[key],
            client_factory=BannerReader,
            agent_path=None,
        )
    return BannerReader.banner


async def test_a_key_ban_covers_every_key_linked_to_its_account(server):
    store = server.store
    ben, phone, boss = Terminal(), Terminal(), Terminal()
    try:
        await ben.connect(server.port, "ben", BEN_KEY)
        await ben.wait_for("welcome, ben")
        account = await store.account_for_key(BEN_KEY.get_fingerprint("sha256"))
        assert account is not None
        linked = await run(server.port, BEN_PHONE, f"link {await store.new_link_code(account.id)}")
        assert (linked.exit_status, linked.stdout) == (0, "This key now signs in as ben.\n")
        await phone.connect(server.port, "phone", BEN_PHONE)
        await phone.wait_for("welcome, ben-2")
        await boss.connect(server.port, "boss", BOSS_KEY)
        await boss.wait_for("You are an admin")
        # the admin bans the first key of ben's: both of ben's sessions end
        first, second = server.sessions["ben"]
        assert (first.fingerprint, second.fingerprint) == (
            BEN_KEY.get_fingerprint("sha256"),
            BEN_PHONE.get_fingerprint("sha256"),
        )
        (admin,) = server.sessions["boss"]
        admin.send(P.Ban(kind="key", session=first.id, reason="alt accounts", seconds=3600))
        line = b"perudo-ssh: You are banned from this server: alt accounts\r\n"
        for term in (ben, phone):  # the line left on the terminal once the app has exited
            await term.wait_for(lambda _, term=term: line in term.raw)
    finally:
        await ben.close()
        await phone.close()
        await boss.close()
    (ban,) = server.lobby.moderation.bans()
    assert ban.value == BEN_KEY.get_fingerprint("sha256")
    assert ban.until is not None
    # the linked key comes back: refused, with the ban's reason and end
    assert await refused_banner(server.port, BEN_PHONE) == (
        f"perudo-ssh: This key's account is banned from this server until "
        f"{until_text(ban.until)}.\nReason: alt accounts\n"
    )
    assert await refused_banner(server.port, BEN_KEY) == (
        f"perudo-ssh: This key is banned from this server until "
        f"{until_text(ban.until)}.\nReason: alt accounts\n"
    )
    # no other key joins ben's account now
    code = await store.new_link_code(account.id)
    refused = await run(server.port, asyncssh.generate_private_key("ssh-ed25519"), f"link {code}")
    assert (refused.exit_status, refused.stdout, refused.stderr) == (
        1,
        "",
        "ben is banned from this server: no key can be linked to it\n",
    )
    # nor does the banned key join another account (it cannot even log in to ask)
    eve = await store.claim_key("SHA256:eve", "eve")
    with pytest.raises(LinkRefused, match="this key is banned from this server"):
        await store.link_key(
            await store.new_link_code(eve.account.id),
            BEN_KEY.get_fingerprint("sha256"),
            banned=server.lobby.moderation.banned_keys(),
        )
    assert [k.fingerprint for k in await store.keys_of(account.id)] == [
        BEN_KEY.get_fingerprint("sha256"),
        BEN_PHONE.get_fingerprint("sha256"),
    ]


async def test_a_kicked_player_s_terminal_keeps_the_reason_after_ssh_exits(server):
    ana, boss = Terminal(), Terminal()
    try:
        await ana.connect(server.port, "ana", ANA_KEY)
        await ana.wait_for("welcome, ana")
        await boss.connect(server.port, "boss", BOSS_KEY)
        await boss.wait_for("You are an admin")
        (target,) = server.sessions["ana"]
        (admin,) = server.sessions["boss"]
        admin.send(P.Kick(session=target.id, reason="cheating"))
        line = b"perudo-ssh: An admin ended your session: cheating\r\n"
        await ana.wait_for(lambda _: line in ana.raw)
        # written after the app left the alternate screen, and nothing after it
        left = ana.raw.rindex(b"\x1b[?1049l")
        assert ana.raw[left:].endswith(b"\x1b[?25h\x1b[?1004l" + line)
        assert ana.process is not None
        await ana.process.wait_closed()
        assert ana.process.exit_status == 0
    finally:
        await ana.close()
        await boss.close()
