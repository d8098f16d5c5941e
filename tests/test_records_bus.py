"""Stored data over the bus (issue 12, item 3): a front's `RemoteRecords` against the lobby's
real `Store` behind `serve_records`, with the in-memory bus and over NATS. Each answer is the
store's own; a refused link comes back as itself; a malformed call changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest

from perudo_ssh.bus import Bus
from perudo_ssh.records import (
    LINK_FAILURE_SECONDS,
    LINK_FAILURES,
    Account,
    LinkRefused,
    LinkThrottled,
    UnknownLinkCode,
)
from perudo_ssh.records_bus import RecordsError, RemoteRecords, records_subject, serve_records
from perudo_ssh.store import Store
from tests.test_screens_history import T0, calza_game, one_die_game, store_game


@pytest.fixture
def bus(any_bus: Bus) -> Bus:
    """Each transport in turn (`tests.conftest.any_bus`)."""
    return any_bus


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "perudo.db")
    yield opened
    await opened.close()


async def test_every_call_answers_as_the_store_does(bus: Bus, store: Store):
    banned: set[str] = set()
    await serve_records(store, bus, banned_keys=lambda: banned)
    await bus.flush()
    remote = RemoteRecords(bus)
    ana = await remote.claim_key("SHA256:ana", "ana")
    assert ana.created and ana.account.name == "ana"
    ben = (await remote.claim_key("SHA256:ben", "ben")).account
    assert await remote.account_for_key("SHA256:ana") == ana.account
    assert await remote.account_for_key("SHA256:nobody") is None
    assert await remote.account(ben.id) == ben == await store.account(ben.id)
    assert [k.fingerprint for k in await remote.keys_of(ana.account.id)] == ["SHA256:ana"]
    assert await remote.turn_bell(ana.account.id) is True
    await remote.set_turn_bell(ana.account.id, False)
    assert await store.turn_bell(ana.account.id) is False
    accounts = {"ana": ana.account.id, "ben": ben.id}
    first = await store_game(store, calza_game(), accounts, T0)
    second = await store_game(store, one_die_game(), {**accounts, "cyd": None}, T0 + 60)
    assert await remote.games_of(ana.account.id) == await store.games_of(ana.account.id)
    assert [g.id for g in await remote.games_of(ana.account.id, limit=1)] == [second]
    assert [g.id for g in await remote.games_of(ana.account.id, 10, second)] == [first]
    assert await remote.game(first) == await store.game(first)
    assert await remote.game(999) is None
    ids = [ana.account.id, ben.id]
    assert await remote.game_counts(ids) == await store.game_counts(ids)
    assert await remote.rated_games(ids) == await store.rated_games(ids)
    history = await remote.rating_history(ana.account.id)
    assert history == await store.rating_history(ana.account.id) and len(history) == 2
    assert sorted(await remote.current_ratings(), key=lambda r: r[0].id) == sorted(
        await store.current_ratings(), key=lambda r: r[0].id
    )
    assert await remote.set_bot(ben.id, True) is True
    assert await store.account(ben.id) == Account(ben.id, "ben", bot=True)


async def test_a_link_refused_comes_back_as_itself_and_the_lobby_gives_the_bans(
    bus: Bus, store: Store
):
    banned: set[str] = set()
    await serve_records(store, bus, banned_keys=lambda: banned)
    await bus.flush()
    remote = RemoteRecords(bus)
    ana = (await remote.claim_key("SHA256:ana", "ana")).account
    with pytest.raises(UnknownLinkCode) as unknown:
        await remote.link_key("NOPE-NOPE", "SHA256:laptop")
    assert unknown.value.message == "that code is unknown or has expired: ask for a new one"
    code = await remote.new_link_code(ana.id)
    banned.add("SHA256:laptop")  # the front gives none: the lobby's bans hold
    with pytest.raises(LinkRefused) as refused:
        await remote.link_key(code, "SHA256:laptop")
    assert not isinstance(refused.value, UnknownLinkCode)
    assert "banned" in refused.value.message
    banned.clear()
    assert await remote.link_key(code, "SHA256:laptop") == ana
    assert await store.account_for_key("SHA256:laptop") == ana


async def test_wrong_link_codes_are_counted_by_the_lobby_over_every_front(bus: Bus, store: Store):
    """An address that tried `LINK_FAILURES` wrong codes through one front is refused `link`
    through another too (the lobby counts them), until the oldest ages out; another address,
    or a link asked without one (counted by its key), is not."""
    now = [1000.0]
    await serve_records(store, bus, clock=lambda: now[0])
    await bus.flush()
    one, two = RemoteRecords(bus), RemoteRecords(bus)
    ana = (await one.claim_key("SHA256:ana", "ana")).account
    for _ in range(LINK_FAILURES):
        with pytest.raises(UnknownLinkCode):
            await one.link_key("NOPE-NOPE", "SHA256:laptop", source="10.0.0.1")
    code = await two.new_link_code(ana.id)
    with pytest.raises(LinkThrottled) as throttled:  # the right code, but not looked at
        await two.link_key(code, "SHA256:laptop", source="10.0.0.1")
    assert throttled.value.seconds == LINK_FAILURE_SECONDS
    assert await store.account_for_key("SHA256:laptop") is None
    assert await two.link_key(code, "SHA256:phone", source="10.0.0.2") == ana
    now[0] += LINK_FAILURE_SECONDS
    code = await two.new_link_code(ana.id)
    assert await two.link_key(code, "SHA256:laptop", source="10.0.0.1") == ana


async def test_a_malformed_call_is_refused_and_changes_nothing(bus: Bus, store: Store):
    await serve_records(store, bus)
    await bus.flush()
    subject = records_subject("perudo")
    for data in (
        b"\xc1",
        msgspec.msgpack.encode({"name": "unfinished_tables", "args": []}),  # not a front's
        msgspec.msgpack.encode({"name": "claim_key", "args": [1, 2]}),
        msgspec.msgpack.encode({"name": "game", "args": ["1; DROP TABLE games"]}),
    ):
        answer = msgspec.msgpack.decode(await bus.request(subject, data, 5))
        assert answer["error"] == "failed"
    assert await store.account_for_key("1") is None
    remote = RemoteRecords(bus)
    assert (await remote.claim_key("SHA256:ana", "ana")).account.name == "ana"


async def test_no_lobby_to_answer_is_a_records_error(bus: Bus):
    remote = RemoteRecords(bus, timeout=0.3)
    with pytest.raises(RecordsError):
        await remote.account(1)
