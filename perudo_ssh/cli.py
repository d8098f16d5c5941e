"""The `perudo-ssh` command: `serve` the game over SSH, `referee` a game record, edit the
`admin`s of the configuration file, `backup` / `restore` the database, `health` check a server
(the arguments: `perudo_ssh.cli_args`).

perudo-ssh serve [--config perudo.toml] [--listen 127.0.0.1] [--port 2222] [--host-keys host_keys]
                 [--db perudo.db] [--workers [N]] [--log-file PATH] [--log-format json|text]
                 [--log-level INFO]
perudo-ssh lobby --nats URL [NATS options] [--config perudo.toml] [--db perudo.db] [log options]
perudo-ssh front --nats URL [NATS options] [--config perudo.toml] [--listen ADDRESS] [--port N]
                 [--host-keys DIR] [--reuse-port] [log options]
perudo-ssh referee RECORD.json|-        (RECORD.md "The referee")
perudo-ssh analyse RECORD.json|-        (every move's odds, the moves that cost a die)
perudo-ssh admin add|remove NAME|FINGERPRINT [--config perudo.toml]
perudo-ssh admin list [--config perudo.toml]
perudo-ssh admin bot NAME [--remove] [--db perudo.db] [--config perudo.toml]
perudo-ssh admin motd TEXT|--clear [--config perudo.toml]
perudo-ssh backup FILE [--db perudo.db] [--config perudo.toml]   (while the server runs)
perudo-ssh restore FILE [--db perudo.db] [--config perudo.toml]  (while no server runs)
perudo-ssh health [--listen ADDRESS] [--port N] [--config perudo.toml]  (exit 0: SSH answers)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from perudo_ssh import config as configuration
from perudo_ssh.cli_args import build_parser, log_args, nats_options, serve_settings
from perudo_ssh.logs import setup_logging
from perudo_ssh.record import MalformedRecord, Record, decode_record
from perudo_ssh.referee import USAGE, encode_verdict, verdict_of

if TYPE_CHECKING:
    from perudo_ssh.store.backup import Contents


def read_record(command: str, source: str, options: bool = False) -> Record | None:
    """The record in file `source` (`-`: standard input) for `perudo-ssh COMMAND`, or None
    after one line on stderr saying why not (unreadable, malformed; with `options`, rules
    that are not rules too)."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        print(f"perudo-ssh {command}: cannot read {source}: {exc.strerror}", file=sys.stderr)
        return None
    try:
        record = decode_record(data)
        if options:
            record.options  # noqa: B018 - raises MalformedRecord for rules that are not rules
    except MalformedRecord as exc:
        print(f"perudo-ssh {command}: malformed record: {exc}", file=sys.stderr)
        return None
    return record


def referee_command(argv: Sequence[str]) -> int:
    """`perudo-ssh referee RECORD.json|-`: print the verdict on stdout (RECORD.md).

    Returns the exit status: 0 the record is legal, 1 it breaks a rule (the verdict says
    where), 2 it is not a record (unreadable, not JSON, malformed) or the arguments are
    wrong — then one line on stderr and nothing on stdout.
    """
    if list(argv) in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if len(argv) != 1:
        print(USAGE, file=sys.stderr)
        return 2
    record = read_record("referee", argv[0])
    if record is None:
        return 2
    verdict = verdict_of(record)
    sys.stdout.flush()
    sys.stdout.buffer.write(encode_verdict(verdict) + b"\n")
    sys.stdout.flush()
    return 0 if verdict.legal else 1


def analyse_command(source: str) -> int:
    """`perudo-ssh analyse RECORD.json|-`: the game explained, as text on stdout
    (`perudo_ssh.analysis.analysis_text`: each bid's odds to be true and each call's to be
    right, from the mover's view and the table's; the moves that cost a die).

    Returns the exit status: 0 explained to its end, 1 the rules refuse the record from a
    round on (explained up to it, which is named), 2 not a record (one line on stderr)."""
    from perudo_ssh.analysis import analysis_text, replay_frames

    record = read_record("analyse", source, options=True)
    if record is None:
        return 2
    sys.stdout.write(analysis_text(record))
    return 0 if replay_frames(record).fault_round is None else 1


