"""What the table screen writes, line by line, from a `TableState` (pure; no Textual widgets).

Each function turns the lobby's per-player view into one piece of text for one widget.
"""

from __future__ import annotations

from textual.content import Content

from perudo_ssh import protocol
from perudo_ssh.rules import GameView
from screens.bidtext import format_bid
from screens.widgets import Cup
from screens.wording import CALZA_MODES, raise_hint

BANNERS = {
    "palifico": "PALIFICO — pacos are not wild, face is fixed",
    "calzone": "CALZONE — pacos are not wild; only one-die players may change face",
}


def seat_names(table: protocol.TableState) -> list[str]:
    """Seat names by seat index; seats not yet taken are named `seat N`."""
    names = [seat.name for seat in table.seats]
    return names + [f"seat {n + 1}" for n in range(len(names), table.size)]


def title_line(table: protocol.TableState) -> str:
    """`#3 ana's table · classic · calza off · round 2 · 9 dice in play`."""
    parts = [f"#{table.id} {table.name}"]
    game = table.game
    if game is not None:
        options = game.options
        parts += [options.preset, f"calza {CALZA_MODES.get(options.calza, options.calza)}"]
        if game.phase != "over":
            parts += [f"round {game.round_index + 1}", f"{game.dice_in_play} dice in play"]
        if game.tokens is not None:
            parts.append(f"bank ¤{game.tokens.bank}")
    else:
        parts.append(table.status)
    if table.me is None:
        parts.append("watching")
    return " · ".join(parts)


def banner_line(game: GameView | None) -> str | None:
    """The special-round banner, or None in a normal round (RULES.md §4)."""
    if game is None or game.phase != "bidding" or game.special is None:
        return None
    text = BANNERS.get(game.special, game.special.upper())
    if game.may_change_face:
        text += " (you may change face)"
    return text


def cups(table: protocol.TableState, game: GameView) -> list[Cup]:
    """Every seat as a cup, the seat to act marked while the round is being bid."""
    names = seat_names(table)
    bots = [seat.bot for seat in table.seats] + [False] * table.size
    return [
        Cup(
            name=names[s.seat],
            dice=s.dice,
            shown=s.shown,
            turn=game.phase == "bidding" and s.seat == game.turn,
            me=s.seat == game.me,
            bot=bots[s.seat],
            tokens=None if game.tokens is None else game.tokens.balances[s.seat],
        )
        for s in game.seats
    ]


def history_lines(table: protocol.TableState, game: GameView) -> list[str]:
    """The round's bids, oldest first; in the first round, the opening roll before them."""
    names = seat_names(table)
    lines: list[str] = []
    if game.round_index == 0 and table.opening:
        lines.append("Opening roll:")
        for totals in table.opening:
            rolled = [f"{names[s]} {t}" for s, t in enumerate(totals) if t is not None]
            lines.append("  " + ", ".join(rolled))
    lines += [f"{names[e.seat][:14]:<14} {format_bid(e.bid)}" for e in game.bids]
    return lines


def current_bid_line(table: protocol.TableState, game: GameView) -> Content:
    """The bid on the table and who made it, then whose turn it is."""
    names = seat_names(table)
    if game.phase == "over":
        winner = names[game.winner] if game.winner is not None else "nobody"
        return Content.styled(f"Game over: {winner} wins", "bold")
    if game.phase == "rolling":
        if table.waiting_for:
            me = names[game.me] if game.me is not None else None
            who = ", ".join("you" if name == me else name for name in table.waiting_for)
            return Content(f"Round over: waiting for {who} to go on…")
        return Content("Round over: the dice are being rolled again…")
    mine = game.turn == game.me
    turn = (
        Content.styled("your turn", "bold reverse $accent")
        if mine
        else Content(f"{names[game.turn]} to play")
    )
    if game.bids:
        last = game.bids[-1]
        said = Content.assemble(
            "Current bid: ", (format_bid(last.bid), "bold"), f" by {names[last.seat]}"
        )
    else:
        opener = "You open" if mine else f"{names[game.turn]} opens"
        said = Content(f"{opener} the round")
    return Content.assemble(said, " · ", turn)


def waiting_lines(table: protocol.TableState, me_creator: bool) -> tuple[str, str]:
    """The seats of a waiting table (one per line), and what happens next."""
    rows = []
    for n in range(table.size):
        if n < len(table.seats):
            seat = table.seats[n]
            tags = [t for t, on in (("bot", seat.bot), ("creator", n == table.creator)) if on]
            you = " ← you" if n == table.me else ""
            rows.append(
                f"  {n + 1}. {seat.name}{' (' + ', '.join(tags) + ')' if tags else ''}{you}"
            )
        else:
            rows.append(f"  {n + 1}. — free —")
    missing = table.size - len(table.seats)
    wait = f"Waiting for {missing} more player{'s' if missing != 1 else ''}. " if missing else ""
    if me_creator:
        hint = wait + "Press b to add a bot, s to start now (2 players or more)."
    else:
        creator = "the creator"
        if table.creator is not None and table.creator < len(table.seats):
            creator = table.seats[table.creator].name
        hint = wait + f"{creator} starts the game."
    return "\n".join(rows), hint


def hint_line(game: GameView) -> str:
    """What the viewer may do now, in words: how to raise, and the exact calls open to them."""
    choices = game.choices
    parts = []
    if choices.bids:
        if game.bids:
            parts.append(raise_hint(game) or "")
        elif game.wild:
            parts.append("Open the round: any face from 2 to 6")
        else:
            parts.append("Open this round: any bid; the face then stays")
    if game.phase == "bidding" and game.options.calza != "off":
        parts.append("c: calza now" if choices.calza else f"calza: {choices.calza_why}")
    if game.phase == "bidding" and game.options.jonti and choices.jonti:
        parts.append("j: jonti now")
    return " · ".join(p for p in parts if p)
