"""SSH transport: serve one Textual app per SSH session.

Public API: `start_server`, `Login`, `AppFactory` (also importable from
`perudo_ssh.ssh.server`).
"""

from perudo_ssh.ssh.login import AppFactory, Login
from perudo_ssh.ssh.server import start_server

__all__ = ["AppFactory", "Login", "start_server"]
