"""The Textual messages that cross the lobby/UI boundary (STYLE.md item 6).

`LobbyEventArrived` is the only way a lobby event enters the UI (posted by the app's
receive worker); `Send` is the only way a screen asks for a lobby command (the app hands it
to the session).
"""

from __future__ import annotations

from textual.message import Message

from perudo_ssh import protocol


class LobbyEventArrived(Message):
    """An event from the lobby actor, for the app to route to its screens."""

    def __init__(self, event: protocol.Event) -> None:
        super().__init__()
        self.event = event


class Send(Message):
    """A screen's intention, as the lobby command the app must send."""

    def __init__(self, command: protocol.Command) -> None:
        super().__init__()
        self.command = command
