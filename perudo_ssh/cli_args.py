"""The `perudo-ssh` command line: its arguments (`build_parser`), and the settings of
`serve`, `lobby` and `front` they make with the configuration file (`serve_settings`,
`nats_options`). `perudo_ssh.cli` runs the commands.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from perudo_ssh import config as configuration
from perudo_ssh.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from perudo_ssh.bus.nats_bus import NatsOptions

DESCRIPTION = (
    "Perudo over SSH: serve the game (one process, every core, or a lobby and its fronts), "
    "referee or explain a game record, name the admins, back up and restore the database."
)


class ServeSettings(NamedTuple):
    """What `serve` runs with: `listen` address, TCP `port` (0: any free one), `host_keys`
    folder, `db` the player database file (None: the store's own default), the server's
    `limits` (the config file's `[limits]` over the defaults) and the `banner` clients show
    before their login (`ServerSettings.banner_text`; None: none)."""

    listen: str
    port: int
    host_keys: Path
    db: Path | None
    limits: Limits = DEFAULT_LIMITS
    banner: str | None = None


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
        banner=settings.banner_text(),
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


def log_args(args: argparse.Namespace) -> list[str]:
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


def build_parser() -> argparse.ArgumentParser:
    """The parser of every `perudo-ssh` command but `referee` (which reads its own)."""
    description = DESCRIPTION
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
