"""A game as the lobby logs it (`GameLog`): everything needed to replay it through the
engine and to write its `perudo-record/1` record (RECORD.md). Imports neither textual nor
asyncssh."""

from __future__ import annotations

from dataclasses import dataclass, field

from perudo_ssh.record import Record, RecordBuilder
from perudo_ssh.rules import (
    Action,
    Options,
    Resign,
    Roll,
    State,
    apply,
    new_game,
)


@dataclass(slots=True)
class RoundLog:
    """One round of a game log: the `Roll` dice by seat, then the actions in order, then the
    seats that left during it and were eliminated once it ended (`Resign`, RULES.md §6)."""

    dice: tuple[tuple[int, ...], ...]
    actions: list[Action] = field(default_factory=list)
    left: list[int] = field(default_factory=list)


@dataclass(slots=True)
class GameLog:
    """Everything needed to replay one game through the engine (RECORD.md `perudo-record/1`).

    `players` are the names in seat order, `first_opener` a seat, `opening` the opening
    roll-offs (totals by seat, None = did not roll; not replayed), `rounds` each round's
    `Roll` dice, its player actions (`PlaceBid`, `Call`, `DeclareCalzone`, `Reroll`) and the
    seats resigned after its call (`Resign`, the record's `left` extension)."""

    options: Options
    players: tuple[str, ...]
    first_opener: int
    opening: tuple[tuple[int | None, ...], ...]
    rounds: list[RoundLog] = field(default_factory=list)

    def add(self, action: Action) -> None:
        """Record an action the engine accepted (a `Resign` after the first roll only)."""
        if isinstance(action, Roll):
            self.rounds.append(RoundLog(dice=action.dice))
        elif isinstance(action, Resign):
            self.rounds[-1].left.append(action.seat)
        else:
            self.rounds[-1].actions.append(action)

    def replay(self) -> State:
        """The state reached by folding the log through the engine (raises RuleError)."""
        state = new_game(self.options, len(self.players), self.first_opener)
        for round_ in self.rounds:
            state = apply(state, Roll(dice=round_.dice))
            for action in round_.actions:
                state = apply(state, action)
            for seat in round_.left:
                state = apply(state, Resign(seat=seat))
        return state

    def to_record(self) -> Record:
        """The game as a `perudo-record/1` record (RECORD.md; `encode_record` writes it)."""
        builder = RecordBuilder(self.options, self.players, self.first_opener)
        for round_ in self.rounds:
            builder.add(Roll(dice=round_.dice))
            for action in round_.actions:
                builder.add(action)
            for seat in round_.left:
                builder.add(Resign(seat=seat))
        return builder.record()
