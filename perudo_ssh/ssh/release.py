"""Dismissed widgets freed when they go, not by the garbage collector (issue 10: memory a
session, and the collector's pauses).

Textual links every widget in cycles: its styles name it back (`Styles.node`), its timers
call its bound methods, its signals' subscriptions close over their subscribers, its layout
memo holds a visual that holds it, and every `LRUCache` is a ring of links. So a screen that
goes (a create dialog closed, a table left, a game-over dialog dismissed: dozens of widgets
each) and every `LRUCache.clear()` (the table list clears its caches on each change) leave
cyclic garbage that only the collector frees. A probe of a server at 200 sessions found
667,361 such objects waiting for a full collection 100 s after start (~17 % of the server's
memory), and that collection stopped every session for 3.7 s.

`install_released_widgets` (from `isolation.install_drawing_savers`) changes two things:

* `LRUCache.clear` empties each link of the ring before forgetting it, so the ring and what
  it held go by reference counting;
* a widget whose message loop has ended (it was removed, or its screen, or its app) is
  `release`d: the edges out of it that close cycles are cut. Textual has then already taken
  it out of the DOM, stopped its timers and cleared its children.

What a running widget does is unchanged: only widgets that have ended are touched, and only
what Textual never reads again on an ended widget (tests/test_release.py, with the collector
off, checks that a closed create dialog and a table screen left are freed and leave no
cyclic widget).
"""

from __future__ import annotations

from typing import Any

from textual.cache import FIFOCache, LRUCache
from textual.css.styles import Styles
from textual.dom import DOMNode
from textual.screen import Screen
from textual.signal import Signal
from textual.timer import Timer
from textual.widget import Widget

from textual._node_list import NodeList  # isort: skip  # Textual's own list of children


def clear_lru_cache(cache: LRUCache[Any, Any]) -> None:
    """`LRUCache.clear` without leaving its ring of links (`[prev, next, key, value]`, each
    linked to its neighbours) as a cycle for the collector: each link is emptied first, so
    the links and the values they held are freed at once. Same result otherwise."""
    for link in cache._cache.values():
        link.clear()
    cache._cache.clear()
    cache._full = False
    cache._head = []


def release(node: DOMNode) -> None:
    """Cut the edges out of `node`, an ended widget (or a component node of one), that close
    cycles through it, so that reference counting frees it and what it held:

    * its base and inline `Styles` forget it (`node`; the rendered styles hold it weakly);
    * its timers forget their callbacks (Textual has stopped them), its signals their
      subscribers;
    * its caches are emptied (`LRUCache`, `FIFOCache`, dicts named `*_cache`), its list of
      children forgets the displayed ones;
    * attributes that name another node (its parent pump, scrollbars, a pressed button…)
      are set to None, and component nodes kept in a dict are released and forgotten.
    """
    attributes = vars(node)
    for name, value in list(attributes.items()):
        if isinstance(value, DOMNode):
            attributes[name] = None
        elif isinstance(value, Styles):
            value.node = None
        elif isinstance(value, Timer):
            value._callback = None  # type: ignore[assignment]
        elif isinstance(value, Signal):
            value._subscriptions.clear()
        elif isinstance(value, (LRUCache, FIFOCache)):
            value.clear()  # an LRUCache's is `clear_lru_cache` once installed
        elif isinstance(value, NodeList):  # its memo of displayed children, as when new
            value._displayed_nodes = (-1, [])
            value._displayed_visible_nodes = (-1, [])
        elif isinstance(value, dict):
            if name.endswith("_cache"):
                value.clear()
            elif any(isinstance(item, DOMNode) for item in value.values()):
                for item in value.values():
                    if isinstance(item, DOMNode) and item is not node:
                        release(item)
                value.clear()


def install_released_widgets() -> None:
    """Install `clear_lru_cache` as `LRUCache.clear`, and `release` every widget when its
    message loop has ended (after Textual's own clean-up), and a screen's compositor's root
    after the screen's. Idempotent."""
    if getattr(Widget._message_loop_exit, "perudo_release", False):
        return
    LRUCache.clear = clear_lru_cache  # type: ignore[method-assign,assignment]

    widget_exit = Widget._message_loop_exit
    screen_exit = Screen._message_loop_exit

    async def widget_loop_exit(self: Widget) -> None:
        await widget_exit(self)
        release(self)

    async def screen_loop_exit(self: Screen[Any]) -> None:
        await screen_exit(self)  # Widget's, then the compositor's clean-up
        self._compositor.root = None  # type: ignore[assignment]

    widget_loop_exit.perudo_release = True  # type: ignore[attr-defined]
    Widget._message_loop_exit = widget_loop_exit  # type: ignore[method-assign]
    Screen._message_loop_exit = screen_loop_exit  # type: ignore[method-assign]
