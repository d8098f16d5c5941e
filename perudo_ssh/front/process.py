"""A front process (issue 12): the SSH server and the Textual apps, holding no game state,
attached to the lobby process over NATS (`perudo-ssh front --nats URL`).

Everything a session needs from the lobby crosses the bus: its commands and events
(`RemoteLobby`), stored data (`RemoteRecords`), the bans at login (the lobby's copy,
`RemoteLobby.bans`). The front waits up to `LOBBY_WAIT` seconds for the lobby's first
heartbeat and bans before it listens, so a ban holds from the first login (a lobby not heard
by then is logged; sessions that come before it are attached once it is).

SIGTERM or SIGINT stops it cleanly: no new connections, every session still open told
"server stopping" (a seat at a game in play is held for its player by the grace rule: they
log in again through any front), the apps given up to `SHUTDOWN_GRACE` seconds to show it
(or the lobby's own goodbye, when the lobby stopped first) and end, the connections still
open closed, then it returns (exit 0).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
from pathlib import Path

from perudo_ssh.admission import Connections, SessionCounts
from perudo_ssh.bus.nats_bus import NatsBus, NatsOptions
from perudo_ssh.collector import PacedCollector
from perudo_ssh.front.remote import RemoteLobby
from perudo_ssh.front.server import SHUTDOWN_GRACE, close_connections, start_front, tune_collector
from perudo_ssh.i18n import N_
from perudo_ssh.limits import DEFAULT_LIMITS, Limits
from perudo_ssh.metrics import BUS_ROUND_TRIP, multiprocess_mode, start_metrics
from perudo_ssh.records_bus import RemoteRecords
from perudo_ssh.stopping import stop_signals

log = logging.getLogger(__name__)

LOBBY_WAIT = 10.0
"""Seconds a starting front waits for the lobby before it listens anyway."""
STOPPING = N_("server stopping: your game is saved; log in again to go on")
"""What a stopping front tells its sessions (a seat at a game in play is held)."""


FRONT_NAME_ENV = "PERUDO_SSH_FRONT_NAME"
"""What `serve --workers` calls a front process ("front-2"): the start of its id on the bus,
in the logs and in the metrics' `front` label, so that it reads as its `worker` label."""


def front_name() -> str:
    """This front's id on the bus: its supervisor's name for it (`FRONT_NAME_ENV`) or
    "front", and a random part (unique for every start: a front started again is another
    front for the lobby). Letters, digits and hyphens only (a NATS subject token)."""
    given = os.environ.get(FRONT_NAME_ENV, "")
    base = given if re.fullmatch(r"[A-Za-z0-9-]{1,32}", given) else "front"
    return f"{base}-{secrets.token_hex(3)}"


async def run_front(
    nats: NatsOptions,
    host: str = "127.0.0.1",
    port: int = 2222,
    host_key_dir: Path = Path("host_keys"),
    limits: Limits = DEFAULT_LIMITS,
    prefix: str = "perudo",
    reuse_port: bool = False,
    stop: asyncio.Event | None = None,
    metrics: str | None = None,
    banner: str | None = None,
) -> None:
    """Run a front until SIGTERM or SIGINT (or `stop` is set), then stop cleanly (the module
    docstring). `host`, `port` and `host_key_dir` are the SSH server's (`start_front`; every
    front of one server needs the same host key), `reuse_port` shares the port with the other
    fronts of this machine; `metrics` the `HOST:PORT` of its Prometheus metrics (None: none,
    or its supervisor's: `perudo_ssh.metrics`). Raises `BusError` (NATS cannot be reached),
    `OSError` (cannot listen) or ValueError (a malformed `metrics`) before serving."""
    metered = start_metrics(metrics)
    try:
        bus = await NatsBus.connect(nats)
    except BaseException:
        if metered is not None:
            metered.stop()
        raise
    remote = RemoteLobby(
        bus,
        prefix=prefix,
        front=front_name(),
        outbox_size=limits.output_queue_events,
        round_trip=BUS_ROUND_TRIP.observe if metered or multiprocess_mode() else None,
    )
    connections = Connections(limits)
    collector: PacedCollector | None = None
    try:
        await remote.start()
        if not await remote.wait_for_lobby(LOBBY_WAIT) or not await remote.bans_known(LOBBY_WAIT):
            log.warning("front: no lobby heard on %s yet; listening anyway", nats.url)
        acceptor = await start_front(
            remote.connect,
            RemoteRecords(bus, prefix),
            remote.bans,
            host,
            port,
            host_key_dir,
            limits,
            connections,
            reuse_port=reuse_port,
            sessions=SessionCounts(limits, shared=remote.admit),
            guests=remote.guest_number,
            banner=banner,
        )
        tune_collector()
        collector = PacedCollector()
        collector.start()
        async with stop_signals(stop) as stopping:
            log.info(
                "perudo-ssh front %s listening on %s:%d (lobby on %s)",
                remote.front,
                host,
                acceptor.get_port(),
                nats.url,
            )
            await stopping.wait()
        log.info("stopping")
        acceptor.close()
        try:
            # the sessions still open are told; every app shows its goodbye (the lobby's,
            # when it stopped first, or this) and ends, and its client closes the connection
            remote.end_all(STOPPING)
            await connections.wait_closed(SHUTDOWN_GRACE)
        finally:
            await close_connections(acceptor, connections)
    finally:
        try:
            await remote.stop()
        finally:
            if collector is not None:
                collector.stop()
            if metered is not None:
                metered.stop()
            await bus.close()
