"""What the table screen writes, line by line, from a `TableState` (pure; no Textual widgets).

Each function turns the lobby's per-player view into one piece of text for one widget, in
the language of `tr` (`perudo_ssh.i18n.Translator`), the game's words as the table plays them
(`tr.terms(options)`).
"""

from __future__ import annotations

import math

from textual.content import Content

from perudo_ssh import protocol
from perudo_ssh.i18n import Translator
from perudo_ssh.rules import GameView
from screens.bidtext import format_bid
from screens.refusals import rule_reason
from screens.widgets import Cup
from screens.wording import auto_marker, bot_tag, clock_time, marked, raise_hint

BANNER_WIDTH = 80
"""Columns for the special-round banner: it must fit an 80-column terminal."""


def seat_names(tr: Translator, table: protocol.TableState) -> list[str]:
    """Seat names by seat index, a bot account's marked (`BOT robo`: `marked`); seats not yet
    taken are named `seat N`."""
    names = [marked(seat.name, seat.bot_account) for seat in table.seats]
    return names + [tr._("seat {n}", n=n + 1) for n in range(len(names), table.size)]


TITLE_WIDTH = 78
"""Columns for the title at least: an 80-column terminal less the title's padding (a wider
screen gives it its width)."""


def _calza_mode(tr: Translator, mode: str) -> str:
    match mode:
        case "off":
            return tr.p_("calza mode", "off")
        case "on-turn":
            return tr.p_("calza mode", "on turn")
        case "anytime":
            return tr.p_("calza mode", "any time")
    return mode


def status_word(tr: Translator, status: str) -> str:
    """A table's status ("waiting", "playing", "over") in words."""
    match status:
        case "waiting":
            return tr.p_("table status", "waiting")
        case "playing":
            return tr.p_("table status", "playing")
        case "over":
            return tr.p_("table status", "over")
    return status


def title_line(tr: Translator, table: protocol.TableState, width: int = TITLE_WIDTH) -> str:
    """`Table 3 · ana's table · round 2 · 9 dice in play · bank ¤31 · classic · calza: off`: what
    changes during the game comes first (the bank of a table with stakes too, RULES.md §6);
    when that is too wide for `width` columns, the preset's name goes first, then the
    calza mode (the help page has the table's rules in full). Who watches comes last, where
    there is room (`_watchers`); when even the rest is too wide, the table's name is cut
    (`…`)."""
    # "Table 3", never a bare "#3": the games kept are numbered apart (`record`, issue 13)
    parts = [tr._("Table {id}", id=table.id), table.name]
    if table.code is not None:  # a private table: its players see its invite code (issue 13)
        parts.append(tr._("private, code {code}", code=table.code))
    if table.me is None:
        parts.append(tr._("watching"))
    game = table.game
    if game is not None:
        options = game.options
        if game.phase != "over":  # at the end the bank is the winner's: the dialog says so
            # between rounds (the reveal shown, the next roll not made yet) the round is the
            # one just revealed, not the next (issue 13)
            between = game.phase == "rolling" and game.last is not None
            parts.append(tr._("round {n}", n=game.round_index + (0 if between else 1)))
            parts.append(tr.n_("{n} die in play", "{n} dice in play", game.dice_in_play))
            if game.tokens is not None:
                parts.append(tr._("bank ¤{bank}", bank=game.tokens.bank))
        fixed: list[str] = [options.preset]
        if not options.jonti:  # the club plays jonti instead of calza
            calza = tr.terms(options).calza.lower()
            fixed.append(
                tr._("{option}: {value}", option=calza, value=_calza_mode(tr, options.calza))
            )
    else:
        parts.append(status_word(tr, table.status))
        fixed = []  # a waiting table's status stays
    # the widest that fits: who watches (names, else how many, else nobody), with as many
    # rule words as there is room for (the preset gives way first)
    for watching in (*_watchers(tr, table), None):
        tail = [watching] if watching is not None else []
        for first in range(len(fixed) + 1):
            title = " · ".join([*parts, *fixed[first:], *tail])
            if len(title) <= width:
                return title
    title = " · ".join(parts)
    if len(title) > width:  # what changes during the game stays whole: the name is cut
        room = max(8, len(table.name) - (len(title) - width))
        parts[1] = table.name[: room - 1] + "…"
    return " · ".join(parts)


def _watchers(tr: Translator, table: protocol.TableState) -> list[str]:
    """How the title may say who watches (issue 13), longest first: `watched by spy, tom`,
    `2 watching`; none without spectators."""
    names = table.spectators
    if not names:
        return []
    return [
        tr._("watched by {names}", names=", ".join(names)),
        tr.n_("{n} watching", "{n} watching", len(names)),
    ]