def motd_command(args: argparse.Namespace) -> int:
    """`perudo-ssh admin motd TEXT` / `--clear`: set or remove the message of the day in the
    config file (`config.set_motd`); a running server shows it in every lobby within seconds.
    Prints what it did. Returns 0 done, 2 no TEXT nor --clear (or both), a malformed file or
    message (one line on stderr)."""
    if (args.text is None) == (not args.clear):
        print("perudo-ssh admin motd: give the TEXT, or --clear", file=sys.stderr)
        return 2
    try:
        changed = configuration.set_motd(args.config, None if args.clear else args.text)
    except configuration.ConfigError as exc:
        print(f"perudo-ssh admin motd: {exc}", file=sys.stderr)
        return 2
    what = "removed the message of the day" if args.clear else "set the message of the day"
    print(f"{what} in {args.config}" if changed else f"nothing to change in {args.config}")
    return 0


def admin_command(args: argparse.Namespace) -> int:
    """`perudo-ssh admin add|remove|list`: edit or show the admins of the config file
    (`perudo_ssh.config`). A NAME is looked up in the player database for its keys.

    Prints what changed on stdout (`list`: one `FINGERPRINT  LABEL` line per admin). Returns
    0 done (`add` of an admin already there included), 1 `remove` of someone who is not an
    admin, 2 a malformed config file, fingerprint or unknown name (one line on stderr).
    """
    path: Path = args.config
    if args.action == "bot":
        return bot_command(args)
    if args.action == "motd":
        return motd_command(args)
    try:
        if args.action == "list":
            admins = configuration.load_config(path).admins
            if not admins:
                print(f"no admins in {path}", file=sys.stderr)
            for fingerprint, label in admins.items():
                print(f"{fingerprint}  {label}".rstrip())
            return 0
        resolve = name_resolver(args, missing_ok=args.action == "remove")
        if args.action == "add":
            added = configuration.add_admin(path, args.who, resolve)
            for fingerprint in added:
                who = "" if args.who == fingerprint else f" ({args.who})"
                print(f"added admin {fingerprint}{who} to {path}")
            if not added:
                print(f"{args.who} is already an admin in {path}")
            return 0
        removed = configuration.remove_admin(path, args.who, resolve)
        for fingerprint in removed:
            print(f"removed admin {fingerprint} from {path}")
        if not removed:
            print(f"perudo-ssh admin: {args.who} is not an admin in {path}", file=sys.stderr)
            return 1
        return 0
    except configuration.ConfigError as exc:
        print(f"perudo-ssh admin: {exc}", file=sys.stderr)
        return 2


def health_command(args: argparse.Namespace) -> int:
    """`perudo-ssh health`: read the SSH identification of the server on `--listen`/`--port`
    (else the config file's `[server]`, else serve's defaults; `perudo_ssh.health`). Prints
    it and returns 0, else one line on stderr and 1 (2: a malformed config file)."""
    from perudo_ssh.health import Unhealthy, ssh_identification

    try:
        settings = serve_settings(args)
    except configuration.ConfigError as exc:
        print(f"perudo-ssh health: {exc}", file=sys.stderr)
        return 2
    try:
        version = ssh_identification(settings.listen, settings.port, args.timeout)
    except Unhealthy as exc:
        print(f"perudo-ssh health: {exc}", file=sys.stderr)
        return 1
    print(f"{settings.listen}:{settings.port} answers {version}")
    return 0


# ---- the commands on the database file: backup, restore, admin bot (issue 15, item 4) ----
# The database is `--db`, else the config file's `[server] db`, else the store's default
# (`perudo.db`), as `serve` finds it.


def database(args: argparse.Namespace) -> Path:
    """The database file the command of `args` works on (module docstring). Raises
    `ConfigError` for a malformed config file."""
    from perudo_ssh.store import DEFAULT_PATH

    return args.db or configuration.load_config(args.config).server.db or DEFAULT_PATH


def _size(size: int) -> str:
    return f"{size / 1024:.0f} KB" if size < 10 * 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"


