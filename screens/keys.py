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
"""

from __future__ import annotations

import time
from collections import deque

from textual import events
from textual.actions import SkipAction
from textual.dom import DOMNode
from textual.widgets import Input

KEY_LOST_AFTER = 1.0
"""Seconds after which a key routed to a widget and neither stopped there nor back at the app
is taken as handled (its widget was removed with it, say)."""


class KeysOnTheirWay:
    """Mixin of the app (before `App`): notes each key it routes to a widget until the key is
    stopped there or comes back up to the app (its bindings then run)."""

    _keys_routed: deque[tuple[events.Key, float]] | None = None

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
                        routed = self._keys_routed = deque(maxlen=64)
                    routed.append((event, time.monotonic()))
                return
        await super().on_event(event)  # type: ignore[misc]

    def keys_settled(self) -> bool:
        """Whether every key routed so far was handled: stopped by a widget, or back at the
        app (or routed more than `KEY_LOST_AFTER` seconds ago)."""
        routed = self._keys_routed
        if not routed:
            return True
        now = time.monotonic()
        if all(key._stop_propagation or now - at > KEY_LOST_AFTER for key, at in routed):
            routed.clear()
            return True
        return False


def at_once(node: DOMNode, letter: bool = False) -> None:
    """In a `…_at_once` action of `node`: go on only if every key before has been handled,
    and, for a `letter` key, no line has the focus (there it is typed); else raise
    `SkipAction`, so that the key goes the usual way, behind the others."""
    if letter and isinstance(node.screen.focused, Input):
        raise SkipAction()
    settled = getattr(node.app, "keys_settled", None)
    if settled is not None and not settled():
        raise SkipAction()
