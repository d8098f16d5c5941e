"""Restyles shared between the apps of the process (issue 10).

Textual works out a node's CSS rules afresh each time the node is restyled: a change of
focus (an input's `:focus` border), a class toggled (a table screen's mode), every node of a
screen as it is mounted. `Stylesheet.apply` finds the rule sets that name the node's type,
classes or id, checks each selector against the node's path from the app down (types,
classes, ids and pseudo-classes of every node on it), sorts the matches by specificity and
puts the winners on the node. Each app does this alone, though the hundreds of apps of a
server have the same widgets at the same places and ask the same questions: on a server of
300 sessions restyles were ~6 % of the CPU, more than half of it this matching. Textual's
own cache for it holds for one batch of one app only (it is keyed by the parent node).

`install_shared_restyles` keeps the rules worked out for a node in one process-wide cache,
keyed by what the matching reads, and nothing else:

* the stylesheet's rule sets, in order (`Stylesheet.rules`: apps of one theme share the
  parsed rule sets, `isolation.install_shared_css`; an app that mounted other widget classes
  has other rule sets, hence another key);
* for each node on the path from the app down to the node: its class (its CSS type names),
  its id, its classes, and, for each pseudo-class a selector of the stylesheet names
  (`:focus`, `:hover`, `:dark`, `:first-of-type`…), whether the node has it now.

A node asked about again, in any app, gets the same rules without the matching; the rules
are put on it as Textual puts them (`Stylesheet.replace_rules`, animated or not), then its
component classes are styled as before. What a node is styled with is exactly what Textual
works out (tests/test_restyles.py compares every node of a lobby and a table with Textual's
own answer, across changes of focus and the table's modes, the cache shared or not). A node
whose pseudo-classes cannot be read now (no app) is styled Textual's way and not kept.

And `replace_rules`: animated (a restyle after a change of focus or class), it first asks
whether the rules are the ones the node has, as Textual does, but compares the two rule maps
as they are (Textual built a `Styles` of the new rules and copied both maps); with no
transition in either (none of our CSS or Textual's widgets has one), animated or not, it sets
only the rules whose values differ, where Textual set every rule of the old and the new
through its style properties (a rule set to the value it has changes nothing). Rules with a
transition go Textual's way.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any

from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.widget import Widget

RESTYLE_ENTRIES = 4096
"""Nodes' rules kept (`install_shared_restyles`), the least recently used dropped first."""
RULE_LISTS = 64
"""Stylesheets' rule-set lists told apart at once; past that, the cache starts afresh."""

_Flags = tuple[bool, bool, bool, bool]
"""What `Stylesheet.apply` notes on a node besides its rules: whether any of its rule sets
name `:hover`, `:focus-within`, an order pseudo-class, `:odd`/`:even`."""

shared_restyles = [0, 0]
"""Restyles found in the cache and worked out, since start (for tests and benches)."""

_entries: OrderedDict[tuple[Any, ...], tuple[Any, _Flags]] = OrderedDict()
"""The rules worked out (None: no rule set matched) and the flags, by rule list and path."""
_lists: dict[tuple[Any, ...], _Plan] = {}
"""Each list of rule sets seen, and its `_Plan`."""
_numbers = itertools.count()


def forget() -> None:
    """Drop every restyle kept: the next of each node is worked out again (tests)."""
    _entries.clear()
    _lists.clear()


APP_WIDE = frozenset({"dark", "light", "inline", "ansi", "nocolor"})
"""Pseudo-classes a widget has as its app has them (Textual's checks read the widget's app)."""


class _Plan:
    """How to key a node's path for one list of rule sets: for each kind of pseudo-class
    checks (Textual has three: the app's, a widget's, a bare node's none), the checks of the
    pseudo-classes its selectors name, in order. A widget's app-wide ones are the app's, at
    the root of its path: they are checked there once."""

    def __init__(self, number: int, pseudo: tuple[str, ...]) -> None:
        self.number = number
        self.pseudo = pseudo
        self._checks: dict[int, tuple[Any, tuple[Any, ...]]] = {}

    def checks(self, table: dict[str, Any], app_rooted: bool) -> tuple[Any, ...]:
        """The checks to run on a node whose pseudo-class checks are `table`, in a path
        rooted at an app (`app_rooted`: a widget's app-wide ones are left to the root)."""
        found = self._checks.get(id(table))
        if found is None or found[0] is not table:
            every = tuple(table[name] for name in self.pseudo if name in table)
            own = tuple(
                table[name] for name in self.pseudo if name in table and name not in APP_WIDE
            )
            found = self._checks[id(table)] = (table, (every, own))
        every, own = found[1]
        return own if app_rooted and table is Widget._PSEUDO_CLASSES else every  # type: ignore[no-any-return]


