"""Keys taken one at a time: a key read with others goes where the keys before it left the
focus (found chasing a lost chat line in issue 10's load bench; nothing a player types is
lost).

A terminal driver posts every key of one read to the app at once: a paste, a fast typist,
or any typist on a laggy link (the keys wait in the network and arrive together). Textual
routes each key to the widget focused when the app takes it from its queue, and a key's
bindings run only when it comes back up to the app: so `m` then `hi⏎` in one read sent
`h`, `i` and Enter to the lobby's table list, before `m` opened the chat - the letters were
lost and the Enter joined the table under the cursor; at a table, `t` then `dude` could
call dudo.

`OneKeyAtATime` (a mixin of the app, before `App`) holds a key while the one before it is
still on its way: a key forwarded to the focused widget is followed there by a
`KeyHandled` message, which bubbles up the same way behind it, so it reaches the app once
the key has been handled at every widget on its way (or stopped by one) and its bindings
have run - and whatever those did to the focus (`Widget.focus()` asks the app's queue, so
that is done by then too). It then goes up once more from the widget focused then, behind
the messages the bindings posted on that way (the chat's Escape posts `Done`; its screen
moves the focus back to the list) - only when a key is held (a key read later finds them
handled). The next key held is then taken, and goes where the focus is now. A key a
priority binding handles is done at once. Should the `KeyHandled` be lost (its widget
removed with the key, say), the keys held go on after `KEY_WAIT` seconds all the same.
Mouse events and pastes are not held (a paste is one event)."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from textual import events
from textual.message import Message

KEY_WAIT = 0.25
"""Seconds after which the keys held go on though the key before them is not known to be
handled (its `KeyHandled` lost)."""


class KeyHandled(Message, bubble=True):
    """Follows `key` to the widget it was forwarded to and up the same way; at the app, the
    key has been handled everywhere on its way (`lap` 1). Lap 2 goes up again from the
    widget focused then: behind what the key's bindings posted on that way (a chat's Escape
    posts `Done`, which its screen answers by moving the focus)."""

    def __init__(self, key: events.Key, lap: int = 1) -> None:
        super().__init__()
        self.key = key
        self.lap = lap


class KeyOverdue(Message, bubble=False):
    """`KEY_WAIT` has passed since `key` was forwarded (posted to the app by the loop's
    timer)."""

    def __init__(self, key: events.Key) -> None:
        super().__init__()
        self.key = key


class OneKeyAtATime:
    """The app's side (see the module's text): `on_event` takes a key not forwarded yet
    only when no key before it is on its way, else holds it, in order. `keys_held` counts
    the keys that were held (for tests)."""

    keys_held = 0
    _key_out: events.Key | None = None
    _key_overdue: asyncio.TimerHandle | None = None
    _held: deque[events.Key] | None = None

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self._key_out is not None:
                if self._held is None:
                    self._held = deque()
                self._held.append(event)
                self.keys_held += 1
                return
            await self._take_key(event)
            return
        await super().on_event(event)  # type: ignore[misc]

    async def _take_key(self, key: events.Key) -> None:
        app: Any = self
        target = app.focused or app.screen  # where Textual forwards it
        await super().on_event(key)  # type: ignore[misc]
        if not key.is_forwarded:
            return  # a priority binding took it: done
        self._key_out = key
        target.post_message(KeyHandled(key))
        loop = asyncio.get_running_loop()
        self._key_overdue = loop.call_later(KEY_WAIT, app.post_message, KeyOverdue(key))

    async def on_key_handled(self, message: KeyHandled) -> None:
        message.stop()
        if message.key is not self._key_out:
            return
        if message.lap == 1 and self._held:  # a key waits: let it find the focus settled
            app: Any = self
            (app.focused or app.screen).post_message(KeyHandled(message.key, lap=2))
            return
        await self._next_key()

    async def on_key_overdue(self, message: KeyOverdue) -> None:
        if message.key is self._key_out:
            await self._next_key()

    async def _next_key(self) -> None:
        """The key on its way is done: take the ones held, in order, until one is on its
        way in turn."""
        if self._key_overdue is not None:
            self._key_overdue.cancel()
            self._key_overdue = None
        self._key_out = None
        held = self._held
        while held and self._key_out is None:
            await self._take_key(held.popleft())
