"""Sentences for players: why a move is refused, what happened at a reveal, the table's rules.

Pure functions over the rules' views (RULES.md §2–§7); no Textual. `names` is always the
table's seat names, indexed by seat.
"""

from __future__ import annotations

from collections.abc import Sequence

from perudo_ssh.rules import PRESETS, Bid, GameView, Options, RoundResult
from screens.bidtext import face_name, format_bid

PRESET_BLURBS: dict[str, str] = {
    "classic": "the published rules: palifico, calza off",
    "calza-anytime": "count or face, one at a time; calza any time",
    "gamerules": "classic + calza on your turn (not in palifico)",
    "club": "calzone, jonti, show and reroll, 10-token bank",
}

CALZA_MODES: dict[str, str] = {
    "off": "off",
    "on-turn": "on your turn",
    "anytime": "any time",
}


def _half_up(n: int) -> int:
    return (n + 1) // 2


def raise_hint(view: GameView) -> str | None:
    """How the current bid may be raised, in words; None before the round's first bid
    (RULES.md §3, §4)."""
    if not view.bids:
        return None
    last = view.bids[-1].bid
    n, f = last.count, last.face
    said = format_bid(last)
    rule = view.options.raise_rule
    if view.wild and f == 1:
        return (
            f"After {said} you must raise: {n + 1} pacos or more, "
            f"or {2 * n + 1} dice of another face"
        )
    if not view.wild and not view.may_change_face:
        kind = view.special or "special"
        return f"In this {kind} round the face stays {face_name(f)}: bid {n + 1}×{f} or more"
    if rule == "one-at-a-time":
        ways = f"more {face_name(f)}, or the same count of a higher face"
    elif rule == "monotone":
        ways = "more dice, a higher face, or both"
    else:
        ways = "more dice, or the same count of a higher face"
    if view.wild:
        pacos = format_bid(Bid(count=_half_up(n), face=1))
        return f"After {said} you must raise: {ways}, or {pacos}"
    return f"After {said} you must raise: {ways} (pacos rank lowest and are not wild)"


def bid_refusal(view: GameView, bid: Bid, names: Sequence[str]) -> str | None:
    """Why the viewer may not bid `bid` now, or None when `bid` is in `choices.bids`."""
    if view.me is None:
        return "Spectators watch: they do not bid"
    if view.phase != "bidding":
        return "The round is over: wait for the next roll"
    if view.turn != view.me:
        return f"It is not your turn: {names[view.turn]} is to play"
    if bid in view.choices.bids:
        return None
    if bid.count > view.dice_in_play:
        return f"There are only {view.dice_in_play} dice in play: bid at most {view.dice_in_play}"
    if not view.bids and view.wild and bid.face == 1:
        return "A normal round may not be opened on pacos: pick a face from 2 to 6"
    # said in full, not just the raise hint: that is already on screen, and a refusal that
    # reads the same as the hint looks as if the key did nothing
    hint = raise_hint(view)
    return f"{format_bid(bid)} is not allowed. {hint}" if hint else "That bid is not allowed now"


def dudo_refusal(view: GameView, names: Sequence[str]) -> str:
    """Why the viewer may not call dudo now (RULES.md §2.5)."""
    if view.me is None:
        return "Spectators watch: they do not call"
    if view.phase != "bidding":
        return "The round is over: wait for the next roll"
    if view.turn != view.me:
        return f"Dudo is called on your turn: {names[view.turn]} is to play"
    if not view.bids:
        return "There is no bid to doubt yet: open the round with a bid"
    return "You may not call dudo now"


def call_refusal(view: GameView, call: str, names: Sequence[str]) -> str | None:
    """Why the viewer may not call `call` now, or None if they may or the table does not
    play it (RULES.md §2.5, §5)."""
    choices = view.choices
    if call == "dudo" and not choices.dudo:
        return dudo_refusal(view, names)
    if call == "calza" and view.options.calza != "off" and not choices.calza:
        return f"No calza now: {choices.calza_why or 'not allowed'}"
    if call == "jonti" and view.options.jonti and not choices.jonti:
        return f"No jonti now: {choices.jonti_why or 'not allowed'}"
    return None


def counts_for(result: RoundResult, face: int) -> bool:
    """Whether a die showing `face` counted for the called bid (RULES.md §2.4)."""
    if face == result.bid.face:
        return True
    return face == 1 and result.special is None and result.bid.face != 1


def tally_line(result: RoundResult) -> str:
    """`Counted 4 — bid was 4×5 (pacos wild)`."""
    if result.bid.face == 1:
        how = "only pacos count"
    elif result.special is None:
        how = "pacos wild"
    else:
        how = f"{result.special}: pacos not wild"
    return f"Counted {result.counted} — bid was {format_bid(result.bid)} ({how})"


