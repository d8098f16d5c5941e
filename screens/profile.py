"""The profile screen: one player's games, wins and win rate, their rating over time as a
sparkline, and how often their dudos and their calzas and jontis were right (issue 4,
item 4). Yours from the lobby (`p`), anyone's from the leaderboard.

The figures are `perudo_ssh.stats` over the player's stored games: each game's stored
verdict (the referee's, RECORD.md) gives their place and calls, from the seat they played
(`GamePlayer.name`) and only until they left (`left_round`). Ratings are the stored ones
(`Store.rating_history`), shown in points (`perudo_ssh.ratings.ordinal`). Everything is read
in a worker and computed off the event loop. A guest is told to sign in with a key. Text in
the session's language (`app.tr`); `retranslate` redraws it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Sparkline, Static

from perudo_ssh import protocol
from perudo_ssh.i18n import N_, Translator
from perudo_ssh.ratings import DEFAULT, Rating
from perudo_ssh.records import is_level_account
from perudo_ssh.referee import Verdict
from perudo_ssh.stats import CallTally, GameTally, PlayerStats, stats_of_tallies, tally_verdict
from screens.footer import Footer
from screens.invite import ChallengeDialog
from screens.messages import Send
from screens.mounting import composed
from screens.stored import GUEST, rating_of_row, shown_rating, store_and_account
from screens.widgets import app_tr
from screens.wording import marked

if TYPE_CHECKING:
    from perudo_ssh.records import RatingRow, Records, StoredGame

log = logging.getLogger(__name__)

PAGE = 500
"""Game summaries read from the store at a time."""
LABEL_WIDTH = 20


@dataclass(frozen=True, slots=True)
class Profile:
    """What the profile shows of one account: its `name`, `stats` over its games, and
    `ratings` its shown rating (points) after each rated game, oldest first; `bot`: a bot
    account (issue 14: marked BOT, rated among bot accounts); `level`: the account that
    holds the shared rating of the built-in bots of one level (`bot-medium`), which sits
    at no seat itself: its games are its rated games, and it has no wins or calls of its
    own to show."""

    name: str
    stats: PlayerStats
    ratings: tuple[int, ...]
    bot: bool = False
    level: bool = False


def stats_of_games(
    games: Sequence[StoredGame], account_id: int, history: Sequence[RatingRow]
) -> PlayerStats:
    """`PlayerStats` of `account_id` over its stored `games` (any order; counted oldest
    first) from their stored verdicts, each with the rating it had after the game (from
    `history`). A game it did not play, or whose verdict cannot be read, counts for nothing.
    """
    after: dict[int, Rating] = {row.game_id: rating_of_row(row) for row in history}
    tallies: list[tuple[GameTally | None, Rating | None]] = []
    for game in sorted(games, key=lambda g: g.id):
        seat = game.seat_of(account_id)
        if seat is None:
            continue
        try:
            verdict = msgspec.json.decode(game.verdict, type=Verdict)
        except (msgspec.DecodeError, msgspec.ValidationError):
            log.warning("game %s: its stored verdict cannot be read", game.id)
            continue
        tallies.append((tally_verdict(verdict, seat.name, seat.left_round), after.get(game.id)))
    return stats_of_tallies(tallies)


async def read_profile(store: Records, account_id: int) -> Profile | None:
    """The `Profile` of `account_id` from `store`, or None for no such account."""
    account = await store.account(account_id)
    if account is None:
        return None
    games: list[StoredGame] = []
    before: int | None = None
    while True:
        page = await store.games_of(account_id, PAGE, before)
        for summary in page:
            game = await store.game(summary.id)
            if game is not None:
                games.append(game)
        if len(page) < PAGE:
            break
        before = page[-1].id
    history = await store.rating_history(account_id)
    stats = await asyncio.to_thread(stats_of_games, games, account_id, history)
    ratings = tuple(shown_rating(rating_of_row(row)) for row in history)
    return Profile(
        name=account.name,
        stats=stats,
        ratings=ratings,
        bot=account.bot,
        level=is_level_account(account),
    )


def percent(tr: Translator, share: float | None) -> str:
    """`56%` (a share 0.0–1.0, rounded); `–` for None."""
    return "–" if share is None else tr._("{percent}%", percent=round(100 * share))


def calls_line(tr: Translator, tally: CallTally) -> str:
    """`55 called · 31 right (56%)`; `none called` before the first."""
    if not tally.called:
        return tr._("none called")
    return tr._(
        "{called} called · {right} right ({percent})",
        called=tally.called,
        right=tally.right,
        percent=percent(tr, tally.right_share),
    )


def profile_lines(tr: Translator, profile: Profile) -> list[Content]:
    """The profile's figures, one `label  value` line each, in `tr`'s language."""
    stats = profile.stats
    terms = tr.terms(None)
    if profile.ratings:
        rating = tr.n_(
            "{rating}   after {n} rated game",
            "{rating}   after {n} rated games",
            len(profile.ratings),
            rating=profile.ratings[-1],
        )
    else:
        rating = tr._("not rated yet")
    win_rate = percent(tr, stats.wins / stats.games if stats.games else None)
    rows = (
        [  # the built-in bots of a level: one rating, no seat of its own
            (tr._("Rating"), rating),
            (tr._("Games"), str(len(profile.ratings))),
            ("", tr._("the built-in bots of this level share this rating")),
        ]
        if profile.level
        else [
            (tr._("Rating"), rating),
            (tr._("Games"), str(stats.games)),
            (tr._("Wins"), tr._("{wins} ({percent})", wins=stats.wins, percent=win_rate)),
            (terms.dudo, calls_line(tr, stats.dudo)),
            (
                tr._("{calza} and {jonti}", calza=terms.calza, jonti=terms.jonti),
                calls_line(tr, stats.calza + stats.jonti),
            ),
        ]
    )
    return [
        Content.assemble((f"{label[: LABEL_WIDTH - 1]:<{LABEL_WIDTH}}", "bold"), value)
        for label, value in rows
    ]


STARTING_RATING = shown_rating(DEFAULT)
"""The rating shown before any rated game (1000): where every rating line starts."""


def trend_line(tr: Translator, ratings: Sequence[int]) -> str:
    """Under the sparkline: `from 1000 to 1043 · lowest 980 · highest 1050`, for the
    ratings shown, `STARTING_RATING` first."""
    if not ratings:
        return tr._("No rated game yet: the sparkline starts with the first.")
    return tr._(
        "from {first} to {last} · lowest {low} · highest {high}",
        first=ratings[0],
        last=ratings[-1],
        low=min(ratings),
        high=max(ratings),
    )


class ProfileScreen(Screen[None]):
    """The profile of account `account_id` (None: the session's own account)."""

    BINDINGS = [
        Binding("escape,q,p", "close", N_("Back"), key_display="esc"),
        Binding("x", "challenge", N_("Challenge")),
        Binding("f2", "app.language", N_("Language"), key_display="F2"),
    ]

    def __init__(self, account_id: int | None = None) -> None:
        super().__init__()
        self.account_id = account_id
        self.profile: Profile | None = None
        self._problem: str | None = None  # an `N_` message id instead of the profile

    @property
    def tr(self) -> Translator:
        """The app's translator (English outside a `PerudoApp`)."""
        return app_tr(self)

    def compose(self) -> ComposeResult:
        yield Static(id="profile-title", classes="screen-title", markup=False)
        yield Static(id="profile-body")
        yield Static(id="profile-trend-title")
        yield Sparkline([], id="profile-sparkline")
        yield Static(id="profile-trend", classes="screen-hint")
        yield Footer()

    def on_mount(self) -> None:
        if not composed(self):
            return
        mine = store_and_account(self.app)
        if mine is None:
            self._problem = GUEST
        else:
            if self.account_id is None:
                self.account_id = mine[1].id
            self.run_worker(self._load(), exclusive=True, exit_on_error=False)
        self.draw()

    async def _load(self) -> None:
        mine = store_and_account(self.app)
        assert mine is not None and self.account_id is not None
        try:
            self.profile = await read_profile(mine[0], self.account_id)
            if self.profile is None:
                self._problem = N_("No such player.")
        except Exception:
            log.exception("no profile for account %s", self.account_id)
            self._problem = N_("That profile could not be read just now.")
        self.draw()

    def _other(self) -> str | None:
        """The name on another player's profile (None: one's own, or not read yet)."""
        mine = store_and_account(self.app)
        profile = self.profile
        if profile is None or mine is None or self.account_id == mine[1].id:
            return None
        return profile.name

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "challenge":  # another player's profile only (issue 13)
            return self._other() is not None
        return True

    def action_challenge(self) -> None:
        """Challenge the player of this profile (`ChallengeDialog`, the name filled in)."""
        name = self._other()
        if name is None:
            return

        def chosen(command: protocol.Command | None) -> None:
            if command is not None:
                self.post_message(Send(command))

        self.app.push_screen(ChallengeDialog(name), chosen)

    def draw(self) -> None:
        """Draw the profile (or why there is none) in the app's language."""
        if not composed(self):
            return
        tr = self.tr
        title = self.query_one("#profile-title", Static)
        body = self.query_one("#profile-body", Static)
        trend_title = self.query_one("#profile-trend-title", Static)
        sparkline = self.query_one("#profile-sparkline", Sparkline)
        trend = self.query_one("#profile-trend", Static)
        profile = self.profile
        if profile is None:
            title.update(tr._("Profile"))
            body.update(Content(tr._(self._problem or N_("Reading the profile…"))))
            for widget in (trend_title, sparkline, trend):
                widget.display = False
            return
        self.refresh_bindings()  # `x` once it is another's profile
        title.update(tr._("Profile of {name}", name=marked(profile.name, profile.bot)))
        body.update(Content("\n").join(profile_lines(tr, profile)))
        trend_title.update(Content.styled(tr._("Rating over time"), "bold underline"))
        # from where every account starts (issue 13: one game drew a flat block "from 1069
        # to 1069")
        points = [STARTING_RATING, *profile.ratings] if profile.ratings else []
        sparkline.data = [float(r) for r in points]
        trend.update(Content(trend_line(tr, points)))
        for widget in (trend_title, sparkline, trend):
            widget.display = True
        sparkline.display = bool(profile.ratings)

    def retranslate(self) -> None:
        """Redraw every text in the app's (new) language."""
        self.draw()

    def action_close(self) -> None:
        self.dismiss(None)
