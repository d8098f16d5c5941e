"""Sentences for players: why a move is refused, what happened at a reveal, the table's rules.

Pure functions over the rules' views (RULES.md §2–§7); no Textual. `names` is always the
table's seat names, indexed by seat. Every sentence is in the language of `tr` (a
`perudo_ssh.i18n.Translator`), the game's words from `terms` (`tr.terms(options)`): message
ids are English with named fields, extracted by Babel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from perudo_ssh.i18n import N_, Terms, Translator
from perudo_ssh.rules import Bid, GameView, RoundResult
from screens.bidtext import face_name, format_bid
from screens.refusals import rule_reason

AUTO_MARK = "◷"
"""Marks a move the server made for a player whose turn timer ran out (issue 5): a
geometric-shapes character, one column in every terminal font (no emoji)."""


def auto_marker(tr: Translator) -> str:
    """`◷ auto`: the marker of an automatic move, in `tr`'s language."""
    return AUTO_MARK + " " + tr.p_("automatic move", "auto")


BOT_LEVELS = {"easy": N_("easy"), "medium": N_("medium"), "hard": N_("hard")}
"""The bots' levels (`perudo_ssh.bots.LEVELS`) as players read them (issue 14)."""


def bot_level_word(tr: Translator, level: str) -> str:
    """`easy`, `medium`, `hard` in the player's language (an unknown level as it is)."""
    word = BOT_LEVELS.get(level)
    return tr._(word) if word is not None else level


BOT_MARK = "BOT"
"""The mark before a bot account's name (a program playing through the bot API; issue 14),
the same in every language, as lichess marks its bots."""


def marked(name: str, bot_account: bool) -> str:
    """`name` as shown: `BOT robo` for a bot account (`BOT_MARK`), else as it is."""
    return f"{BOT_MARK} {name}" if bot_account else name


def bot_tag(tr: Translator, level: str | None) -> str:
    """`hard bot`: a bot seated as such, with its level; `bot` for one playing a human's
    seat (no level of its own)."""
    return tr._("bot") if level is None else tr._("{level} bot", level=bot_level_word(tr, level))


