"""chacha20-poly1305@openssh.com with one ChaCha20 stream less a packet (issue 10).

OpenSSH's clients (and asyncssh's) choose chacha20-poly1305 first, so nearly every packet
the server sends or reads goes through asyncssh's `ChachaCipher`. Its construction
(PROTOCOL.chacha20poly1305 in OpenSSH's source) uses two keys: K_1 encrypts the 4-byte
length, K_2 the payload from block counter 1, and block 0 of K_2's stream, for the same
nonce (the sequence number), gives the Poly1305 key. asyncssh makes a new `cryptography`
cipher for each of the three - the header, the Poly1305 key, the payload - and making one
costs more than using it for a frame's few hundred bytes: ~3 % of a server of 300 sessions
(a packet for each frame and each tick of the turn clock). Here the Poly1305 key and the
payload come from one stream of K_2 from block 0: its first 64 bytes (block 0) give the key,
the bytes after it are the payload's, exactly as the two streams asyncssh makes. On reading,
the tag is checked before anything is decrypted, as before.

`install_quick_chacha` swaps in the two methods; what they return is asyncssh's, byte for
byte (tests/test_cipher.py compares them, and every end-to-end test speaks through them
with OpenSSH's client). Idempotent.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.ciphers import Cipher
from cryptography.hazmat.primitives.ciphers.algorithms import ChaCha20
from cryptography.hazmat.primitives.poly1305 import Poly1305

_BLOCK_0 = (0).to_bytes(8, "little")
"""ChaCha20's 64-bit block counter at block 0 (`cryptography` takes it before the nonce)."""
_ZERO_BLOCK = bytes(64)
"""One block of zeros: its keystream is block 0 of the stream (the Poly1305 key is the first
half)."""


def _stream_from_block_0(key: bytes, nonce: bytes) -> object:
    """A ChaCha20 keystream of `key` for `nonce` (8 bytes), from block 0."""
    return Cipher(ChaCha20(key, _BLOCK_0 + nonce), mode=None).encryptor()


def encrypt_and_sign(self: object, header: bytes, data: bytes, nonce: bytes) -> tuple[bytes, bytes]:
    """asyncssh's `ChachaCipher.encrypt_and_sign`: (the header and data encrypted, the tag)."""
    header = _stream_from_block_0(self._adkey, nonce).update(header)  # type: ignore[attr-defined]
    stream = _stream_from_block_0(self._key, nonce)  # type: ignore[attr-defined]
    poly_key = stream.update(_ZERO_BLOCK)[:32]  # type: ignore[attr-defined]
    data = stream.update(data)  # type: ignore[attr-defined]
    ciphertext = header + data
    return ciphertext, Poly1305.generate_tag(poly_key, ciphertext)


def verify_and_decrypt(
    self: object, header: bytes, data: bytes, nonce: bytes, tag: bytes
) -> bytes | None:
    """asyncssh's `ChachaCipher.verify_and_decrypt`: the data decrypted, or None when the
    tag does not match."""
    stream = _stream_from_block_0(self._key, nonce)  # type: ignore[attr-defined]
    poly_key = stream.update(_ZERO_BLOCK)[:32]  # type: ignore[attr-defined]
    try:
        Poly1305.verify_tag(poly_key, header + data, tag)
    except InvalidSignature:
        return None
    return stream.update(data)  # type: ignore[attr-defined, no-any-return]


def install_quick_chacha() -> None:
    """Give asyncssh's `ChachaCipher` the two methods above (see the module's text). Does
    nothing where asyncssh has no chacha20-poly1305. Idempotent."""
    from asyncssh.crypto import chacha

    cipher = chacha.ChachaCipher
    if not chacha.chacha_available or getattr(cipher, "perudo_quick", False):
        return
    cipher.asyncssh_encrypt_and_sign = cipher.encrypt_and_sign  # type: ignore[attr-defined]
    cipher.asyncssh_verify_and_decrypt = cipher.verify_and_decrypt  # type: ignore[attr-defined]
    cipher.encrypt_and_sign = encrypt_and_sign  # type: ignore[assignment]
    cipher.verify_and_decrypt = verify_and_decrypt  # type: ignore[assignment]
    cipher.perudo_quick = True  # type: ignore[attr-defined]
