"""The lines the SSH layer itself writes on a client's terminal, in the client's language.

When no app runs (no PTY, a command asked for, a crash, a session limit met) or once its
app has gone, the SSH layer speaks to the client directly: one plain line, translated here
for this one client from the locale its environment sent (OpenSSH's `SendEnv LANG LC_*`).
Separate from the sessions that write them (`session`, `commands`) as it holds only what is
said and how it is made safe, not when.
"""

from __future__ import annotations

from collections.abc import Mapping

from perudo_ssh.chat import clean_chat
from perudo_ssh.i18n import N_, language_of, translator

NO_PTY_MESSAGE = N_("perudo-ssh needs an interactive terminal: run `ssh -t ...`")
EXEC_MESSAGE = N_("perudo-ssh does not run commands: connect with plain `ssh ...`")
CRASH_MESSAGE = N_("perudo-ssh: something went wrong and this session ended. Sorry!")

MAX_FAREWELL = 500
"""Longest farewell printed, in characters."""

LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The client's environment variables that choose its language, strongest first (POSIX)."""


def locale_of(env: Mapping[str, str]) -> str | None:
    """The client's locale from the environment it sent (OpenSSH's `SendEnv LANG LC_*`):
    the first non-empty of `LOCALE_VARIABLES`, at most 64 characters; None if none."""
    for name in LOCALE_VARIABLES:
        value = env.get(name, "")[:64]
        if value:
            return value
    return None


def client_text(message: str, lang: str | None, /, **args: object) -> bytes:
    """`message` (an `N_` id, with its named `args`) in the language of locale `lang`, as one
    terminal line.

    Said by the SSH layer itself when no app runs (no PTY, a command, a crash, a session
    limit), so it is translated here, for this one client, from the locale it sent."""
    return translator(language_of(lang))._(message, **args).encode() + b"\r\n"


def farewell_line(farewell: object) -> bytes | None:
    """The line printed after an app that left `farewell` (a str: why it ended; see
    `perudo_ssh.ssh.session`) has exited: `perudo-ssh: <farewell>` as plain text — every
    escape sequence and control character dropped (an admin typed part of it), at most
    `MAX_FAREWELL` characters — or None when there is nothing to say."""
    if not isinstance(farewell, str):
        return None
    text = clean_chat(farewell)
    if text is None:
        return None
    return f"perudo-ssh: {text[:MAX_FAREWELL]}".encode() + b"\r\n"