def duration(tr: Translator, seconds: int) -> str:
    """A setting's length in seconds, short: `30 s`, `90 s`, `2 min` (whole minutes from two
    minutes on)."""
    if seconds >= 120 and seconds % 60 == 0:
        return tr._("{n} min", n=seconds // 60)
    return tr._("{n} s", n=seconds)


def clock_time(seconds: float) -> str:
    """Seconds left as `m:ss` (`1:45`, `0:07`), rounded up: `0:00` only once none is left."""
    whole = max(0, math.ceil(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def _half_up(n: int) -> int:
    return (n + 1) // 2


def call_word(terms: Terms, call: str) -> str:
    """The table's word for `call` ("dudo", "calza" or "jonti"), e.g. `Не верю`."""
    return {"dudo": terms.dudo, "calza": terms.calza, "jonti": terms.jonti}.get(call, call)


def raise_hint(tr: Translator, view: GameView) -> str | None:
    """How the current bid may be raised, in words; None before the round's first bid
    (RULES.md §3, §4)."""
    if not view.bids:
        return None
    terms = tr.terms(view.options)
    last = view.bids[-1].bid
    n, f = last.count, last.face
    said = format_bid(last, terms)
    rule = view.options.raise_rule
    if view.wild and f == 1:
        return tr._(
            "After {bid} you must raise: {pacos} or more, or {count} dice of another face",
            bid=said,
            pacos=terms.pacos(n + 1),
            count=2 * n + 1,
        )
    if not view.wild and not view.may_change_face:
        return tr._(
            "In this {special} round the face stays {face}: bid {bid} or more",
            special=terms.special(view.special),
            face=face_name(f, 2, terms),
            bid=format_bid(Bid(count=n + 1, face=f), terms),
        )
    if rule == "one-at-a-time":
        ways = tr._(
            "more {faces}, or the same count of a higher face", faces=face_name(f, 2, terms)
        )
    elif rule == "monotone":
        ways = tr._("more dice, a higher face, or both")
    else:
        ways = tr._("more dice, or the same count of a higher face")
    if view.wild:
        pacos = format_bid(Bid(count=_half_up(n), face=1), terms)
        return tr._(
            "After {bid} you must raise: {ways}, or {pacos}", bid=said, ways=ways, pacos=pacos
        )
    return tr._(
        "After {bid} you must raise: {ways} (pacos rank lowest and are not wild)",
        bid=said,
        ways=ways,
    )


def bid_refusal(tr: Translator, view: GameView, bid: Bid, names: Sequence[str]) -> str | None:
    """Why the viewer may not bid `bid` now, or None when `bid` is in `choices.bids`."""
    if view.me is None:
        return tr._("Spectators watch: they do not bid")
    if view.phase != "bidding":
        return tr._("The round is over: wait for the next roll")
    if view.turn != view.me:
        return tr._("It is not your turn: {name} is to play", name=names[view.turn])
    if bid in view.choices.bids:
        return None
    if view.bids and not view.choices.bids:
        return no_raise(tr, view)
    if bid.count > view.dice_in_play:
        return tr.n_(
            "There is only {n} die in play: bid at most {n}",
            "There are only {n} dice in play: bid at most {n}",
            view.dice_in_play,
        )
    if not view.bids and view.wild and bid.face == 1:
        return tr._("A normal round may not be opened on pacos: pick a face from 2 to 6")
    # said in full, not just the raise hint: that is already on screen, and a refusal that
    # reads the same as the hint looks as if the key did nothing
    hint = raise_hint(tr, view)
    if hint is None:
        return tr._("That bid is not allowed now")
    said = format_bid(bid, tr.terms(view.options))
    return tr._("{bid} is not allowed. {hint}", bid=said, hint=hint)


def no_raise(tr: Translator, view: GameView) -> str:
    """On the viewer's turn when no bid tops the last one (never more dice than are in play,
    RULES.md §2.8; a special round's face kept, §4): say so, and name the calls left in the
    table's words (issue 13: the composer used to vanish, and Enter refused "1 paco")."""
    terms = tr.terms(view.options)
    calls = [terms.dudo] if view.choices.dudo else []
    if view.choices.calza:
        calls.append(terms.calza)
    last = format_bid(view.bids[-1].bid, terms)
    if not calls:
        return tr._("No bid can top {bid}.", bid=last)
    said = calls[0]
    if len(calls) > 1:
        said = tr._("{first} or {second}", first=calls[0], second=calls[1])
    return tr._("No bid can top {bid}: only {calls}.", bid=last, calls=said)


def dudo_refusal(tr: Translator, view: GameView, names: Sequence[str]) -> str:
    """Why the viewer may not call dudo now (RULES.md §2.5)."""
    dudo = tr.terms(view.options).dudo
    if view.me is None:
        return tr._("Spectators watch: they do not call")
    if view.phase != "bidding":
        return tr._("The round is over: wait for the next roll")
    if view.turn != view.me:
        return tr._(
            "{dudo} is called on your turn: {name} is to play", dudo=dudo, name=names[view.turn]
        )
    if not view.bids:
        return tr._("There is no bid to doubt yet: open the round with a bid")
    return tr._("You may not call {dudo} now", dudo=dudo)


def call_refusal(tr: Translator, view: GameView, call: str, names: Sequence[str]) -> str | None:
    """Why the viewer may not call `call` now, or None if they may or the table does not
    play it (RULES.md §2.5, §5). The engine's reasons (`choices.calza_why`, `jonti_why`) are
    said in the player's language (`screens.refusals.rule_reason`)."""
    choices = view.choices
    terms = tr.terms(view.options)
    if call == "dudo" and not choices.dudo:
        return dudo_refusal(tr, view, names)
    if call == "calza" and view.options.calza != "off" and not choices.calza:
        why = rule_reason(tr, "calza_not_allowed", choices.calza_why or "", terms)
        return tr._("No {calza} now: {why}", calza=terms.calza, why=why)
    if call == "jonti" and view.options.jonti and not choices.jonti:
        if view.me is None:
            return tr._("Spectators watch: they do not call")
        why = rule_reason(tr, "jonti_not_allowed", choices.jonti_why or "", terms)
        return tr._("No {jonti} now: {why}", jonti=terms.jonti, why=why)
    return None


def counts_for(result: RoundResult, face: int) -> bool:
    """Whether a die showing `face` counted for the called bid (RULES.md §2.4)."""
    if face == result.bid.face:
        return True
    return face == 1 and result.special is None and result.bid.face != 1


def tally_line(tr: Translator, terms: Terms, result: RoundResult) -> str:
    """`Counted 4 — bid was 4×5 (pacos wild)`."""
    if result.bid.face == 1:
        how = tr._("only pacos count")
    elif result.special is None:
        how = tr._("pacos wild")
    else:
        how = tr._("{special}: pacos not wild", special=terms.special(result.special))
    bid = format_bid(result.bid, terms)
    return tr._(
        "Counted {counted} — bid was {bid} ({how})", counted=result.counted, bid=bid, how=how
    )


def reveal_story(tr: Translator, terms: Terms, result: RoundResult, names: Sequence[str]) -> str:
    """Who called what on whom, and who lost or gained a die, in words (RULES.md §2.5, §5);
    then who left the table at the round's end (RULES.md §6)."""
    said = {
        "caller": names[result.caller],
        "call": call_word(terms, result.call),
        "bidder": names[result.bidder],
        "bid": format_bid(result.bid, terms),
    }
    n, counted = result.bid.count, result.counted
    out = result.loser is not None and result.dice[result.loser] == 0
    if result.call == "dudo":
        loser = names[result.bidder if counted < n else result.caller]
        if out:
            story = tr.n_(
                "{caller} called {call} on {bidder}'s {bid}: there was {n}, so {loser} loses "
                "their last die and is out of the game",
                "{caller} called {call} on {bidder}'s {bid}: there were {n}, so {loser} loses "
                "their last die and is out of the game",
                counted, loser=loser, **said,
            )  # fmt: skip
        else:
            story = tr.n_(
                "{caller} called {call} on {bidder}'s {bid}: there was {n}, so {loser} "
                "loses a die",
                "{caller} called {call} on {bidder}'s {bid}: there were {n}, so {loser} "
                "loses a die",
                counted, loser=loser, **said,
            )  # fmt: skip
    elif counted == n and result.gainer is not None:
        story = tr.n_(
            "{caller} called {call} on {bidder}'s {bid}: there was exactly {n}, so {caller} "
            "gains a die",
            "{caller} called {call} on {bidder}'s {bid}: there were exactly {n}, so {caller} "
            "gains a die",
            counted, **said,
        )  # fmt: skip
    elif counted == n:
        story = tr.n_(
            "{caller} called {call} on {bidder}'s {bid}: there was exactly {n}, but {caller} "
            "already has every die",
            "{caller} called {call} on {bidder}'s {bid}: there were exactly {n}, but {caller} "
            "already has every die",
            counted, **said,
        )  # fmt: skip
    elif out:
        story = tr.n_(
            "{caller} called {call} on {bidder}'s {bid}: there was {n}, not {count}, so "
            "{caller} loses their last die and is out of the game",
            "{caller} called {call} on {bidder}'s {bid}: there were {n}, not {count}, so "
            "{caller} loses their last die and is out of the game",
            counted, count=n, **said,
        )  # fmt: skip
    else:
        story = tr.n_(
            "{caller} called {call} on {bidder}'s {bid}: there was {n}, not {count}, so "
            "{caller} loses a die",
            "{caller} called {call} on {bidder}'s {bid}: there were {n}, not {count}, so "
            "{caller} loses a die",
            counted, count=n, **said,
        )  # fmt: skip
    return story


def left_lines(tr: Translator, result: RoundResult, names: Sequence[str]) -> list[str]:
    """One line per player who left during the round and is now out (RULES.md §6)."""
    if result.tokens is not None:
        return [
            tr._(
                "{name} left the table: out of the game; their tokens stay in the bank",
                name=names[s],
            )
            for s in result.left
        ]
    return [tr._("{name} left the table: out of the game", name=names[s]) for s in result.left]


def round_winner(result: RoundResult) -> int | None:
    """The seat that won the game with this round (the last one with dice), or None."""
    alive = [seat for seat, dice in enumerate(result.dice) if dice > 0]
    return alive[0] if len(alive) == 1 else None


def payment_lines(
    tr: Translator, terms: Terms, result: RoundResult, names: Sequence[str]
) -> list[str]:
    """Every payment of the round with its reason (RULES.md §6), then the bank: `carl pays 1:
    a perfect bid — Dudo on an exact bid`, `Bank: ¤31`; at the game's end, the winner
    taking the bank instead. Empty at a table without stakes."""
    if result.tokens is None:
        return []
    winner = round_winner(result)
    n, counted = result.bid.count, result.counted
    doubled = result.special is None and result.bid.face == 1
    bid = format_bid(result.bid, terms)
    call = call_word(terms, result.call)
    lines = []
    for seat, paid in enumerate(result.payments):
        if seat == winner:
            paid += result.bank_won  # the bank comes after: this is the call's payment
        if paid == 0:
            continue
        name = names[seat]
        if paid < 0:
            line = tr._(
                "{name} takes {amount} back: {call} was right", name=name, amount=-paid, call=call
            )
        elif result.call == "dudo" and counted < n:
            line = tr._(
                "{name} pays {amount}: the bid {bid} was {short} short",
                name=name, amount=paid, bid=bid, short=n - counted,
            )  # fmt: skip
        elif result.call == "dudo" and counted > n:
            line = tr.n_(
                "{name} pays {amount}: called {dudo} on {bid}, but there was {n} more",
                "{name} pays {amount}: called {dudo} on {bid}, but there were {n} more",
                counted - n, name=name, amount=paid, dudo=call, bid=bid,
            )  # fmt: skip
        elif result.call == "dudo":
            line = tr._(
                "{name} pays {amount}: a perfect bid — {dudo} on an exact bid",
                name=name, amount=paid, dudo=call,
            )  # fmt: skip
        else:
            line = tr._(
                "{name} pays {amount}: {call} off by {diff}",
                name=name, amount=paid, call=call, diff=abs(n - counted),
            )  # fmt: skip
        if doubled and counted != n:
            line = tr._("{payment}, doubled on pacos", payment=line)
        lines.append(line)
    if winner is not None and result.bank_won:
        lines.append(
            tr._(
                "{name} wins and takes the bank: ¤{bank}", name=names[winner], bank=result.bank_won
            )
        )
    else:
        lines.append(tr._("Bank: ¤{bank}", bank=result.tokens.bank))
    return lines


def finishing_order(view: GameView) -> list[int]:
    """Seats from the winner to the first one out (RULES.md §2.6)."""
    order = [] if view.winner is None else [view.winner]
    order.extend(s for s in reversed(view.eliminated) if s not in order)
    return order
