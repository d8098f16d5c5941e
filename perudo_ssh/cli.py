"""The `perudo-ssh` command: `serve` the game over SSH, or `referee` a game record.

perudo-ssh serve [--listen 127.0.0.1] [--port 2222] [--host-keys host_keys]
perudo-ssh referee RECORD.json|-        (RECORD.md "The referee")
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from perudo_ssh.record import MalformedRecord, decode_record
from perudo_ssh.referee import USAGE, encode_verdict, verdict_of


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
    source = argv[0]
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        print(f"perudo-ssh referee: cannot read {source}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        record = decode_record(data)
    except MalformedRecord as exc:
        print(f"perudo-ssh referee: malformed record: {exc}", file=sys.stderr)
        return 2
    verdict = verdict_of(record)
    sys.stdout.flush()
    sys.stdout.buffer.write(encode_verdict(verdict) + b"\n")
    sys.stdout.flush()
    return 0 if verdict.legal else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="perudo-ssh", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the SSH game server")
    serve.add_argument("--listen", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=2222, help="TCP port (default 2222)")
    serve.add_argument(
        "--host-keys", type=Path, default=Path("host_keys"), help="folder of the host key"
    )
    serve.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    referee = sub.add_parser("referee", help="check a perudo-record/1 game record")
    referee.add_argument("record", help="a record file, or - for standard input")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "referee":
        return referee_command([args.record])
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from perudo_ssh.serve import serve_forever

    try:
        asyncio.run(serve_forever(args.listen, args.port, args.host_keys))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
