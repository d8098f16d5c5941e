"""End to end: chat over real SSH. An escape sequence in a name or a message never reaches
another client's stream, and markup in a message is shown as the text it is.

(An SSH user name cannot carry one: asyncssh refuses control characters in it at
authentication (SASLprep), and `clean_name` keeps letters, digits and `_.-`. A name given to
the lobby directly is cleaned there too: the rogue session below.)"""

from __future__ import annotations

import asyncssh
import pytest

from perudo_ssh import protocol
from tests.sshterm import Terminal, find

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # the quick loop: -m "not slow"

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"

# What a hostile client would like another's terminal to run: set its title (OSC 0 and 2,
# BEL or ST ended), clear it, switch it to another screen, move its cursor, ring it, and
# the 8-bit CSI and OSC forms (UTF-8 encoded C1).
FORBIDDEN = (
    b"\x1b]",
    b"pwned",
    b"owned",
    b"\x07",
    b"\x1b[2J",
    b"\x1b[?1049",
    b"\x1b[5;5H",
    b"\xc2\x9b",
    b"\xc2\x9d",
)


async def test_escape_sequences_in_names_and_lines_never_reach_another_client(game_server):
    port, lobby = game_server.port, game_server.lobby
    eve, bob = Terminal(), Terminal()
    await eve.connect(port, "eve", asyncssh.generate_private_key("ssh-ed25519"))
    await bob.connect(port, "bob", None)
    try:
        await eve.wait_for("Lobby chat")
        await bob.wait_for(lambda t: "welcome, bob" in t and "Online (2)" in t)
        mark = len(bob.raw)  # from here on, every byte bob gets is audited

        # a line pasted into eve's chat: a paste keeps control characters (keys do not; and
        # Textual's own parser takes 7-bit escape sequences out of a paste), here BEL, the
        # 8-bit CSI and OSC, backspace, a bidi override and a zero-width space
        eve.send("m")
        await eve.wait_for("⏎ Say")  # the chat line has the focus
        eve.send(
            PASTE_START
            + "hi \x07[red]x[/red]\u009b2J \u009d0;pwned\u009c bye\x08\u202e\u200b"
            + PASTE_END
        )
        await eve.wait_for("hi [red]x[/red] bye")
        eve.send("enter")
        said = "eve: hi [red]x[/red] bye"
        await bob.wait_for(said)

        # a modified client speaks to the lobby directly, escapes in its name and line
        rogue = lobby.connect("\x1b]2;owned\x07mal\x9b2J")
        welcome = await rogue.next_event()
        assert welcome == protocol.Welcome(name="mal")
        rogue.send(
            protocol.Say(
                text="\x1b]0;pwned\x1b\\\x1b[31mred\x1b[0m [bold]b[/bold] \x9d0;pwned\x9c\x9b2J!"
            )
        )
        await bob.wait_for("mal: red [bold]b[/bold] !")
        await eve.wait_for("mal: red [bold]b[/bold] !")
        await bob.wait_for(lambda t: find(r"^.*▏ mal\s*$", t) is not None)  # online, cleaned
        rogue.close()

        audited = bytes(bob.raw[mark:])
        for sequence in FORBIDDEN:
            assert sequence not in audited, sequence
        # the markup is drawn as the text it is, not as a style
        assert find(r"\[red\]x\[/red\] bye", bob.text)
        row = next(i for i, text in enumerate(bob.screen.display) if said in text)
        column = bob.screen.display[row].index("[red]")
        cell = bob.screen.buffer[row][column + 5]  # the "x"
        assert (cell.data, cell.fg) == ("x", bob.screen.buffer[row][column].fg)
    finally:
        await eve.close()
        await bob.close()
