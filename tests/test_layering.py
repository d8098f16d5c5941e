"""Layering (STYLE.md 11; issue 12, item 5): the rules, the lobby and the bus import neither
textual nor asyncssh; a front imports nothing of the store or the lobby; the store nothing of
the lobby or the fronts; and no module imports itself back through others.

Each import check runs in a fresh interpreter so that nothing another test imported can hide
or fake a dependency."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

FORBIDDEN = ("textual", "asyncssh")
ROOT = Path(__file__).resolve().parents[1]


def _imported_after(module: str, forbidden: tuple[str, ...] = FORBIDDEN) -> list[str]:
    """The modules of `forbidden` (names, or packages with all they hold) present in
    `sys.modules` after importing `module`."""
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        f"forbidden = {forbidden!r}\n"
        "print(json.dumps(sorted({f for name in sys.modules for f in forbidden\n"
        "                         if name == f or name.startswith(f + '.')})))\n"
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
        "perudo_ssh.rules.legality",
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


LOBBY_AND_STORE = ("perudo_ssh.store", "perudo_ssh.lobby", "perudo_ssh.serve")
FRONTS = ("perudo_ssh.front", "perudo_ssh.ssh", "screens", "textual", "asyncssh")


@pytest.mark.parametrize(
    "module", ["perudo_ssh.front.process", "perudo_ssh.front.server", "screens.app"]
)
def test_a_front_imports_nothing_of_the_store_or_the_lobby(module):
    """A front process reaches stored data and the lobby only over the bus (issue 12)."""
    assert _imported_after(module, LOBBY_AND_STORE) == []


@pytest.mark.parametrize(
    "module", ["perudo_ssh.store", "perudo_ssh.records", "perudo_ssh.records_bus"]
)
def test_the_store_imports_nothing_of_the_lobby_or_the_fronts(module):
    forbidden = (*FRONTS, "perudo_ssh.lobby", "perudo_ssh.serve")
    assert _imported_after(module, forbidden) == []


def _imports(path: Path, name: str) -> set[str]:
    """The modules `path` (module `name`) imports, anywhere in it but under TYPE_CHECKING."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for other in node.orelse:
                visit(other)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_no_module_imports_itself_back_through_others():
    """No import circle among our modules (a package's own modules importing one another
    through it aside: its parents are imported before any of them)."""
    modules: dict[str, Path] = {}
    for path in [
        *ROOT.joinpath("perudo_ssh").rglob("*.py"),
        *ROOT.joinpath("screens").rglob("*.py"),
    ]:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        parents = {name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)}
        graph[name] = {m for m in _imports(path, name) if m in modules} - parents - {name}
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    path: list[str] = []

    def walk(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                return path[path.index(other) :] + [other]
            if other not in state and (circle := walk(other)):
                return circle
        path.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state:
            assert (circle := walk(name)) is None, " -> ".join(circle)
