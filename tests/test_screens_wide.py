"""The cups lay out side by side on a wide terminal and one under another on a narrow one."""

from __future__ import annotations

from textual.app import App, ComposeResult

from screens.widgets import Cup, CupsPanel

CUPS = [Cup(name=f"p{n}", dice=5, turn=n == 2) for n in range(6)]


class CupsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield CupsPanel()


async def render_at(width: int, height: int) -> list[str]:
    app = CupsApp()
    async with app.run_test(size=(width, height)) as pilot:
        panel = app.query_one(CupsPanel)
        panel.show(CUPS)
        await pilot.pause()
        return panel.render().plain.splitlines()


async def test_wide_terminal_shows_cups_in_columns_in_seat_order() -> None:
    lines = await render_at(160, 30)
    tops = [line for line in lines if "╭─" in line]
    assert len(tops) == 2  # 6 seats, 3 a row (160 columns)
    assert [name for name in ("p0", "p1", "p2") if name in tops[0]] == ["p0", "p1", "p2"]
    assert "▶ p2" in tops[0]


async def test_narrow_terminal_stacks_the_cups() -> None:
    lines = await render_at(80, 30)
    assert sum("╭─" in line for line in lines) == 6
    assert all(line.count("╭─") <= 1 for line in lines)
