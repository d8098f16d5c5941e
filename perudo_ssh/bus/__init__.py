"""The bus between the lobby process and the front processes (issue 12).

One small interface (`base.Bus`: publish, subscribe, request and reply, bytes on named
subjects) with two transports: `memory.MemoryBus` inside one process and
`nats_bus.NatsBus` over NATS. What travels on it is msgspec-encoded by its users
(`perudo_ssh.relay`). Imports neither textual nor asyncssh.
"""

from perudo_ssh.bus.base import Bus, BusError, BusTimeout, Subscription
from perudo_ssh.bus.memory import MemoryBus

__all__ = ["Bus", "BusError", "BusTimeout", "MemoryBus", "Subscription"]
