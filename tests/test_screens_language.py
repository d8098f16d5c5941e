"""Pilot tests of the session language (issue 3, item 4): the lobby and the footer in the
language the app starts in, the language key switching everything at once, the lobby's
messages (ids with args) translated on arrival, and dialogs asked again in the new language."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable

from perudo_ssh import protocol as P
from perudo_ssh.i18n import N_, translator
from screens.app import PerudoApp, make_app
from screens.dialogs import ConfirmDialog, RerollDialog
from screens.footer import Footer
from screens.lobby import LobbyScreen
from tests.test_screens_fakes import (
    FakeSession,
    lobby_state,
    screen_text,
    summary,
    wait_until,
)

SIZE = (80, 24)
TITLES = {
    "en": "perudo-ssh · liar's dice · welcome, ana",
    "fr": "perudo-ssh · dés menteurs · bienvenue, ana",
    "ru": "perudo-ssh · кости лжеца · добро пожаловать, ana",
}


def notices(app: PerudoApp) -> list[tuple[str, str]]:
    return [(n.title, n.message) for n in app._notifications]


async def lobby_app(language: str = "en", *tables: P.TableSummary) -> PerudoApp:
    session = FakeSession()
    app = make_app(session, language)
    session.feed(P.Welcome(name="ana"), lobby_state(*tables))
    return app


async def test_the_lobby_starts_in_the_apps_language():
    app = await lobby_app("fr")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: TITLES["fr"] in screen_text(app) and "Langue" in screen_text(app)
        )
        text = screen_text(app)
        assert "Pas encore de table : appuyez sur c pour en créer une." in text
        assert "En ligne (2)" in text
        assert "c Créer une table" in text and "F2 Langue" in text
        assert app.language == "fr" and app.tr is translator("fr")


async def test_an_unknown_language_reads_english():
    app = make_app(FakeSession(), "de")
    assert app.language == "en" and app.tr is translator("en")


async def test_the_language_key_switches_the_lobby_and_its_footer():
    app = await lobby_app("en", summary(1), summary(2, status="playing", free=0))
    async with app.run_test(size=SIZE) as pilot:
        grid = app.screen.query_one("#tables", DataTable)
        await wait_until(pilot, lambda: grid.row_count == 2 and TITLES["en"] in screen_text(app))
        await pilot.press("down")
        assert "c Create table" in screen_text(app) and "F2 Language" in screen_text(app)

        await pilot.press("f2")
        await wait_until(pilot, lambda: "c Créer une table" in screen_text(app))
        text = screen_text(app)
        assert TITLES["fr"] in text and "En ligne (2)" in text and "F2 Langue" in text
        assert notices(app)[-1] == ("", "Langue : Français")
        assert grid.row_count == 2 and grid.cursor_row == 1  # rows and choice kept

        await pilot.press("f2")
        await wait_until(pilot, lambda: "c Создать стол" in screen_text(app))
        assert TITLES["ru"] in screen_text(app) and "В сети (2)" in screen_text(app)
        assert notices(app)[-1] == ("", "Язык: Русский")

        await pilot.press("f2")
        await wait_until(pilot, lambda: "c Create table" in screen_text(app))
        assert TITLES["en"] in screen_text(app) and "Online (2)" in screen_text(app)
        assert "No tables yet" not in screen_text(app)  # still hidden: there are tables
        assert app.language == "en"
        await pilot.press("enter")  # joining still works on the chosen row: it is playing
        await pilot.pause()
        assert notices(app)[-1] == ("", "Table 2 is playing: press s to watch it.")


@pytest.mark.slow
async def test_lobby_messages_are_translated_with_their_args():
    session = FakeSession()
    app = make_app(session, "en")
    session.feed(
        P.Welcome(name="ana"),
        P.Refused(
            code="bad_command",
            message="a table of {seats} takes 0 to {most} bots",
            args={"seats": 3, "most": 2},
        ),
        P.Refused(code="bid_not_higher", message="the bid must be higher than the last one"),
        P.Notice(text="{name} left the table", args={"name": "ben [b]"}),
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app._notifications) == 3)
        assert notices(app) == [
            ("Refused", "A table of 3 takes 0 to 2 bots"),
            ("Refused", "The bid must be higher than the last one"),
            ("", "ben [b] left the table"),
        ]
        session.feed(P.Goodbye(reason="server stopping"))
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_value == "server stopping"


async def test_a_dialog_is_asked_again_in_the_new_language():
    app = await lobby_app("en")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        app.push_screen(ConfirmDialog(lambda tr: tr._("Language")))
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        assert "Language" in screen_text(app) and "y: yes · n: no" in screen_text(app)
        app.action_language()
        await wait_until(pilot, lambda: "Langue" in screen_text(app))
        assert isinstance(app.screen, ConfirmDialog)
        assert isinstance(app.screen_stack[0], LobbyScreen)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        assert TITLES["fr"] in screen_text(app)  # the lobby beneath switched too


async def test_the_reroll_dialog_names_show_and_reroll_as_the_table_does():
    app = await lobby_app("en")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        app.push_screen(RerollDialog((2, 5, 5), planning=True))
        await wait_until(pilot, lambda: isinstance(app.screen, RerollDialog))
        await pilot.pause()
        text = screen_text(app)
        assert "With your bid, show and reroll: pick the dice to set aside" in text
        assert str(app.screen.query_one("#reroll-hint").render()) == (
            "Number keys pick dice; keep at least one hidden. Enter to confirm. "
            "They are shown as soon as you bid."
        )
        assert "⏎ Show and reroll" in text and "esc Cancel" in text


class _Labelled(Screen[None]):
    BINDINGS = [
        Binding("d", "app.bell", N_("Dudo")),
        Binding("f2", "app.quit", N_("Language"), key_display="F2"),  # one key per action
    ]

    def describe_binding(self, binding: Binding) -> str | None:
        return "Не верю" if binding.description == "Dudo" else None

    def compose(self) -> ComposeResult:
        yield Footer()


class _Bare(App[None]):
    def on_mount(self) -> None:
        self.push_screen(_Labelled())


async def test_the_footer_asks_the_screen_first_then_translates_then_keeps_english():
    app = _Bare()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "d Не верю" in screen_text(app))
        assert "d Не верю" in screen_text(app) and "F2 Language" in screen_text(app)
        app.tr = translator("ru")  # type: ignore[attr-defined]
        app.screen.refresh_bindings()
        await wait_until(pilot, lambda: "F2 Язык" in screen_text(app))
