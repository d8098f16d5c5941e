"""Work Textual repeats for every message and every line of every app, done once (issue 10).

A server runs hundreds of apps in one process; two of Textual's per-call costs grow with them:

* finding a message's handlers walks the receiver's whole class hierarchy (a dozen classes
  for a widget) and the message's, with a name built for each class, for every message
  dispatched (`MessagePump._get_dispatch_methods`, ~3 % of the server at 200 sessions);
* every line drawn passes each of its segments through the app's ANSI-to-truecolour filter,
  whose cache is keyed by the app's own filter object and by styles that carry each cell's
  position: with many apps it missed one time in two (1,024 entries for all of them), and a
  miss builds a new style. Our styles are truecolour already (the theme's colours), and such
  a style comes back unchanged.

A third is small but everywhere: Textual counts a callback's parameters (`inspect.signature`,
~0.1 ms) before calling it, and keeps the count on the callable - but `call_after_refresh` and
`call_later` with arguments wrap the callback in a new `partial` each time, so the count was
made again on every call (the footer's and the lobby's redraws). Here a partial's count comes
from its function's, kept on that function.

And a widget's refresh reaches its screen directly. Textual's `Widget.refresh` posts the
widget a prompt; the widget's task wakes, goes idle, and posts its screen an `Update` (and a
`Layout` if one was asked for); the screen's task wakes and marks it. Each refresh of each
widget (~500 a second at 200 sessions) woke the widget's task and dispatched a message
for nothing else. `refresh_directly` posts the screen those messages at once, in the order
the refreshes are asked for, when nothing else is pending on the widget (a restyle, a
scroll, an idle handler of its own: those go Textual's way).

And the bytes of a frame are joined with the cursor moves written as strings. Textual's
`ChopsUpdate.render_segments` made a Rich `Control` (a segment, a tuple, a lambda call) for
each piece of each line sent, only to read its text: ~2 % of a loaded server (issue 10);
`cursor_move` keeps each position's sequence.

All are installed once per process, by `install_speedups` (from
`isolation.install_drawing_savers`); behaviour is Textual's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache, partial
from types import FunctionType, MethodType
from typing import Any

import textual._callback
import textual.reactive
from rich.color import Color as RichColor
from rich.console import Console
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.css.match import match
from textual.dom import NoScreen
from textual.filter import ANSIToTruecolor
from textual.geometry import Region
from textual.message import Message
from textual.message_pump import MessagePump, OnNoWidget, _MessagePumpMeta
from textual.messages import Layout, Update
from textual.screen import Screen
from textual.widget import Widget

Plan = tuple[
    tuple[type, tuple[tuple[Callable[..., Any], Any], ...], Callable[..., Any] | None], ...
]
"""For one kind of receiver and message: each class of the receiver's hierarchy that handles
it, with its decorated handlers (method, selectors) for the message's classes in order, and
its handler by name (or None)."""

_PLANS: dict[tuple[type, type, str], Plan] = {}
_textual_get_dispatch_methods = MessagePump._get_dispatch_methods
"""Textual's own lookup, as it was before `install_speedups` (the tests compare with it)."""


def _plan(pump: type, message: type, method_name: str) -> Plan:
    """What `MessagePump._get_dispatch_methods` looks up for `pump` and `message`, in its
    order; classes with nothing to offer are left out (they yield nothing there)."""
    message_mro = [kind for kind in message.__mro__ if issubclass(kind, Message)]
    plan = []
    for cls in pump.__mro__:
        decorated = cls.__dict__.get("_decorated_handlers")
        handlers: list[tuple[Callable[..., Any], Any]] = []
        if decorated:
            for message_class in message_mro:
                handlers.extend(decorated.get(message_class, []))
        method = cls.__dict__.get(f"_{method_name}") or cls.__dict__.get(method_name)
        if method is not None and getattr(method, "_textual_on", None):
            method = None
        if handlers or method is not None:
            plan.append((cls, tuple(handlers), method))
    return tuple(plan)


