"""A stand-in for OpenSSH's `ssh` where it is not installed, for the tests that run a program
through the `ssh` command (the bot API's example client): asyncssh as the client, over TCP.

    python tests/ssh_shim.py [-T] [-i KEY] [-p PORT] [-o OPTION]... USER@HOST COMMAND...

Standard input goes to the remote command, its output to standard output; exits with its
exit status. Host keys are not checked (a test server on loopback); `-o` options are ignored.
"""

from __future__ import annotations

import asyncio
import sys
import threading

import asyncssh


async def main(argv: list[str]) -> int:
    key, port, rest = None, 22, []
    args = iter(argv)
    for arg in args:
        if arg == "-T":
            continue
        if arg in ("-i", "-p", "-o"):
            value = next(args)
            key = value if arg == "-i" else key
            port = int(value) if arg == "-p" else port
            continue
        rest.append(arg)
    user, host = rest[0].split("@", 1)
    async with asyncssh.connect(
        host, port, username=user, client_keys=[key], known_hosts=None, config=None
    ) as conn:
        process = await conn.create_process(" ".join(rest[1:]), encoding=None)
        loop = asyncio.get_running_loop()

        def copy_in() -> None:  # a daemon thread: it must not keep the process alive
            while data := sys.stdin.buffer.read1(65536):
                loop.call_soon_threadsafe(process.stdin.write, data)
            loop.call_soon_threadsafe(process.stdin.write_eof)

        threading.Thread(target=copy_in, daemon=True).start()
        while data := await process.stdout.read(65536):
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        completed = await process.wait()
        return completed.exit_status or 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
