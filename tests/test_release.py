"""`perudo_ssh.ssh.release` (issue 10): what a session dismisses (a create dialog, a table
screen, notifications) and what an `LRUCache` forgets are freed by reference counting, with
the garbage collector switched off, and the screens go on working as before."""

from __future__ import annotations

import collections
import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from textual.cache import LRUCache
from textual.dom import DOMNode

from perudo_ssh import protocol as P
from perudo_ssh.rules import observe
from perudo_ssh.ssh.isolation import install_drawing_savers
from screens.app import PerudoApp
from screens.create import CreateTableDialog
from screens.table import TableScreen
from tests.test_screens_fakes import FakeSession, bid, rolled, summary, table_state

pytestmark = pytest.mark.timeout(60)


class Held:
    """A value a weak reference can follow."""


@pytest.fixture
def no_collector() -> Iterator[None]:
    """The collector off for the test: only reference counting frees anything."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def cyclic_nodes() -> collections.Counter[str]:
    """The widgets (DOM nodes) that only the collector could free now, by class name."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
    finally:
        gc.set_debug(0)
    found = collections.Counter(type(o).__name__ for o in gc.garbage if isinstance(o, DOMNode))
    gc.garbage.clear()
    return found


def test_an_lru_cache_cleared_lets_its_values_go_at_once(no_collector: None) -> None:
    install_drawing_savers()
    cache: LRUCache[int, Held] = LRUCache(8)
    values = [Held() for _ in range(3)]
    for key, value in enumerate(values):
        cache.set(key, value)
    assert cache.get(1) is values[1]  # a link moved to the head: the ring re-linked
    watch = [weakref.ref(value) for value in values]
    del values, value
    cache.clear()
    assert [ref() for ref in watch] == [None, None, None]
    assert len(cache) == 0 and cache.get(0) is None
    cache.set(5, kept := Held())  # still a working cache
    assert cache.get(5) is kept


async def test_a_dismissed_dialog_and_a_table_left_leave_no_cyclic_widgets(
    no_collector: None,
) -> None:
    install_drawing_savers()
    session = FakeSession()
    app = PerudoApp(session, "en")  # type: ignore[arg-type]
    tables = tuple(summary(i, name=f"t{i}") for i in range(1, 4))
    session.feed(P.Welcome(name="ana"), P.LobbyState(tables=tables, online=("ana", "ben")))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause(0.1)
        cyclic_nodes()  # the lobby as it stands: not what this test is about
        for _ in range(2):
            await pilot.press("c")
            await pilot.pause(0.05)
            dialog = app.screen
            assert isinstance(dialog, CreateTableDialog)
            gone: weakref.ref[Any] = weakref.ref(dialog)
            await pilot.press("tab", "enter", "down", "enter")  # seats: a list opened, chosen
            await pilot.pause(0.05)
            del dialog
            await pilot.press("escape")
            for _ in range(5):
                await pilot.pause(0.02)
            assert gone() is None, "the dialog is still held"
            assert cyclic_nodes() == {}

            game = observe(bid(rolled(opener=0), 0, 2, 4), 0)
            session.feed(table_state(game, turn_seconds=60))
            await pilot.pause(0.1)
            table = app.screen
            assert isinstance(table, TableScreen)
            app.notify("a notice", timeout=0.05)  # a notice drawn over it, and expired
            gone = weakref.ref(table)
            del table
            await pilot.pause(0.3)
            session.feed(P.LeftTable(), P.LobbyState(tables=tables, online=("ana", "ben")))
            for _ in range(5):
                await pilot.pause(0.02)
            assert gone() is None, "the table screen is still held"
            assert cyclic_nodes() == {}
        # the lobby still answers: its dialog opens again
        await pilot.press("c")
        await pilot.pause(0.05)
        assert isinstance(app.screen, CreateTableDialog)