def banner_line(tr: Translator, table: protocol.TableState, game: GameView | None) -> str | None:
    """The special-round banner, or None in a normal round (RULES.md §4): the round's kind,
    that pacos are not wild, and who may change face — the one-die players by name (`you`
    first) under `special_face_change = one-die-players`, else nobody. Everyone sees it,
    spectators too. At most `BANNER_WIDTH` columns (the names give way). While an admin holds
    the table, or the server cannot save it (`TableState.unsaved`), that instead."""
    if table.unsaved:
        return tr._("PAUSED: the server cannot save this game; no move until it can")
    if table.paused:
        return tr._("PAUSED by an admin: no move until the table resumes")
    if game is None or game.phase != "bidding" or game.special is None:
        return None
    special = tr.terms(game.options).special(game.special).upper()
    if game.options.special_face_change != "one-die-players":
        return tr._("{special} — pacos are not wild, face is fixed", special=special)
    names = seat_names(tr, table)
    changers = [s.seat for s in game.seats if s.dice == 1]
    if game.me in changers:  # you first: the one name the player looks for
        changers.remove(game.me)
        who = [tr._("you"), *(names[s] for s in changers)]
    else:
        who = [names[s] for s in changers]
    if not who:
        return tr._("{special} — pacos not wild; nobody may change face", special=special)
    listed = ", ".join(who)
    line = tr._(
        "{special} — pacos not wild; may change face: {names}", special=special, names=listed
    )
    while len(line) > BANNER_WIDTH and len(listed) > 1:
        listed = listed[:-2] + "…"
        line = tr._(
            "{special} — pacos not wild; may change face: {names}", special=special, names=listed
        )
    return line


def held_seconds(seat: protocol.SeatInfo, elapsed: float = 0.0) -> int | None:
    """Whole seconds (rounded up) left of the grace of a disconnected player's seat,
    `elapsed` seconds after the table state arrived; None when the seat is not held (its
    player is here, or a bot plays it for them)."""
    if not seat.away or seat.bot or seat.grace is None:
        return None
    return max(0, math.ceil(seat.grace - elapsed))


def cups(
    tr: Translator, table: protocol.TableState, game: GameView, elapsed: float = 0.0
) -> list[Cup]:
    """Every seat as a cup, the seat to act marked while the round is being bid; its dice set
    aside face up and its token balance shown (RULES.md §6); a disconnected player's seat
    marked away, with its grace counting down `elapsed` seconds after the state arrived
    (issue 5); each account holder's rating (issue 13)."""
    names = seat_names(tr, table)
    bots = [seat.bot for seat in table.seats] + [False] * table.size
    away = [seat.away for seat in table.seats] + [False] * table.size
    held = [held_seconds(seat, elapsed) for seat in table.seats] + [None] * table.size
    ratings = [seat.rating for seat in table.seats] + [None] * table.size
    levels = [seat.level for seat in table.seats] + [None] * table.size
    return [
        Cup(
            name=names[s.seat],
            dice=s.dice,
            shown=s.shown,
            turn=game.phase == "bidding" and s.seat == game.turn,
            me=s.seat == game.me,
            bot=bots[s.seat],
            tokens=None if game.tokens is None else game.tokens.balances[s.seat],
            away=away[s.seat],
            held=held[s.seat],
            rating=ratings[s.seat],
            level=levels[s.seat],
        )
        for s in game.seats
    ]


HISTORY_WIDTH = 28
"""Columns of the bids sidebar's text (30 less its padding)."""


def opening_lines(tr: Translator, table: protocol.TableState, game: GameView) -> list[Content]:
    """The opening roll (RULES.md §2.2): each seat's total, then the totals of every tie's
    roll-off after an arrow; then who opens. Empty when the table has no opening roll."""
    if not table.opening:
        return []
    names = seat_names(tr, table)
    n = game.options.opening_roll_dice
    lines = [
        Content.styled(
            tr.n_("Opening roll: {n} die each", "Opening roll: {n} dice each", n), "bold"
        )
    ]
    for seat, name in enumerate(names[: len(table.opening[0])]):
        totals = [str(roll[seat]) for roll in table.opening if roll[seat] is not None]
        if totals:  # one line per seat; a tie adds its roll-off totals after the first
            lines.append(Content(f"  {name[:11]:<11} {' → '.join(totals)}"))
    if len(table.opening) > 1:
        lines.append(Content.styled("  " + tr._("ties roll again"), "dim"))
    if game.opener == game.me:
        lines.append(Content.styled(tr._("▶ you open"), "bold $accent"))
    else:
        opens = tr._("▶ {name} opens", name=names[game.opener])
        lines.append(Content.styled(opens[:HISTORY_WIDTH], "bold"))
    return lines


