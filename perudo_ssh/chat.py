"""Chat lines: what a player may say, and how often (issue 4, item 5).

`clean_chat` turns a player's raw text into one printable line: no control character and no
terminal escape sequence survives it, so a chat line or a name can never act on another
player's terminal (set its title, clear its screen, move its cursor). `RateLimit` is the token
bucket that keeps one player from flooding the others. Both are pure: no I/O, and the clock
is an argument (the lobby passes its loop's monotonic time). RULES.md says nothing of chat;
the choices are the project's (README, "Chat").

Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import re
import unicodedata

MAX_CHAT_LENGTH = 200
"""Longest chat line, in characters, once cleaned."""

MAX_RAW_LENGTH = 4 * MAX_CHAT_LENGTH
"""Longest text the lobby even looks at (escape sequences included); longer is refused."""

HISTORY = 50
"""Chat lines the lobby keeps per scope (the lobby, each table) for newcomers."""

RATE_LINES = 3
RATE_SECONDS = 3.0
"""A player may say `RATE_LINES` lines every `RATE_SECONDS` seconds (a burst of 3, then one
more each second)."""

MAX_COMBINING = 2
"""Most combining marks kept on one character: enough for any script (Vietnamese has two),
too few to pile "zalgo" text over the rows above and below."""

# Terminal escape sequences, 7-bit (ESC …) and 8-bit (C1) forms, after ECMA-48:
# CSI `ESC [` params intermediates final; OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`,
# APC `ESC _` strings up to ST (`ESC \` or 0x9C) or BEL — or to the end of the text, since a
# terminal would swallow everything after an unterminated one; any other `ESC` +
# intermediates + final byte (charset switches, `ESC c` reset, …).
_SEQUENCE = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]
    | (?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f]) .*? (?:\x07|\x1b\\|\x9c|\Z)
    | \x1b [\x20-\x2f]* [\x30-\x7e]
    """,
    re.VERBOSE | re.DOTALL,
)


def strip_sequences(text: str) -> str:
    """`text` without its terminal escape sequences, 7-bit and 8-bit, payloads included
    (ECMA-48; an unterminated string sequence runs to the end of `text`)."""
    return _SEQUENCE.sub("", text)


# Letters that draw nothing: a line of them would look empty (they count as spaces here).
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")

# Unicode categories dropped: controls (C0, DEL, C1), format characters (bidi embeddings,
# overrides and isolates, which reorder the rest of a terminal row; zero-width spaces and
# joiners; soft hyphen; tag characters), lone surrogates and private-use characters (a
# glyph only some fonts have, one or two cells wide as the font likes: the row's layout
# would differ from what the server drew). Unassigned code points stay: tomorrow's emoji.
_DROPPED = frozenset({"Cc", "Cf", "Cs", "Co"})


def _noncharacter(char: str) -> bool:
    """U+FDD0..U+FDEF and the last two code points of every plane: never text."""
    point = ord(char)
    return 0xFDD0 <= point <= 0xFDEF or point & 0xFFFE == 0xFFFE


_COMBINING = frozenset({"Mn", "Me"})


def clean_chat(text: str) -> str | None:
    """`text` as one printable line, or None when nothing printable is left.

    Removes every terminal escape sequence whole (payload included, e.g. the title in
    `ESC ] 0 ; title BEL`), then every control and format character (Unicode Cc, Cf, Cs:
    C0, DEL, C1, bidi overrides and isolates, zero-width characters), every private-use
    character (Co) and every noncharacter (U+FFFE, U+FDD0, …); turns every kind of
    space, line break and blank letter into one space and trims the ends; keeps at most
    `MAX_COMBINING` combining marks on a character and none on a space or at the start.
    Text is NFC-normalised. Does not cut the line: the caller checks `MAX_CHAT_LENGTH`.
    Markup such as `[red]` is left as it is: it is text, and is shown as text.
    """
    text = unicodedata.normalize("NFC", _SEQUENCE.sub("", text))
    kept: list[str] = []
    marks = 0
    for char in text:
        if char.isspace() or char in _BLANKS:
            kept.append(" ")
            marks = MAX_COMBINING  # no mark on a space
            continue
        category = unicodedata.category(char)
        if category in _DROPPED or _noncharacter(char):
            continue
        if category in _COMBINING:
            if not kept or marks >= MAX_COMBINING:
                continue
            marks += 1
        else:
            marks = 0
        kept.append(char)
    line = " ".join("".join(kept).split())
    return line or None


class RateLimit:
    """A token bucket: at most `lines` lines at once, refilled at `lines` per `seconds`.

    Times are seconds on one monotonic clock, given by the caller (`now`); the bucket
    starts full. Not thread-safe (the lobby actor owns each one)."""

    def __init__(self, lines: int = RATE_LINES, seconds: float = RATE_SECONDS) -> None:
        if lines < 1 or seconds <= 0:
            raise ValueError("a rate limit needs at least one line over a positive time")
        self.lines = lines
        self.seconds = seconds
        self._tokens = float(lines)
        self._at: float | None = None

    def _refill(self, now: float) -> None:
        if self._at is not None and now > self._at:
            rate = self.lines / self.seconds
            self._tokens = min(float(self.lines), self._tokens + (now - self._at) * rate)
        if self._at is None or now > self._at:
            self._at = now

    def allow(self, now: float) -> bool:
        """Whether a line may be said at `now`; if so, it is counted."""
        self._refill(now)
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def wait(self, now: float) -> float:
        """Seconds from `now` until the next line is allowed (0.0: allowed now)."""
        self._refill(now)
        return max(0.0, (1.0 - self._tokens) * self.seconds / self.lines)
