"""perudo-ssh: Perudo played over SSH (see README.md).

cryptography 51 deprecated DSA keys, and asyncssh (2.24) imports its DSA classes as it loads,
with five warnings on the server's stderr at every start. perudo-ssh neither makes nor takes
DSA keys (host keys are ed25519; `perudo_ssh.ssh.hardening` lists the algorithms offered), so
that one warning is silenced here, before any module of ours imports asyncssh.
"""

import warnings

warnings.filterwarnings("ignore", message="DSA is deprecated", module="asyncssh")
