"""The operator's metrics in Prometheus's text format (issue 15, item 3), served by
`--metrics HOST:PORT` (`prometheus_client`, the Prometheus project's own client).

What is measured, and where:

- in the lobby's process (`LobbyMetrics`, the actor's `Meter`, and `sample_lobby` every
  `SAMPLE_EVERY` seconds): `perudo_sessions{front, place}` (place: lobby, table,
  spectating; front: a front process's id, `local` for the lobby's own process),
  `perudo_tables{status}`, `perudo_games_finished_total`, `perudo_moves_total{by}` (player,
  bot, timeout), `perudo_broadcast_seconds` (a player's move reaching the lobby → its events
  handed to every session, the save included), `perudo_saves_total{result}` (ok, failed);
- wherever sessions run (`count_event`, from the structured log events):
  `perudo_drops_total{reason}` (a session or connection the server ended: too slow, flood,
  idle, login timeout, …) and `perudo_logins_refused_total{stage, reason}` (stage:
  connection, login, session; reason: banned, the limit met, …);
- in a front process: `perudo_bus_round_trip_seconds` (a request to the lobby over the bus
  and its answer, once a heartbeat);
- in one process, also `prometheus_client`'s own `process_*` and `python_*` metrics.

`perudo-ssh serve` serves its own; `perudo-ssh lobby` and `front` each serve theirs (scrape
every process). `serve --workers` serves one endpoint for all its processes: the supervisor
gives its children a folder (`MULTIPROC_ENV`, `prometheus_client`'s multiprocess mode),
where each writes its values, and adds them up when scraped (`serve_aggregate`); the gauges
of a child that exited are forgotten (`process_exited`), its counters kept. That mode has no
`process_*` metrics: the supervisor serves each child's CPU and memory instead
(`WorkerCollector`: `perudo_worker_cpu_seconds_total{worker}`,
`perudo_worker_resident_memory_bytes{worker}`).

Imports neither textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Metric,
    disable_created_metrics,
    multiprocess,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from perudo_ssh.logs import observe_events

if TYPE_CHECKING:
    from perudo_ssh.lobby.actor import Lobby

log = logging.getLogger(__name__)

disable_created_metrics()  # no `_created` series beside each counter: nothing reads them

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable that puts a process in multiprocess mode (`serve --workers`)."""

SAMPLE_EVERY = 2.0
"""Seconds between two counts of the lobby's sessions and tables."""

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Upper bounds in seconds of the latency histograms: p99 ≤ 100 ms is the target."""

SESSIONS = Gauge(
    "perudo_sessions",
    "Sessions attached to the lobby, by front process and place",
    ["front", "place"],
    multiprocess_mode="livesum",
)
TABLES = Gauge("perudo_tables", "Tables by status", ["status"], multiprocess_mode="livesum")
GAMES = Counter("perudo_games_finished", "Games played to their end")
MOVES = Counter("perudo_moves", "Moves taken at the tables, by who moved", ["by"])
BROADCAST = Histogram(
    "perudo_broadcast_seconds",
    "From a player's move reaching the lobby to its events handed to every session",
    buckets=LATENCY_BUCKETS,
)
SAVES = Counter("perudo_saves", "Saves of the tables in play, by result", ["result"])
DROPS = Counter("perudo_drops", "Sessions and connections the server ended, by reason", ["reason"])
REFUSED = Counter(
    "perudo_logins_refused",
    "Connections, logins and sessions refused, by stage and reason",
    ["stage", "reason"],
)
BUS_ROUND_TRIP = Histogram(
    "perudo_bus_round_trip_seconds",
    "A front's request to the lobby over the bus and its answer",
    buckets=LATENCY_BUCKETS,
)

_REFUSALS = {
    "connection_refused": "connection",
    "login_refused": "login",
    "session_refused": "session",
}
_DROPS = {
    "client_dropped": None,  # the event's own reason
    "session_dropped": None,
    "connection_idle": "idle",
    "channel_idle": "idle",
    "login_timeout": "login_timeout",
}


def count_event(event: str, fields: Mapping[str, object]) -> None:
    """Count a structured log event that is a refusal or a drop (`observe_events`)."""
    stage = _REFUSALS.get(event)
    if stage is not None:
        REFUSED.labels(stage, str(fields.get("reason", "unknown"))).inc()
    elif event in _DROPS:
        DROPS.labels(_DROPS[event] or str(fields.get("reason", "unknown"))).inc()


class LobbyMetrics:
    """The lobby actor's `Meter` (`perudo_ssh.lobby.meter`) feeding the metrics above."""

    def moved(self, by: str) -> None:
        MOVES.labels(by).inc()

    def broadcast(self, seconds: float) -> None:
        BROADCAST.observe(seconds)

    def saved(self, ok: bool) -> None:
        SAVES.labels("ok" if ok else "failed").inc()

    def game_finished(self) -> None:
        GAMES.inc()

    def dropped(self, reason: str) -> None:
        DROPS.labels(reason).inc()


