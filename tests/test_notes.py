"""The server's name, message of the day and pre-login banner (issue 15, item 5): set in
perudo.toml's `[server]`, checked as they are read, the message of the day set with
`perudo-ssh admin motd` and shown in every lobby within seconds, the banner sent by SSH
before the login."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.cli import main
from perudo_ssh.cli_args import build_parser, serve_settings
from perudo_ssh.config import ConfigError, load_config, parse_config, set_motd
from perudo_ssh.lobby import Lobby
from perudo_ssh.lobby.notes import watch_notes
from perudo_ssh.serve import start_game_server
from screens.app import make_app
from screens.lobby import LobbyScreen
from tests.test_lobby_support import Player, running_lobby
from tests.test_screens_fakes import screen_text, wait_until

NOTES = '[server]\nname = "perudo.example.org"\nmotd = "Tournament on Saturday"\n'


def test_name_motd_and_banner_are_read_and_checked(tmp_path):
    config = parse_config(NOTES + 'banner = """\nWelcome to {name}.\nAny name is yours."""\n')
    assert config.server.name == "perudo.example.org"
    assert config.server.motd == "Tournament on Saturday"
    assert config.server.banner_text() == "Welcome to perudo.example.org.\nAny name is yours.\n"
    assert parse_config('[server]\nbanner = "Hi {name}"\n').server.banner_text() == (
        "Hi perudo-ssh\n"  # no name: the program's
    )
    assert parse_config("").server.banner_text() is None
    for text, problem in (
        ('[server]\nmotd = "red \\u001b[31m"\n', "motd must not hold the control character"),
        ('[server]\nname = "two\\nlines"\n', "name must not hold the control character '\\n'"),
        (f'[server]\nname = "{"x" * 41}"\n', "name is 41 characters long: at most 40"),
        (f'[server]\nmotd = "{"x" * 301}"\n', "motd is 301 characters long: at most 300"),
        ("[server]\nbanner = 3\n", "banner must be a string, not 3"),
    ):
        with pytest.raises(ConfigError, match=re.escape(f"line 2: {problem}")):
            parse_config(text, tmp_path / "perudo.toml")
    assert parse_config('[server]\nmotd = "two\\nlines"\n').server.motd == "two\nlines"


def test_the_banner_reaches_the_settings_of_serve_and_front(tmp_path):
    path = tmp_path / "perudo.toml"
    path.write_text(NOTES + 'banner = "Welcome to {name}"\n')
    for command in ("serve", "front"):
        nats = ["--nats", "nats://127.0.0.1:4222"] if command == "front" else []
        args = build_parser().parse_args([command, *nats, "--config", str(path)])
        assert serve_settings(args).banner == "Welcome to perudo.example.org\n"


def test_admin_motd_sets_and_clears_it_keeping_the_rest_of_the_file(tmp_path, capsys):
    path = tmp_path / "perudo.toml"
    path.write_text("# my server\n[server]\nport = 2022  # the usual\n")
    assert main(["admin", "motd", "New season!", "--config", str(path)]) == 0
    assert capsys.readouterr().out == f"set the message of the day in {path}\n"
    assert load_config(path).server.motd == "New season!"
    assert path.read_text().startswith("# my server\n[server]\nport = 2022  # the usual\n")
    assert not set_motd(path, "New season!")  # the same: the file is not written again
    assert main(["admin", "motd", "--clear", "--config", str(path)]) == 0
    assert load_config(path).server.motd is None
    assert "port = 2022  # the usual" in path.read_text()
    assert main(["admin", "motd", "bad \x1b[2J", "--config", str(path)]) == 2
    assert "control character" in capsys.readouterr().err
    assert main(["admin", "motd", "--config", str(path)]) == 2  # neither TEXT nor --clear
    assert load_config(path).server.motd is None


async def test_the_lobby_tells_each_session_its_notes_and_everyone_when_they_change():
    async with running_lobby() as lobby:
        ana = Player(lobby, "ana")
        await ana.joined()
        assert not any(isinstance(e, P.ServerNotes) for e in ana.events)  # none set
        lobby.set_notes("perudo.example.org", "Tournament on Saturday")
        told = await ana.expect(P.ServerNotes)
        assert told == P.ServerNotes("perudo.example.org", "Tournament on Saturday", True)
        ben = Player(lobby, "ben")
        await ben.expect(P.Welcome)
        assert await ben.next() == P.ServerNotes("perudo.example.org", "Tournament on Saturday")
        lobby.set_notes("perudo.example.org", "Tournament on Saturday")  # unchanged
        lobby.set_notes("perudo.example.org", "")  # the message taken away
        assert await ana.expect(P.ServerNotes) == P.ServerNotes("perudo.example.org", "", True)
        assert await ben.expect(P.ServerNotes) == P.ServerNotes("perudo.example.org", "", True)


async def test_the_notes_follow_the_file(tmp_path, caplog):
    path = tmp_path / "perudo.toml"
    path.write_text(NOTES)
    async with running_lobby() as lobby:
        ana = Player(lobby, "ana")
        await ana.joined()
        watcher = asyncio.get_running_loop().create_task(watch_notes(lobby, path, every=0.01))
        try:
            first = await ana.expect(P.ServerNotes)
            assert (first.name, first.motd) == ("perudo.example.org", "Tournament on Saturday")
            set_motd(path, "Finals at 21:00")
            assert (await ana.expect(P.ServerNotes)).motd == "Finals at 21:00"
            path.write_text('[server]\nmotd = "broken\n')  # malformed: kept as they were
            await wait_for_log(caplog, "kept as they were")
            path.write_text('[server]\nmotd = "Fixed"\n')
            assert await ana.expect(P.ServerNotes) == P.ServerNotes("", "Fixed", True)
        finally:
            watcher.cancel()


async def wait_for_log(caplog, text: str) -> None:
    async with asyncio.timeout(10):
        while not any(text in record.getMessage() for record in caplog.records):
            await asyncio.sleep(0.01)  # the watcher looks at the file every 10 ms


async def test_the_lobby_screen_shows_the_name_and_the_message_and_says_a_new_one():
    lobby = Lobby(bot_delay=(0, 0), rng=random.Random(3))
    lobby.set_notes("perudo.example.org", "Tournament on Saturday")
    lobby.start()
    try:
        app = make_app(lobby.connect("ana"))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: app.lobby is not None and app.notes is not None)
            await wait_until(pilot, lambda: "Tournament on Saturday" in screen_text(app))
            lines = screen_text(app).splitlines()
            assert lines[0].strip() == "perudo.example.org · liar's dice · welcome, ana"
            assert lines[1].strip() == "Tournament on Saturday"
            said = lambda: [(n.title, n.message) for n in app._notifications]  # noqa: E731
            assert ("Message of the day", "Tournament on Saturday") not in said()  # at login
            lobby.set_notes("perudo.example.org", "Finals at 21:00")
            await wait_until(pilot, lambda: ("Message of the day", "Finals at 21:00") in said())
            await wait_until(pilot, lambda: "Finals" in screen_text(app).splitlines()[1])
            lobby.set_notes("", "")
            await wait_until(
                pilot, lambda: screen_text(app).splitlines()[1].lstrip().startswith("#  Table")
            )  # no message: no line; no name: the program's
            assert screen_text(app).splitlines()[0].strip().startswith("perudo-ssh · liar's")
            assert isinstance(app.screen, LobbyScreen)
    finally:
        await lobby.stop()


class BannerClient(asyncssh.SSHClient):
    banners: list[str]

    def __init__(self) -> None:
        self.banners = []

    def auth_banner_received(self, msg: str, lang: str) -> None:
        self.banners.append(msg)


async def test_the_banner_is_sent_before_the_login(tmp_path):
    banner = "Welcome to perudo.example.org.\nAny name is yours.\n"
    acceptor, lobby = await start_game_server("127.0.0.1", 0, tmp_path / "keys", banner=banner)
    try:
        conn, client = await asyncssh.create_connection(
            BannerClient,
            "127.0.0.1",
            acceptor.get_port(),
            username="ana",
            known_hosts=None,
            client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
        )
        async with conn:
            assert client.banners == [banner]
    finally:
        acceptor.close()
        await lobby.stop()


async def test_no_banner_when_none_is_set(tmp_path):
    acceptor, lobby = await start_game_server("127.0.0.1", 0, tmp_path / "keys")
    try:
        conn, client = await asyncssh.create_connection(
            BannerClient, "127.0.0.1", acceptor.get_port(), username="ana", known_hosts=None,
            client_keys=[asyncssh.generate_private_key("ssh-ed25519")],
        )  # fmt: skip
        async with conn:
            assert client.banners == []
    finally:
        acceptor.close()
        await lobby.stop()


def test_a_file_left_out_keeps_the_paths_check(tmp_path):
    # the new keys sit beside the old ones: a path setting is still a path
    config = parse_config('[server]\ndb = "game.db"\nname = "x"\n', tmp_path / "p.toml")
    assert config.server.db == Path(tmp_path / "game.db")
