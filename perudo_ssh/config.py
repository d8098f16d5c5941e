"""The server's TOML configuration file (issue 4, item 6): server settings, the admins and the
limits (issue 5, item 4).

```toml
[server]                # every setting optional; a command-line flag wins over it
listen = "127.0.0.1"
port = 2222
host_keys = "host_keys" # a relative path is taken from the config file's folder
db = "perudo.db"

[admins]                # "key fingerprint" = "who it is" (a label: only the key counts)
"SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU" = "ana"

[limits]                # every setting optional: see perudo_ssh.limits.Limits for each one
max_sessions = 200
lobby_idle_timeout = 1800.0
```

Admins are people by the SSH key they log in with (its SHA256 fingerprint, as `ssh-keygen
-lf` prints it). A missing file is an empty configuration; a malformed one is a `ConfigError`
naming the file and the line. `perudo-ssh admin add|remove|list` edits the file through
`add_admin`/`remove_admin`, which keep its comments and layout (tomlkit); reading uses the
standard library's `tomllib`.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import tomllib
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec
import tomlkit

from perudo_ssh.limits import DEFAULT_LIMITS, Limits, limit_error

DEFAULT_PATH: Final = Path("perudo.toml")
"""The configuration file used when `--config` is not given (in the working folder)."""

Resolver = Callable[[str], Sequence[str]]
"""Gives the key fingerprints of the account with a player name (empty: no such account)."""

_FINGERPRINT = re.compile(r"SHA256:[A-Za-z0-9+/]{43}")
_SERVER_KEYS: Final = ("listen", "port", "host_keys", "db", "name", "banner", "motd")
TEXT_LIMITS: Final = {"name": 40, "banner": 1000, "motd": 300}
"""The longest `[server]` texts, in characters: the server's name, the pre-login banner, the
message of the day."""
_HEADER = """\
# perudo-ssh configuration (see README.md, "Configuration").
"""
_ADMINS_COMMENT = '"key fingerprint" = "who it is" (a label: only the key counts)'


class ConfigError(ValueError):
    """A configuration file that cannot be used, or an admin edit that cannot be made.

    `str(err)` is one line naming the file and, where there is one, the line:
    `perudo.toml, line 3: port must be a whole number from 0 to 65535`."""


class ServerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The `[server]` table: each setting None when the file does not give it.

    `listen` an address, `port` 0–65535 (0: any free port), `host_keys` the folder of the SSH
    host key, `db` the player database file; paths absolute or relative to the working folder
    (a relative path in the file is taken from the file's folder). Issue 15, item 5: `name`
    the server's name (the lobby's title, `{name}` in the banner), `banner` the text SSH
    clients show before login (asyncssh's auth banner), `motd` the message of the day shown
    in the lobby — plain text of at most `TEXT_LIMITS` characters, no control characters
    but line breaks (none in `name`)."""

    listen: str | None = None
    port: int | None = None
    host_keys: Path | None = None
    db: Path | None = None
    name: str | None = None
    banner: str | None = None
    motd: str | None = None

    def banner_text(self) -> str | None:
        """The banner with `{name}` filled in (the name, else "perudo-ssh"), ending in a
        line break; None when there is none."""
        if not self.banner:
            return None
        text = self.banner.replace("{name}", self.name or "perudo-ssh")
        return text if text.endswith("\n") else text + "\n"


class Config(msgspec.Struct, frozen=True, kw_only=True):
    """A loaded configuration: `server` settings, `admins` (key fingerprint → label) and the
    server's `limits` (the defaults, overridden by the file's `[limits]` table)."""

    server: ServerSettings = ServerSettings()
    admins: Mapping[str, str] = msgspec.field(default_factory=dict)
    limits: Limits = DEFAULT_LIMITS


def is_fingerprint(text: str) -> bool:
    """Whether `text` is an OpenSSH SHA256 key fingerprint: `SHA256:` and 43 base64 characters
    (what `ssh-keygen -lf` and asyncssh's `get_fingerprint("sha256")` print)."""
    return _FINGERPRINT.fullmatch(text) is not None


def is_admin(config: Config, fingerprint: str | None) -> bool:
    """Whether the key `fingerprint` belongs to an admin; a guest (None) never does."""
    return fingerprint is not None and fingerprint in config.admins


