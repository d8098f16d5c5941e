"""What the history, replay, leaderboard and profile screens share: reaching the store from a
screen, what a guest is told, and how dates and ratings are shown (issue 4, items 3–4).

A session's store and account are `PerudoApp.store` and `PerudoApp.account`, set by the app
factory (`perudo_ssh.serve`); a guest has neither, and neither has a server without a store.
Ratings are shown in whole points of `perudo_ssh.ratings.ordinal` (a newcomer shows 1000).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from perudo_ssh.i18n import N_
from perudo_ssh.ratings import DEFAULT, Rating, ordinal

if TYPE_CHECKING:
    from textual.app import App

    from perudo_ssh.records import Account, RatingRow, Records

GUEST = N_(
    "Sign in with an SSH key to keep a history: your games, their replays, your rating and "
    "your profile are kept for your key's account. Guests' games are not kept."
)
"""What the history, replay, leaderboard and profile screens say to a guest."""


def store_and_account(app: App) -> tuple[Records, Account] | None:
    """The app's store and the session's account, or None for a guest (or no store)."""
    store = getattr(app, "store", None)
    account = getattr(app, "account", None)
    if store is None or account is None:
        return None
    return store, account


def day(finished: float) -> str:
    """A moment (unix seconds) as its UTC date, `2025-01-31`."""
    return time.strftime("%Y-%m-%d", time.gmtime(finished))


def shown_rating(rating: Rating) -> int:
    """The rating as screens show it: `ordinal` rounded to whole points."""
    return round(ordinal(rating))


def rating_of_row(row: RatingRow) -> Rating:
    """The `Rating` of a stored rating row."""
    return Rating(mu=row.mu, sigma=row.sigma)


def rating_changes(history: Sequence[RatingRow]) -> dict[int, int]:
    """`{game_id: change}` for each rated game of one account (`Store.rating_history`, oldest
    first): the shown rating after the game less the one before it (a newcomer's before the
    first), in whole points, so that the changes add up to the rating shown."""
    changes: dict[int, int] = {}
    before = shown_rating(DEFAULT)
    for row in history:
        after = shown_rating(rating_of_row(row))
        changes[row.game_id] = after - before
        before = after
    return changes


def signed(points: int) -> str:
    """A change of rating: `+12`, `-3`, `±0`."""
    return f"{points:+d}" if points else "±0"


def cut(text: str, width: int) -> str:
    """`text` cut to `width` columns, ending in `…` when it was longer."""
    return text if len(text) <= width else text[: width - 1] + "…"
