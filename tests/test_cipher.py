"""chacha20-poly1305 with one stream less a packet (`perudo_ssh.ssh.cipher`, issue 10): the
same bytes as asyncssh's own, every way round."""

from __future__ import annotations

import random

from asyncssh.crypto.chacha import ChachaCipher

from perudo_ssh.ssh.cipher import install_quick_chacha


def test_packets_are_sealed_and_opened_as_asyncssh_does() -> None:
    """For keys, sequence numbers and payloads of many sizes (empty, inside one block,
    across blocks, a whole frame): the same ciphertext and tag as asyncssh's methods; what
    either seals, the other opens; a tag or a byte changed is refused (None)."""
    install_quick_chacha()
    install_quick_chacha()  # idempotent
    assert ChachaCipher.perudo_quick  # type: ignore[attr-defined]
    theirs_seal = ChachaCipher.asyncssh_encrypt_and_sign  # type: ignore[attr-defined]
    theirs_open = ChachaCipher.asyncssh_verify_and_decrypt  # type: ignore[attr-defined]
    rng = random.Random(10)
    for size in (0, 1, 15, 16, 63, 64, 65, 127, 128, 1000, 4096, 32768):
        cipher = ChachaCipher(rng.randbytes(64))
        nonce = rng.getrandbits(64).to_bytes(8, "big")
        header, data = rng.randbytes(4), rng.randbytes(size)
        sealed = cipher.encrypt_and_sign(header, data, nonce)
        assert sealed == theirs_seal(cipher, header, data, nonce), size
        ciphertext, tag = sealed
        assert ciphertext != header + data or size == 0
        assert cipher.verify_and_decrypt(ciphertext[:4], ciphertext[4:], nonce, tag) == data
        assert theirs_open(cipher, ciphertext[:4], ciphertext[4:], nonce, tag) == data
        bad_tag = bytes([tag[0] ^ 1]) + tag[1:]
        assert cipher.verify_and_decrypt(ciphertext[:4], ciphertext[4:], nonce, bad_tag) is None
        if size:
            flipped = ciphertext[:4] + bytes([ciphertext[4] ^ 0x80]) + ciphertext[5:]
            assert cipher.verify_and_decrypt(flipped[:4], flipped[4:], nonce, tag) is None
        other = (int.from_bytes(nonce, "big") + 1).to_bytes(8, "big")
        assert cipher.verify_and_decrypt(ciphertext[:4], ciphertext[4:], other, tag) is None
