"""Fewer objects made for each frame an app draws, and none left for the cyclic collector.

With hundreds of apps in one process, what a frame makes and drops costs twice: once to make
it and once to collect it, and the cyclic collector pauses every session while it runs
(issue 10). A probe of the server found most of its cyclic garbage in three places, each
patched here for every app of the process: a `Strip`'s seven memo caches (made on use, and
not holding the strip itself), a widget's virtual component nodes (made once, on demand, and
restyled in place), and the closure of Textual's layout (its cycle broken). What the screens
show is unchanged. Separate from `repaints` (what a frame draws) as these change only what
drawing allocates; `isolation.install_drawing_savers` installs both.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from typing import Any

from textual._compositor import Compositor
from textual.cache import FIFOCache
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.strip import Strip

STRIP_CACHES = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}
"""The memo caches of a Textual `Strip` (one line of a screen) and their sizes, as Textual
makes them (textual/strip.py)."""


def _lazy_strip_init(self: Strip, segments: Any, cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


class _StripCache(FIFOCache[Any, Any]):
    """A strip's memo cache that does not keep the strip itself: Textual's strips memoise a
    result that is the strip (`divide` with no cut inside it gives `[self]`, a length or a
    crop it already has gives `self`), and each such strip then referred to itself, a cycle
    only the garbage collector could free - with the strip's segments and styles (most of
    the cyclic garbage a probe of the server found, issue 10). Those results are the
    strip's fast paths, so they are not kept."""

    __slots__ = ["_owner"]

    def __init__(self, maxsize: int, owner: Strip) -> None:
        super().__init__(maxsize)
        self._owner = id(owner)

    def set(self, key: Any, value: Any) -> None:
        owner = self._owner
        if id(value) == owner or (
            isinstance(value, list) and any(id(item) == owner for item in value)
        ):
            return
        super().set(key, value)

    __setitem__ = set


def _strip_cache(self: Strip, name: str) -> Any:
    size = STRIP_CACHES.get(name)
    if size is None:
        raise AttributeError(name)
    cache = _StripCache(size, self)
    setattr(self, name, cache)
    return cache


def install_lazy_strip_caches() -> None:
    """Make each `Strip`'s memo caches when first used, not when the strip is made (issue 10).

    Textual makes seven `FIFOCache`s (fourteen objects) for every `Strip`, and a frame makes a
    new strip for every line of every widget it crops or styles, nearly all of them never
    asked twice: a profile of the server at 100 sessions put ~15 % of its CPU in making them
    and in collecting them. The caches are `__slots__`, so an unset one falls through to
    `__getattr__`, which makes it then, of the size Textual gives it (`STRIP_CACHES`); what a
    strip does is unchanged. Idempotent."""
    if getattr(Strip.__init__, "perudo_lazy", False):
        return
    _lazy_strip_init.perudo_lazy = True  # type: ignore[attr-defined]
    Strip.__init__ = _lazy_strip_init  # type: ignore[method-assign]
    Strip.__getattr__ = _strip_cache  # type: ignore[attr-defined]


def install_reused_component_nodes() -> None:
    """Style a widget's component classes on virtual nodes made when first asked for, and
    restyle the same nodes each time (issue 10).

    To style a widget's component classes (an Input's cursor and placeholder, a table's
    cursor and rows), Textual's stylesheet makes a new `DOMNode` for each component on every
    restyle of the widget - a change of focus, a class toggled - applies the stylesheet to
    it and drops the previous ones: each made of a dozen objects (styles, node list,
    bindings, weak sets) in reference cycles, a quarter of the cyclic garbage a probe of the
    server found at 100 sessions. Here each widget keeps its component nodes and the
    stylesheet is applied to them again; the widget is refreshed when a component's rules
    changed, as Textual does.

    And a node is made only for a component the widget's drawing asks for
    (`get_component_styles`): a virtual node is ~6 KB, a session at a table held 27 of
    them (~0.17 MB of its ~2.1), and Textual styled all of every widget's components on
    every restyle, though a table list draws with 4 of its 10 and an input 2 of its 5. A
    component never asked for is never drawn, so it needs no refresh when its rules change;
    one asked for is styled then, from the widget's styles as they are. Idempotent."""
    current = Stylesheet._process_component_classes
    if getattr(current, "perudo_reuse", False):
        return
    textual_component_styles = DOMNode.get_component_styles

    def process_component_classes(self: Stylesheet, node: DOMNode) -> None:
        # only the nodes made (a class's components are fixed, so each is still one)
        kept: dict[str, DOMNode] = node.__dict__.get("_perudo_components", {})
        changed = False
        for component in sorted(kept):
            virtual = kept[component]
            rules = virtual.styles.get_rules()
            self.apply(virtual, animate=False)
            changed = changed or rules != virtual.styles.get_rules()
        if changed:
            node.refresh()

    def get_component_styles(self: DOMNode, *names: str) -> Any:
        styles = self._component_styles
        missing = [name for name in names if name not in styles]
        if missing:
            component_classes = self._get_component_classes()
            kept = self.__dict__.setdefault("_perudo_components", {})
            stylesheet = self.app.stylesheet
            for name in missing:
                if name in component_classes:  # else Textual's KeyError below
                    virtual = DOMNode(classes=name)
                    virtual._attach(self)
                    stylesheet.apply(virtual, animate=False)
                    kept[name] = virtual
                    styles[name] = virtual.styles
        return textual_component_styles(self, *names)

    process_component_classes.perudo_reuse = True  # type: ignore[attr-defined]
    Stylesheet._process_component_classes = process_component_classes  # type: ignore[method-assign]
    DOMNode.get_component_styles = get_component_styles  # type: ignore[method-assign]


LAYOUT_END = "    widgets -= invisible_widgets\n    return map, widgets\n"
"""How Textual's `Compositor._arrange_root` ends (textual 8.2, its source dedented) - what
`install_acyclic_layout` looks for."""


def install_acyclic_layout() -> bool:
    """Let a layout's map be freed by reference counting (issue 10). Returns whether it
    could be installed (False, changing nothing, if Textual's layout is not the one known).

    Textual's `Compositor._arrange_root` places widgets with a nested function that calls
    itself (`add_widget`), so the function refers to itself through its closure cell: a
    cycle holding everything it closed over - the map of every widget's region, order and
    clip - that only the collector frees, one for every layout of every screen (after the
    strips, most of the cyclic garbage a probe of the server found at 100 sessions). This
    makes the same function with one statement more before its return, `del add_widget`,
    which empties the cell and so breaks the cycle; it is compiled from Textual's own source,
    and only if that source ends as `LAYOUT_END`. Idempotent."""
    current = Compositor._arrange_root
    if getattr(current, "perudo_acyclic", False):
        return True
    try:
        lines, first = inspect.getsourcelines(current)
    except (OSError, TypeError):
        return False
    source = textwrap.dedent("".join(lines))
    end = LAYOUT_END
    if (
        not source.endswith(end)
        or source.count("return map, widgets") != 1
        or "super(" in source
        or "__class__" in source
    ):
        return False
    source = source[: -len(end)] + end.replace("return map", "del add_widget\n    return map")
    source = "\n" * (first - 1) + source  # tracebacks give the lines of Textual's file
    namespace: dict[str, Any] = {}
    module = sys.modules[Compositor.__module__]
    exec(compile(source, inspect.getfile(current), "exec"), vars(module), namespace)
    arrange = namespace[current.__name__]
    arrange.__qualname__ = current.__qualname__
    arrange.perudo_acyclic = True
    arrange.perudo_original = current
    Compositor._arrange_root = arrange  # type: ignore[method-assign]
    return True