class _Sampled:
    """The label sets a sampler has set, so that one gone is set to 0 (a gauge of the
    multiprocess mode cannot be removed)."""

    def __init__(self) -> None:
        self.sessions: set[tuple[str, str]] = set()
        self.statuses: set[str] = {"waiting", "playing", "over"}


def sample(lobby: Lobby, seen: _Sampled) -> None:
    """Set the session and table gauges from `lobby`'s census (`perudo_ssh.lobby.meter`;
    imported here: a front process, which has no lobby, imports this module too)."""
    from perudo_ssh.lobby.meter import census

    counted = census(lobby)
    for front, place in seen.sessions - set(counted.sessions):
        if multiprocess_mode():  # its files keep every label set: 0 is all it can say
            SESSIONS.labels(front, place).set(0)
        else:  # gone (a front restarted under a new id): no series left behind
            SESSIONS.remove(front, place)
            seen.sessions.discard((front, place))
    for (front, place), number in counted.sessions.items():
        SESSIONS.labels(front, place).set(number)
    seen.sessions |= set(counted.sessions)
    seen.statuses |= set(counted.tables)
    for status in seen.statuses:
        TABLES.labels(status).set(counted.tables.get(status, 0))


async def sample_lobby(lobby: Lobby, every: float = SAMPLE_EVERY) -> None:
    """Count `lobby`'s sessions and tables into the gauges every `every` seconds, until
    cancelled."""
    seen = _Sampled()
    while True:
        try:
            sample(lobby, seen)
        except Exception:  # a metric must never stop the server
            log.exception("metrics: could not count the lobby")
        await asyncio.sleep(every)


class MetricsUnavailable(Exception):
    """The metrics cannot be served where asked (the port is taken, the address is not
    this machine's): the message says where and why."""


