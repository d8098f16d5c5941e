"""The chat pane: the lines said where the player is (the lobby, or their table), and a line
to type one (issue 4, item 5).

The app keeps what it has read of each chat in `ChatLogs` (`PerudoApp.chat`), fed by
`chat_arrived` from the lobby's `ChatLine` and `ChatHistory` events; each `ChatPane` shows one
scope's log. A line typed in the pane goes to the lobby as `Say` (the lobby cleans it, limits
its length and rate, and may refuse it). Names and lines are the players' own text: drawn as
plain text, never as markup.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

from perudo_ssh import protocol
from perudo_ssh.chat import HISTORY, MAX_CHAT_LENGTH, clean_chat
from perudo_ssh.i18n import N_, Translator
from screens.cellframes import send_at_once
from screens.cheaper import QuietInput
from screens.keys import at_once
from screens.messages import Send
from screens.shared import SHARED_CACHES, SharedLines
from screens.widgets import app_tr
from screens.wording import marked

Scope = Literal["lobby", "table"]

NOTIFY_SECONDS = 5.0
"""How long a table line stays on screen while the table's chat is closed."""


class ChatLog:
    """The chat lines of one scope this session has read, oldest first, at most `HISTORY`.

    `table` is the table whose lines they are (None in the lobby). Lines are told apart by
    their `id`, which grows with every line said: one already here is not added twice (a
    history sent again on coming back), and a history's older lines go before newer ones."""

    def __init__(self) -> None:
        self._lines: dict[int, protocol.ChatLine] = {}  # by id, in id order
        self._shown: tuple[protocol.ChatLine, ...] | None = ()  # the lines, made when asked
        self.table: int | None = None

    @property
    def lines(self) -> tuple[protocol.ChatLine, ...]:
        """The lines, oldest first: the same tuple until the log changes."""
        if self._shown is None:
            self._shown = tuple(self._lines.values())
        return self._shown

    def add(self, lines: Iterable[protocol.ChatLine]) -> list[protocol.ChatLine]:
        """Add the lines not here yet (a line of another table first empties the log); returns
        the lines added."""
        added = []
        for line in lines:
            if line.table != self.table:
                self.clear()
                self.table = line.table
            if line.id not in self._lines:
                self._lines[line.id] = line
                added.append(line)
        if added:
            kept = sorted(self._lines)[-HISTORY:]
            self._lines = {i: self._lines[i] for i in kept}
            self._shown = None
        return added

    def clear(self) -> None:
        """Forget every line (the player left the table)."""
        self._lines.clear()
        self._shown = ()
        self.table = None


class ChatLogs:
    """What a session has read of the lobby's chat and of its table's (`PerudoApp.chat`)."""

    def __init__(self) -> None:
        self.lobby = ChatLog()
        self.table = ChatLog()
        self.panes: list[ChatPane] = []
        """The app's mounted chat panes, on every screen (each adds itself while mounted):
        a line arriving redraws these, without a query of every screen (issue 10)."""

    def of(self, scope: Scope) -> ChatLog:
        """The log of `scope`."""
        return self.lobby if scope == "lobby" else self.table


def chat_arrived(app: App, event: protocol.ChatLine | protocol.ChatHistory) -> None:
    """Take a chat event into the app's `ChatLogs` (`app.chat`) and redraw the panes of its
    scope on every screen; a line someone else said at the table while its pane is closed is
    shown as a notification."""
    logs: ChatLogs = app.chat  # type: ignore[attr-defined]
    lines = event.lines if isinstance(event, protocol.ChatHistory) else (event,)
    added = logs.of(event.scope).add(lines)
    if not added:
        return
    shown = False
    for pane in tuple(logs.panes):
        if pane.scope == event.scope:
            pane.redraw()
            shown = shown or pane.is_open
    if (
        isinstance(event, protocol.ChatLine)
        and event.scope == "table"
        and not shown
        and event.name != getattr(app, "player_name", None)
    ):
        notify_words = getattr(app, "notify_words", None)  # kept on a language switch
        text, name = _printable(event.text), marked(_printable(event.name), event.bot_account)
        if notify_words is not None:
            notify_words(text, title=name, timeout=NOTIFY_SECONDS)
        else:
            app.notify(text, title=name, markup=False, timeout=NOTIFY_SECONDS)


def line_content(line: protocol.ChatLine) -> Content:
    """One chat line as drawn: the name in bold, then the text; plain text, never markup.
    The lobby cleaned both; cleaned again here, so that no control character reaches the
    terminal whatever a server sends."""
    name = marked(clean_chat(line.name) or "?", line.bot_account)  # `BOT robo`: a program
    return Content.assemble((name, "bold"), ": ", _printable(line.text))


def _printable(text: str) -> str:
    return clean_chat(text) or ""


