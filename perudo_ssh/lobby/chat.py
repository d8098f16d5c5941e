"""Chat in the lobby and at tables (issue 4, item 5; `perudo_ssh.chat` cleans the lines and
limits their rate): a line said, the lines kept, the history sent to who arrives. Functions
of the lobby, called on the actor's turn only. Imports neither textual nor asyncssh."""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Literal

from perudo_ssh import protocol
from perudo_ssh.chat import (
    HISTORY,
    MAX_CHAT_LENGTH,
    MAX_RAW_LENGTH,
    RATE_LINES,
    RATE_SECONDS,
    clean_chat,
)
from perudo_ssh.i18n import N_
from perudo_ssh.lobby.clients import Client
from perudo_ssh.lobby.table import Refusal

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)


def muted(lobby: Lobby, client: Client) -> str | None:
    """Why `client` may not chat now ("" for no reason given), or None: it may."""
    mute = lobby.moderation.muted(client.account_id, client.id)  # an admin's Mute
    return None if mute is None else mute.reason


def say(lobby: Lobby, client: Client, text: str) -> None:
    """`Say(text)`: the cleaned line goes to everyone where `client` is — its table's
    players and spectators, or everyone in the lobby — the speaker included, and into
    that scope's history. Refused, changing nothing (the rate limit included), when
    `client` is muted, when nothing printable is left, when it is too long; refused when
    it comes too fast (that costs nothing either)."""
    reason = muted(lobby, client)
    if reason is not None:
        # told until when, as the mute's notice told it (UTC: the lobby has no client's zone)
        mute = lobby.moderation.muted(client.account_id, client.id)
        until = mute.until if mute is not None else None
        args: dict[str, str | int] = {"reason": reason} if reason else {}
        if until is not None:
            args["until"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime(until))
        why = {
            (True, True): N_("you may not chat until {until} UTC: {reason}"),
            (True, False): N_("you may not chat: {reason}"),
            (False, True): N_("you may not chat until {until} UTC"),
            (False, False): N_("you may not chat now"),
        }[bool(reason), until is not None]
        raise Refusal("muted", why, args)
    if not isinstance(text, str) or len(text) > MAX_RAW_LENGTH:
        raise Refusal(
            "chat_too_long", N_("a chat line is at most {n} characters"), {"n": MAX_CHAT_LENGTH}
        )
    line = clean_chat(text)
    if line is None:
        raise Refusal("chat_empty", N_("a chat line needs some text"))
    if len(line) > MAX_CHAT_LENGTH:
        raise Refusal(
            "chat_too_long", N_("a chat line is at most {n} characters"), {"n": MAX_CHAT_LENGTH}
        )
    if not client.chat.allow(lobby.chat_clock()):
        raise Refusal(
            "chat_rate",
            N_("slow down: at most {lines} chat lines every {seconds} seconds"),
            {"lines": RATE_LINES, "seconds": round(RATE_SECONDS)},
        )
    table = lobby.tables.get(client.table) if client.table is not None else None
    said = protocol.ChatLine(
        id=next(lobby._chat_ids),
        scope="lobby" if table is None else "table",
        table=None if table is None else table.id,
        name=client.name,
        text=line,
        bot_account=client.bot_account,
    )
    scope = None if table is None else table.id
    lobby._chat.setdefault(scope, deque(maxlen=HISTORY)).append(said)
    if table is not None:
        listeners = [lobby._clients[sid] for sid in table.sessions() if sid in lobby._clients]
    else:
        listeners = [c for c in lobby._clients.values() if c.table is None]
    data = protocol.encode(said)
    for listener in listeners:
        lobby.deliver(listener, data)


def send_chat_history(lobby: Lobby, client: Client) -> None:
    """The last lines said where `client` has just arrived (its table, or the lobby),
    if any."""
    lines = lobby._chat.get(client.table)
    if lines:
        scope: Literal["lobby", "table"] = "lobby" if client.table is None else "table"
        history = protocol.ChatHistory(scope=scope, table=client.table, lines=tuple(lines))
        lobby.tell(client, history)


# ---- the game flow -------------------------------------------------------------------
