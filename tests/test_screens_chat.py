"""Pilot tests of the chat panes (80×24): the lobby's below the tables, the table's over the
bids (`t`), against a fake lobby session."""

from __future__ import annotations

import asyncio
import itertools
import types
import weakref

import pytest
from textual import events
from textual.widgets import DataTable, Static

from perudo_ssh import protocol as P
from perudo_ssh.chat import MAX_CHAT_LENGTH
from perudo_ssh.rules import observe
from screens.app import make_app
from screens.chat import ChatInput, ChatLog, ChatPane
from screens.create import CreateTableDialog
from tests.test_screens_fakes import (
    FakeSession,
    bid,
    call,
    lobby_state,
    rolled,
    screen_text,
    summary,
    table_state,
    wait_until,
)

SIZE = (80, 24)


def line(i: int, text: str, name: str = "ben", table: int | None = None) -> P.ChatLine:
    scope = "lobby" if table is None else "table"
    return P.ChatLine(id=i, scope=scope, name=name, text=text, table=table)


def test_chat_log_keeps_lines_once_in_order_and_per_table() -> None:
    log = ChatLog()
    assert log.add([line(5, "e"), line(7, "g")]) == [line(5, "e"), line(7, "g")]
    # a history sent again on coming back: only what is new, older lines go first
    assert log.add([line(3, "c"), line(5, "e"), line(7, "g"), line(9, "i")]) == [
        line(3, "c"),
        line(9, "i"),
    ]
    assert [x.id for x in log.lines] == [3, 5, 7, 9]
    log.add([line(100 + i, str(i)) for i in range(60)])
    assert [x.id for x in log.lines] == list(range(110, 160))
    # another table's line starts the log again
    log.add([line(200, "x", table=4)])
    assert (log.table, [x.text for x in log.lines]) == (4, ["x"])


@pytest.mark.slow
async def test_lobby_chat_shows_lines_as_text_and_sends_what_is_typed() -> None:
    session = FakeSession()
    app = make_app(session)
    session.feed(
        P.Welcome(name="ana"),
        lobby_state(summary(1)),
        P.ChatHistory(scope="lobby", lines=(line(1, "hola [red]todos[/red]"),)),
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "ben: hola [red]todos[/red]" in screen_text(app))
        assert "Lobby chat · m to type" in screen_text(app)
        assert isinstance(app.focused, DataTable)
        await pilot.press("m")
        assert isinstance(app.focused, ChatInput)
        for key in "c j s q":  # the lobby's keys are letters of the line now
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        assert session.sent == [P.Say(text="c j s q")]
        assert not isinstance(app.screen, CreateTableDialog)
        assert app.screen.query_one(ChatInput).value == ""
        session.feed(line(2, "c j s q", name="ana"))
        await wait_until(pilot, lambda: "ana: c j s q" in screen_text(app))
        await pilot.press("enter")  # nothing typed: nothing said
        assert session.sent == [P.Say(text="c j s q")]
        await pilot.press("escape")
        assert isinstance(app.focused, DataTable)
        await pilot.press("tab")  # Tab reaches the chat line too
        assert isinstance(app.focused, ChatInput)


async def test_a_paste_keeps_one_clean_line_that_fits() -> None:
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        chat_input = app.screen.query_one(ChatInput)
        chat_input.post_message(events.Paste("hi\x1b]0;pwned\x07 there\x1b[2J\nsecond line"))
        await wait_until(pilot, lambda: chat_input.value != "")
        assert chat_input.value == "hi there second line"
        chat_input.post_message(events.Paste("x" * 500))
        await wait_until(pilot, lambda: len(chat_input.value) > 20)
        assert len(chat_input.value) == MAX_CHAT_LENGTH


