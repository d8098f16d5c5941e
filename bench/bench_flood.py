"""Logins under a connection flood (issue 11): how long a normal login from another address
takes while strangers hold connections before login or flood the server with handshakes.

Run by hand: `python -m bench.bench_flood [--held 1000] [--flooders 3] [--seconds 15]`.

The server is the real `perudo-ssh serve` with its default limits, as its own process (a
fresh temp dir). The load runs in other processes from loopback addresses (127.0.0.0/8 is
all this machine's): `held` connections from 100 addresses that read the server's version,
send theirs and say nothing more (each kept until the server closes it); then `flooders`
processes logging in as guests and hanging up as fast as they can, each from one of 200
addresses in turn. Meanwhile a player logs in from 127.0.0.250 every 0.6 s.

Prints first the server's RSS growth after two `env` bombs (one session sending 6
variables of 16 MB, then one sending 3,000 of 32 KB), then per phase: the player's login
time (TCP connect to authenticated) p50/p99/max, logins failed, the server's CPU % and what
the load got (connections held; handshakes done and refused).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import subprocess
import tempfile
import time
from pathlib import Path

import asyncssh

from bench.bench_load import cpu_ticks, free_port, pct, rss_mb, wait_port

SERVER = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "perudo-ssh"
PLAYER = "127.0.0.250"


class _Guest(asyncssh.SSHClient):
    def kbdint_auth_requested(self) -> str:
        return ""

    def kbdint_challenge_received(self, *args: object) -> list[str]:
        return []


async def _login(port: int, address: str, name: str) -> float:
    started = time.monotonic()
    conn, _ = await asyncssh.create_connection(
        _Guest, "127.0.0.1", port, username=name, known_hosts=None, config=None,
        client_keys=None, agent_path=None, preferred_auth="keyboard-interactive",
        local_addr=(address, 0), login_timeout=10,
    )  # fmt: skip
    took = time.monotonic() - started
    conn.close()
    await conn.wait_closed()
    return took


def _hold(port: int, count: int, held, stop) -> None:
    async def one(i: int) -> None:
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(f"127.0.0.{1 + i % 100}", 0)
            )
            await reader.readline()
            writer.write(b"SSH-2.0-holder\r\n")
            with held.get_lock():
                held.value += 1
            try:
                while await reader.read(65536):
                    pass
            finally:
                with held.get_lock():
                    held.value -= 1
        except OSError:
            pass

    async def main() -> None:
        tasks = [asyncio.create_task(one(i)) for i in range(count)]
        while not stop.is_set():
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()

    asyncio.run(main())


def _flood(port: int, k: int, done, refused, stop) -> None:
    async def main() -> None:
        n = 0
        while not stop.is_set():
            address = f"127.0.1.{1 + (k * 67 + n) % 200}"
            n += 1
            try:
                await _login(port, address, f"f{k}")
                with done.get_lock():
                    done.value += 1
            except (OSError, asyncssh.Error, TimeoutError):
                with refused.get_lock():
                    refused.value += 1

    asyncio.run(main())


errors: dict[str, int] = {}


def _env_bomb(port: int, count: int, size: int) -> str:
    """A guest opening a session with `count` environment variables of `size` bytes each
    (sent as one `env` request each, before the shell): how it ended."""

    async def main() -> str:
        conn, _ = await asyncssh.create_connection(
            _Guest, "127.0.0.1", port, username="bomb", known_hosts=None, config=None,
            client_keys=None, agent_path=None, preferred_auth="keyboard-interactive",
            local_addr=("127.0.0.200", 0),
        )  # fmt: skip
        env = {f"LC_BOMB{i}": "x" * size for i in range(count)}
        try:
            process = await conn.create_process(term_type="xterm", env=env)
            process.stdin.write("q")
            await asyncio.wait_for(process.wait_closed(), 10)
            return "session ran"
        except (OSError, asyncssh.Error, TimeoutError) as error:
            return f"{type(error).__name__}: {error}"[:80]
        finally:
            conn.close()

    return asyncio.run(main())


def _measure(port: int, seconds: float) -> tuple[list[float], int]:
    async def main() -> tuple[list[float], int]:
        times, failed = [], 0
        deadline = time.monotonic() + seconds
        i = 0
        while time.monotonic() < deadline:
            i += 1
            try:
                times.append(await _login(port, PLAYER, f"ana{i}"))
            except (OSError, asyncssh.Error, TimeoutError) as error:
                failed += 1
                errors[type(error).__name__ + ": " + str(error)[:60]] = 1 + errors.get(
                    type(error).__name__ + ": " + str(error)[:60], 0
                )
            await asyncio.sleep(0.6)  # under connection_rate_per_address (2/s)
        return times, failed

    return asyncio.run(main())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held", type=int, default=1000)
    parser.add_argument("--flooders", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-flood-"))
    port = free_port()
    server = subprocess.Popen(
        [str(SERVER), "serve", "--config", str(tmp / "none.toml"), "--port", str(port),
         "--db", str(tmp / "perudo.db"), "--host-keys", str(tmp / "keys"),
         "--log-file", str(tmp / "server.log")],
        cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    held, done, refused = ctx.Value("i", 0), ctx.Value("i", 0), ctx.Value("i", 0)
    procs: list = []

    def phase(name: str, load: str | None = None) -> None:
        ticks, started = cpu_ticks(server.pid) or 0, time.monotonic()
        errors.clear()
        times, failed = _measure(port, args.seconds)
        if not times:
            print(f"{name:<10} no login got in: {errors}", flush=True)
            return
        cpu = ((cpu_ticks(server.pid) or 0) - ticks) / 100 / (time.monotonic() - started) * 100
        text = load() if callable(load) else (load or "")
        p50, p99 = pct(times, 50) * 1000, pct(times, 99) * 1000
        print(f"{name:<10} {p50:>7.0f}ms {p99:>5.0f}ms {max(times) * 1000:>5.0f}ms "
              f"{failed:>6} {cpu:>6.0f}  {text}", flush=True)  # fmt: skip
        if errors:
            print(f"{'':<10} failures: {errors}")

    try:
        wait_port(port, server)
        time.sleep(1.0)
        before_rss = rss_mb(server.pid) or 0.0
        for count, size in ((6, 16 * 2**20), (3000, 32 * 1024)):
            how = _env_bomb(port, count, size)
            grown = (rss_mb(server.pid) or 0.0) - before_rss
            print(f"env bomb: {count} x {size // 1024} KB variables: server RSS +{grown:.1f} MB"
                  f" ({how})", flush=True)  # fmt: skip
        print(f"{'phase':<10} {'login p50':>9} {'p99':>7} {'max':>7} {'failed':>6} "
              f"{'CPU %':>6}  load")  # fmt: skip
        phase("idle")
        holder = ctx.Process(target=_hold, args=(port, args.held, held, stop), daemon=True)
        holder.start()
        procs.append(holder)
        time.sleep(3.0)
        phase("held", lambda: f"{held.value} of {args.held} connections held before login")
        for k in range(args.flooders):
            proc = ctx.Process(target=_flood, args=(port, k, done, refused, stop), daemon=True)
            proc.start()
            procs.append(proc)
        time.sleep(2.0)
        before = (done.value, refused.value, time.monotonic())

        def flood_load() -> str:
            took = time.monotonic() - before[2]
            return (
                f"{(done.value - before[0]) / took:.0f} handshakes/s done, "
                f"{(refused.value - before[1]) / took:.0f}/s refused; {held.value} held"
            )

        phase("flood", flood_load)
    finally:
        stop.set()
        for proc in procs:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
        server.terminate()
        server.wait(15)
    print(f"server log: {tmp / 'server.log'}")


if __name__ == "__main__":
    main()