def _told(contents: Contents) -> str:
    tables = contents.tables
    return (
        f"{contents.accounts} account{'s' * (contents.accounts != 1)}, "
        f"{contents.games} finished game{'s' * (contents.games != 1)}, "
        f"{tables} unfinished table{'s' * (tables != 1)}, {_size(contents.size)}"
    )


def backup_command(args: argparse.Namespace) -> int:
    """`perudo-ssh backup FILE [--db perudo.db]`: copy the database to FILE while the server
    runs (`perudo_ssh.store.backup.backup`; FILE is replaced whole if it exists). Prints
    what the copy holds. Returns 0 done, 2 the database or FILE unusable (one line on
    stderr; FILE unchanged)."""
    from perudo_ssh.store import StoreError
    from perudo_ssh.store.backup import backup

    try:
        db = database(args)
        held = backup(db, args.file)
    except (configuration.ConfigError, StoreError) as exc:
        print(f"perudo-ssh backup: {exc}", file=sys.stderr)
        return 2
    print(f"backed up {db} to {args.file}: {_told(held)}")
    return 0


def restore_command(args: argparse.Namespace) -> int:
    """`perudo-ssh restore FILE [--db perudo.db]`: put the backup FILE in place of the
    database, which is first copied aside (`perudo_ssh.store.backup.restore`). Refuses
    while a server uses the database. Prints what was restored and where the replaced
    database went. Returns 0 done, 2 refused (a server runs, FILE is no usable backup, the
    database cannot be written; one line on stderr; nothing changed)."""
    from perudo_ssh.store import StoreError
    from perudo_ssh.store.backup import DatabaseInUse, restore

    try:
        db = database(args)
        done = restore(args.file, db)
    except DatabaseInUse as exc:
        print(f"perudo-ssh restore: {exc}; stop it first", file=sys.stderr)
        return 2
    except (configuration.ConfigError, StoreError) as exc:
        print(f"perudo-ssh restore: {exc}", file=sys.stderr)
        return 2
    print(f"restored {args.file} into {db}: {_told(done.contents)}")
    if done.aside is not None:
        print(f"the database it replaced is kept as {done.aside}")
    return 0


def bot_command(args: argparse.Namespace) -> int:
    """`perudo-ssh admin bot NAME [--remove]`: make the account NAME a bot account, whose
    keys play through `ssh HOST play` (issue 14; docs/BOT-API.md), or (`--remove`) a
    person's account again. The database is `--db`, else the config file's `[server] db`,
    else the store's default; it must exist. Takes effect at the account's next login.

    Prints what it did on stdout. Returns 0 done (already so included), 2 an unknown name or
    an unusable database or config file (one line on stderr)."""
    from perudo_ssh.store import Store, StoreError

    try:
        db = database(args)
    except configuration.ConfigError as exc:
        print(f"perudo-ssh admin: {exc}", file=sys.stderr)
        return 2
    if not db.is_file():
        print(f"perudo-ssh admin: no player database {db}", file=sys.stderr)
        return 2
    bot = not args.remove

    async def mark() -> tuple[str, bool] | None:
        store = await Store.open(db)
        try:
            account = await store.account_named(args.name)
            if account is None:
                return None
            if account.bot != bot:
                await store.set_bot(account.id, bot)
            return account.name, account.bot != bot
        finally:
            await store.close()

    try:
        done = asyncio.run(mark())
    except StoreError as exc:
        print(f"perudo-ssh admin: {exc}", file=sys.stderr)
        return 2
    if done is None:
        print(f"perudo-ssh admin: no player called {args.name} in {db}", file=sys.stderr)
        return 2
    name, changed = done
    kind = "a bot account" if bot else "a person's account"
    print(f"{name} is {'now' if changed else 'already'} {kind}")
    return 0


