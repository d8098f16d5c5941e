"""The key bar at the bottom of every screen, in the player's language.

It looks and acts as `textual.widgets.Footer` (the same keys, words, colours and spacing: ` c
Create table  j/⏎ Join …`, a click on a key presses it), but it is one widget drawing one line,
redrawn only when the line changes. Textual's footer is a container of one `FooterKey` widget
a key, all unmounted and mounted again on every change of the screen's bindings (each focus
change, each turn at a table): a profile of the server at 60 sessions put 15 % of its CPU in
those mounts and their styling (issue 10).

Each key's label is its binding's description taken as a message id and translated with the
app's `tr` (`PerudoApp.tr`), unless the screen names it itself with an optional
`describe_binding(binding) -> str | None` (the table screen does, so that "Dudo" reads as the
table's own word, e.g. "Не верю" at a Russian club table). After a language switch,
`screen.refresh_bindings()` redraws it.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from screens.shared import shared_lines

__all__ = ["Footer", "describe"]

Key = tuple[str, str, str, bool]
"""One key of the bar: (key as bound, key as shown, label, enabled)."""


def describe(node: Widget, binding: Binding) -> str:
    """The label of `binding` in the footer of `node`'s screen: the screen's own
    `describe_binding(binding)` if it gives one, else the description translated by the
    app's `tr` (the English description when the app has none, as in a bare test app)."""
    own = getattr(node.screen, "describe_binding", None)
    if own is not None:
        text = own(binding)
        if text is not None:
            return text
    tr = getattr(node.app, "tr", None)
    return tr._(binding.description) if tr is not None else binding.description


class Footer(Widget, can_focus=False):
    """The shown bindings of the screen as one line of keys (see the module docstring).

    Each key is drawn as Textual's footer draws it, ` KEY LABEL `: the key in the footer's key
    colours and bold, the label in its description colours; a key whose action is disabled
    now is dim. `keys` is what the line shows, as `Key` tuples in order; `key_at(x)` is the
    key bound at column `x`, or None. The line drawn is shared by every footer of the process
    showing the same keys alike (`shared_lines`): at the tables, each change of turn gave
    the mover a new footer, drawn through Rich at ~1 ms a time (issue 10)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description"}
    DEFAULT_CSS = """
    Footer {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        text-overflow: clip;
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.keys: tuple[Key, ...] = ()
        self._spans: tuple[tuple[int, int, Key], ...] = ()  # (start, end, key) per key drawn

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.call_after_refresh(self._bindings_changed, self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        keys = self._keys()
        if keys != self.keys:
            self.keys = keys
            self._spans = self._spans_of(keys)
            self.refresh()

    @staticmethod
    def _spans_of(keys: tuple[Key, ...]) -> tuple[tuple[int, int, Key], ...]:
        """Where each key is drawn: (first column, column after, key), as `render` draws
        ` KEY LABEL ` (a label only when the key has one)."""
        spans = []
        start = 0
        for key in keys:
            _bound, shown, label, _enabled = key
            end = start + cell_len(f" {shown} ") + (cell_len(f"{label} ") if label else 0)
            spans.append((start, end, key))
            start = end
        return tuple(spans)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The bar's lines within `crop`, from `SHARED_RENDERS` when drawn already."""
        return shared_lines(self, ("footer", self.keys), crop, super().render_lines)

    def _keys(self) -> tuple[Key, ...]:
        """The keys to show now: one per action (its first binding), in binding order, but
        those the screen's optional `footer_shows(action) -> bool` says not to show now (the
        admin screen shows the keys of the list with the cursor); the actions the screen
        lists in `FOOTER_WHEN_ROOM` only while the line has room for them (the last of them
        given up first)."""
        seen: set[str] = set()
        keys: list[Key] = []
        optional: list[int] = []  # where the keys shown only with room are
        when_room = getattr(self.screen, "FOOTER_WHEN_ROOM", ())
        shows = getattr(self.screen, "footer_shows", None)
        for _node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            if shows is not None and not shows(binding.action):
                continue
            seen.add(binding.action)
            label = describe(self, binding) if binding.description else ""
            if binding.action in when_room:
                optional.append(len(keys))
            keys.append((binding.key, self.app.get_key_display(binding), label, enabled))
        width = self.size.width or self.app.size.width
        while optional and self._spans_of(tuple(keys))[-1][1] > width:
            del keys[optional.pop()]
        return tuple(keys)

    def on_resize(self, event: events.Resize) -> None:
        """A wider or narrower line: the keys shown only with room come or go."""
        self._bindings_changed(self.screen)

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer-key--key")
        label_style = self.get_component_rich_style("footer-key--description")
        disabled = Style(dim=True)
        line = Text(no_wrap=True, overflow="crop", end="")
        for key in self.keys:
            _bound, shown, label, enabled = key
            extra = Style() if enabled else disabled
            line.append(f" {shown} ", key_style + extra)
            if label:
                line.append(f"{label} ", label_style + extra)
        return line

    def _key_drawn_at(self, x: int) -> Key | None:
        for start, end, key in self._spans:
            if start <= x < end:
                return key
        return None

    def key_at(self, x: int) -> str | None:
        """The key drawn at column `x` of the bar, or None (between or past the keys)."""
        key = self._key_drawn_at(x)
        return None if key is None else key[0]

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click on a key presses it (a disabled one rings the bell), as Textual's does."""
        key = self._key_drawn_at(event.x)
        if key is None:
            return
        if key[3]:
            self.app.simulate_key(key[0])
        else:
            self.app.bell()
