"""The front: what faces the players, holding no game state (issue 12).

- `remote` — the lobby of another process, reached over the bus (`RemoteLobby`).

Imports neither textual nor asyncssh at this level.
"""
