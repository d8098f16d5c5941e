"""Identity over real SSH (issue 4, item 2): a key is an account whose name its first login
claimed; another key asking for that name gets a free alternative and is told so; a second key
is linked with a one-time code; a guest is `guest-N` and leaves nothing in the database."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import asyncssh
import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from perudo_ssh.i18n import translator
from perudo_ssh.records import normal_code, show_code
from perudo_ssh.store import Store
from screens.account import AccountScreen
from tests.conftest import StoredServer
from tests.sshterm import Guest, Terminal
from tests.test_e2e_game import play_until_over

pytestmark = pytest.mark.timeout(90)


def new_key() -> asyncssh.SSHKey:
    return asyncssh.generate_private_key("ssh-ed25519")


def fingerprint(key: asyncssh.SSHKey) -> str:
    return key.get_fingerprint("sha256")


async def run(
    port: int, key: asyncssh.SSHKey | None, command: str, username: str = "ana"
) -> asyncssh.SSHCompletedProcess:
    """`ssh -p PORT username@127.0.0.1 COMMAND` with `key` (None: a guest)."""
    async with asyncssh.connect(
        "127.0.0.1",
        port,
        username=username,
        known_hosts=None,
        config=None,
        client_keys=[key] if key else None,
        client_factory=None if key else Guest,
        agent_path=None,
    ) as conn:
        return await conn.run(command, check=False)


def flat(text: str) -> str:
    """The screen's words in order, blanks and box edges collapsed (a toast wraps its text)."""
    return " ".join(re.sub(r"[│▏▕▎▌▐┃]", " ", text).split())


