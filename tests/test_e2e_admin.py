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
from perudo_ssh.archive import GameArchive
from perudo_ssh.lobby import Lobby
from perudo_ssh.moderation import AdminList
from perudo_ssh.serve import start_game_server
from perudo_ssh.session import LobbySession
from perudo_ssh.store import Store
from tests.sshterm import Terminal, find

pytestmark = pytest.mark.timeout(60)

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
        "127.0.0.1", 0, tmp_path / "keys", lobby, archive=archive, admins=admins
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
        # ana is the first session: the row under the cursor. The reason field is after the
        # three lists; Enter there goes back to the sessions list, then b bans the key.
        boss.send("tab", "tab", "tab", "cheating at dice", "enter", "b")
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
        await ana.wait_for("only an admin may do that")
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
