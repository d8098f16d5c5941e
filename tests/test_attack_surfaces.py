"""Attacks on what issue 4 added: the exec commands and link codes, chat text, hostile
`CreateTable` commands and admin commands from a session that is not an admin's.

Real SSH where the transport matters (a client closing its input), the lobby actor and
`run_command` directly elsewhere. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import asyncssh
import pytest

from perudo_ssh import protocol as P
from perudo_ssh.chat import clean_chat
from perudo_ssh.i18n import translator
from perudo_ssh.records import (
    LINK_CODES_PER_ACCOUNT,
    LINK_FAILURE_SECONDS,
    LINK_FAILURES,
    LinkThrottle,
    show_code,
)
from perudo_ssh.rules.options import OptionsError, options_for
from perudo_ssh.ssh.commands import link_source, run_command
from perudo_ssh.store import Store
from tests.conftest import StoredServer
from tests.test_lobby_support import connected, running_lobby

pytestmark = pytest.mark.timeout(60)

TIMEOUT = 15.0
EN = translator("en")
UNKNOWN = "that code is unknown or has expired: ask for a new one\n"


# ---- exec commands over real SSH ------------------------------------------------------------


async def test_a_command_answers_a_client_that_closed_its_input(stored_server: StoredServer):
    # `ssh host records </dev/null` (a script, a cron job): the client sends EOF at once.
    # asyncssh then half-closed our side, and the answer had nowhere to go: the client
    # waited for ever.
    key = asyncssh.generate_private_key("ssh-ed25519")
    async with asyncssh.connect(
        "127.0.0.1",
        stored_server.port,
        username="ana",
        known_hosts=None,
        config=None,
        client_keys=[key],
        agent_path=None,
    ) as conn:
        for command, status, out in (
            ("records", 0, "No games yet.\n"),
            ("record 1", 1, ""),
            ("link ABCD-EFGH", 1, ""),
            ("ls", 1, ""),
        ):
            process = await conn.create_process(command)
            process.stdin.write_eof()
            done = await asyncio.wait_for(process.wait(), TIMEOUT)
            assert (done.exit_status, done.stdout) == (status, out), command
            assert bool(done.stderr) == (status == 1), command


# ---- link codes: guessing them --------------------------------------------------------------


async def _link(store: Store, code: str, key: str, address: str | None, now: float):
    return await run_command(
        f"link {code}", store, None, key, EN, address=address, clock=lambda: now
    )


async def test_wrong_link_codes_are_limited_per_address(tmp_path: Path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        code = await store.new_link_code(ana.id)
        for i in range(LINK_FAILURES):
            wrong = await _link(store, "ZZZZ-ZZZZ", f"SHA256:eve{i}", "203.0.113.7", 100.0 + i)
            assert (wrong.status, wrong.stderr) == (1, UNKNOWN)
        # a new key each time changes nothing: the address is counted, and now even the
        # right code is refused to it (else its guesses would go on, told apart by success)
        late = await _link(store, code, "SHA256:eve", "203.0.113.7", 200.0)
        assert (late.status, late.stderr) == (
            1,
            "Too many wrong link codes from your address: try again in 9 minutes.\n",
        )
        assert await store.account_for_key("SHA256:eve") is None
        # another address is not held back, and the code still works there
        linked = await _link(store, show_code(code), "SHA256:desk", "198.51.100.1", 200.0)
        assert (linked.status, linked.stdout) == (0, "This key now signs in as ana.\n")
        # the first failure ages out of the window: one more try for the address
        again = await _link(store, "ZZZZ-ZZZZ", "SHA256:eve", "203.0.113.7", 100.0 + 600.0)
        assert again.stderr == UNKNOWN
    finally:
        await store.close()


def test_an_ipv6_client_is_counted_by_its_64_network():
    assert link_source("2001:db8:1:2::5", "SHA256:k") == "2001:db8:1:2::/64"
    assert link_source("2001:db8:1:2:ffff::9", "SHA256:k") == "2001:db8:1:2::/64"
    assert link_source("192.0.2.9", "SHA256:k") == "192.0.2.9"
    assert link_source(None, "SHA256:k") == "SHA256:k"
    assert link_source("not an address", "SHA256:k") == "SHA256:k"
    # an IPv4 client of a server listening on "::": its own address, not the /64 that
    # holds every IPv4-mapped address (one client's wrong codes would lock out all of IPv4)
    assert link_source("::ffff:192.0.2.9", "SHA256:k") == "192.0.2.9"
    assert link_source("::ffff:198.51.100.7", "SHA256:k") == "198.51.100.7"


def test_the_link_throttle_forgets_old_failures_and_stays_bounded():
    throttle = LinkThrottle(failures=3, seconds=600.0)
    assert [throttle.failed("a", t) for t in (0.0, 10.0, 20.0)] == [False, False, True]
    assert throttle.wait("a", 30.0) == 570.0
    assert throttle.wait("a", 600.0) == 0.0  # the failure at 0 is out of the window
    assert throttle.wait("b", 30.0) == 0.0
    assert LINK_FAILURE_SECONDS == 600.0
    crowded = LinkThrottle(failures=2, seconds=600.0)
    crowded.MAX_SOURCES = 3
    for source in ("a", "b", "c"):
        crowded.failed(source, 0.0)
    # beyond MAX_SOURCES sources in the window, the others share one allowance
    assert crowded.failed("d", 1.0) is False
    assert crowded.failed("e", 1.0) is True
    assert crowded.wait("f", 2.0) == 599.0
    assert crowded.wait("a", 2.0) == 0.0
    # once the window passed, the sources are forgotten and counted apart again
    assert crowded.wait("f", 700.0) == 0.0
    assert crowded.failed("f", 700.0) is False
    assert set(crowded._failed) == {"f"}


async def test_an_account_holds_at_most_a_few_live_codes(tmp_path: Path):
    store = await Store.open(tmp_path / "perudo.db")
    try:
        ana = (await store.claim_key("SHA256:ana", "ana")).account
        codes = [await store.new_link_code(ana.id) for _ in range(5)]
        retired = codes[:-LINK_CODES_PER_ACCOUNT]
        assert LINK_CODES_PER_ACCOUNT == 3 and len(retired) == 2
        for i, code in enumerate(retired):
            refused = await _link(store, code, f"SHA256:old{i}", f"192.0.2.{i}", 0.0)
            assert refused.stderr == UNKNOWN
        # the newest ones work, typed as shown, in lower case, or in two halves
        half = show_code(codes[2]).lower().replace("-", " ")
        assert (await _link(store, half, "SHA256:a", "192.0.2.10", 0.0)).status == 0
        assert (await _link(store, show_code(codes[3]), "SHA256:b", None, 0.0)).status == 0
        assert (await _link(store, codes[4].lower(), "SHA256:c", None, 0.0)).status == 0
        keys = [k.fingerprint for k in await store.keys_of(ana.id)]
        assert keys == ["SHA256:ana", "SHA256:a", "SHA256:b", "SHA256:c"]
    finally:
        await store.close()


# ---- chat text ------------------------------------------------------------------------------


def test_private_use_and_noncharacters_leave_chat_but_new_emoji_stay():
    # a private-use glyph is one or two cells as the font likes; a noncharacter is no text
    text = "a\ue000b\U000f0000c\ufffed\uffffe\ufdd0f\U0010fffeg"
    assert clean_chat(text) == "abcdefg"
    # U+1FAE8 is newer than Python 3.11's Unicode tables (unassigned there): it stays
    assert clean_chat("shaking \U0001fae8 face") == "shaking \U0001fae8 face"
    assert clean_chat("\ue000\uf8ff") is None


# ---- hostile CreateTable commands -----------------------------------------------------------


def test_preset_is_not_an_option_to_override():
    with pytest.raises(OptionsError) as refused:
        options_for("classic", preset="club")
    assert (refused.value.message_id, refused.value.message_args) == (
        "unknown option {option}",
        {"option": "'preset'"},
    )


async def test_malformed_create_table_commands_are_refused_and_make_no_table():
    async with running_lobby() as lobby:
        ana = await connected(lobby, "ana")
        ben = await connected(lobby, "ben")
        hostile: list[object] = [
            P.CreateTable(seats=4.5, bots=1),  # type: ignore[arg-type]
            P.CreateTable(seats="4"),  # type: ignore[arg-type]
            P.CreateTable(seats=True, bots=False),
            P.CreateTable(bots=None),  # type: ignore[arg-type]
            P.CreateTable(seats=10**30),
            P.CreateTable(options=None),  # type: ignore[arg-type]
            P.CreateTable(options={1: 2}),  # type: ignore[dict-item]
            P.CreateTable(options={"stake": 5.5}),  # type: ignore[dict-item]
            P.CreateTable(name=12345),  # type: ignore[arg-type]
            P.CreateTable(rated="yes"),  # type: ignore[arg-type]
            "not a command",
        ]
        for command in hostile:
            ana.send(command)  # type: ignore[arg-type]
            refused = await ana.expect(P.Refused)
            assert refused.code == "bad_command", command
        ana.send(P.CreateTable(options={"preset": "club"}))
        refused = await ana.expect(P.Refused)
        assert (refused.code, refused.args) == ("bad_options", {"option": "'preset'"})
        assert lobby.tables == {}
        # the lobby list everyone reads is whole: a good table still comes and goes
        ana.send(P.CreateTable(seats=3, bots=1))
        made = await ana.expect(P.TableState)
        seen = await ben.expect(P.LobbyState, lambda e: e.tables)
        assert [(t.id, t.seats, t.free) for t in seen.tables] == [(made.id, 3, 1)]


# ---- admin commands from anyone else --------------------------------------------------------


async def test_a_non_admins_admin_commands_change_nothing_and_log_no_text(caplog):
    async with running_lobby() as lobby:
        eve = await connected(lobby, "eve")
        vic = await connected(lobby, "vic")
        vic.send(P.CreateTable(seats=3, bots=1))
        table = await vic.expect(P.TableState)
        sid = vic.session.id
        commands: list[P.Command] = [
            P.WatchAdmin(),
            P.Kick(session=sid, reason="x"),
            P.Ban(kind="key", reason="x", session=sid),
            P.Ban(kind="address", reason="x", value="127.0.0.1"),
            P.Unban(ban=1),
            P.Mute(session=sid, reason="x"),
            P.Unmute(session=sid),
            P.RemovePlayer(session=sid),
            P.PauseTable(table=table.id),
            P.ResumeTable(table=table.id),
            P.CloseTable(table=table.id),
            P.Announce(text="secret " * 1000),
        ]
        with caplog.at_level(logging.WARNING, logger="perudo_ssh"):
            caplog.clear()  # an INFO line from before (another test may have set INFO)
            for command in commands:
                eve.send(command)
                assert (await eve.expect(P.Refused)).code == "not_admin"
        assert len(caplog.records) == len(commands)
        assert all("secret" not in r.getMessage() for r in caplog.records)
        assert caplog.records[-1].getMessage() == "eve (guest) sent an admin command: Announce"
        assert list(lobby.tables) == [table.id] and lobby.paused == set()
        assert lobby.moderation.bans() == () and lobby.moderation.audit_rows() == ()
        vic.send(P.Say(text="still here"))
        assert (await vic.expect(P.ChatLine)).text == "still here"