def rows(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


async def play_a_game_against_bots(term: Terminal, name: str) -> None:
    """Create a table as the dialog offers it (4 seats, 2 bots), start it at once with the
    three seated, and play it to the end through the screens."""
    await term.wait_for(f"welcome, {name}")
    term.send("c")
    await term.wait_for("Create a table")
    term.send("\x13")  # ctrl+s: create
    await term.wait_for("Waiting for 1 more player")
    term.send("s")  # start now, with the bots
    await play_until_over(term)


async def login(port: int, username: str, key: asyncssh.SSHKey | None, size=(120, 30)) -> Terminal:
    term = Terminal(size)
    await term.connect(port, username, key)
    return term


async def test_a_key_keeps_its_account_and_name_across_a_restart(stored_server: StoredServer):
    key = new_key()
    ana = await login(stored_server.port, "ana", key)
    try:
        text = await ana.wait_for("welcome, ana")
        await ana.wait_for(lambda t: "The name ana is now yours" in flat(t))
    finally:
        await ana.close()
    assert stored_server.store is not None
    first = await stored_server.store.account_for_key(fingerprint(key))
    assert first is not None and first.name == "ana"

    await stored_server.restart()
    again = await login(stored_server.port, "ana", key)
    try:
        text = await again.wait_for("welcome, ana")
        assert "now yours" not in flat(text)
    finally:
        await again.close()
    # the same key under another user name is still ana, and is told so
    other = await login(stored_server.port, "zed", key)
    try:
        await other.wait_for("welcome, ana")
        await other.wait_for(lambda t: "This key plays as ana, not zed." in flat(t))
    finally:
        await other.close()
    assert await stored_server.store.account_for_key(fingerprint(key)) == first
    assert rows(stored_server.db, "accounts") == 1
    assert rows(stored_server.db, "keys") == 1


async def test_another_key_is_refused_a_claimed_name_and_gets_a_free_one(
    stored_server: StoredServer,
):
    ana, intruder = new_key(), new_key()
    first = await login(stored_server.port, "ana", ana)
    try:
        await first.wait_for("welcome, ana")
    finally:
        await first.close()
    second = await login(stored_server.port, "ANA", intruder)
    try:
        await second.wait_for("welcome, ANA2")
        await second.wait_for(
            lambda t: "The name ANA belongs to another player's key; you are ANA2 here." in flat(t)
        )
    finally:
        await second.close()
    store = stored_server.store
    assert store is not None
    owner = await store.account_for_key(fingerprint(ana))
    other = await store.account_for_key(fingerprint(intruder))
    assert owner is not None and other is not None
    assert (owner.name, other.name) == ("ana", "ANA2")
    # while ana's key is online twice, the lobby names the second session ana-2: that name
    # is never an account's, so the lobby renames nobody else's
    one = await login(stored_server.port, "ana", ana)
    two = await login(stored_server.port, "x", ana)
    try:
        await one.wait_for("welcome, ana")
        await two.wait_for("welcome, ana-2")
    finally:
        await one.close()
        await two.close()


async def test_a_second_key_is_linked_with_a_one_time_code(stored_server: StoredServer):
    laptop, desktop, stranger = new_key(), new_key(), new_key()
    first = await login(stored_server.port, "ana", laptop)
    try:
        await first.wait_for("welcome, ana")
    finally:
        await first.close()
    store = stored_server.store
    assert store is not None
    account = await store.account_for_key(fingerprint(laptop))
    assert account is not None
    code = await store.new_link_code(account.id)

    linked = await run(stored_server.port, desktop, f"link {show_code(code).lower()}", "desk")
    assert (linked.exit_status, linked.stdout, linked.stderr) == (
        0,
        "This key now signs in as ana.\n",
        "",
    )
    again = await run(stored_server.port, stranger, f"link {code}", "eve")
    assert again.exit_status == 1
    assert again.stderr == "that code is unknown or has expired: ask for a new one\n"
    assert [k.fingerprint for k in await store.keys_of(account.id)] == [
        fingerprint(laptop),
        fingerprint(desktop),
    ]
    # the desktop key's own login, before the link, made an empty account "desk": gone now
    assert await store.account_named("desk") is None
    desk = await login(stored_server.port, "desk", desktop)
    try:
        await desk.wait_for("welcome, ana")
    finally:
        await desk.close()


@pytest.mark.slow
async def test_a_guest_is_numbered_plays_and_leaves_nothing_stored(stored_server: StoredServer):
    guest = await login(stored_server.port, "ana", None, size=(80, 24))
    try:
        await guest.wait_for(lambda t: "You are a guest" in flat(t))
        await play_a_game_against_bots(guest, "guest-1")
    finally:
        await guest.close()
    refused = await run(stored_server.port, None, "records", "ana")
    assert refused.exit_status == 1
    assert refused.stderr.startswith("Sign in with an SSH key first")
    await stored_server.stop()
    for table in ("accounts", "keys", "games", "game_players", "link_codes", "ratings"):
        assert rows(stored_server.db, table) == 0, table
    await stored_server.start()  # the fixture stops it


class _AccountApp(App[None]):
    """The bits of PerudoApp the account screen reads: `tr`, `store`, `account`."""

    def __init__(self, store: Store | None, account) -> None:
        super().__init__()
        self.tr = translator("en")
        self.store = store
        self.account = account

    def compose(self) -> ComposeResult:
        yield Static("lobby")


async def test_the_account_screen_shows_keys_and_a_code_that_links_a_key(tmp_path: Path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        claim = await store.claim_key("SHA256:laptop", "ana")
        app = _AccountApp(store, claim.account)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = AccountScreen()
            app.push_screen(screen)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            body = str(screen.query_one("#account-body", Static).render())
            assert "SHA256:laptop" in body
            match = re.search(r"ssh … link ([A-Z2-9]{4}-[A-Z2-9]{4})", body)
            assert match, body
            assert str(screen.query_one("#account-title", Static).render()) == "Account: ana"
            linked = await store.link_key(match[1], "SHA256:desktop")
            assert linked == claim.account
            app.tr = translator("fr")
            screen.retranslate()  # the code stays; words change language (or stay English)
            assert normal_code(match[1]) in normal_code(
                str(screen.query_one("#account-body", Static).render())
            )
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, AccountScreen)
    finally:
        await store.close()


async def test_the_account_screen_tells_a_guest_to_use_a_key():
    app = _AccountApp(None, None)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = AccountScreen()
        app.push_screen(screen)
        await pilot.pause()
        body = str(screen.query_one("#account-body", Static).render())
        assert body.startswith("You play as a guest. Log in with an SSH key")