def _line_of(text: str, table: str, key: str | None = None) -> int | None:
    """The 1-based line of `[table]`'s header, or of `key` in it (`table` "" for the keys
    before any header); None if not found (a key written in another TOML form, such as a
    dotted key or an inline table)."""
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        header = re.fullmatch(r"\[\s*([^\[\]]+?)\s*\]\s*(#.*)?", stripped)
        if header:
            current = header.group(1).strip("\"'")
            if key is None and current == table:
                return number
            continue
        if current == table and key is not None:
            name = re.match(r"""("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""", stripped)
            if name and name.group(1).strip("\"'") == key:
                return number
    return None


def _error(path: Path, text: str, message: str, table: str, key: str | None = None) -> ConfigError:
    line = _line_of(text, table, key) or (_line_of(text, table) if key else None)
    where = f"{path}, line {line}" if line else str(path)
    return ConfigError(f"{where}: {message}")


def _server_settings(path: Path, text: str, table: Any) -> ServerSettings:
    if not isinstance(table, dict):
        return ServerSettings()
    settings: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _SERVER_KEYS:
            known = ", ".join(_SERVER_KEYS)
            raise _error(path, text, f"unknown setting {key!r} (known: {known})", "server", key)
        if key == "port":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
                message = f"port must be a whole number from 0 to 65535, not {value!r}"
                raise _error(path, text, message, "server", key)
            settings[key] = value
        elif key in TEXT_LIMITS:
            problem = _text_problem(key, value)
            if problem is not None:
                raise _error(path, text, problem, "server", key)
            settings[key] = value.strip()
        elif not isinstance(value, str) or not value:
            message = f"{key} must be a non-empty string, not {value!r}"
            raise _error(path, text, message, "server", key)
        elif key == "listen":
            settings[key] = value
        else:
            settings[key] = path.parent / value
    return ServerSettings(**settings)


def _text_problem(key: str, value: object) -> str | None:
    """What is wrong with `value` as the `[server]` text `key`, or None."""
    if not isinstance(value, str):
        return f"{key} must be a string, not {value!r}"
    if len(value) > TEXT_LIMITS[key]:
        return f"{key} is {len(value)} characters long: at most {TEXT_LIMITS[key]}"
    allowed = "" if key == "name" else "\n"
    bad = next((c for c in value if unicodedata.category(c) == "Cc" and c not in allowed), None)
    if bad is not None:
        return f"{key} must not hold the control character {bad!r}"
    return None


def _limits(path: Path, text: str, table: Any) -> Limits:
    """The `[limits]` table over the defaults: every key a field of `Limits`, each value of
    its type and range (`limit_error`)."""
    defaults = DEFAULT_LIMITS
    if not isinstance(table, dict):
        return defaults
    settings: dict[str, Any] = {}
    for key, value in table.items():
        error = limit_error(key, value)
        if error is not None:
            raise _error(path, text, error, "limits", key)
        settings[key] = type(getattr(defaults, key))(value)  # seconds: 5 is 5.0
    return Limits(**settings)


def _admins(path: Path, text: str, table: Any) -> dict[str, str]:
    admins: dict[str, str] = {}
    for key, value in table.items():
        if not is_fingerprint(key):
            message = f"{key!r} is not a key fingerprint (SHA256: and 43 characters)"
            raise _error(path, text, message, "admins", key)
        if not isinstance(value, str):
            message = f"the label of {key} must be a string, not {value!r}"
            raise _error(path, text, message, "admins", key)
        admins[key] = value
    return admins


