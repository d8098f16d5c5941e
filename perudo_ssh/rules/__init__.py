"""The Perudo rules engine (RULES.md): pure, immutable, dice passed in.

Imports neither textual nor asyncssh. See `engine` for `apply`, `legality` for what a seat may
do now, `options` for the presets, `view` for the per-player observation.
"""

from perudo_ssh.rules.engine import (
    apply,
    count_bid,
    new_game,
    next_active,
    opening_leaders,
)
from perudo_ssh.rules.legality import (
    beats,
    bid_fault,
    legal_actions,
    legal_bids,
    resign_fault,
)
from perudo_ssh.rules.options import (
    OPTION_NAMES,
    PRESET_NAMES,
    PRESETS,
    Options,
    OptionsError,
    options_for,
    overrides_of,
)
from perudo_ssh.rules.state import (
    ERROR_CODES,
    Action,
    Bid,
    BidEntry,
    Call,
    DeclareCalzone,
    PlaceBid,
    Reroll,
    Resign,
    Roll,
    RoundResult,
    RuleError,
    State,
    Tokens,
)
from perudo_ssh.rules.view import Choices, GameView, SeatView, observe

__all__ = [
    "ERROR_CODES",
    "OPTION_NAMES",
    "PRESETS",
    "PRESET_NAMES",
    "Action",
    "Bid",
    "BidEntry",
    "Call",
    "Choices",
    "DeclareCalzone",
    "GameView",
    "Options",
    "OptionsError",
    "PlaceBid",
    "Reroll",
    "Resign",
    "Roll",
    "RoundResult",
    "RuleError",
    "SeatView",
    "State",
    "Tokens",
    "apply",
    "beats",
    "bid_fault",
    "count_bid",
    "legal_actions",
    "legal_bids",
    "new_game",
    "next_active",
    "observe",
    "opening_leaders",
    "resign_fault",
    "options_for",
    "overrides_of",
]