def _plan(stylesheet: Stylesheet) -> _Plan:
    """The `_Plan` of `stylesheet`'s rule sets in order (its number stands for them in the
    keys); worked out once per list of rule sets (Textual makes a new list whenever it
    parses)."""
    rules = stylesheet.rules
    kept = stylesheet.__dict__.get("_perudo_plan")
    if kept is not None and kept[0] is rules:
        return kept[1]  # type: ignore[no-any-return]
    sets = tuple(rules)  # the rule sets themselves: kept alive, never confused
    found = _lists.get(sets)
    if found is None:
        if len(_lists) >= RULE_LISTS:
            forget()
        pseudo = {
            name
            for rule in sets
            for selector_set in rule.selector_set
            for selector in selector_set.selectors
            for name in selector.pseudo_classes
        }
        found = _lists[sets] = _Plan(next(_numbers), tuple(sorted(pseudo)))
    stylesheet.__dict__["_perudo_plan"] = (rules, found)
    return found


def _path_key(node: DOMNode, plan: _Plan) -> tuple[Any, ...]:
    """What selectors read of the nodes from the app down to `node`, from `node` up: the
    class (its CSS type names), id, classes and the pseudo-classes the rule sets name of
    each (a widget's app-wide ones at the app)."""
    path = []
    each: Any = node
    while isinstance(each, DOMNode):
        path.append(each)
        each = each._parent
    app_rooted = isinstance(path[-1], App)
    return tuple(
        (
            type(each),
            each._id,
            frozenset(each._classes),
            tuple([check(each) for check in plan.checks(each._PSEUDO_CLASSES, app_rooted)]),
        )
        for each in path
    )


def install_shared_restyles() -> None:
    """Share the rules worked out for a node between every node of every app asked the same
    (see the module's text). At most `RESTYLE_ENTRIES` kept. Idempotent."""
    textual_apply = Stylesheet.apply
    if getattr(textual_apply, "perudo_shared", False):
        return
    textual_replace = Stylesheet.__dict__["replace_rules"].__func__
    entries = _entries
    capturing: list[list[Any]] = []  # [node, its rules] of the applies under way

    def replace_rules(
        cls: type[Stylesheet], node: DOMNode, rules: Any, animate: bool = False
    ) -> None:
        if capturing and capturing[-1][0] is node:
            capturing[-1][1] = rules
        base = node.styles.base
        had: dict[str, Any] = base._rules  # type: ignore[assignment]
        if animate and had == rules:
            return  # Textual's own answer when nothing changed: nothing to do
        if "transitions" in rules or "transitions" in had:
            textual_replace(cls, node, rules, animate)  # it may animate
            return
        # with no transition, animated or not, Textual sets every rule of the old and the
        # new; a rule set to the value it has changes nothing, so only the others are set
        for name in had.keys() | rules.keys():
            if name not in had or name not in rules or had[name] != rules[name]:
                setattr(base, name, rules.get(name))
        node.notify_style_update()

    def apply(
        self: Stylesheet,
        node: DOMNode,
        *,
        animate: bool = False,
        cache: dict[tuple[Any, ...], Any] | None = None,
    ) -> None:
        plan = _plan(self)
        try:
            key = (plan.number, _path_key(node, plan))
        except Exception:  # noqa: BLE001 - e.g. no app to read `:dark` from: Textual's way
            textual_apply(self, node, animate=animate, cache=cache)
            return
        found = entries.get(key)
        if found is not None:
            entries.move_to_end(key)
            shared_restyles[0] += 1
            rules, flags = found
            (
                node._has_hover_style,
                node._has_focus_within,
                node._has_order_style,
                node._has_odd_or_even,
            ) = flags
            if rules is not None:  # none matched: Textual leaves the node's rules as they are
                self.replace_rules(node, rules, animate=animate)
            self._process_component_classes(node)
            return
        shared_restyles[1] += 1
        capturing.append([node, None])
        try:
            textual_apply(self, node, animate=animate, cache=cache)
        finally:
            rules = capturing.pop()[1]
        flags = (
            node._has_hover_style,
            node._has_focus_within,
            node._has_order_style,
            node._has_odd_or_even,
        )
        entries[key] = (rules, flags)
        if len(entries) > RESTYLE_ENTRIES:
            entries.popitem(last=False)

    apply.perudo_shared = True  # type: ignore[attr-defined]
    apply.textual = textual_apply  # type: ignore[attr-defined]
    Stylesheet.apply = apply  # type: ignore[method-assign]
    Stylesheet.replace_rules = classmethod(replace_rules)  # type: ignore[method-assign,assignment,arg-type]