def parse_config(text: str, path: Path = DEFAULT_PATH) -> Config:
    """The `Config` in TOML `text` (read from `path`, which error messages name and relative
    paths are taken from). Raises `ConfigError`: TOML syntax (tomllib gives the line and
    column), an unknown table or setting, a value of the wrong type or range (a negative
    limit), an admin entry that is not a fingerprint."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for name, table in document.items():
        if name not in ("server", "admins", "limits"):
            message = f"unknown table or setting {name!r} (known: [server], [admins], [limits])"
            raise (
                _error(path, text, message, name)
                if isinstance(table, dict)
                else _error(path, text, message, "", name)
            )
        if not isinstance(table, dict):
            raise _error(path, text, f"{name} must be a table: [{name}]", "", name)
    return Config(
        server=_server_settings(path, text, document.get("server")),
        admins=_admins(path, text, document.get("admins", {})),
        limits=_limits(path, text, document.get("limits")),
    )


def file_signature(path: Path) -> tuple[int, int] | None:
    """What tells a changed file at `path` from the one read before: (modification time in
    ns, size); None when it cannot be read (missing)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def load_config(path: Path = DEFAULT_PATH) -> Config:
    """The configuration in the file at `path`; a missing file is the empty `Config()`
    (no settings, no admins). Raises `ConfigError` for a file that cannot be read or is
    malformed (see `parse_config`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"{path}: cannot read it: {reason}") from None
    return parse_config(text, path)


def _document(path: Path) -> tomlkit.TOMLDocument:
    """The file as an editable document (a new one with a header comment if missing),
    after checking it loads (`ConfigError` otherwise: a broken file is not edited)."""
    load_config(path)
    if not path.exists():
        document = tomlkit.document()
        document.add(tomlkit.comment(_HEADER.strip("# \n")))
        return document
    return tomlkit.parse(path.read_text(encoding="utf-8"))


def _admins_table(document: tomlkit.TOMLDocument) -> Any:
    if "admins" not in document:
        table = tomlkit.table()
        table.add(tomlkit.comment(_ADMINS_COMMENT))
        document.add("admins", table)
    return document["admins"]


def _write(path: Path, document: tomlkit.TOMLDocument) -> None:
    """Replace the file in one step (a crash leaves the old file or the new one, never half)."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
        os.chmod(temporary, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(tomlkit.dumps(document))
        os.replace(temporary, path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write it: {exc.strerror}") from None


def _fingerprints_of(who: str, resolve: Resolver | None) -> list[str]:
    if is_fingerprint(who):
        return [who]
    if who.startswith("SHA256:"):
        raise ConfigError(f"{who!r} is not a key fingerprint (SHA256: and 43 characters)")
    if resolve is None:
        raise ConfigError(f"{who!r} is not a key fingerprint, and no player database to look up")
    fingerprints = list(resolve(who))
    if not fingerprints:
        raise ConfigError(f"no player named {who!r} has logged in with a key")
    return fingerprints


def add_admin(path: Path, who: str, resolve: Resolver | None = None) -> list[str]:
    """Make `who` an admin in the file at `path` (created if missing): a key fingerprint, or
    a player name whose keys `resolve` gives (all of that account's keys, labelled with it).

    Returns the fingerprints added, in order; one already an admin is not added again (so
    `[]` means nothing changed and the file is not rewritten). Raises `ConfigError` for a
    malformed file, a malformed fingerprint, a name without `resolve` or without keys."""
    fingerprints = _fingerprints_of(who, resolve)
    label = "" if is_fingerprint(who) else who
    document = _document(path)
    admins = _admins_table(document)
    added = [fp for fp in dict.fromkeys(fingerprints) if fp not in admins]
    for fingerprint in added:
        admins[fingerprint] = label
    if added:
        _write(path, document)
    return added


def remove_admin(path: Path, who: str, resolve: Resolver | None = None) -> list[str]:
    """Take admin rights away in the file at `path`: a key fingerprint, or a player name —
    every key labelled with that name, and every key `resolve` gives for it.

    Returns the fingerprints removed (`[]`: none was an admin; the file is left as it was).
    Raises `ConfigError` for a malformed file or fingerprint."""
    if who.startswith("SHA256:") and not is_fingerprint(who):
        raise ConfigError(f"{who!r} is not a key fingerprint (SHA256: and 43 characters)")
    config = load_config(path)
    if is_fingerprint(who):
        wanted = {who}
    else:
        wanted = {fp for fp, label in config.admins.items() if label == who}
        wanted |= set(resolve(who) if resolve is not None else ())
    removed = [fp for fp in config.admins if fp in wanted]
    if removed:
        document = _document(path)
        admins = _admins_table(document)
        for fingerprint in removed:
            del admins[fingerprint]
        _write(path, document)
    return removed


def set_motd(path: Path, motd: str | None) -> bool:
    """Set the message of the day (`[server] motd`) in the file at `path` (created if
    missing), or remove it (`motd` None or empty); a running server shows it within seconds
    (`perudo_ssh.lobby.notes`). Returns whether the file changed. Raises `ConfigError` for a
    malformed file or a message that is too long or holds control characters."""
    motd = (motd or "").strip()
    if motd:
        problem = _text_problem("motd", motd)
        if problem is not None:
            raise ConfigError(problem)
    if (load_config(path).server.motd or "") == motd:
        return False
    document = _document(path)
    if "server" not in document:
        if not motd:
            return False
        document.add("server", tomlkit.table())
    server: Any = document["server"]
    if motd:
        server["motd"] = motd
    else:
        del server["motd"]
    _write(path, document)
    return True
