"""Unit tests of the SSH transport's pure parts: names, input handling, isolation, keys."""

from __future__ import annotations

import gc
import stat
import sys
import time
import weakref
from pathlib import Path

import pytest
from rich.color import ColorSystem
from textual import constants, events
from textual._xterm_parser import XTermParser
from textual.app import App

from perudo_ssh.names import clean_name
from perudo_ssh.ssh.client_text import MAX_FAREWELL, farewell_line
from perudo_ssh.ssh.hostkey import load_or_create_host_key
from perudo_ssh.ssh.isolation import color_system_for, install_redirect_guard, isolate_app
from perudo_ssh.ssh.pacing import _TokenBucket
from perudo_ssh.ssh.terminal_input import PASTE_END, PASTE_START, PasteLimiter, TerminalInput


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        ("alice", "alice"),
        ("Zoë <script>!", "Zoëscript"),
        ("Ｂｏｂ", "Bob"),  # fullwidth letters, NFKC
        ("e\u0301lise", "élise"),  # combining accent composed
        ("a.b-c_d", "a.b-c_d"),
        ("x" * 40, "x" * 16),
        ("\x1b[31mred\x07", "31mred"),
        ("rtl\u202eevil", "rtlevil"),  # bidi override dropped
        ("\u3164\u3164", "player"),  # invisible Hangul fillers
        ("", "player"),
        ("!!!", "player"),
    ],
)
def test_clean_name(username: str, expected: str) -> None:
    assert clean_name(username) == expected


@pytest.mark.parametrize(
    ("term", "colorterm", "expected"),
    [
        ("xterm-256color", None, ColorSystem.EIGHT_BIT),
        ("xterm-256color", "truecolor", ColorSystem.TRUECOLOR),
        ("tmux-256color", "24bit", ColorSystem.TRUECOLOR),
        ("xterm-direct", None, ColorSystem.TRUECOLOR),
        ("xterm", None, ColorSystem.STANDARD),
        ("vt100", None, ColorSystem.STANDARD),
        ("linux", "", ColorSystem.STANDARD),
    ],
)
def test_color_system_for(term: str, colorterm: str | None, expected: ColorSystem) -> None:
    assert color_system_for(term, colorterm) == expected


def _limit_in_chunks(text: str, limit: int, size: int) -> str:
    limiter = PasteLimiter(limit)
    return "".join(limiter.filter(text[i : i + size]) for i in range(0, len(text), size))


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13, 1000])
def test_paste_limiter_cuts_long_pastes_whatever_the_chunking(size: int) -> None:
    text = "ab" + PASTE_START + "x" * 50 + PASTE_END + "cd" + PASTE_START + "yy" + PASTE_END
    expected = "ab" + PASTE_START + "x" * 10 + PASTE_END + "cd" + PASTE_START + "yy" + PASTE_END
    assert _limit_in_chunks(text, 10, size) == expected


@pytest.mark.parametrize("size", [1, 4, 100])
def test_paste_limiter_passes_short_pastes_and_plain_text(size: int) -> None:
    text = "hello \x1b[A" + PASTE_START + "short" + PASTE_END + "\x1b"
    assert _limit_in_chunks(text, 100, size) == text


def test_terminal_input_gives_a_paste_cut_to_the_limit() -> None:
    terminal_input = TerminalInput(max_paste=1000)
    data = (PASTE_START + "z" * 50_000 + PASTE_END).encode()
    messages = [
        m for i in range(0, len(data), 4096) for m in terminal_input.feed(data[i : i + 4096])
    ]
    (paste,) = messages
    assert isinstance(paste, events.Paste)
    assert paste.text == "z" * 1000


def test_terminal_input_lone_escape_needs_a_tick() -> None:
    terminal_input = TerminalInput(max_paste=100)
    assert terminal_input.feed(b"\x1b") == []
    time.sleep(constants.ESCAPE_DELAY + 0.02)
    (key,) = terminal_input.tick()
    assert isinstance(key, events.Key) and key.key == "escape"


def test_terminal_input_survives_hostile_bytes() -> None:
    terminal_input = TerminalInput(max_paste=100)
    # Huge Kitty code point (crashes Textual's parser), a split and an invalid
    # UTF-8 sequence, a forged in-band resize.
    for data in (b"\x1b[99999999999999999999u", b"\xc3", b"\xa9\xff", b"\x1b[48;999;999;1;1t"):
        messages = terminal_input.feed(data)
        assert not any(isinstance(m, events.Resize) for m in messages)
    keys = [m.key for m in terminal_input.feed(b"ok") if isinstance(m, events.Key)]
    assert keys == ["o", "k"]


