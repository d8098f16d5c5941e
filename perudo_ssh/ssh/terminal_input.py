"""Turn the bytes a client's terminal sends into Textual messages.

Everything here distrusts the client: invalid UTF-8 is replaced, bracketed pastes
are cut to a bounded length, size reports typed into the stream are ignored (only
the SSH window-change request may resize), and a sequence that crashes Textual's
parser costs the parser's state, never the session.
"""

from __future__ import annotations

import codecs
import logging
import re
import traceback
from collections.abc import Callable, Iterable
from functools import lru_cache
from types import MethodType

from textual import events, messages
from textual._xterm_parser import XTermParser
from textual.message import Message

from perudo_ssh.chat import strip_sequences

logger = logging.getLogger(__name__)

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
_MARKER_TAIL = len(PASTE_START) - 1

# Size reports the client can forge by typing escape sequences: a fake huge size
# would make the app lay out and paint an enormous screen.
_UNTRUSTED = (events.Resize, messages.InBandWindowResize)


def format_error(error: BaseException) -> str:
    """The traceback of `error` as text.

    Session code logs this rather than passing `exc_info`: a log record kept by a
    handler (a buffer, pytest's capture) would otherwise keep the traceback's
    frames, and through them the session's app, alive.
    """
    return "".join(traceback.format_exception(error)).rstrip()


class _SessionParser(XTermParser):
    """Textual's xterm parser with a per-instance, crash-proof key cache.

    `XTermParser._parse_extended_key` is an `lru_cache` on the method, shared by the
    class: its keys hold up to 1024 parser instances, and through the app's driver
    their apps, long after the session ended. A cache per instance dies with it.
    It also raises on a Kitty key with a huge code point (`ESC [ 99999999999 u`),
    which kills the parser; such a sequence is treated as unknown instead.
    """

    def __init__(self) -> None:
        super().__init__(debug=False)  # debug=True would write keys.log on the server
        unbound = XTermParser._parse_extended_key.__wrapped__  # type: ignore[attr-defined]
        cached = lru_cache(maxsize=256)(MethodType(unbound, self))

        def parse_extended_key(sequence: str) -> list[events.Key] | None:
            try:
                return cached(sequence)
            except (ValueError, OverflowError):
                return None

        self._parse_extended_key = parse_extended_key  # type: ignore[method-assign,assignment]

    # A forged in-band resize (`ESC [ 48 ; 0 ; 0 ; 0 ; 0 t`) is dropped as a message, but
    # the parser would still switch to pixel mouse coordinates scaled by the forged sizes:
    # a size of 0 made every later mouse report crash the parser (ZeroDivisionError). We
    # never ask for pixel mouse reports, so the parser never uses them.
    @property
    def mouse_pixels(self) -> bool:
        """Always False: mouse reports are in cells."""
        return False

    @mouse_pixels.setter
    def mouse_pixels(self, value: bool) -> None:
        pass


class PasteLimiter:
    """Cut bracketed pastes to at most `limit` characters, and take control characters out.

    Works on the decoded stream before the parser, whose paste buffer is otherwise
    unbounded. Markers split across chunks are found by remembering the last few
    characters seen; inside a paste, a chunk's end that may begin the end marker is held
    back until the next chunk says. Characters past the limit are dropped and the paste is
    closed early with an end marker, so the app receives the first `limit` characters.
    Inside a paste, escape sequences (payloads included, as in chat), C0 controls (but tab,
    newline and carriage return), DEL and C1 controls are dropped: pasted text is text, and
    an escape inside it would otherwise be parsed as keys.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._tail = ""
        self._held = ""  # the start of a possible end marker, inside a paste
        self._in_paste = False
        self._length = 0
        self._cut = False

    def filter(self, text: str) -> str:
        """Return `text` with over-long paste content and pasted controls removed."""
        text, self._held = self._held + text, ""
        out: list[str] = []
        position = 0
        end = len(text)
        while position < len(text):
            marker = PASTE_END if self._in_paste else PASTE_START
            found = self._find_end_of(marker, text, position)
            if not self._in_paste:
                stop = len(text) if found < 0 else found
                out.append(text[position:stop])
            else:
                if found >= 0:
                    stop = found
                    content_end = max(position, found - len(marker))
                else:
                    stop = content_end = len(text) - _held_length(text, position)
                    self._held, end = text[content_end:], content_end
                clean = _PASTE_CONTROLS.sub("", strip_sequences(text[position:content_end]))
                room = max(0, self.limit - self._length)
                self._length += len(clean)
                out.append(clean[:room])
                if len(clean) > room and not self._cut:
                    logger.info("paste longer than %d characters cut", self.limit)
                    self._cut = True
                if found >= 0:
                    out.append(PASTE_END)
            if found >= 0:
                self._in_paste = not self._in_paste
                self._length = 0
                self._cut = False
            if found < 0 and self._in_paste:
                break  # the rest is held back
            position = stop
        self._tail = (self._tail + text[:end])[-_MARKER_TAIL:]
        return "".join(out)

    def _find_end_of(self, marker: str, text: str, start: int) -> int:
        """Index in `text` just past the next `marker` at or after `start`, or -1."""
        context = (self._tail + text[:start])[-_MARKER_TAIL:]
        index = (context + text[start:]).find(marker)
        if index < 0:
            return -1
        return start + index + len(marker) - len(context)


_PASTE_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _held_length(text: str, start: int) -> int:
    """How many characters at the end of `text[start:]` may begin `PASTE_END`."""
    for n in range(min(len(PASTE_END) - 1, len(text) - start), 0, -1):
        if PASTE_END.startswith(text[-n:]):
            return n
    return 0


class TerminalInput:
    """Decode, bound and parse one session's input into Textual messages."""

    def __init__(self, max_paste: int) -> None:
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self._pastes = PasteLimiter(max_paste)
        self._parser = _SessionParser()
        self.parsed = 0
        """Characters handed to the parser so far (paste beyond the limit is not parsed)."""

    def feed(self, data: bytes) -> list[Message]:
        """Parse `data`; returns the complete messages it yields (maybe none)."""
        text = self._pastes.filter(self._decode(data))
        self.parsed += len(text)
        if not text:
            return []  # feeding "" would tell the parser the stream has ended
        return self._run(lambda: self._parser.feed(text))

    def tick(self) -> list[Message]:
        """Messages due by time alone, such as a lone Escape after `ESCAPE_DELAY`."""
        return self._run(self._parser.tick)

    def _run(self, step: Callable[[], Iterable[Message]]) -> list[Message]:
        produced: list[Message] = []
        try:
            for message in step():
                if not isinstance(message, _UNTRUSTED):
                    produced.append(message)
        except Exception as error:
            # The parser is a generator: once it raises it is dead. Start afresh.
            logger.warning("terminal input parser failed; resetting it:\n%s", format_error(error))
            self._parser = _SessionParser()
        return produced
