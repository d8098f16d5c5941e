"""One table of the lobby: its seats, spectators, game and game log (RULES.md §2.2, RECORD.md).

A `Table` is owned by the lobby actor and touched only from it. It seats players and bots,
moves its game on (`play` for a player's command, `advance` for what happens by itself) and
keeps the engine-level `GameLog`. It holds no sessions, no queues and no timers: seats name
sessions by id. Dice come from the `rng` passed in, as the engine wants (STYLE.md item 1).
Commands it refuses raise `Refusal`.

What is done to a table from outside lives beside it, as functions taking the `Table`:
the moves made for a seat by a bot or on timeout (lobby/bot_turns.py), a seat held for a
disconnected player (lobby/held_seats.py), the table as events (`table_state` per
recipient, `summary` for the lobby list: lobby/views.py), saved and restored
(lobby/snapshot.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from perudo_ssh import bots, protocol
from perudo_ssh.chat import clean_chat
from perudo_ssh.i18n import N_
from perudo_ssh.lobby.game_log import GameLog
from perudo_ssh.rules import (
    Action,
    Bid,
    Call,
    DeclareCalzone,
    Options,
    OptionsError,
    PlaceBid,
    Reroll,
    Resign,
    Roll,
    RuleError,
    State,
    apply,
    new_game,
    opening_leaders,
    options_for,
    overrides_of,
)
from perudo_ssh.rules.options import check_options

BOT_NAMES = ("Ana", "Luis", "Carmen", "Diego", "Lucia", "Mateo", "Sofia", "Pablo", "Elena")
MAX_TABLE_NAME = 32


class Refusal(Exception):
    """A command refused before it changed anything; the lobby sends it back as `Refused`.
    `code` is a RECORD.md rule error code or a lobby code (protocol.Refused); `message` an
    English message id (`N_`) with its named `args`, or the engine's words for a rule code
    (the session translates rule codes itself). The args are kept as `message_args`
    (`Exception.args` is the exception's own tuple)."""

    def __init__(self, code: str, message: str, args: protocol.Args | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.message_args: protocol.Args = dict(args or {})


@dataclass(slots=True)
class Seat:
    """A seat: `sid` is the session sitting there, None for a bot or a human gone.

    `bot` is True when a bot plays it (from the start, or since its human left mid-game, the
    human's name kept). `gone` marks a human who left after game over: the seat still shows
    the finished game and is freed when the next game is set up. `leaving` marks a human who
    left mid-round at a club table (RULES.md §6): their cup stays, a bot makes their moves
    until the round ends, then they are eliminated (`Resign`). `left_round` is the index of
    the round in which the human left mid-game (their finishing place for the ratings,
    `perudo_ssh.ratings.finishing_order`); None if nobody left this seat.

    `owner` is the seated human's identity (`"account:ID"` or `"key:FINGERPRINT"`; None for
    a guest or a bot): it lets them take the seat back after a disconnect (issue 5). `away`
    marks a human disconnected mid-game who may come back: the seat is held for them
    (`bot` False) until their grace period ends, then a bot plays it (`bot` True) until
    they return."""

    name: str
    sid: int | None
    bot: bool = False
    gone: bool = False
    leaving: bool = False
    left_round: int | None = None
    owner: str | None = None
    away: bool = False
    level: str | None = None  # a bot seated as such: its level (`bots.LEVELS`; issue 14)


def roll_dice(rng: random.Random, count: int) -> tuple[int, ...]:
    """`count` faces 1–6."""
    return tuple(rng.randint(1, 6) for _ in range(count))


def table_options(command: protocol.CreateTable) -> Options:
    """The rules of a table asked for by `command` (RULES.md §7: a preset, any option
    overridden per table), checked whatever the client checked. Raises
    `Refusal("bad_command", why)` for seats or bots out of range, `Refusal("bad_options",
    why, args)` for an unknown preset or option, a bad value, or options the table cannot
    play (rules/options.py `check_options`, with the table's seats)."""
    if not 2 <= command.seats <= 6:
        raise Refusal("bad_command", N_("a table has 2 to 6 seats"))
    if not 0 <= command.bots < command.seats:
        raise Refusal(
            "bad_command",
            N_("a table of {seats} takes 0 to {most} bots"),
            {"seats": command.seats, "most": command.seats - 1},
        )
    try:
        options = options_for(command.preset, **command.options)
        check_options(options, seats=command.seats)
    except OptionsError as err:
        raise Refusal("bad_options", err.message_id, err.message_args) from None
    return options


def engine_action(
    command: protocol.MakeBid | protocol.MakeCall | protocol.DeclareCalzone, seat: int
) -> PlaceBid | Call | DeclareCalzone:
    """The engine action for a bid, a call or a calzone declared by `seat` (RULES.md §2–§4).
    Raises TypeError for any other command (a show and reroll needs its dice:
    `Table.action_for`)."""
    match command:
        case protocol.MakeBid(count=count, face=face):
            return PlaceBid(seat=seat, bid=Bid(count=count, face=face))
        case protocol.MakeCall(call=call):
            return Call(seat=seat, call=call)
        case protocol.DeclareCalzone():
            return DeclareCalzone(seat=seat)
    raise TypeError(f"not a bid, a call or a calzone: {command!r}")


class Table:
    """A table: `size` seats, `status` "waiting", "playing" or "over".

    While waiting, `seats` holds only the taken seats, in order (a leaver's seat closes up).
    From the start of a game, seat indexes are the engine's seats and never move."""

    def __init__(self, id: int, name: str, options: Options, size: int, creator: int) -> None:
        self.id = id
        self.name = name
        self.options = options
        # whether its rules differ from its preset's: fixed with the options, and worked out
        # once (the lobby list is built every batch: issue 10)
        self.custom = bool(overrides_of(options))
        self.size = size
        self.creator: int | None = creator  # a session id
        self.seats: list[Seat] = []
        self.spectators: list[int] = []
        self.status = "waiting"
        self.state: State | None = None
        self.opening: tuple[tuple[int | None, ...], ...] = ()
        self.log: GameLog | None = None
        self.ready: set[int] = set()  # seats that saw the reveal
        self.play_again: set[int] = set()  # seats that asked for another game
        self.epoch = 0  # bumped on every change; timers carry it to detect staleness
        # the last person left mid-game: the bots finish it at once, unseen, so that it is
        # stored for those who played (issue 13, item 8); the table closes once it is over
        self.unattended = False
        self.rated = True  # its games update the players' ratings (CreateTable.rated)
        # seats a bot plays from the game's start: one kept from the last game may carry
        # the name of the human it replaced, but its game is not that human's (ratings)
        self.bots_at_start: frozenset[int] = frozenset()
        self.code: str | None = None  # a private table's invite code (issue 13)
        self.fill_seconds = 0  # a quick-play table: bots fill it this long after it opens
        self.bot_level = "medium"  # the level of the bots seated at it (issue 14)
        self.games = 0  # games started at it
        self.turn_seconds = 0  # the turn timer (0: none); CreateTable.turn_seconds
        self.grace_seconds = 0  # a disconnected player's seat held this long
        self.automatic: list[protocol.AutoMove] = []  # this game's moves made on timeout
        self.save_key: int | None = None  # this game's key in the store (set by the lobby)
        # what the game just over did to its players' ratings, once rated (issue 13)
        self.rating_changes: tuple[protocol.RatingChange, ...] = ()

    @classmethod
    def create(
        cls,
        id: int,
        command: protocol.CreateTable,
        sid: int,
        name: str,
        rng: random.Random,
        owner: str | None = None,
    ) -> Table:
        """The table `command` asks for, session `sid` (called `name`, identity `owner`) at
        seat 0, bots in the next seats. Raises `Refusal` for a table that cannot be made."""
        options = table_options(command)
        low, high = protocol.TURN_SECONDS[1:]
        if command.turn_seconds != 0 and not low <= command.turn_seconds <= high:
            raise Refusal(
                "bad_command",
                N_("the turn timer is off (0) or {low} to {high} seconds"),
                {"low": low, "high": high},
            )
        if not protocol.GRACE_SECONDS[0] <= command.grace_seconds <= protocol.GRACE_SECONDS[1]:
            raise Refusal(
                "bad_command",
                N_("a seat is held for 0 to {high} seconds"),
                {"high": protocol.GRACE_SECONDS[1]},
            )
        # a table's name is the creator's own text, shown to everyone: cleaned like chat
        raw = (command.name or "")[: 4 * MAX_TABLE_NAME]  # cut first: cleaning is per character
        title = (clean_chat(raw) or "")[:MAX_TABLE_NAME].strip() or name
        table = cls(id, title, options, command.seats, creator=sid)
        table.rated = command.rated
        table.turn_seconds = command.turn_seconds
        table.grace_seconds = command.grace_seconds
        if command.bot_level not in bots.LEVELS:
            raise Refusal(
                "bad_command", N_("unknown bot level {level}"), {"level": command.bot_level[:12]}
            )
        table.bot_level = command.bot_level
        table.sit(sid, name, owner)
        for _ in range(command.bots):
            table.add_bot(rng, command.bot_level)
        return table

    # ---- who is here ---------------------------------------------------------------------

    def seat_of(self, sid: int) -> int | None:
        """The seat of session `sid`, or None."""
        for i, seat in enumerate(self.seats):
            if seat.sid == sid:
                return i
        return None

    def humans(self) -> list[int]:
        """Seats where a connected human sits."""
        return [i for i, seat in enumerate(self.seats) if seat.sid is not None]

    def sessions(self) -> list[int]:
        """Every session at the table: seated humans, then spectators."""
        return [sid for seat in self.seats if (sid := seat.sid) is not None] + self.spectators

    def away(self) -> list[int]:
        """Seats of players disconnected mid-game who may come back (issue 5)."""
        return [i for i, seat in enumerate(self.seats) if seat.away]

    @property
    def deserted(self) -> bool:
        """No human seated, nobody watching, and no game a disconnected player may come
        back to: the table closes (an `unattended` game once the bots have finished it)."""
        held = self.status == "playing" and bool(self.away())
        if self.unattended and self.status == "playing":
            return False  # the bots finish the game first (`unattended`)
        return not self.humans() and not self.spectators and not held

    @property
    def free(self) -> int:
        """Seats open to a newcomer (waiting), or freed for the next game (over)."""
        if self.status == "waiting":
            return self.size - len(self.seats)
        return sum(1 for seat in self.seats if seat.gone)

    # ---- seating (waiting tables) --------------------------------------------------------

    def sit(self, sid: int, name: str, owner: str | None = None) -> None:
        """Seat session `sid` (identity `owner`, None for a guest) at the next free seat
        (the caller checked there is one).

        Names at a table stay distinct (a game record needs it): a name already there — a
        bot's, or a departed player's kept by the bot in their seat — gets a suffix."""
        taken = {seat.name.casefold() for seat in self.seats}
        seat_name, n = name, 2
        while seat_name.casefold() in taken:
            seat_name, n = f"{name}-{n}", n + 1
        self.seats.append(Seat(name=seat_name, sid=sid, owner=owner))
        if self.creator is None:  # the creator left: the first to sit down takes over
            self.creator = sid

    def add_bot(self, rng: random.Random, level: str = "medium") -> str:
        """Seat a bot of `level` (`bots.LEVELS`) with a name unique at the table; returns its
        name."""
        # neither another bot's name nor a player's: "bot-Ana" beside "ana" reads as hers
        taken = {seat.name.casefold() for seat in self.seats}
        names = [
            f"bot-{n}"
            for n in BOT_NAMES
            if f"bot-{n}".casefold() not in taken and n.casefold() not in taken
        ]
        name = rng.choice(names) if names else f"bot-{len(self.seats) + 1}"
        self.seats.append(Seat(name=name, sid=None, bot=True, level=level))
        return name

    def leave(self, sid: int) -> str:
        """Session `sid` leaves. Returns what became of it: "spectator" (it watched),
        "freed" (waiting: its seat closed up), "bot" (mid-game: a bot took the seat),
        "out" (mid-game, with no dice left: nobody plays the seat), "gone" (game over: the
        seat is freed for the next game), or "absent".

        At a club table (RULES.md §6 "Leaving") a player with dice is not replaced: mid-round
        their cup stays and a bot makes their moves until the round's call, then they are
        eliminated ("leaving"); between rounds they are eliminated at once ("resigned"). Their
        payments stay in the bank; the game may end there (then `status` is "over")."""
        self.epoch += 1
        if sid in self.spectators:
            self.spectators.remove(sid)
            return "spectator"
        seat = self.seat_of(sid)
        if seat is None:
            return "absent"
        self.pass_creator(sid)
        self.ready.discard(seat)
        self.play_again.discard(seat)
        self.seats[seat].owner = None  # left on purpose: the seat is no longer theirs
        self.seats[seat].away = False
        if self.status == "waiting":
            del self.seats[seat]
            return "freed"
        if self.status == "playing":
            self.seats[seat].sid = None
            self.seats[seat].bot = True
            assert self.state is not None
            if self.state.counts[seat] > 0:
                self.seats[seat].left_round = self.state.round_index
            if self.state.counts[seat] == 0:
                return "out"
            if self.options.preset != "club":
                return "bot"
            if self.state.phase == "bidding":
                self.seats[seat].leaving = True
                return "leaving"
            self.act(Resign(seat=seat))
            return "resigned"
        self.seats[seat].sid = None
        self.seats[seat].gone = True
        return "gone"

    def pass_creator(self, sid: int) -> None:
        """Session `sid` is no longer seated (`leave`, `held_seats.disconnect`): the
        creator's right goes to the next human."""
        if self.creator == sid:
            others = [s for i in self.humans() if (s := self.seats[i].sid) != sid]
            self.creator = others[0] if others else None

    # ---- the game ------------------------------------------------------------------------

    def start(self, rng: random.Random) -> None:
        """Start a game with the seats taken: opening roll-offs (RULES.md §2.2), then the
        first round's roll. Seats freed after the last game are dropped first."""
        self.seats = [seat for seat in self.seats if not seat.gone]
        for seat in self.seats:
            seat.left_round = None  # of the last game
        self.bots_at_start = frozenset(i for i, seat in enumerate(self.seats) if seat.bot)
        self.size = len(self.seats)
        contenders: tuple[int, ...] = tuple(range(self.size))
        rolls: list[tuple[int | None, ...]] = []
        while True:
            totals = tuple(
                sum(roll_dice(rng, self.options.opening_roll_dice)) if s in contenders else None
                for s in range(self.size)
            )
            rolls.append(totals)
            contenders = opening_leaders(totals)
            if len(contenders) == 1:
                break
        opener = contenders[0]
        self.games += 1
        self.automatic = []
        self.rating_changes = ()
        self.opening = tuple(rolls)
        self.state = new_game(self.options, self.size, opener)
        self.log = GameLog(
            options=self.options,
            players=tuple(seat.name for seat in self.seats),
            first_opener=opener,
            opening=self.opening,
        )
        self.status = "playing"
        self.play_again.clear()
        self.roll(rng)

    def roll(self, rng: random.Random) -> None:
        """Roll the next round: every seat with dice rolls them all (RULES.md §1)."""
        assert self.state is not None
        dice = tuple(roll_dice(rng, n) for n in self.state.counts)
        self.act(Roll(dice=dice))
        self.ready.clear()

    def act(self, action: Action) -> None:
        """Apply `action` to the game, log it; raises RuleError (then nothing changed).

        When it ends a round, the seats leaving mid-round are eliminated (RULES.md §6)."""
        assert self.state is not None and self.log is not None
        self.state = apply(self.state, action)
        self.log.add(action)
        self.epoch += 1
        if self.state.phase != "bidding":
            for seat, place in enumerate(self.seats):
                if place.leaving:
                    place.leaving = False
                    if self.state.phase == "rolling" and self.state.counts[seat] > 0:
                        self.state = apply(self.state, Resign(seat=seat))
                        self.log.add(Resign(seat=seat))
        if self.state.phase == "over":
            self.status = "over"
            for place in self.seats:
                if place.away:  # the game they may come back to is over: the seat is free
                    place.away = False
                    place.gone = True

    def reset_for_next_game(self) -> None:
        """After game over, when every seated human asked to play again: back to waiting
        with the seats that stay (a freed seat opens to newcomers)."""
        kept = [seat for seat in self.seats if not seat.gone]
        self.seats = kept
        self.status = "waiting"
        self.state = None
        self.log = None
        self.opening = ()
        self.automatic = []
        self.rating_changes = ()
        self.play_again.clear()
        self.ready.clear()
        self.epoch += 1

    def play(self, command: protocol.Command, seat: int, rng: random.Random) -> None:
        """`seat` plays `command` (a bid, a call, a calzone, a show-and-reroll whose new faces
        `rng` rolls). Raises `Refusal` with the engine's code; then nothing changed."""
        if self.state is None or self.status == "waiting":
            raise Refusal("bad_command", N_("the game has not started"))
        try:
            self.act(self.action_for(command, seat, rng))
        except RuleError as err:
            raise Refusal(err.code, err.message) from None

    def action_for(self, command: object, seat: int, rng: random.Random) -> Action:
        """The engine action for a play command by `seat` (`engine_action`; a show and
        reroll's new faces rolled with `rng`)."""
        match command:
            case protocol.MakeBid() | protocol.MakeCall() | protocol.DeclareCalzone():
                return engine_action(command, seat)
            case protocol.ShowAndReroll(reveal=reveal):
                assert self.state is not None
                left = max(0, len(self.state.hidden[seat]) - len(reveal))
                return Reroll(seat=seat, reveal=tuple(reveal), new_faces=roll_dice(rng, left))
        raise TypeError(f"not a play command: {command!r}")

    def confirm(self, seat: int, round_: int) -> bool:
        """`seat` saw the reveal of round `round_`: the finished round's index (that of
        `view.last`) or the next one's (`view.round_index`). False when nothing waited (or
        `seat` had already confirmed)."""
        if not self.in_reveal or seat not in self.humans() or seat in self.ready:
            return False
        assert self.state is not None
        if round_ not in (self.state.round_index - 1, self.state.round_index):
            return False
        self.ready.add(seat)
        return True

    def advance(self, rng: random.Random) -> None:
        """What happens without anyone acting: a new game once every seated human asked
        for one; the start when every seat is taken; the next roll once every seated human
        saw the reveal (with none seated, the reveal waits out its timeout)."""
        if self.status == "over":
            humans = self.humans()
            if humans and all(seat in self.play_again for seat in humans):
                self.reset_for_next_game()
        if self.status == "waiting" and self.seats and len(self.seats) >= self.size:
            self.start(rng)
        if self.in_reveal and self.humans() and not self.waiting_for():
            self.roll(rng)

    @property
    def in_reveal(self) -> bool:
        """A round just ended with a call and the next is not rolled yet."""
        return self.status == "playing" and self.state is not None and self.state.phase == "rolling"

    def waiting_for(self) -> list[int]:
        """Seats of connected humans that have not confirmed the reveal: those who still
        have dice, or, once every human is out, those watching the bots play on."""
        if not self.in_reveal:
            return []
        assert self.state is not None
        humans = self.humans()
        playing = [i for i in humans if self.state.counts[i] > 0]
        return [i for i in (playing or humans) if i not in self.ready]

    def bot_to_move(self) -> int | None:
        """The seat of the bot to act now, or None."""
        state = self.state
        if self.status != "playing" or state is None or state.phase != "bidding":
            return None
        return state.turn if self.seats[state.turn].bot else None

    def turn_key(self) -> tuple[int, int, int] | None:
        """Which turn a human waits on now: (seat, round, actions so far in the round), or
        None (no game, not bidding, or a bot's turn). A turn timer set for one key is stale
        once the key changes."""
        state = self.state
        if self.status != "playing" or state is None or state.phase != "bidding":
            return None
        if self.seats[state.turn].bot:
            return None
        assert self.log is not None
        return (state.turn, state.round_index, len(self.log.rounds[-1].actions))