def automatic_bids(table: protocol.TableState, round_index: int) -> set[int]:
    """Which bids of round `round_index` (0-based, in order) the server made for a player
    whose time ran out (`TableState.automatic`)."""
    return {
        move.bids for move in table.automatic if move.round == round_index and move.call is None
    }


def automatic_call(table: protocol.TableState, round_index: int) -> bool:
    """Whether round `round_index` ended on a call the server made for a player whose time
    ran out."""
    return any(m.round == round_index and m.call is not None for m in table.automatic)


def history_lines(tr: Translator, table: protocol.TableState, game: GameView) -> list[Content]:
    """The round's bids, oldest first, an automatic one marked `◷ auto` (issue 5); in the
    first round, the opening roll before them."""
    names = seat_names(tr, table)
    terms = tr.terms(game.options)
    lines = opening_lines(tr, table, game) if game.round_index == 0 else []
    automatic = automatic_bids(table, game.round_index)
    marker = auto_marker(tr)
    for n, entry in enumerate(game.bids):
        said = format_bid(entry.bid, terms)
        if n not in automatic:
            lines.append(Content(f"{names[entry.seat][:14]:<14} {said}"))
            continue
        room = max(3, min(14, HISTORY_WIDTH - len(said) - len(marker) - 2))
        name = f"{names[entry.seat][:room]:<{room}}"
        lines.append(Content.assemble(f"{name} {said} ", (marker, "italic $warning")))
    return lines


def _with_bold(template: str, bold: str) -> Content:
    """`template` (a translated sentence) with its one `\0` replaced by `bold`, in bold."""
    return _with_style(template, bold, "bold")


def _with_style(template: str, text: str, style: str) -> Content:
    """`template` (a translated sentence) with its one `\0` replaced by `text` in `style`."""
    before, _, after = template.partition("\0")
    return Content.assemble(before, (text, style), after)


def current_bid_line(
    tr: Translator, table: protocol.TableState, game: GameView, with_turn: bool = True
) -> Content:
    """The bid on the table and who made it, then whose turn it is (unless not `with_turn`:
    the turn clock says it, `turn_clock`)."""
    names = seat_names(tr, table)
    if game.phase == "over":
        return Content.styled(game_over_line(tr, table, game), "bold")
    if game.phase == "rolling":
        if table.waiting_for:
            me = names[game.me] if game.me is not None else None
            you = tr._("you")
            who = [(you if name == me else name) for name in table.waiting_for]
            who.sort(key=lambda name: name != you)
            if len(who) > 1:
                listed = tr._("{names} and {last}", names=", ".join(who[:-1]), last=who[-1])
            else:
                listed = who[0]
            return Content(tr._("Round over: waiting for {names} to go on…", names=listed))
        return Content(tr._("Round over: the dice are being rolled again…"))
    mine = game.turn == game.me
    turn = (
        Content.styled(tr._("your turn"), "bold reverse $accent")
        if mine
        else Content(tr._("{name} to play", name=names[game.turn]))
    )
    if game.bids:
        last = game.bids[-1]
        template = tr._("Current bid: {bid} by {name}", bid="\0", name=names[last.seat])
        said = _with_bold(template, format_bid(last.bid, tr.terms(game.options)))
    elif game.round_index == 0 and table.opening:  # the opening roll decided it
        if mine:
            said = Content(tr._("You won the opening roll: you open"))
        else:
            said = Content(tr._("{name} won the opening roll and opens", name=names[game.turn]))
    elif mine:
        said = Content(tr._("You open the round"))
    else:
        said = Content(tr._("{name} opens the round", name=names[game.turn]))
    return Content.assemble(said, " · ", turn) if with_turn else said


WARN_SECONDS = 10
"""The turn clock's last seconds, drawn in the warning colour."""


def turn_clock(
    tr: Translator, table: protocol.TableState, elapsed: float = 0.0
) -> tuple[Content, tuple[int, int] | None] | None:
    """Whose turn it is and the time they have left to move, `elapsed` seconds after the
    table state arrived (issue 5): `Your turn — 0:42` in reverse, `ben to play — 0:42`; the
    last `WARN_SECONDS` in the warning colour. None without a turn clock; else (line, where)
    with `where` the time's characters [start, end) in the line's text, or None if a
    translation left the time out."""
    clock = table.clock
    if clock is None:
        return None
    left = max(0.0, clock.left - elapsed)
    time = clock_time(left)
    urgent = left <= WARN_SECONDS
    if clock.seat == table.me:
        template = tr._("Your turn — {time}", time="\0")
        line = Content.styled(
            template.replace("\0", time),
            "bold reverse $warning" if urgent else "bold reverse $accent",
        )
    else:
        name = seat_names(tr, table)[clock.seat]
        template = tr._("{name} to play — {time}", name=name, time="\0")
        line = _with_style(template, time, "bold reverse $warning" if urgent else "bold")
    start = template.find("\0")
    return line, (None if start < 0 else (start, start + len(time)))


