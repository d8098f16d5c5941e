"""`python -m perudo_ssh`: the `perudo-ssh` command (how `serve --workers N` starts its
lobby and front processes with the same Python)."""

from perudo_ssh.cli import main

raise SystemExit(main())