def _get_dispatch_methods(
    self: MessagePump, method_name: str, message: Message
) -> Iterator[tuple[type, Callable[..., Any]]]:
    """As `MessagePump._get_dispatch_methods` (Textual 8), from a plan made once per kind of
    receiver, message and handler name; selectors and `prevent_default` are still looked at
    on every message, as there."""
    key = (type(self), type(message), method_name)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _plan(*key)
    if not plan:
        return
    methods_dispatched: set[Callable[..., Any]] = set()
    for cls, handlers, method in plan:
        if message._no_default_action:
            break
        for handler, selectors in handlers:
            if handler in methods_dispatched:
                continue
            if not selectors:
                yield cls, handler.__get__(self, cls)
                methods_dispatched.add(handler)
                continue
            if not message._sender:
                continue
            for attribute, selector in selectors.items():
                node = getattr(message, attribute)
                if node is None:
                    break
                if not isinstance(node, Widget):
                    raise OnNoWidget(
                        f"on decorator can't match against {attribute!r} as it is not a widget."
                    )
                if not match(selector, node):
                    break
            else:
                yield cls, handler.__get__(self, cls)
                methods_dispatched.add(handler)
        if method is not None:
            yield cls, method.__get__(self, cls)


def _forget_plans(name: str) -> None:
    """An attribute of a class of the message pumps is set or removed at run time: if it may be
    a handler (`on_key`, `_on_key`, the decorated ones; as a test's monkeypatch does), every
    plan is made again. Others (Textual's counters and defaults kept on classes) change none."""
    if name.startswith(("on_", "_on_")) or name == "_decorated_handlers":
        _PLANS.clear()


_original_truecolor_style = ANSIToTruecolor.truecolor_style


def _truecolor_style(self: ANSIToTruecolor, style: Style, background: RichColor) -> Style:
    """As `ANSIToTruecolor.truecolor_style`: a style with no system colour and no dim text
    comes back as it is (there: after a cache lookup keyed by the app's filter); any other
    goes to Textual's own (cached) conversion."""
    color, bgcolor = style._color, style._bgcolor
    if (
        (color is None or color.triplet is not None)
        and (bgcolor is None or bgcolor.triplet is not None)
        and not (color is not None and style.dim)
    ):
        return style
    return _original_truecolor_style(self, style, background)


_textual_count_parameters = textual._callback.count_parameters


def count_parameters(func: Callable[..., Any]) -> int:
    """As `textual._callback.count_parameters` (how many arguments `func` takes), with a
    `partial` of a Python function or method counted from that function's count, which
    Textual keeps on the function, rather than from `inspect.signature` each time."""
    if isinstance(func, partial):
        inner = func.func
        if isinstance(inner, FunctionType) or (
            isinstance(inner, MethodType) and isinstance(inner.__func__, FunctionType)
        ):
            return _textual_count_parameters(inner) - (len(func.args) + len(func.keywords))
    return _textual_count_parameters(func)


_textual_refresh = Widget.refresh
_OWN_IDLE: dict[type, bool] = {}
"""Widget classes by whether they handle their own idle (a `DataTable` sizes itself there):
their refreshes go Textual's way, which prompts them."""


def _own_idle(cls: type[Widget]) -> bool:
    found = _OWN_IDLE.get(cls)
    if found is None:
        found = _OWN_IDLE[cls] = (
            cls._on_idle is not Widget._on_idle or getattr(cls, "on_idle", None) is not None
        )
    return found