async def test_table_chat_opens_over_the_bids_and_keys_are_its_own() -> None:
    session = FakeSession()
    app = make_app(session)
    game = observe(bid(rolled(), 0, 3, 4), 0)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)), table_state(game))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Current bid: 3×4" in screen_text(app))
        pane = app.screen.query_one(ChatPane)
        assert not pane.is_open
        # a line said while the chat is closed is shown as a notification
        session.feed(line(1, "[b]nice[/b] bid", table=1))
        await wait_until(pilot, lambda: bool(app._notifications))
        (note,) = app._notifications
        assert (note.title, note.message, note.markup) == ("ben", "[b]nice[/b] bid", False)
        await pilot.press("t")
        assert pane.is_open and isinstance(app.focused, ChatInput)
        text = screen_text(app)
        assert "Table chat · Esc closes" in text and "ben: [b]nice[/b] bid" in text
        assert "Current bid: 3×4" in text and "Your dice" in text  # the table stays in sight
        for key in "dlt":  # dudo, leave, chat: letters of the line here
            await pilot.press(key)
        await pilot.press("enter")
        assert session.sent == [P.Say(text="dlt")]
        # open, my own line and others' need no notification
        session.feed(line(2, "dlt", name="ana", table=1), line(3, "ok", table=1))
        await wait_until(pilot, lambda: "ben: ok" in screen_text(app))
        assert len(app._notifications) == 1
        await pilot.press("escape")  # closes the chat, does not leave the table
        assert not pane.is_open and app.focused is None
        assert session.sent == [P.Say(text="dlt")]
        await pilot.press("t", "t")  # from the table's keys, t opens and t closes
        assert pane.is_open
        await pilot.press("escape")
        # back to the lobby: the table's lines are forgotten
        session.feed(P.LeftTable())
        await wait_until(pilot, lambda: not app.chat.table.lines)


async def test_table_chat_in_the_waiting_room_and_for_spectators() -> None:
    session = FakeSession()
    app = make_app(session)
    session.feed(
        P.Welcome(name="ana"),
        lobby_state(summary(1)),
        P.ChatHistory(scope="table", table=1, lines=(line(4, "hi all", table=1),)),
        table_state(None, status="waiting", me=None),
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.table is not None)
        await pilot.pause()
        await pilot.press("t")
        assert app.screen.query_one(ChatPane).is_open
        assert "ben: hi all" in screen_text(app)
        await pilot.press("y", "o", "enter")
        assert session.sent == [P.Say(text="yo")]


async def test_chat_panes_follow_a_language_switch() -> None:
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state())
    async with app.run_test(size=SIZE) as pilot:
        pane = app.screen.query_one(ChatPane)
        await wait_until(pilot, lambda: pane.border_title == "Lobby chat · m to type")
        app.set_language("fr")
        assert pane.border_title == app.tr._("Lobby chat · m to type")
        assert app.screen.query_one(ChatInput).placeholder == app.tr._(
            "Type a line, Enter to say it, Esc to go back"
        )


def post_read(app, keys: str | list[str]) -> None:
    """Post `keys` to the app at once, as the SSH driver posts the keys of one read (a
    paste, a fast typist, a slow link)."""
    for key in keys:
        character = {"enter": "\r", "escape": "\x1b"}.get(key, key)
        app.post_message(events.Key(key, character))


async def test_keys_read_together_with_m_are_the_chat_s_and_escape_gives_them_back() -> None:
    """A laggy link (or a paste, or a fast typist) brings `m`, a line and Enter in one read:
    Textual routes each key to the widget focused when the app takes it, and a binding that
    is not a priority runs only when its key comes back up to the app, after the keys behind
    it were routed: the letters went to the table list (lost) and the Enter joined the table
    under the cursor. `m` is a priority binding now: the line has the focus at once, the
    letters are typed and the line said. Escape and `j` in one read: Escape leaves the line
    at once (a priority too), so `j` joins from the list. `m` typed into the line is a
    letter of it."""
    session = FakeSession()
    app = make_app(session)
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1, name="ben's table")))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "ben's table" in screen_text(app))
        post_read(app, ["m", *"hola there", "enter"])
        await wait_until(pilot, lambda: P.Say(text="hola there") in session.sent)
        assert not [c for c in session.sent if isinstance(c, P.JoinTable)]
        assert isinstance(app.focused, ChatInput)
        post_read(app, ["m", *"ama", "enter"])  # the chat's line has the focus: a letter
        await wait_until(pilot, lambda: P.Say(text="mama") in session.sent)
        post_read(app, ["escape", "j"])
        await wait_until(pilot, lambda: P.JoinTable(table=1) in session.sent)
        assert isinstance(app.focused, DataTable)


