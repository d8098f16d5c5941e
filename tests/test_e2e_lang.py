"""End to end over SSH (issue 3, item 4): the session reads the language of the locale the
client sends (LANG, as OpenSSH's SendEnv does; LC_ALL and LC_MESSAGES before it), English
without one, and the language key switches at any time. Also the one-line refusal of a
client without a terminal, in its own language."""

from __future__ import annotations

import asyncssh
import pytest

from tests.sshterm import Guest, Terminal

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # the quick loop: -m "not slow"

FRENCH = "perudo-ssh · dés menteurs · bienvenue, ana"
RUSSIAN = "perudo-ssh · кости лжеца · добро пожаловать, ana"
ENGLISH = "perudo-ssh · liar's dice · welcome, ana"


async def session_in(port: int, env: dict[str, str]) -> Terminal:
    term = Terminal()
    await term.connect(port, "ana", None, env=env)
    return term


@pytest.mark.parametrize(
    ("env", "title", "footer"),
    [
        ({"LANG": "fr_FR.UTF-8"}, FRENCH, "c Créer une table"),
        ({"LANG": "ru_RU.UTF-8"}, RUSSIAN, "c Создать стол"),
        ({"LANG": "C"}, ENGLISH, "c Create table"),
        ({}, ENGLISH, "c Create table"),
        ({"LANG": "ru_RU.UTF-8", "LC_ALL": "fr_FR.UTF-8"}, FRENCH, "c Créer une table"),
    ],
)
async def test_the_client_locale_chooses_the_language(game_server, env, title, footer):
    term = await session_in(game_server.port, env)
    try:
        await term.wait_for(lambda text: title in text and footer in text)
    finally:
        await term.close()


async def test_the_language_key_switches_english_french_russian(game_server):
    term = await session_in(game_server.port, {"LANG": "en_US.UTF-8"})
    try:
        await term.wait_for(lambda text: ENGLISH in text and "F2 Language" in text)
        term.send("f2")
        await term.wait_for(
            lambda text: (
                FRENCH in text
                and "Pas encore de table" in text  # the notice covers the end of the line
                and "Langue : Français" in text  # the notice says which, in the new language
                and "F2 Langue" in text
            )
        )
        term.send("f2")
        await term.wait_for(
            lambda text: (
                RUSSIAN in text
                and "Столов пока нет" in text
                and "Язык: Русский" in text
                and "F2 Язык" in text
            )
        )
        term.send("f2")
        await term.wait_for(lambda text: ENGLISH in text and "F2 Language" in text)
    finally:
        await term.close()


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("fr_FR.UTF-8", "perudo-ssh a besoin d'un terminal interactif : lancez `ssh -t ...`"),
        ("ru_RU.UTF-8", "perudo-ssh нужен интерактивный терминал: запустите `ssh -t ...`"),
        (None, "perudo-ssh needs an interactive terminal: run `ssh -t ...`"),
    ],
)
async def test_a_client_without_a_terminal_is_told_in_its_language(game_server, lang, said):
    async with asyncssh.connect(
        "127.0.0.1",
        game_server.port,
        username="ana",
        known_hosts=None,
        config=None,
        client_keys=None,
        client_factory=Guest,
        agent_path=None,
    ) as conn:
        env = {"LANG": lang} if lang else {}
        done = await conn.run(env=env, term_type=None, encoding="utf-8")
    assert done.exit_status == 1
    assert done.stderr == said + "\r\n"