def refresh_directly(
    self: Widget,
    *regions: Region,
    repaint: bool = True,
    layout: bool = False,
    recompose: bool = False,
) -> Widget:
    """As `Widget.refresh`, for a mounted widget (not a screen, nor one with its own idle
    handler) with nothing pending for its idle (no restyle, scroll or layout asked for
    Textual's way): what the widget's idle would then do for the refresh is done now - the
    screen is posted an `Update` (a repaint of a displayed widget) and a `Layout` (with the
    ancestors' arrangements forgotten, as Textual's `_check_refresh` does), in the order the
    refreshes come, so a repaint never reaches a frame before a layout asked for before it.
    Anything else is Textual's refresh."""
    if (
        recompose
        or not self._is_mounted
        or self._closing
        or self._parent is None
        or self._layout_required
        or self._repaint_required
        or self._refresh_styles_required
        or self._scroll_required
        or isinstance(self, Screen)
        or _own_idle(type(self))
    ):
        return _textual_refresh(self, *regions, repaint=repaint, layout=layout, recompose=recompose)
    try:
        screen = self.screen
    except NoScreen:
        return _textual_refresh(self, *regions, repaint=repaint, layout=layout)
    self._layout_cache.clear()
    if repaint:
        self._set_dirty(*regions)
        self.clear_cached_dimensions()
        self._rich_style_cache.clear()
        if self.display:
            screen.post_message(Update(self))
    if layout:
        self._layout_updates += 1
        for ancestor in self.ancestors:
            if not isinstance(ancestor, Widget):
                break
            ancestor._clear_arrangement_cache()
            ancestor._layout_updates += 1
            if not ancestor.styles.auto_dimensions:
                break
        screen.post_message(Layout(self))
    return self


_textual_render_segments = ChopsUpdate.render_segments
"""Textual's own, as it was before `install_speedups` (the tests compare with it)."""


@lru_cache(maxsize=4096)
def cursor_move(x: int, y: int) -> str:
    """The terminal sequence moving the cursor to column `x`, row `y` (0-based), as Rich's
    `Control.move_to(x, y)` writes it."""
    return f"\x1b[{y + 1};{x + 1}H"


def render_segments(self: ChopsUpdate, console: Console) -> str:
    """`ChopsUpdate.render_segments` (Textual 8.2), the cursor moves from `cursor_move`: the
    update as the terminal's bytes (a string of text and escape sequences)."""
    sequences: list[str] = []
    append = sequences.append
    chops = self.chops
    chop_ends = self.chop_ends
    last_y = self.spans[-1][0]
    for y, x1, x2 in self.spans:
        line = chops[y]
        ends = chop_ends[y]
        for end, (x, strip) in zip(ends, line.items(), strict=False):  # as Textual
            if strip is None or x > x2 or end <= x1:
                continue
            if not (x2 > x >= x1 and end <= x2):
                strip = strip.crop(0, min(end, x2) - x)
            append(cursor_move(x, y))
            append(strip.render(console))
        if y != last_y:
            append("\n")
    return "".join(sequences)


def install_speedups() -> None:
    """Install the five (see the module docstring); idempotent."""
    if getattr(MessagePump._get_dispatch_methods, "perudo_planned", False):
        return
    Widget.refresh = refresh_directly  # type: ignore[method-assign,assignment]
    textual._callback.count_parameters = count_parameters
    textual.reactive.count_parameters = count_parameters
    _get_dispatch_methods.perudo_planned = True  # type: ignore[attr-defined]
    MessagePump._get_dispatch_methods = _get_dispatch_methods  # type: ignore[method-assign,assignment]
    set_attr, del_attr = _MessagePumpMeta.__setattr__, _MessagePumpMeta.__delattr__

    def setattr_forgetting(cls: type, name: str, value: object) -> None:
        _forget_plans(name)
        set_attr(cls, name, value)

    def delattr_forgetting(cls: type, name: str) -> None:
        _forget_plans(name)
        del_attr(cls, name)

    _MessagePumpMeta.__setattr__ = setattr_forgetting  # type: ignore[method-assign,assignment]
    _MessagePumpMeta.__delattr__ = delattr_forgetting  # type: ignore[method-assign,assignment]
    ANSIToTruecolor.truecolor_style = _truecolor_style  # type: ignore[method-assign,assignment]
    ChopsUpdate.render_segments = render_segments  # type: ignore[method-assign]
