"""The base of every message between sessions and the lobby: the msgspec Struct settings that
commands and events share (STYLE.md 3). Its own module so that each group of messages
(commands, admin, views, events) builds on it without importing one another.
"""

from __future__ import annotations

import msgspec


class Message(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shared settings of every command and event."""
