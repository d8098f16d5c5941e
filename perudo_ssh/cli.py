"""The `perudo-ssh` command: `serve` the game over SSH, `referee` a game record, or edit the
`admin`s of the configuration file.

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
from typing import TYPE_CHECKING, NamedTuple

from perudo_ssh import config as configuration
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.logs import setup_logging

if TYPE_CHECKING:
    from perudo_ssh.bus.nats_bus import NatsOptions
from perudo_ssh.record import MalformedRecord, Record, decode_record
from perudo_ssh.referee import USAGE, encode_verdict, verdict_of


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
    from perudo_ssh.db_commands import bot_command, name_resolver

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
        resolve = name_resolver(args, path, missing_ok=args.action == "remove")
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


class ServeSettings(NamedTuple):
    """What `serve` runs with: `listen` address, TCP `port` (0: any free one), `host_keys`
    folder, `db` the player database file (None: the store's own default), and the server's
    `limits` (the config file's `[limits]` over the defaults)."""

    listen: str
    port: int
    host_keys: Path
    db: Path | None
    limits: Limits = DEFAULT_LIMITS


def serve_settings(args: argparse.Namespace) -> ServeSettings:
    """`serve`'s settings: each from its command-line flag if given, else from the config
    file's `[server]` table (`--config`), else the default (127.0.0.1, 2222, host_keys; `db`
    None: the store's own default). Raises `ConfigError` for a malformed config file."""
    config = configuration.load_config(args.config)
    settings = config.server
    port = getattr(args, "port", None)
    port = port if port is not None else settings.port
    return ServeSettings(
        listen=getattr(args, "listen", None) or settings.listen or "127.0.0.1",
        port=2222 if port is None else port,
        host_keys=getattr(args, "host_keys", None) or settings.host_keys or Path("host_keys"),
        db=getattr(args, "db", None) or settings.db,
        limits=config.limits,
    )


NATS_PASSWORD = "PERUDO_SSH_NATS_PASSWORD"
"""The environment variable a NATS password may come in (kept out of `ps`)."""


def nats_options(args: argparse.Namespace, name: str) -> NatsOptions:
    """The NATS connection of `lobby` / `front` (`perudo_ssh.bus.nats_bus.NatsOptions`):
    `--nats URL` with NATS's usual options, the password from `--nats-password` or the
    `PERUDO_SSH_NATS_PASSWORD` environment variable."""
    from perudo_ssh.bus.nats_bus import NatsOptions

    return NatsOptions(
        url=args.nats,
        user=args.nats_user,
        password=args.nats_password or os.environ.get(NATS_PASSWORD) or None,
        creds=args.nats_creds,
        tls_ca=args.nats_tls_ca,
        tls_cert=args.nats_tls_cert,
        tls_key=args.nats_tls_key,
        name=name,
    )


def _metrics_address(text: str) -> str:
    from perudo_ssh.metrics import parse_address

    try:
        parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _metrics_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--metrics",
        type=_metrics_address,
        metavar="HOST:PORT",
        help="serve Prometheus metrics there (such as 127.0.0.1:9100); off by default",
    )


def _log_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    command.add_argument(
        "--log-file",
        type=Path,
        help="append the log to this file (default: standard error); reopened when moved",
    )
    command.add_argument(
        "--log-format",
        choices=("json", "text"),
        default="json",
        help="json: one JSON object a line (the default); text: one line for a person",
    )


def _log_args(args: argparse.Namespace) -> list[str]:
    """The log options of `args` as arguments again (for the children of `--workers`)."""
    out = ["--log-level", args.log_level, "--log-format", args.log_format]
    if args.log_file is not None:
        out += ["--log-file", str(args.log_file)]
    return out


def _nats_arguments(command: argparse.ArgumentParser) -> None:
    nats = command.add_argument_group("NATS (the bus between the lobby and the fronts)")
    nats.add_argument(
        "--nats",
        required=True,
        metavar="URL",
        help="the NATS server: nats://HOST:4222, tls://HOST:4222, several comma-separated",
    )
    nats.add_argument("--nats-user", metavar="USER", help="NATS user name")
    nats.add_argument(
        "--nats-password",
        metavar="PASSWORD",
        help=f"NATS password (better: the {NATS_PASSWORD} environment variable)",
    )
    nats.add_argument("--nats-creds", type=Path, metavar="FILE", help="a NATS .creds file")
    nats.add_argument("--nats-tls-ca", type=Path, metavar="FILE", help="CA of the server's cert")
    nats.add_argument("--nats-tls-cert", type=Path, metavar="FILE", help="client certificate")
    nats.add_argument("--nats-tls-key", type=Path, metavar="FILE", help="its private key")


def _parser() -> argparse.ArgumentParser:
    description = __doc__.split("\n\n")[0].replace("\n", " ")
    parser = argparse.ArgumentParser(prog="perudo-ssh", description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the SSH game server")
    config_help = "the TOML configuration file (default perudo.toml; missing is fine)"
    serve.add_argument("--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help)
    # None: not given, so the config file's [server] setting or the default applies
    serve.add_argument("--listen", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="TCP port (default 2222)")
    serve.add_argument("--host-keys", type=Path, help="folder of the host key (default host_keys)")
    serve.add_argument(
        "--db", type=Path, help="the database file, created on first start (default perudo.db)"
    )
    serve.add_argument(
        "--workers",
        type=int,
        nargs="?",
        const=0,
        metavar="N",
        help="every core: a lobby process and N front processes sharing the port, over a "
        "nats-server of their own (N: the number of cores when not given)",
    )
    _metrics_option(serve)
    _log_options(serve)
    lobby = sub.add_parser(
        "lobby", help="run the lobby process: the game, the database; fronts reach it over NATS"
    )
    _nats_arguments(lobby)
    lobby.add_argument("--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help)
    lobby.add_argument(
        "--db", type=Path, help="the database file, created on first start (default perudo.db)"
    )
    _metrics_option(lobby)
    _log_options(lobby)
    front = sub.add_parser(
        "front", help="run a front process: the SSH server and the screens, no game state"
    )
    _nats_arguments(front)
    front.add_argument("--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help)
    front.add_argument("--listen", help="address to listen on (default 127.0.0.1)")
    front.add_argument("--port", type=int, help="TCP port (default 2222)")
    front.add_argument("--host-keys", type=Path, help="folder of the host key (default host_keys)")
    front.add_argument(
        "--reuse-port",
        action="store_true",
        help="share the port with other fronts of this machine (SO_REUSEPORT)",
    )
    _metrics_option(front)
    _log_options(front)
    referee = sub.add_parser("referee", help="check a perudo-record/1 game record")
    referee.add_argument("record", help="a record file, or - for standard input")
    analyse = sub.add_parser(
        "analyse", help="explain a perudo-record/1 game: every move's odds, the costly ones"
    )
    analyse.add_argument("record", help="a record file, or - for standard input")
    admin = sub.add_parser(
        "admin", help="add, remove or list admins in the config file; mark bot accounts"
    )
    actions = admin.add_subparsers(dest="action", required=True)
    for action, text in (
        ("add", "make a player (all their keys) or one key fingerprint an admin"),
        ("remove", "take admin rights from a player's keys or one key fingerprint"),
        ("list", "print every admin: fingerprint and label"),
    ):
        command = actions.add_parser(action, help=text)
        if action != "list":
            command.add_argument("who", metavar="NAME|FINGERPRINT", help="SHA256:... or a name")
            command.add_argument("--db", type=Path, help="the player database to look NAME up in")
        command.add_argument(
            "--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help
        )
    motd = actions.add_parser(
        "motd", help="set the message of the day shown in the lobby (the server need not restart)"
    )
    motd.add_argument("text", nargs="?", metavar="TEXT", help="the message (plain text)")
    motd.add_argument("--clear", action="store_true", help="show no message of the day")
    motd.add_argument("--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help)
    bot = actions.add_parser(
        "bot", help="make a player's account a bot account (it plays with `ssh HOST play`)"
    )
    bot.add_argument("name", metavar="NAME", help="the account's name")
    bot.add_argument("--remove", action="store_true", help="make it a person's account again")
    bot.add_argument("--db", type=Path, help="the player database (default: as serve)")
    bot.add_argument("--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help)
    backup = sub.add_parser(
        "backup", help="copy the database to FILE, safely while the server runs (SQLite backup)"
    )
    restore = sub.add_parser(
        "restore", help="put a backup FILE in place of the database (no server may be running)"
    )
    for command, what in ((backup, "the backup to write"), (restore, "the backup to restore")):
        command.add_argument("file", type=Path, metavar="FILE", help=what)
        command.add_argument("--db", type=Path, help="the database (default: as serve)")
        command.add_argument(
            "--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help
        )
    health = sub.add_parser("health", help="exit 0 if the SSH server answers (a health check)")
    health.add_argument("--listen", help="the server's address (default: as serve)")
    health.add_argument("--port", type=int, help="its port (default: as serve)")
    health.add_argument("--config", type=Path, default=configuration.DEFAULT_PATH, help=config_help)
    health.add_argument("--timeout", type=float, default=5.0, help="seconds to wait (default 5)")
    return parser


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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["referee"]:  # its own arguments: wrong ones are one line (RECORD.md)
        return referee_command(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "analyse":
        return analyse_command(args.record)
    if args.command == "admin":
        return admin_command(args)
    if args.command == "health":
        return health_command(args)
    if args.command in ("backup", "restore"):
        from perudo_ssh.db_commands import backup_command, restore_command

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
                    _log_args(args),
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
    except Exception as exc:  # NATS cannot be reached, the metrics' port is taken
        from perudo_ssh.bus.base import BusError
        from perudo_ssh.metrics import MetricsUnavailable

        if not isinstance(exc, BusError | MetricsUnavailable):
            raise
        print(f"perudo-ssh {command}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