async def test_keys_read_together_with_t_at_a_table_are_the_chat_s_never_a_call() -> None:
    """At a table where the player may call dudo, `t`, `dude` and Enter in one read say
    "dude" and call nothing (routed to the table's keys, each `d` was a dudo to call); `t`
    typed into the chat's line or the bid line is a letter of it; Escape and `d` in one read
    close the chat and call dudo, as typed one by one."""
    session = FakeSession()
    app = make_app(session)
    game = observe(bid(rolled(opener=2), 2, 3, 4), 0)  # carl bid 3×4: ana may call dudo
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)), table_state(game))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Current bid: 3×4" in screen_text(app))
        pane = app.screen.query_one(ChatPane)
        post_read(app, ["t", *"dude", "enter"])
        await wait_until(pilot, lambda: P.Say(text="dude") in session.sent)
        assert not [c for c in session.sent if isinstance(c, P.MakeCall)]
        post_read(app, ["t", *"ot", "enter"])
        await wait_until(pilot, lambda: P.Say(text="tot") in session.sent)
        assert pane.is_open
        post_read(app, ["escape", "d"])
        await wait_until(pilot, lambda: P.MakeCall(call="dudo") in session.sent)
        assert not pane.is_open
        await pilot.press("tab", *"4xt")
        assert app.focused is app.screen.query_one("#bid-input") and not pane.is_open
        assert app.focused.value == "4xt"


async def test_escape_read_with_the_enter_before_it_waits_for_that_enter() -> None:
    """A chat line's Enter and the Escape after it in one read (a loaded server reads both
    before the app takes the first): the line is said, then the chat closes. Escape acting
    at once moved the focus before the Enter had come back up to the app, whose binding was
    then looked up from the table: the line was lost and the Enter was the table's bid (the
    load bench's lost table chat lines). And `m` read behind a key still on its way acts in
    its turn too: the list's Enter joins, `m` then opens the chat."""
    session = FakeSession()
    app = make_app(session)
    game = observe(rolled(opener=0), 0)  # ana opens: Enter would bid the composer's bid
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)), table_state(game))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Your bid ▸  1×2" in screen_text(app))
        pane = app.screen.query_one(ChatPane)
        post_read(app, ["t", *"gl", "enter", "escape"])
        await wait_until(pilot, lambda: P.Say(text="gl") in session.sent)
        await wait_until(pilot, lambda: not pane.is_open)
        for _ in range(5):
            await pilot.pause()
        assert session.sent == [P.Say(text="gl")]  # no bid
        assert app.keys_settled()