def game_over_line(tr: Translator, table: protocol.TableState, game: GameView) -> str:
    """`Game over: you win!` for the winner, `Game over: ana wins.` for everyone else; a bot
    playing on in a seat (a human's who left) is named as a bot (RULES.md §2.6)."""
    if game.winner is None:
        return tr._("Game over.")
    if game.winner == game.me:
        return tr._("Game over: you win!")
    name = seat_names(tr, table)[game.winner]
    if game.winner < len(table.seats) and table.seats[game.winner].bot:
        name = tr._("{name} (bot)", name=name)
    return tr._("Game over: {name} wins.", name=name)


def waiting_lines(
    tr: Translator, table: protocol.TableState, me_creator: bool, elapsed: float = 0.0
) -> tuple[str, str]:
    """The seats of a waiting table (one per line), and what happens next: at a quick-play
    table, when bots take the free seats, counting down `elapsed` seconds after the state
    arrived (issue 13)."""
    rows = []
    for n in range(table.size):
        if n < len(table.seats):
            seat = table.seats[n]
            tags = [
                tag
                for tag, on in (
                    (bot_tag(tr, seat.level), seat.bot and not seat.away),
                    (tr._("creator"), n == table.creator),
                    (tr._("disconnected"), seat.away),
                )
                if on
            ]
            name = marked(seat.name, seat.bot_account)
            row = f"  {n + 1}. {name}" + (f" ({', '.join(tags)})" if tags else "")
            if n == table.me:
                row += " " + tr._("← you")
            rows.append(row)
        else:
            rows.append(f"  {n + 1}. " + tr._("— free —"))
    missing = table.size - len(table.seats)
    wait = ""
    if missing:
        wait = tr.n_("Waiting for {n} more player.", "Waiting for {n} more players.", missing) + " "
    if me_creator:
        hint = wait + tr._("Press b to add a bot, s to start now (2 players or more).")
    elif table.creator is not None and table.creator < len(table.seats):
        creator = table.seats[table.creator]
        name = marked(creator.name, creator.bot_account)
        hint = wait + tr._("{name} starts the game.", name=name)
    else:  # its creator left with nobody after them: whoever sits down next takes over
        hint = wait + tr._("The next player to sit down can start the game.")
    if missing and table.code is not None:
        hint += " " + tr._(
            "A private table: the others press e in the lobby and type its code {code}.",
            code=table.code,
        )
    if missing and table.fill_in is not None:
        hint += " " + tr._(
            "Bots take the free seats in {time} unless players come first.",
            time=clock_time(table.fill_in - elapsed),
        )
    return "\n".join(rows), hint


def hint_line(tr: Translator, game: GameView) -> str:
    """What the viewer may do now, in words: how to raise, and the other moves open to them.
    Empty for a spectator or a player already out."""
    choices = game.choices
    if game.me is None or game.seats[game.me].dice == 0:
        return ""
    terms = tr.terms(game.options)
    parts = []
    if choices.calzone:
        parts.append(
            tr._(
                "z: declare a {calzone} round (pacos not wild) before bidding",
                calzone=terms.calzone,
            )
        )
    if choices.bids:
        if game.bids:
            parts.append(raise_hint(tr, game) or "")
        elif game.wild:
            parts.append(tr._("Open the round: any face from 2 to 6"))
        elif game.may_change_face:
            parts.append(tr._("Open this round: any bid, pacos too; you may change face later"))
        else:
            parts.append(tr._("Open this round: any bid; the face then stays"))
    if choices.reroll:
        parts.append(tr._("r: show some dice and reroll the rest, before the next player acts"))
    if game.phase == "bidding" and game.options.calza != "off":
        if choices.calza:
            parts.append(tr._("c: {calza} now", calza=terms.calza))
        elif (
            choices.calza_why
            and game.bids
            and (game.turn == game.me or game.options.calza == "anytime")
        ):  # why not, only when the player could otherwise call it now
            why = rule_reason(tr, "calza_not_allowed", choices.calza_why, terms)
            parts.append(tr._("{option}: {value}", option=terms.calza, value=why))
    if game.phase == "bidding" and game.options.jonti and choices.jonti:
        parts.append(tr._("j: {jonti} now", jonti=terms.jonti))
    return " · ".join(p for p in parts if p)