class ChatInput(QuietInput):
    """The line to type a chat line in: at most `MAX_CHAT_LENGTH` characters. A paste keeps
    only what a chat line may hold (`clean_chat`: no control character, one line), cut to
    fit; Escape leaves it (`ChatPane.Done`)."""

    BINDINGS = [
        Binding("enter", "submit", N_("Say"), key_display="⏎"),
        # at once when it keeps the order of the keys read with it (screens/keys.py: they go
        # where the focus goes, `action_done`, not into the line)
        Binding("escape", "done_at_once", N_("Back"), key_display="esc", priority=True),
        Binding("escape", "done", N_("Back"), key_display="esc", show=False),
    ]

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, max_length=MAX_CHAT_LENGTH, id=id, compact=True)
        self.cursor_blink = False  # a blinking cursor costs CPU per idle session

    def _on_paste(self, event: events.Paste) -> None:
        # Textual then runs `Input._on_paste` (each class's handler in turn), which pastes
        # the cleaned text
        room = MAX_CHAT_LENGTH - len(self.value) + len(self.selected_text)
        event.text = (clean_chat(event.text) or "")[: max(0, room)]

    def action_done_at_once(self) -> None:
        """Escape as the app takes it (a priority binding), unless keys before it are still
        on their way (the line's Enter: it says the line first; `screens.keys.at_once`)."""
        at_once(self)
        self.action_done()

    def action_done(self) -> None:
        """Escape: leave the line now, for what the screen's `after_chat()` names (None:
        the screen's own keys), then tell the screen (`ChatPane.Done`)."""
        after_chat = getattr(self.screen, "after_chat", None)
        self.screen.set_focus(after_chat() if after_chat is not None else None)
        self.post_message(ChatPane.Done())


WRAPPED_LINES: LRUCache[tuple[protocol.ChatLine, int], list[Content]] = LRUCache(2048)
"""Each chat line's rows at a width, for every chat pane of the process: a lobby line is
wrapped once, not once in each lobby screen (issue 10). A line is a frozen struct, shared as
decoded (`protocol.decode_event`), so it is its own key; oldest dropped first."""

CHAT_VIEWS: LRUCache[tuple[object, ...], Content] = LRUCache(128)
"""What a chat pane shows, by its size, how far it is scrolled back and its lines: every
lobby screen at the same size shows the same rows, worked out once (issue 10: a lobby chat
line cost each lobby screen its own wrapping and join, a third of its frame)."""
SHARED_CACHES.extend((WRAPPED_LINES, CHAT_VIEWS))


