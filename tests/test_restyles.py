"""Restyles shared between apps (`perudo_ssh.ssh.restyles`, issue 10): every node of every
screen has exactly the rules Textual works out for it, whichever app worked them out first,
through a lobby, a table, changes of focus and the table's modes."""

from __future__ import annotations

import contextlib

import pytest
from textual.css.stylesheet import Stylesheet

from perudo_ssh import protocol as P
from perudo_ssh.rules import observe
from perudo_ssh.ssh import restyles
from perudo_ssh.ssh.isolation import install_drawing_savers
from screens.app import make_app
from screens.table import TableScreen
from tests.test_screens_fakes import (
    FakeSession,
    bid,
    lobby_state,
    rolled,
    summary,
    table_state,
    wait_until,
)

SIZE = (80, 24)


def styled_as_textual_styles(app) -> int:
    """Assert that every node of `app`'s screens has the rules (and the notes `apply` makes)
    that Textual's own `Stylesheet.apply` gives it now; the number of nodes checked."""
    textual_apply = Stylesheet.apply.textual  # type: ignore[attr-defined]
    checked = 0
    for screen in app.screen_stack:
        for node in screen.walk_children(with_self=True):
            nodes = [node, *node.__dict__.get("_perudo_components", {}).values()]
            for each in nodes:
                notes = (
                    each._has_hover_style,
                    each._has_focus_within,
                    each._has_order_style,
                    each._has_odd_or_even,
                )
                shared = dict(each.styles.base._rules)
                textual_apply(app.stylesheet, each, animate=False)
                assert dict(each.styles.base._rules) == shared, (screen, each)
                assert notes == (
                    each._has_hover_style,
                    each._has_focus_within,
                    each._has_order_style,
                    each._has_odd_or_even,
                ), each
                checked += 1
    return checked


@pytest.mark.parametrize("rule_lists", [restyles.RULE_LISTS, 0])
async def test_apps_share_restyles_and_each_node_has_textual_s_own_rules(
    monkeypatch, rule_lists
) -> None:
    """Two apps step alike through the lobby, focus, a table, the bid input's focus and each
    mode of the table screen: after each step every node is styled as Textual styles it, and
    the second app finds most of its restyles worked out by the first. With no room for a
    second list of rule sets (0), the cache starts afresh at each new one and styles alike."""
    install_drawing_savers()
    monkeypatch.setattr(restyles, "RULE_LISTS", rule_lists)
    restyles.forget()  # the first app works its restyles out
    view = observe(bid(rolled(opener=0), 0, 2, 4), 0)
    sessions = [FakeSession(), FakeSession()]
    apps = [make_app(session) for session in sessions]
    worked_out: list[int] = []  # restyles not found in the cache, by app
    async with contextlib.AsyncExitStack() as stack:
        for app, session in zip(apps, sessions, strict=True):
            before = restyles.shared_restyles[1]
            session.feed(P.Welcome(name="ana"), lobby_state(summary(1), summary(2)))
            pilot = await stack.enter_async_context(app.run_test(size=SIZE))
            await pilot.pause()
            assert styled_as_textual_styles(app) > 10
            await pilot.press("tab")  # the focus to the next widget
            await pilot.pause()
            styled_as_textual_styles(app)
            session.feed(table_state(view))
            await wait_until(pilot, lambda app=app: isinstance(app.screen, TableScreen))
            await pilot.pause()
            styled_as_textual_styles(app)
            await pilot.press("tab")  # the bid input focused: its :focus border
            await pilot.pause()
            styled_as_textual_styles(app)
            screen = app.screen
            for mode in screen.MODES:
                for on in (not screen.has_class(mode), screen.has_class(mode)):
                    screen.set_mode(on, mode)
                    await pilot.pause()
                    styled_as_textual_styles(app)
            worked_out.append(restyles.shared_restyles[1] - before)
    if rule_lists:  # the second app works out a few the first did not (its own rule lists)
        assert worked_out[1] * 4 < worked_out[0]
