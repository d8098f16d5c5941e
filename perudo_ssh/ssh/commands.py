"""The few commands `ssh host COMMAND` may run: a whitelist, never a shell (issue 4, item 3).

- `records` — your finished games, newest first, one per line: id, date (UTC), rules, your
  place, the players.
- `record ID` — one of your games as its `perudo-record/1` JSON (RECORD.md), exactly as
  stored; feed it to `perudo-ssh referee -`.
- `play` — a bot account's program plays (issue 14): newline-delimited JSON both ways
  (`perudo_ssh.botapi`, `perudo_ssh.ssh.play`, docs/BOT-API.md). Refused to a key whose
  account is not a bot account, saying how it becomes one.
- `link CODE` — from now on the key you connect with signs in as the account that showed
  CODE on its screen (see `screens.account`); any case, with or without the dash, or as
  its two halves (`link abcd efgh`). An address that typed `LINK_FAILURES` wrong
  codes in `LINK_FAILURE_SECONDS` is refused `link` until the oldest of them ages out
  (`perudo_ssh.records.LinkThrottle`; in a front process the lobby counts them, over every
  front), so that codes cannot be guessed by trying them all. A banned key is
  refused, and so is an account one of whose keys is banned (a key ban covers its account).

They need a key (a guest is told to sign in with one). Anything else is refused with the list
of what exists, exit status 1. The words are in the client's language (its LANG/LC_ALL, as
the app's). Only `run_command` decides; `CommandSession` runs it on an SSH session channel.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
import weakref
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import asyncssh

from perudo_ssh.admission import Admission, SharedCheck, address_group
from perudo_ssh.bans import host_of
from perudo_ssh.i18n import N_, Translator, language_of, translator
from perudo_ssh.records import (
    Account,
    LinkRefused,
    LinkThrottle,
    LinkThrottled,
    Records,
    throttled_link,
)
from perudo_ssh.records_bus import RemoteRecords
from perudo_ssh.session import LobbySession
from perudo_ssh.ssh.client_text import CRASH_MESSAGE, locale_of
from perudo_ssh.ssh.login import AppFactory, Login
from perudo_ssh.ssh.play import ProgramRun
from perudo_ssh.ssh.session import AppSession

logger = logging.getLogger(__name__)

MAX_COMMAND = 200
"""Longest command line read, in characters; longer ones are refused unread."""
MAX_GAMES_LISTED = 10_000
"""Most games `records` lists."""

USAGE = N_(
    "perudo-ssh does not run that command. It knows only: records (your games and their "
    "game numbers), record GAME (one of them as JSON, by its game number; a table's number "
    "in the lobby is not one), link CODE (link this key to your account), play (a bot "
    "account's program plays in JSON lines). "
    "To play, connect with plain `ssh ...`."
)
PLAY_NEEDS_BOT = N_(
    "`play` is for programs, and this key's account ({name}) is not a bot account. Make it "
    "one on its account screen (k in the lobby, then m twice), or ask the server's admin "
    "(perudo-ssh admin bot NAME)."
)
PLAY_NEEDS_KEY = N_(
    "`play` is for programs playing as a bot account: connect with the SSH key of one."
)
NEEDS_KEY = N_(
    "Sign in with an SSH key first: guests keep no games and have no account to link to."
)


_THROTTLES: weakref.WeakKeyDictionary[Records, LinkThrottle] = weakref.WeakKeyDictionary()
"""One `LinkThrottle` per store, i.e. per server."""


def link_source(address: str | None, fingerprint: str) -> str:
    """Whom wrong link codes are counted against: the address as the session limits count
    it (`admission.address_group`: the IP address, an IPv6 address's /64 network, an
    IPv4-mapped IPv6 address's IPv4 address), or the key when the address is unknown or
    not an IP address."""
    try:
        ipaddress.ip_address(address or "")
    except ValueError:
        return fingerprint
    return address_group(address) or fingerprint


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command printed on standard output and standard error (text, lines ending
    in "\\n"), and its exit `status`."""

    stdout: str
    stderr: str
    status: int


def _refuse(text: str) -> CommandResult:
    return CommandResult(stdout="", stderr=text + "\n", status=1)


async def run_command(
    command: str,
    store: Records,
    account: Account | None,
    fingerprint: str | None,
    tr: Translator,
    *,
    address: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    banned_keys: Collection[str] = (),
) -> CommandResult:
    """Run one whitelisted `command` for the client whose key is `fingerprint` (None for a
    guest) and signs in as `account`, connected from IP `address` (None: unknown); words
    from `tr`. `clock` (monotonic seconds) times the wrong link codes (`LinkThrottle`);
    `banned_keys` are the fingerprints under a ban, which `link` refuses to join.

    Never raises for anything the client sends: an unknown or malformed command, someone
    else's game, a bad link code or too many of them is a refusal (status 1) saying why."""
    words = command.split() if len(command) <= MAX_COMMAND else []
    if len(words) == 3 and words[0] == "link":  # the code typed in two halves: ABCD EFGH
        words = ["link", words[1] + words[2]]
    match words:
        case ["records"] | ["record", _] | ["link", _]:
            pass
        case ["play"]:  # run by `CommandSession` itself, never here
            return _refuse(tr._(USAGE))
        case _:
            return _refuse(tr._(USAGE))
    if fingerprint is None:
        return _refuse(tr._(NEEDS_KEY))
    match words:
        case ["records"]:
            return await _records(store, account, tr)
        case ["record", game_id]:
            return await _record(store, account, game_id, tr)
        case ["link", code]:
            source = link_source(address, fingerprint)
            return await _link(store, code, fingerprint, tr, source, clock, banned_keys)
    raise AssertionError(words)


async def _records(store: Records, account: Account | None, tr: Translator) -> CommandResult:
    games = [] if account is None else await store.games_of(account.id, limit=MAX_GAMES_LISTED)
    if not games:
        return CommandResult(stdout=tr._("No games yet.") + "\n", stderr="", status=0)
    # column titles outside the f-string: Babel does not look inside one
    game_, finished, rules = tr._("game"), tr._("finished (UTC)"), tr._("rules")
    place_, players = tr._("place"), tr._("players")
    lines = [f"{game_:>6}  {finished:<16}  {rules:<13}  {place_:<5}  {players}"]
    for game in games:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(game.finished))
        place = f"{game.place}/{len(game.players)}"
        lines.append(
            f"{game.id:>6}  {when:<16}  {game.preset:<13}  {place:<5}  {', '.join(game.players)}"
        )
    return CommandResult(stdout="\n".join(lines) + "\n", stderr="", status=0)