def name_resolver(args: argparse.Namespace, missing_ok: bool = False) -> configuration.Resolver:
    """How `admin` turns a player NAME into the fingerprints of every key of that account:
    a look-up in the player database (`--db`, else the config file's `[server] db`, else
    the store's default). The database is never created: a missing one gives no keys if
    `missing_ok` (remove: by label only), else a `ConfigError`, as does an unusable one."""
    from perudo_ssh.store import Store, StoreError

    db = database(args)

    async def fingerprints(name: str) -> list[str]:
        store = await Store.open(db)
        try:
            account = await store.account_named(name)
            return (
                [] if account is None else [k.fingerprint for k in await store.keys_of(account.id)]
            )
        finally:
            await store.close()

    def resolve(name: str) -> list[str]:
        if not db.is_file():
            if missing_ok:
                return []
            raise configuration.ConfigError(f"no player database {db} to look {name!r} up in")
        try:
            return asyncio.run(fingerprints(name))
        except StoreError as exc:
            raise configuration.ConfigError(str(exc)) from None

    return resolve


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["referee"]:  # its own arguments: wrong ones are one line (RECORD.md)
        return referee_command(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "analyse":
        return analyse_command(args.record)
    if args.command == "admin":
        return admin_command(args)
    if args.command == "health":
        return health_command(args)
    if args.command in ("backup", "restore"):
        return (backup_command if args.command == "backup" else restore_command)(args)
    try:
        settings = serve_settings(args)
    except configuration.ConfigError as exc:
        print(f"perudo-ssh {args.command}: {exc}", file=sys.stderr)
        return 2
    try:
        process = f"{args.command} {os.getpid()}" if args.command in ("lobby", "front") else None
        setup_logging(
            args.log_file, args.log_level, text=args.log_format == "text", process=process
        )
    except ValueError as exc:
        print(f"perudo-ssh serve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"perudo-ssh serve: cannot write the log to {args.log_file}: {exc.strerror}",
              file=sys.stderr)  # fmt: skip
        return 2
    from perudo_ssh.store import StoreError
    from perudo_ssh.store.backup import DatabaseInUse

    command = args.command
    try:
        if command == "lobby":
            from perudo_ssh.lobby.process import run_lobby
            from perudo_ssh.workers import bind_to_parent

            bind_to_parent()
            asyncio.run(
                run_lobby(
                    nats_options(args, "perudo-ssh lobby"),
                    settings.db,
                    args.config,
                    limits=settings.limits,
                    metrics=args.metrics,
                )
            )
        elif command == "front":
            from perudo_ssh.front.process import run_front
            from perudo_ssh.workers import bind_to_parent

            bind_to_parent()
            asyncio.run(
                run_front(
                    nats_options(args, "perudo-ssh front"),
                    settings.listen,
                    settings.port,
                    settings.host_keys,
                    limits=settings.limits,
                    reuse_port=args.reuse_port,
                    metrics=args.metrics,
                    banner=settings.banner,
                )
            )
        elif args.workers is not None:
            from perudo_ssh.workers import default_workers, serve_workers

            asyncio.run(
                serve_workers(
                    args.workers or default_workers(),
                    settings.listen,
                    settings.port,
                    settings.host_keys,
                    settings.db,
                    args.config,
                    log_args(args),
                    metrics=args.metrics,
                )
            )
        else:
            from perudo_ssh.serve import serve_forever

            asyncio.run(
                serve_forever(
                    settings.listen,
                    settings.port,
                    settings.host_keys,
                    settings.db,
                    args.config,
                    limits=settings.limits,
                    metrics=args.metrics,
                    banner=settings.banner,
                )
            )
    except KeyboardInterrupt:
        pass
    except StoreError as exc:
        what = "" if isinstance(exc, DatabaseInUse) else "cannot use the database "
        print(f"perudo-ssh {command}: {what}{exc}", file=sys.stderr)
        return 2
    except configuration.ConfigError as exc:  # the file broke between reading and serving
        print(f"perudo-ssh {command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the port is taken, the address is not ours, no permission
        print(f"perudo-ssh {command}: cannot listen on {settings.listen}:{settings.port}: "
              f"{exc.strerror or exc}", file=sys.stderr)  # fmt: skip
        return 2
    except Exception as exc:  # NATS, the metrics' port, a child process that cannot start
        from perudo_ssh.bus.base import BusError
        from perudo_ssh.metrics import MetricsUnavailable
        from perudo_ssh.workers import WorkerError

        if not isinstance(exc, BusError | MetricsUnavailable | WorkerError):
            raise
        print(f"perudo-ssh {command}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