def test_terminal_input_cache_is_per_instance() -> None:
    class_cache = XTermParser._parse_extended_key  # type: ignore[attr-defined]
    before = class_cache.cache_info().currsize
    terminal_input = TerminalInput(max_paste=100)
    keys = [m.key for m in terminal_input.feed(b"\x1b[97;5u") if isinstance(m, events.Key)]
    assert keys == ["ctrl+a"]
    assert class_cache.cache_info().currsize == before
    ref = weakref.ref(terminal_input)
    del terminal_input
    gc.collect()
    assert ref() is None


def test_token_bucket() -> None:
    bucket = _TokenBucket(rate=100, burst=50, now=0.0)
    assert bucket.take(80, now=0.0) == 50
    assert bucket.take(10, now=0.0) == 0
    assert bucket.wait(10) == pytest.approx(0.1)
    assert bucket.take(10, now=0.1) == 10
    assert bucket.take(1000, now=100.0) == 50


class _PrintingApp(App[None]):
    def on_mount(self) -> None:
        self.streams_seen = (sys.stdout, sys.stderr)
        self.exit()


async def test_isolated_app_leaves_process_streams_alone() -> None:
    install_redirect_guard()
    install_redirect_guard()  # idempotent
    isolated, plain = _PrintingApp(), _PrintingApp()
    isolate_app(isolated, ColorSystem.EIGHT_BIT)
    assert isolated.console.color_system == "256"
    streams = (sys.stdout, sys.stderr)
    await isolated.run_async(headless=True)
    assert isolated.streams_seen == streams
    # An app not isolated keeps Textual's own behaviour: its prints are captured.
    await plain.run_async(headless=True)
    assert plain.streams_seen != streams
    assert (sys.stdout, sys.stderr) == streams


def test_host_key_is_created_private_and_reused(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    first = load_or_create_host_key(directory)
    path = directory / "ssh_host_ed25519_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert [p.name for p in directory.iterdir()] == [path.name]  # no temporary left
    path.chmod(0o644)
    second = load_or_create_host_key(directory)
    assert second.get_fingerprint() == first.get_fingerprint()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_farewell_line_is_plain_text():
    """What an app left to say after it exits reaches the terminal as one plain line: no
    escape sequence or control character the reason (typed by an admin) carried."""
    typed = "an admin ended your session: \x1b]0;pwned\x07cheat\x1b[2J\x1b[31ming\r\nnow\u202e"
    assert farewell_line(typed) == b"perudo-ssh: an admin ended your session: cheating now\r\n"
    assert farewell_line("\x1b[2J\x07 ") is None
    assert farewell_line(None) is None
    assert farewell_line("é" * 1000) == ("perudo-ssh: " + "é" * MAX_FAREWELL).encode() + b"\r\n"


PASTED = "\x1b[200~hi \x1b]52;c;ZXZpbA==\x07 mid\x1b[2J\x9b1m end\r\n\x1b[201~"
CLEAN = "\x1b[200~hi  mid end\r\n\x1b[201~"


def test_a_paste_loses_its_control_characters_but_keeps_its_markers():
    """An escape inside pasted text would be parsed as keys (found by an attack pass: the
    paste arrived scrambled, its bytes partly as key presses)."""
    assert PasteLimiter(1000).filter("a" + PASTED + "\x1b[A") == "a" + CLEAN + "\x1b[A"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_a_paste_in_pieces_keeps_its_markers_and_loses_every_control(size):
    """Wherever the chunks are cut, the paste's own markers arrive whole and nothing else
    in it is a control character (a sequence cut in two may leave printable payload)."""
    limiter = PasteLimiter(1000)
    text = PASTED + "x" + PASTED
    out = "".join(limiter.filter(text[i : i + size]) for i in range(0, len(text), size))
    assert out.startswith(PASTE_START) and out.endswith(PASTE_END)
    assert out.count(PASTE_START) == 2 and out.count(PASTE_END) == 2
    inside = out.replace(PASTE_START, "").replace(PASTE_END, "").replace("\r\n", "")
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in inside)
    assert inside.startswith("hi ") and "end" in inside