def parse_address(address: str) -> tuple[str, int]:
    """`HOST:PORT` (`127.0.0.1:9100`, `[::1]:9100`; `:9100` is 127.0.0.1) as (host, port);
    port 0: any free one. Raises ValueError for anything else."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"wants HOST:PORT, such as 127.0.0.1:9100, not {address!r}")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


class MetricsServer:
    """The HTTP endpoint of the metrics (`start`): any path answers the text format. `port`
    is the one it listens on (useful when asked for 0); `stop()` ends it."""

    def __init__(self, stop: Callable[[], None], port: int) -> None:
        self._stop = stop
        self.port = port

    @classmethod
    def start(cls, address: str, registry: CollectorRegistry | None = None) -> MetricsServer:
        """Listen on `address` (`parse_address`) in a thread of its own, serving `registry`
        (the process's own metrics by default). Raises ValueError (a malformed address),
        `MetricsUnavailable` (the port is taken, the address not ours)."""
        host, port = parse_address(address)
        try:
            if registry is None:
                server, thread = start_http_server(port, host)
            else:
                server, thread = start_http_server(port, host, registry=registry)
        except OSError as exc:
            raise MetricsUnavailable(
                f"cannot serve metrics on {address}: {exc.strerror or exc}"
            ) from None
        log.info("metrics on http://%s:%d/metrics", host, server.server_port)

        def stop() -> None:
            server.shutdown()
            server.server_close()
            thread.join(5)

        return cls(stop, server.server_port)

    def stop(self) -> None:
        self._stop()


def start_metrics(address: str | None) -> MetricsServer | None:
    """Count this process's refusals and drops, and serve its metrics on `address` (None:
    serve nothing — a child of `serve --workers` writes into its supervisor's folder, read
    from there; or nobody asked for metrics, and nothing is counted). When the address
    cannot be served (its port taken: 9100 is node_exporter's too), that is logged as an
    error and the game goes on without an endpoint: metrics never take the server down.
    Raises ValueError for a malformed address."""
    if address is None and not multiprocess_mode():
        return None
    observe_events(count_event)
    if address is None:
        return None
    try:
        return MetricsServer.start(address)
    except MetricsUnavailable as exc:
        log.error("%s: serving on without metrics", exc)
        return None


class Metered:
    """A lobby measured (`start`): its meter set, its census sampled, this process's
    metrics served. `stop()` ends the sampling and the endpoint."""

    def __init__(self, sampler: asyncio.Task[None], server: MetricsServer | None) -> None:
        self._sampler = sampler
        self.server = server

    @classmethod
    def start(cls, lobby: Lobby, address: str | None) -> Metered | None:
        """Measure `lobby` and serve on `address` as `start_metrics` does; None when
        nothing is measured. Call it on the running event loop. Raises as `start_metrics`."""
        if address is None and not multiprocess_mode():
            return None
        server = start_metrics(address)
        lobby.meter = LobbyMetrics()
        sampler = asyncio.get_running_loop().create_task(sample_lobby(lobby), name="metrics")
        return cls(sampler, server)

    def stop(self) -> None:
        self._sampler.cancel()
        if self.server is not None:
            self.server.stop()


def multiprocess_mode() -> bool:
    """Whether this process writes its metrics into a supervisor's folder."""
    return bool(os.environ.get(MULTIPROC_ENV))


class WorkerCollector(Collector):
    """Each process of `serve --workers` as the system counts it, read from /proc when
    scraped (the multiprocess mode has no `process_*` metrics): `perudo_worker_cpu_seconds_
    total{worker}` (user and system) and `perudo_worker_resident_memory_bytes{worker}`;
    `workers()` gives the live ones, by name ("lobby", "front-1", "nats-server") → pid."""

    def __init__(self, workers: Callable[[], Mapping[str, int]]) -> None:
        self._workers = workers
        self._tick = os.sysconf("SC_CLK_TCK")
        self._page = os.sysconf("SC_PAGE_SIZE")

    def collect(self) -> Iterator[Metric]:
        cpu = CounterMetricFamily(
            "perudo_worker_cpu_seconds",
            "CPU time of each process of serve --workers (user and system)",
            labels=["worker"],
        )
        rss = GaugeMetricFamily(
            "perudo_worker_resident_memory_bytes",
            "Resident memory of each process of serve --workers",
            labels=["worker"],
        )
        for name, pid in sorted(self._workers().items()):
            try:
                with open(f"/proc/{pid}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:  # exited since: it is not shown
                continue
            # after the command's ")": state is field 3, utime 14, stime 15, rss 24 (man 5 proc)
            cpu.add_metric([name], (int(fields[11]) + int(fields[12])) / self._tick)
            rss.add_metric([name], int(fields[21]) * self._page)
        yield cpu
        yield rss


def serve_aggregate(
    address: str, directory: Path, workers: Callable[[], Mapping[str, int]] | None = None
) -> MetricsServer | None:
    """Serve the sum of the metrics that the processes given `directory` (`MULTIPROC_ENV`)
    write there (`serve --workers`), and with `workers` each process's CPU and memory
    (`WorkerCollector`). None when it cannot listen there (logged, as `start_metrics`)."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(directory))
    if workers is not None:
        registry.register(WorkerCollector(workers))
    try:
        return MetricsServer.start(address, registry)
    except MetricsUnavailable as exc:  # as `start_metrics`: the game goes on
        log.error("%s: serving on without metrics", exc)
        return None


def process_exited(pid: int, directory: Path) -> None:
    """Forget the gauges of the child `pid` that exited (its counters stay in the sums)."""
    multiprocess.mark_process_dead(pid, str(directory))
