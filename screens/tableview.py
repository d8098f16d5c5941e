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
    "calzone": "CALZONE — pacos not wild; only one-die players may change face",
}
# the banner must fit 80 columns: a player who may change face gets a banner of their own
MAY_CHANGE_FACE = "{} — pacos not wild; you hold one die, so you may change face"


def seat_names(table: protocol.TableState) -> list[str]:
    """Seat names by seat index; seats not yet taken are named `seat N`."""
    names = [seat.name for seat in table.seats]
    return names + [f"seat {n + 1}" for n in range(len(names), table.size)]


TITLE_WIDTH = 78
"""Columns for the title: an 80-column terminal less the title's padding."""
_CALZA_SHORT = {**CALZA_MODES, "on-turn": "on turn"}  # the title's room is short


def title_line(table: protocol.TableState) -> str:
    """`#3 ana's table · round 2 · 9 dice in play · classic · calza: off`: what changes during
    the game comes first; when that is too wide for `TITLE_WIDTH` columns, the preset's name
    goes first, then the calza mode (the help page has the table's rules in full)."""
    parts = [f"#{table.id} {table.name}"]
    if table.me is None:
        parts.append("watching")
    game = table.game
    if game is not None:
        options = game.options
        if game.phase != "over":
            parts += [f"round {game.round_index + 1}", f"{game.dice_in_play} dice in play"]
        if game.tokens is not None:
            parts.append(f"bank ¤{game.tokens.bank}")
        fixed: list[str] = [options.preset]
        if not options.jonti:  # the club plays jonti instead of calza
            fixed.append(f"calza: {_CALZA_SHORT.get(options.calza, options.calza)}")
        while fixed and len(" · ".join(parts + fixed)) > TITLE_WIDTH:
            fixed.pop(0)
        parts += fixed
    else:
        parts.append(table.status)
    return " · ".join(parts)


def banner_line(game: GameView | None) -> str | None:
    """The special-round banner, or None in a normal round (RULES.md §4)."""
    if game is None or game.phase != "bidding" or game.special is None:
        return None
    if game.may_change_face:
        return MAY_CHANGE_FACE.format(game.special.upper())
    return BANNERS.get(game.special, game.special.upper())


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
        n = game.options.opening_roll_dice
        lines.append(f"Opening roll ({n} {'die' if n == 1 else 'dice'})")
        lines.append("  the highest total opens" if n > 1 else "  the highest die opens")
        for seat, name in enumerate(names[: len(table.opening[0])]):
            totals = [str(roll[seat]) for roll in table.opening if roll[seat] is not None]
            if totals:  # one line per seat; a tie adds its roll-off totals after the first
                lines.append(f"  {name[:14]:<14} {' '.join(totals)}")
    lines += [f"{names[e.seat][:14]:<14} {format_bid(e.bid)}" for e in game.bids]
    return lines


def current_bid_line(table: protocol.TableState, game: GameView) -> Content:
    """The bid on the table and who made it, then whose turn it is."""
    names = seat_names(table)
    if game.phase == "over":
        return Content.styled(game_over_line(table, game), "bold")
    if game.phase == "rolling":
        if table.waiting_for:
            me = names[game.me] if game.me is not None else None
            who = [("you" if name == me else name) for name in table.waiting_for]
            who.sort(key=lambda name: name != "you")
            listed = ", ".join(who[:-1]) + " and " + who[-1] if len(who) > 1 else who[0]
            return Content(f"Round over: waiting for {listed} to go on…")
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


def game_over_line(table: protocol.TableState, game: GameView) -> str:
    """`Game over: you win!` for the winner, `Game over: ana wins.` for everyone else; a bot
    playing on in a seat (a human's who left) is named as a bot (RULES.md §2.6)."""
    if game.winner is None:
        return "Game over."
    if game.winner == game.me:
        return "Game over: you win!"
    name = seat_names(table)[game.winner]
    if game.winner < len(table.seats) and table.seats[game.winner].bot:
        name += " (bot)"
    return f"Game over: {name} wins."


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
    """What the viewer may do now, in words: how to raise, and the other moves open to them.
    Empty for a spectator or a player already out."""
    choices = game.choices
    if game.me is None or game.seats[game.me].dice == 0:
        return ""
    parts = []
    if choices.calzone:
        parts.append("z: declare a calzone round (pacos not wild) before bidding")
    if choices.bids:
        if game.bids:
            parts.append(raise_hint(game) or "")
        elif game.wild:
            parts.append("Open the round: any face from 2 to 6")
        else:
            parts.append("Open this round: any bid; the face then stays")
    if choices.reroll:
        parts.append("r: show some dice and reroll the rest, before the next player acts")
    if game.phase == "bidding" and game.options.calza != "off":
        if choices.calza:
            parts.append("c: calza now")
        elif (
            choices.calza_why
            and game.bids
            and (game.turn == game.me or game.options.calza == "anytime")
        ):  # why not, only when the player could otherwise call it now
            parts.append(f"calza: {choices.calza_why}")
    if game.phase == "bidding" and game.options.jonti and choices.jonti:
        parts.append("j: jonti now")
    return " · ".join(p for p in parts if p)
