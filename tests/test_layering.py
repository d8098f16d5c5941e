"""Layering (STYLE.md 11): the rules, the lobby and the bus import neither textual nor asyncssh.

Each check runs in a fresh interpreter so that nothing another test imported can hide or fake
a dependency."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FORBIDDEN = ("textual", "asyncssh")
ROOT = Path(__file__).resolve().parents[1]


def _imported_after(module: str) -> list[str]:
    """The forbidden top-level packages present in `sys.modules` after importing `module`."""
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        "top = {name.split('.')[0] for name in sys.modules}\n"
        f"print(json.dumps(sorted(top & {set(FORBIDDEN)!r})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_check_sees_a_forbidden_import():
    """The probe itself works: importing textual directly is seen."""
    assert _imported_after("textual") == ["textual"]


@pytest.mark.parametrize(
    "module",
    [
        "perudo_ssh.rules",
        "perudo_ssh.rules.engine",
        "perudo_ssh.rules.options",
        "perudo_ssh.rules.state",
        "perudo_ssh.rules.view",
    ],
)
def test_rules_import_neither_textual_nor_asyncssh(module):
    assert _imported_after(module) == []


@pytest.mark.parametrize(
    "module",
    [
        "perudo_ssh.lobby",
        "perudo_ssh.lobby.host",
        "perudo_ssh.bus",
        "perudo_ssh.bus.nats_bus",
        "perudo_ssh.relay",
        "perudo_ssh.front.remote",
    ],
)
def test_the_lobby_and_the_bus_import_neither_textual_nor_asyncssh(module):
    """Issue 12, item 5: the lobby, the bus and the relay between them are the same with any
    front; the front's glue to the lobby (`front.remote`) is too."""
    assert _imported_after(module) == []
