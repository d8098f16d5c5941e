"""Benchmark of the whole server over SSH (run by hand from the repo root:
`.venv/bin/python -m bench.bench_ssh [SESSIONS]`).

Starts the real server in-process on a free loopback port, connects SESSIONS players with
PTYs (80×24, screens rendered by pyte), and prints: time to first lobby screen, server RSS
per session, and the fan-out latency of one lobby change (a table created) until every
session's screen shows it — median and worst. Figures, not assertions. The clients (asyncssh
and pyte) run in the same process as the server, so every figure includes their cost too.

Seen on the 2-core dev machine: 10 sessions — first screen 173 ms median, 2.4 MB a session,
fan-out 9 ms; 50 sessions — 593 ms median (each arrival redraws every lobby's online list),
2.3 MB a session, fan-out 56 ms.
"""

from __future__ import annotations

import asyncio
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import asyncssh

from perudo_ssh.limits import Limits
from perudo_ssh.lobby import Lobby
from perudo_ssh.serve import start_game_server
from tests.sshterm import Terminal

ROW = re.compile(r"^\s*1\s+p0's table\s+classic", re.MULTILINE)


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main(sessions: int) -> None:
    keys = Path(tempfile.mkdtemp()) / "keys"
    # every session comes from one address with one key: no session limits here
    unlimited = Limits(
        max_sessions=0, max_sessions_per_address=0, max_sessions_per_key=0,
        connection_rate_per_address=0, max_startups="0",
    )  # fmt: skip
    acceptor, lobby = await start_game_server(
        "127.0.0.1", 0, keys, Lobby(bot_delay=(0, 0), rng=random.Random(1)), limits=unlimited
    )
    port = acceptor.get_port()
    base = rss_mb()
    terms: list[Terminal] = []
    connect_times = []
    key = asyncssh.generate_private_key("ssh-ed25519")
    for n in range(sessions):
        term = Terminal()
        start = time.perf_counter()
        await term.connect(port, f"p{n}", key)
        await term.wait_for(f"welcome, p{n}", timeout=60)
        connect_times.append(time.perf_counter() - start)
        terms.append(term)
    await asyncio.sleep(1)  # let the last lobby lists settle before measuring memory
    per_session = (rss_mb() - base) / sessions

    creator, watchers = terms[0], terms[1:]
    start = time.perf_counter()
    creator.send("c")
    await creator.wait_for("Create a table")
    creator.send("\x13")
    await creator.wait_for("Waiting for")
    created = time.perf_counter()
    await asyncio.gather(
        *(t.wait_for(lambda text: ROW.search(text) is not None, timeout=60) for t in watchers)
    )
    fanout = time.perf_counter() - created

    print(f"sessions                  {sessions}")
    print(f"first screen, median      {statistics.median(connect_times) * 1000:.0f} ms")
    print(f"first screen, worst       {max(connect_times) * 1000:.0f} ms")
    print(f"server RSS per session    {per_session:.2f} MB (base {base:.0f} MB)")
    print(f"lobby fan-out to all      {fanout * 1000:.0f} ms (table made → all lobbies list it)")
    for term in terms:
        await term.close()
    acceptor.close()
    await lobby.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
