"""Keys read together: the ones that move the focus act at once, when that keeps the order.

A terminal driver posts every key of one read to the app at once: a paste, a fast typist, a
slow link, or a loaded server that read several keys before the app took the first. Textual
routes each key to the widget focused when the app takes it, and a binding that is not a
priority runs only when its key comes back up to the app, after the keys behind it were
routed. So `m` then `hola⏎` in one read sent the letters to the lobby's table list (lost),
and at a table `t` then `dude` sent the d's to the table's keys, each a dudo to call.

A priority binding runs as soon as the app takes its key, before the keys behind it are
routed: `m`, `t` and the chat line's Escape have one (`…_at_once` actions) besides their
usual binding. But a key taken earlier may still be on its way up (the Enter of a chat line,
whose binding says the line): moving the focus then would have that Enter's binding looked
up from the new focus (a bid at the table instead of the line said; the load bench found
it). So the at-once action runs only when every key routed before has been handled
(`KeysOnTheirWay.keys_settled`), and else skips (`at_once` raises `SkipAction`): the key then
goes the usual way, in order behind the others.

However long a key takes: until stop 35 a key routed more than a second before was taken as
handled, and on a server more than a second behind (a 300-session bench at 88 % of a core)
a table chat line's Escape, read 0.4 s after its Enter, closed the line before that Enter's
binding ran, and the line was lost. Now only a key whose widget is gone (removed, or its
messages closed) is settled without coming back; and as a last resort, a key that neither
came back nor lost its widget drops out of the notes once `ROUTED_KEPT` keys came after it
(until then the at-once actions go the usual way: slower, never out of order).
"""

from __future__ import annotations

import weakref
from collections import deque
from typing import cast

from textual import events
from textual.actions import SkipAction
from textual.app import App
from textual.dom import DOMNode
from textual.message_pump import MessagePump
from textual.widgets import Input

ROUTED_KEPT = 64
"""Keys routed and not yet handled that the app notes, newest last: an older one drops out
(see the module's text)."""


class KeysOnTheirWay:
    """Mixin of the app (before `App`): notes each key it routes to a widget until the key is
    stopped there or comes back up to the app (its bindings then run)."""

    _keys_routed: deque[tuple[events.Key, weakref.ref[MessagePump]]] | None = None

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            routed = self._keys_routed
            if event.is_forwarded:  # back up at the app: its bindings are looked up now
                if routed:
                    for entry in routed:
                        if entry[0] is event:
                            routed.remove(entry)
                            break
            else:
                await super().on_event(event)  # type: ignore[misc]
                if event.is_forwarded:  # routed to the focused widget (or the screen)
                    if routed is None:
                        routed = self._keys_routed = deque(maxlen=ROUTED_KEPT)
                    while routed and _settled(*routed[0]):  # handled: not kept for nothing
                        routed.popleft()
                    app = cast(App[object], self)
                    # the widget as App.on_event chose it; weakly, so that a widget removed
                    # (a dialog closed) is not kept for its keys
                    routed.append((event, weakref.ref(app.focused or app.screen)))
                return
        await super().on_event(event)  # type: ignore[misc]

    def keys_settled(self) -> bool:
        """Whether every key routed so far was handled: stopped by a widget, back at the app,
        or its widget gone (removed with the key in its queue: nothing will handle it)."""
        routed = self._keys_routed
        if not routed:
            return True
        if all(_settled(key, target) for key, target in routed):
            routed.clear()
            return True
        return False


def _settled(key: events.Key, target: weakref.ref[MessagePump]) -> bool:
    """Whether `key`, routed to `target`, is handled: stopped there, or its widget gone (freed,
    its messages closed, or out of the DOM: nothing will handle it). A key back at the app
    is no longer noted at all."""
    if key._stop_propagation:
        return True
    node = target()
    return node is None or node._closing or node._closed or not node.is_attached


def at_once(node: DOMNode, letter: bool = False) -> None:
    """In a `…_at_once` action of `node`: go on only if every key before has been handled,
    and, for a `letter` key, no line has the focus (there it is typed); else raise
    `SkipAction`, so that the key goes the usual way, behind the others."""
    if letter and isinstance(node.screen.focused, Input):
        raise SkipAction()
    settled = getattr(node.app, "keys_settled", None)
    if settled is not None and not settled():
        raise SkipAction()