def _there_were(counted: int, exactly: str = "") -> str:
    return f"there {'was' if counted == 1 else 'were'} {exactly}{counted}"


def reveal_story(result: RoundResult, names: Sequence[str]) -> str:
    """Who called what on whom, and who lost or gained a die, in words (RULES.md §2.5, §5)."""
    caller, bidder = names[result.caller], names[result.bidder]
    said = f"{result.call} on {bidder}'s {format_bid(result.bid)}"
    n, counted = result.bid.count, result.counted
    if result.call == "dudo":
        loser = bidder if counted < n else caller
        story = f"{caller} called {said}: {_there_were(counted)}, so {loser} loses a die"
    elif counted == n:
        exact = _there_were(counted, "exactly ")
        if result.gainer is not None:
            story = f"{caller} called {said}: {exact}, so {caller} gains a die"
        else:
            story = f"{caller} called {said}: {exact}, but {caller} already has every die"
    else:
        story = f"{caller} called {said}: {_there_were(counted)}, not {n}, so {caller} loses a die"
    if result.loser is not None and result.dice[result.loser] == 0:
        story += " and is out of the game"
    return story


def payments_line(result: RoundResult, names: Sequence[str]) -> str | None:
    """Tokens paid this round (RULES.md §6), or None without payments."""
    parts = []
    for seat, paid in enumerate(result.payments):
        if paid > 0:
            parts.append(f"{names[seat]} pays {paid}")
        elif paid < 0:
            parts.append(f"{names[seat]} takes {-paid}")
    if not parts:
        return None
    return "Tokens: " + ", ".join(parts)


def finishing_order(view: GameView) -> list[int]:
    """Seats from the winner to the first one out (RULES.md §2.6)."""
    order = [] if view.winner is None else [view.winner]
    order.extend(s for s in reversed(view.eliminated) if s not in order)
    return order


def rules_summary(options: Options) -> list[str]:
    """The table's rules in plain words, one sentence per line (RULES.md §2–§7)."""
    preset = f"Preset {options.preset}: {PRESET_BLURBS.get(options.preset, '')}"
    default = PRESETS.get(options.preset)
    if default is not None and options.calza != default.calza:
        preset += f"; this table plays calza {CALZA_MODES.get(options.calza, options.calza)}"
    lines = [
        f"{preset}.",
        f"Everyone starts with {options.dice_per_player} dice. A bid n×f claims that at least n "
        "of all dice show f; face 1 is the paco.",
    ]
    if options.raise_rule == "count-or-face":
        lines.append("Raise with more dice (any face), or the same count of a higher face.")
    elif options.raise_rule == "one-at-a-time":
        lines.append(
            "Raise one thing at a time: more dice of the same face, or the same count of a "
            "higher face."
        )
    else:
        lines.append("Raise the count, the face, or both; never lower either.")
    lines.append(
        "Pacos are wild and count for every face. To bid pacos, halve the count (rounded up); "
        "back from pacos, double it and add one. A round may not open on pacos."
    )
    lines.append("Dudo: the player to act doubts the bid; whoever was wrong loses a die.")
    if options.special_round == "palifico":
        lines.append(
            "Palifico: the round after someone drops to one die, pacos are not wild and the "
            "face is fixed; that player opens."
        )
    elif options.special_round == "calzone":
        lines.append(
            "Calzone: a player who drops to one die may declare a round where pacos are not "
            "wild; only one-die players may change the face."
        )
    if options.calza != "off":
        when = (
            "instead of bidding, on your turn"
            if options.calza == "on-turn"
            else "at any time, by anyone but the last bidder"
        )
        extra = "" if options.calza_in_special_round else " Not in a palifico round."
        if options.calza_min_players > 2:
            extra += f" Needs {options.calza_min_players} players left."
        lines.append(
            f"Calza ({when}): claim the bid is exact; right, you gain a die; wrong, you lose "
            f"one.{extra}"
        )
    if options.jonti:
        lines.append(
            "Jonti: an exact call out of turn (3+ players with dice, you below your starting "
            "dice, not on your own bid nor your right neighbour's)."
        )
    if options.show_and_reroll:
        lines.append(
            "Show and reroll: right after your bid, set some dice aside face up and re-roll "
            "the rest (keep one hidden)."
        )
    if options.stake:
        lines.append(
            f"Tokens: everyone pays {options.stake} into the bank (so balances start at "
            f"¤-{options.stake}); losers pay by how wrong they were; the winner takes the bank."
        )
    lines.append("The last player with dice wins.")
    return lines