async def test_a_reveal_while_the_table_chat_is_open_leaves_the_line_its_keys() -> None:
    """A round ends (a reveal) while the player types at the table's chat: the line keeps
    the focus and what is typed; Escape then closes the chat and Space the reveal. (The
    reveal took the focus and left the pane open: Escape reached the table's keys and the
    chat stayed open, found by the load bench.)"""
    session = FakeSession()
    app = make_app(session)
    game = rolled(opener=0)
    session.feed(P.Welcome(name="ana"), lobby_state(), table_state(observe(bid(game, 0, 3, 4), 0)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Current bid: 3×4" in screen_text(app))
        pane = app.screen.query_one(ChatPane)
        await pilot.press("t", *"gl")
        assert pane.is_open and isinstance(app.focused, ChatInput)
        revealed = call(bid(game, 0, 3, 4), 1)  # seat 1 calls dudo: round 1 is revealed
        session.feed(table_state(observe(revealed, 0)))
        await wait_until(pilot, lambda: app.screen.has_class("-reveal"))
        assert pane.is_open and isinstance(app.focused, ChatInput)
        await pilot.press(*" hf", "enter")
        await wait_until(pilot, lambda: P.Say(text="gl hf") in session.sent)
        await pilot.press("escape")
        assert not pane.is_open and app.focused is None
        assert app.screen.has_class("-reveal")


async def test_escape_waits_for_a_held_up_enter_however_long(monkeypatch) -> None:
    """A chat line's Enter held up in its widget (a server seconds behind) and an Escape read
    later: the Escape waits for it, however long, and the line is said before the chat
    closes. A key routed more than a second before used to count as handled: on a server
    more than a second behind, the Escape closed the chat first, the Enter was the table's
    bid and the line was lost (a 300-session bench at 88 % of a core). The keys' clock runs
    ten seconds a look here, so that a time limit put back would fail this test. A key whose
    widget is removed with it still settles."""
    from screens import keys

    ticks = itertools.count(step=10)  # each look at the clock ten seconds after the last
    monkeypatch.setattr(
        keys, "time", types.SimpleNamespace(monotonic=ticks.__next__), raising=False
    )
    gate = asyncio.Event()
    typed = ChatInput._on_key

    async def held_up(self, event: events.Key) -> None:
        if event.key == "enter":
            await gate.wait()
        await typed(self, event)

    monkeypatch.setattr(ChatInput, "_on_key", held_up)
    session = FakeSession()
    app = make_app(session)
    game = observe(rolled(opener=0), 0)  # ana opens: Enter at the table would bid
    session.feed(P.Welcome(name="ana"), lobby_state(summary(1)), table_state(game))
    async with app.run_test(size=SIZE) as pilot:
        try:
            await held_up_escape(app, pilot, session, gate)
        finally:
            gate.set()  # a failure must not leave the app unable to stop


async def held_up_escape(app, pilot, session: FakeSession, gate: asyncio.Event) -> None:
    """The steps of the test above, in the app at its table. While the Enter is held up,
    waits poll the app (not `wait_until`: the pilot's pause waits for every widget's queue,
    the line's included)."""

    async def until(predicate) -> None:
        deadline = asyncio.get_running_loop().time() + 5
        while not predicate():
            assert asyncio.get_running_loop().time() < deadline, f"timed out: {predicate}"
            await asyncio.sleep(0.01)

    await wait_until(pilot, lambda: "Your bid ▸  1×2" in screen_text(app))
    pane = app.screen.query_one(ChatPane)
    post_read(app, ["t", *"gl", "enter"])
    await until(lambda: isinstance(app.focused, ChatInput) and app.focused.value == "gl")
    post_read(app, ["escape"])
    # the app took the Escape and routed it behind the Enter, to the line (at once, it
    # would not have been routed: its action closes the chat)
    await until(lambda: [k for k, _ in app._keys_routed if k.key == "escape"])
    assert pane.is_open and isinstance(app.focused, ChatInput)  # the Escape waits
    assert not app.keys_settled() and session.sent == []
    gate.set()
    await wait_until(pilot, lambda: not pane.is_open)
    assert session.sent == [P.Say(text="gl")]  # said, and no bid
    assert app.keys_settled()
    # a key routed to a widget removed before it handled it settles with the widget
    doomed = Static("x")
    await app.screen.mount(doomed)
    app._keys_routed.append((events.Key("x", "x"), weakref.ref(doomed)))
    assert not app.keys_settled()
    await doomed.remove()
    assert app.keys_settled()
