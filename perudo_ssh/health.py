"""`perudo-ssh health`: is an SSH server answering on this address? (issue 15: the
container's health check, a monitoring probe.)

It opens a TCP connection, reads the server's SSH identification line (RFC 4253 §4.2:
`SSH-2.0-…`) and closes — no key exchange, no login, so it costs the server one accepted
connection and is never counted as a player. Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import socket
import time

WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
"""A server listening on every address is probed on loopback."""


class Unhealthy(Exception):
    """No SSH server answered: the message says what happened instead."""


def ssh_identification(host: str, port: int, timeout: float = 5.0) -> str:
    """The SSH identification line (`SSH-2.0-AsyncSSH_2.21.0`, without its CR LF) of the
    server on `host:port` (a wildcard address probes loopback), read within `timeout`
    seconds. Raises `Unhealthy`: refused, timed out, or something that is not SSH."""
    host = WILDCARDS.get(host, host)
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as conn:
            data = b""
            # a server may send other lines before its identification (RFC 4253 §4.2)
            while not any(line.startswith(b"SSH-") for line in data.split(b"\n")[:-1]):
                if len(data) > 8192:
                    raise Unhealthy(f"{host}:{port} does not speak SSH")
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = conn.recv(1024)
                if not chunk:
                    raise Unhealthy(f"{host}:{port} closed the connection before saying SSH")
                data += chunk
    except TimeoutError:
        raise Unhealthy(f"{host}:{port} did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise Unhealthy(f"{host}:{port}: {exc.strerror or exc}") from None
    line = next(line for line in data.split(b"\n") if line.startswith(b"SSH-"))
    return line.rstrip(b"\r").decode("ascii", "replace")
