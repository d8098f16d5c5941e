"""The server's persistent SSH host key."""

from __future__ import annotations

import logging
import os
import secrets
import stat
from pathlib import Path

import asyncssh

logger = logging.getLogger(__name__)

HOST_KEY_NAME = "ssh_host_ed25519_key"


def load_or_create_host_key(directory: Path) -> asyncssh.SSHKey:
    """Return the ed25519 host key kept in `directory`, creating it on first use.

    The key file is `directory/ssh_host_ed25519_key`, mode 0600, in a directory
    created with mode 0700. Creation is atomic and exclusive (written to a
    temporary file, then hard-linked into place), so a crash never leaves a
    truncated key and two servers starting at once agree on one key.

    Raises:
        OSError: the directory or key file cannot be created or read.
        asyncssh.KeyImportError: the existing key file is not a valid key.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / HOST_KEY_NAME
    if not path.exists():
        _create_key_file(path)
    _tighten_mode(path)
    return asyncssh.read_private_key(path)


def _create_key_file(path: Path) -> None:
    key = asyncssh.generate_private_key("ssh-ed25519", comment="perudo-ssh host key")
    # pid and a random part: two containers sharing the folder may both be process 1
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(key.export_private_key())
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            # Another process won the race: its key is the one to use.
            return
        logger.info("generated SSH host key %s (%s)", path, key.get_fingerprint("sha256"))
    finally:
        temporary.unlink(missing_ok=True)


def _tighten_mode(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        logger.warning("host key %s had mode %o; setting 0600", path, mode)
        path.chmod(0o600)