class ChatLines(SharedLines, Widget):
    """The chat lines of a pane, newest at the bottom, wrapped to the width (issue 10).

    One widget that draws only the rows it has room for: a line arriving costs the wrapping
    of that line and the drawing of one screen of rows, whatever the history holds (a
    scrolling container of every line laid out again cost each lobby screen ~25 ms a line),
    and both are done once for every pane of the process that shows the same lines at the
    same size and scroll (`WRAPPED_LINES`, `CHAT_VIEWS`); where nothing else on the screen
    waits to be drawn, the rows go to the terminal at once (`send_at_once`: a lobby chat line
    reaches every lobby screen, ~0.38 → 0.26 ms each in-process). The mouse wheel scrolls back
    through the history and forward again; while scrolled back, new lines keep the view where
    it is. `show(lines)` sets the lines (`protocol.ChatLine`s,
    oldest first); `scrolled_back` is how many rows the view is scrolled back from the newest."""

    DEFAULT_CSS = """
    ChatLines {
        height: 1fr;
        padding: 0 1;
    }
    """

    sent_at_once = 0
    """Changes sent to the terminal at once, as frames of the pane's rows (for tests)."""

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.scrolled_back = 0
        self._lines: tuple[protocol.ChatLine, ...] = ()
        self._rendered: tuple[tuple[object, ...], Content] | None = None  # last render, by
        # what it was drawn from (a frame renders the pane again whenever it draws it)

    def show(self, lines: Iterable[protocol.ChatLine]) -> None:
        """Show `lines` (oldest first); scrolled back, the view stays on the rows it shows."""
        lines = tuple(lines)
        if self.scrolled_back:
            known = {line.id for line in self._lines}
            width = self._width()
            new = [line for line in lines if line.id not in known]
            self.scrolled_back += sum(len(self._rows(line, width)) for line in new)
        self._lines = lines
        self._clamp()
        # a line arriving in every lobby screen: drawn and sent at once where nothing else
        # waits to be drawn (`send_at_once`), else the usual way
        if send_at_once(self, Region(0, 0, *self.outer_size)):
            self.sent_at_once += 1
        else:
            self.refresh()

    def _width(self) -> int:
        return max(1, self.content_region.width)

    def _rows(self, line: protocol.ChatLine, width: int) -> list[Content]:
        """`line` as drawn at `width`: its rows, wrapped (`WRAPPED_LINES`)."""
        key = (line, width)
        rows = WRAPPED_LINES.get(key)
        if rows is None:
            rows = WRAPPED_LINES[key] = line_content(line).wrap(width)
        return rows

    def _view(self, width: int, height: int) -> list[Content]:
        """The rows in sight: `height` rows ending `scrolled_back` rows before the newest."""
        wanted = height + self.scrolled_back
        rows: list[Content] = []
        for line in reversed(self._lines):
            rows[:0] = self._rows(line, width)
            if len(rows) >= wanted:
                break
        end = len(rows) - self.scrolled_back
        return rows[max(0, end - height) : max(0, end)]

    def _total_rows(self, width: int) -> int:
        return sum(len(self._rows(line, width)) for line in self._lines)

    def _clamp(self) -> None:
        """Keep the view within the history (nothing to do at the newest rows)."""
        if not self.scrolled_back:
            return
        room = max(0, self._total_rows(self._width()) - self.content_region.height)
        self.scrolled_back = max(0, min(self.scrolled_back, room))

    def render(self) -> Content:
        region = self.content_region
        width, height = max(1, region.width), max(0, region.height)
        drawn_from = (width, height, self.scrolled_back, self._lines)
        kept = self._rendered
        if kept is None or kept[0] != drawn_from:  # the same lines, size and scroll: the same
            view = CHAT_VIEWS.get(drawn_from)
            if view is None:
                view = CHAT_VIEWS[drawn_from] = Content("\n").join(self._view(width, height))
            kept = self._rendered = (drawn_from, view)
        return kept[1]

    def on_resize(self) -> None:
        self._clamp()
        self.refresh()

    def _scroll(self, rows: int) -> None:
        before = self.scrolled_back
        self.scrolled_back = max(0, before + rows)
        self._clamp()
        if self.scrolled_back != before:
            self.refresh()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self._scroll(1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self._scroll(-1)


class ChatPane(Widget):
    """One scope's chat (`scope` "lobby" or "table"): its last lines, newest at the bottom,
    and `ChatInput`. Enter sends the typed line as `Say`; Escape posts `Done` (the screen
    decides where the focus goes). `is_open` is whether the pane is shown."""

    DEFAULT_CSS = """
    ChatPane {
        height: 8;
        border-top: hkey $primary;
        border-title-color: $text-muted;
    }
    ChatPane > ChatInput {
        height: 1;
        margin: 0 1;
    }
    """

    class Done(Message):
        """The player left the chat line (Escape)."""

    def __init__(self, scope: Scope, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.scope: Scope = scope
        self._drawn: tuple[protocol.ChatLine, ...] = ()
        self._live = False  # its lines and input are mounted: draw at once
        self._lines: ChatLines | None = None

    @property
    def tr(self) -> Translator:
        """The app's translator (English outside a `PerudoApp`)."""
        return app_tr(self)

    @property
    def is_open(self) -> bool:
        """Whether the pane is shown (the table's may be closed)."""
        return self._live and self.display

    def compose(self) -> ComposeResult:
        yield ChatLines(classes="chat-lines")
        yield ChatInput(placeholder=self._placeholder())

    def on_mount(self) -> None:
        lines = self.query(ChatLines)
        if not lines:  # its screen closed while opening: nothing to draw on
            return
        self._lines = lines.first()
        self._live = True
        logs = getattr(self.app, "chat", None)
        if isinstance(logs, ChatLogs):
            logs.panes.append(self)
        self.border_title = self._title()
        self.redraw()

    def on_unmount(self) -> None:
        logs = getattr(self.app, "chat", None)
        if isinstance(logs, ChatLogs) and self in logs.panes:
            logs.panes.remove(self)
        self._live = False

    def _title(self) -> str:
        if self.scope == "lobby":
            return self.tr._("Lobby chat · m to type")
        return self.tr._("Table chat · Esc closes")

    def _placeholder(self) -> str:
        return self.tr._("Type a line, Enter to say it, Esc to go back")

    def _log(self) -> ChatLog | None:
        logs = getattr(self.app, "chat", None)
        return logs.of(self.scope) if isinstance(logs, ChatLogs) else None

    def redraw(self) -> None:
        """Show the log's lines as they are now (`ChatLines.show`)."""
        if not self._live or self._lines is None:
            return
        log = self._log()
        drawn = log.lines if log is not None else ()
        if drawn is self._drawn and drawn:
            return
        self._drawn = drawn
        self._lines.show(drawn)

    def retranslate(self) -> None:
        """Write the pane's own words in the app's current language."""
        if not self._live:
            return
        self.border_title = self._title()
        for line in self.query(ChatInput):
            line.placeholder = self._placeholder()

    def focus_input(self) -> None:
        """Put the cursor on the chat line now, before the next key is read: keys that
        arrive together with the one that opened the chat (a paste, a fast typist, a laggy
        link) are typed into it. (`Widget.focus()` moves the focus only after the keys
        already waiting: `m` then `hi⏎` in one read joined the table under the cursor.)"""
        if self._live:
            line = self.query_one(ChatInput)
            line.screen.set_focus(line)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Send the typed line (the lobby cleans and checks it); an empty one does nothing."""
        event.stop()
        if clean_chat(event.value) is None:
            event.input.clear()
            return
        self.post_message(Send(protocol.Say(text=event.value)))
        event.input.clear()