async def _record(
    store: Records, account: Account | None, game_id: str, tr: Translator
) -> CommandResult:
    if not (game_id.isascii() and game_id.isdigit() and len(game_id) < 19):
        return _refuse(tr._("A game is given by its number, as records lists them."))
    number = int(game_id)
    game = await store.game(number)
    # someone else's game and no game at all read the same: ids say nothing about others
    if game is None or account is None or game.seat_of(account.id) is None:
        return _refuse(
            tr._(
                "Game {game} is not one of your games. `records` lists yours with their game "
                "numbers (a table's number in the lobby is not a game number).",
                game=number,
            )
        )
    return CommandResult(stdout=game.record + "\n", stderr="", status=0)


async def _link(
    store: Records,
    code: str,
    fingerprint: str,
    tr: Translator,
    source: str,
    clock: Callable[[], float],
    banned_keys: Collection[str],
) -> CommandResult:
    try:
        if isinstance(store, RemoteRecords):  # the lobby counts every front's wrong codes
            account = await store.link_key(code, fingerprint, banned=banned_keys, source=source)
        else:
            throttle = _THROTTLES.setdefault(store, LinkThrottle())
            account = await throttled_link(
                store, throttle, code, fingerprint, source, clock(), banned_keys
            )
    except LinkThrottled as throttled:
        minutes = max(1, -int(-throttled.seconds // 60))  # rounded up
        return _refuse(
            tr.n_(
                "Too many wrong link codes from your address: try again in {n} minute.",
                "Too many wrong link codes from your address: try again in {n} minutes.",
                minutes,
            )
        )
    except LinkRefused as refused:
        return _refuse(tr._(refused.message, **refused.message_args))
    logger.info("key %s linked to account %s", fingerprint, account.name)
    return CommandResult(
        stdout=tr._("This key now signs in as {name}.", name=account.name) + "\n",
        stderr="",
        status=0,
    )


ProgramFactory = Callable[[Login], LobbySession]
"""Attaches a bot account's program (`play`) to the lobby: its `LobbySession`."""


class CommandSession(AppSession):
    """A session channel that plays the game like `AppSession`, or runs one whitelisted
    command (`run_command`) when the client asked for one, then exits with its status, or
    (`play`) runs a bot account's program (`ProgramRun`, attached by `program_factory`;
    without one `play` is refused). Subsystems (SFTP) stay refused. `banned_keys()` gives
    the fingerprints under a ban in force (none when None). `limits` are `AppSession`'s
    keywords (`limits`, `sessions`, `address`): they apply when it plays the game, and to a
    program."""

    def __init__(
        self,
        app_factory: AppFactory,
        username: str,
        fingerprint: str | None,
        peer: str,
        *,
        store: Records,
        account: Account | None,
        banned_keys: Callable[[], Collection[str]] | None = None,
        program_factory: ProgramFactory | None = None,
        **limits: Any,
    ) -> None:
        super().__init__(app_factory, username, fingerprint, peer, **limits)
        self._program_factory = program_factory
        self._program: ProgramRun | None = None
        self._store = store
        self._banned_keys = banned_keys
        self._account = account
        self._key = fingerprint
        self._where = peer
        self._address = host_of(peer)
        self._command: str | None = None
        self._command_task: asyncio.Task[None] | None = None

    def exec_requested(self, command: str) -> bool:
        self._command = command
        return True

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if self._program is not None:
            self._program.received(data)
        elif self._command is None:
            super().data_received(data, datatype)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._program is not None:
            self._program.lost()
        super().connection_lost(exc)

    def eof_received(self) -> bool:
        if self._program is not None:
            self._program.input_ended()  # the program closed its input: it has left
            return True
        # A command reads no input: the client's end of input (`ssh host records
        # </dev/null`, a script, a pipe) must not close our side before the answer is
        # written — asyncssh half-closes it when this returns False, and the command
        # then had nowhere to write nor exit, so the client waited for ever.
        return self._command is not None

    def _start(self) -> None:
        command = self._command
        if command is None:
            super()._start()
            return
        chan = self._chan
        assert chan is not None
        logger.info("command %r from %s", command[:80], self._where)
        tr = translator(language_of(locale_of(chan.get_environment())))
        newline = b"\r\n" if chan.get_terminal_type() else b"\n"  # a PTY wants CR LF
        if command.split() == ["play"]:
            self._start_program(tr, newline)
            return
        run = self._answer(command, tr, newline)
        loop = asyncio.get_running_loop()
        self._command_task = loop.create_task(run, name=f"perudo-ssh command {self._where}")

    def _start_program(self, tr: Translator, newline: bytes) -> None:
        """`play`: run the program of a bot account, or refuse (no key, not a bot account,
        past a session limit) saying why, exit status 1."""
        chan = self._chan
        assert chan is not None
        account = self._account
        refusal: str | None = None
        if self._key is None:
            refusal = tr._(PLAY_NEEDS_KEY)
        elif account is None or not account.bot or self._program_factory is None:
            name = account.name if account is not None else self._username
            refusal = tr._(PLAY_NEEDS_BOT, name=name)
        admission: Admission | None = None
        if refusal is None and self._sessions is not None:
            admitted = self._sessions.admit(self._address, self._key)
            if isinstance(admitted, Admission):
                admission = admitted
            else:
                refusal = tr._(admitted.message, **admitted.args)
        shared = self._sessions.shared if self._sessions is not None else None
        if refusal is None and shared is not None:  # the limits over every front (issue 12)
            self._command_task = asyncio.get_running_loop().create_task(
                self._program_when_shared(shared, tr, newline, admission),
                name=f"perudo-ssh play {self._where}",
            )
            return
        self._run_program(tr, newline, admission, refusal)

    async def _program_when_shared(
        self, shared: SharedCheck, tr: Translator, newline: bytes, admission: Admission | None
    ) -> None:
        try:
            refused = await shared(self._address, self._key)
        except BaseException:
            if admission is not None:
                admission.release()
            raise
        if self.closed or (self._chan is not None and self._chan.is_closing()):
            if admission is not None:
                admission.release()
            return
        refusal = None
        if refused is not None:
            refusal = tr._(refused.message, **refused.args)
            if admission is not None:
                admission.release()
                admission = None
        self._run_program(tr, newline, admission, refusal)

    def _run_program(
        self, tr: Translator, newline: bytes, admission: Admission | None, refusal: str | None
    ) -> None:
        chan = self._chan
        assert chan is not None
        account = self._account
        if refusal is not None or account is None or self._program_factory is None:
            if admission is not None:
                admission.release()
            logger.info("play refused to %s", self._where)
            chan.write_stderr(((refusal or "") + "\n").encode().replace(b"\n", newline))
            chan.exit(1)
            return
        login = Login(
            username=self._username,
            name=account.name,
            fingerprint=self._key,
            peer=self._where,
            term="",
            colorterm=None,
            lang=locale_of(chan.get_environment()),
            size=(0, 0),
            account=account,
        )
        try:
            session = self._program_factory(login)
        except Exception:
            logger.exception("play from %s failed to start", self._where)
            if admission is not None:
                admission.release()
            chan.write_stderr((tr._(CRASH_MESSAGE) + "\n").encode())
            chan.exit(1)
            return
        limits = self._limits
        self._program = ProgramRun(
            chan, session, peer=self._where, limits=limits, admission=admission
        )
        self._program.start()

    async def _answer(self, command: str, tr: Translator, newline: bytes) -> None:
        chan = self._chan
        assert chan is not None
        try:
            banned = self._banned_keys() if self._banned_keys is not None else ()
            result = await run_command(
                command,
                self._store,
                self._account,
                self._key,
                tr,
                address=self._address,
                banned_keys=banned,
            )
        except Exception:
            logger.exception("command %r from %s failed", command[:80], self._where)
            result = _refuse(tr._(CRASH_MESSAGE))
        if self.closed or chan.is_closing():
            return
        if result.stdout:
            chan.write(result.stdout.encode().replace(b"\n", newline))
        if result.stderr:
            chan.write_stderr(result.stderr.encode().replace(b"\n", newline))
        chan.exit(result.status)
