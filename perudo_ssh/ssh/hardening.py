"""What the SSH server offers and accepts from a stranger (issue 11): a modern set of
algorithms only, no compression, and only the few environment variables it uses.

Algorithms: like OpenSSH 9.x's defaults without SHA-1 or small groups — key exchange by the
ML-KEM/X25519 hybrid, X25519, the NIST curves or a fixed MODP group of 2048 bits or more (no
group exchange: asyncssh hands out a 1024-bit group to a client that asks for one), ciphers
AES-GCM and AES-CTR (not chacha20-poly1305: see `ENCRYPTION_ALGS`), MACs only
encrypt-then-MAC SHA-2, host keys ed25519, user keys ed25519, ECDSA (security keys too) and
RSA with SHA-2 signatures. No compression: `zlib@openssh.com` decompresses a packet without
an output cap (16 KB on the wire became 16 MB in memory).

Environment: a session channel's `env` requests are answered, but only `ENV_NAMES` (and
`LC_*`) are stored, at most `MAX_ENV` of them, each name and value at most `MAX_ENV_BYTES`;
anything else is refused and not stored (asyncssh's own channel stores every request, with no
limit on their number or size).
"""

from __future__ import annotations

from typing import Final

import asyncssh
from asyncssh.packet import SSHPacket

__all__ = [
    "COMPRESSION_ALGS",
    "ENCRYPTION_ALGS",
    "ENV_NAMES",
    "KEX_ALGS",
    "MAC_ALGS",
    "MAX_ENV",
    "MAX_ENV_BYTES",
    "SIGNATURE_ALGS",
    "GuardedChannel",
    "env_accepted",
]

KEX_ALGS: Final = (
    "mlkem768x25519-sha256",
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
    "ecdh-sha2-nistp521",
    "diffie-hellman-group16-sha512",
    "diffie-hellman-group14-sha256",
)
"""Key exchanges offered, best first. diffie-hellman-group18-sha512 is left out as well: at
about 20 ms of server CPU a handshake it is the one a stranger would pick to load the
server, and every client that has it has group16 and the curves."""
ENCRYPTION_ALGS: Final = (
    "aes256-gcm@openssh.com",
    "aes128-gcm@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
)
"""Ciphers offered (the AEAD ones carry their own MAC). Not chacha20-poly1305: a client
takes the first cipher of its own list that the server offers, and OpenSSH's, PuTTY's and
asyncssh's lists start with it, so offered it would seal nearly every packet, at ~10 µs for
a 300-byte frame against ~2 µs for AES-GCM and ~3 µs for AES-CTR with HMAC-SHA2-256-EtM
(OpenSSL's AES runs on the CPU's AES instructions; ChaCha20 and Poly1305 are two calls and a
new cipher object each packet). SSH clients in use all have AES-CTR, most AES-GCM too:
OpenSSH picks aes128-ctr with hmac-sha2-256-etm, asyncssh AES-GCM (issue 10)."""
MAC_ALGS: Final = ("hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com")
"""MACs offered for the CTR ciphers: encrypt-then-MAC, SHA-2 only."""
COMPRESSION_ALGS: Final = ("none",)
"""No compression (see the module docstring)."""
SIGNATURE_ALGS: Final = (
    "ssh-ed25519",
    "sk-ssh-ed25519@openssh.com",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "rsa-sha2-512",
    "rsa-sha2-256",
)
"""Signatures accepted from a user key (no `ssh-rsa`: SHA-1)."""

ENV_NAMES: Final = frozenset({"LANG", "LC_ALL", "LC_MESSAGES", "TERM", "COLORTERM"})
"""The environment variables the server reads; any other `LC_*` is stored too (OpenSSH's
`SendEnv LANG LC_*` sends them all) and ignored."""
MAX_ENV: Final = 16
"""Environment variables stored per channel; more are refused."""
MAX_ENV_BYTES: Final = 256
"""Longest name, and longest value, of a stored environment variable, in bytes."""


def env_accepted(name: bytes, value: bytes, stored: int) -> bool:
    """Whether an `env` request for `name`=`value` is stored, `stored` being already stored
    on the channel: a name of `ENV_NAMES` or `LC_*`, both at most `MAX_ENV_BYTES`, fewer than
    `MAX_ENV` stored so far."""
    if stored >= MAX_ENV or len(name) > MAX_ENV_BYTES or len(value) > MAX_ENV_BYTES:
        return False
    try:
        text = name.decode("ascii")
    except UnicodeDecodeError:
        return False
    return text in ENV_NAMES or (text.startswith("LC_") and text[3:].isalpha())


class GuardedChannel(asyncssh.SSHServerChannel):  # type: ignore[type-arg]
    """asyncssh's server channel, storing only the environment `env_accepted` accepts.

    Made by `guard(chan)` from the channel asyncssh's connection creates (same fields)."""

    def _process_env_request(self, packet: SSHPacket) -> bool:
        name = packet.get_string()
        value = packet.get_string()
        packet.check_end()
        stored = len(self._env) - (name in self._env)  # sent again: replaces, takes no room
        if not env_accepted(name, value, stored):
            return False  # refused, and not stored
        self._env[name] = value
        return True


def guard(chan: asyncssh.SSHServerChannel) -> asyncssh.SSHServerChannel:  # type: ignore[type-arg]
    """`chan` made a `GuardedChannel` (it is one from now on; nothing else changes)."""
    chan.__class__ = GuardedChannel
    return chan
