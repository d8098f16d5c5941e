"""What a terminal shows of an app's frames, to compare with a whole repaint (issue 10).

The cheaper drawing of issue 10 (shared renders, one-row repaints, no whole-screen repaint
on a change of focus) sends a terminal only what changed; a mistake there leaves stale cells
on the player's screen that no screenshot of the app's own state shows. `Shown` feeds every
frame the app writes (the escape sequences a driver would send) to a pyte screen, and
`differences` compares it, cell by cell (character, colours, bold, reverse, underline), with
one whole repaint of the app's current state."""

from __future__ import annotations

from typing import Any

import pyte
from textual._compositor import Compositor, CompositorUpdate

Cell = tuple[str, str, str, bool, bool, bool]


def _cells(screen: pyte.Screen) -> list[list[Cell]]:
    rows = []
    for y in range(screen.lines):
        line = screen.buffer[y]
        rows.append(
            [
                (c.data, c.fg, c.bg, c.bold, c.reverse, c.underscore)
                for c in (line[x] for x in range(screen.columns))
            ]
        )
    return rows


class Shown:
    """The terminal of `app` (not yet running), `size` (columns, rows): every frame the app
    displays is fed to a pyte screen as escape sequences, in order."""

    def __init__(self, app: Any, size: tuple[int, int]) -> None:
        self.app = app
        self.screen = pyte.Screen(*size)
        self.stream = pyte.ByteStream(self.screen)
        self.frames = 0
        self.last = ""
        """The escape sequences of the last frame."""
        display = app._display

        def spy(screen: Any, renderable: Any) -> None:
            if isinstance(renderable, CompositorUpdate):
                self.frames += 1
                self.last = renderable.render_segments(app.console)
                self.stream.feed(self.last.encode())
            display(screen, renderable)

        app._display = spy

    def repainted(self) -> pyte.Screen:
        """A fresh terminal showing one whole repaint of the app's screen as it is now (the
        screens' own content drawn afresh; their widgets' drawn lines are theirs to keep)."""
        screen = pyte.Screen(self.screen.columns, self.screen.lines)
        stream = pyte.ByteStream(screen)
        app = self.app
        for drawn in (*app._background_screens, app.screen):
            drawn._set_dirty()  # a modal's own content (the screen under it) drawn afresh
        compositor = app.screen._compositor
        ours = Compositor._get_renders
        # Textual's own drawing of the widgets, not `install_front_renders`'
        Compositor._get_renders = getattr(ours, "perudo_original", ours)
        try:
            update = compositor.render_update(full=True, screen_stack=app._background_screens)
        finally:
            Compositor._get_renders = ours
        stream.feed(update.render_segments(app.console).encode())
        return screen

    def differences(self) -> list[str]:
        """Each cell where the frames shown differ from a whole repaint, as 'x,y: shown !=
        repainted' (empty: the terminal shows exactly the app's state)."""
        shown, whole = _cells(self.screen), _cells(self.repainted())
        return [
            f"{x},{y}: {a} != {b}"
            for y, (row_a, row_b) in enumerate(zip(shown, whole, strict=True))
            for x, (a, b) in enumerate(zip(row_a, row_b, strict=True))
            if a != b
        ]
