"""`perudo_ssh.names.skeleton`: look-alike names (Cyrillic and Greek letters shaped like Latin
ones, fullwidth forms) have one skeleton; names that look different keep apart."""

from __future__ import annotations

import pytest

from perudo_ssh.names import skeleton


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ana", "ana"),
        ("Ana", "ana"),  # casefold
        ("\u0430na", "ana"),  # Cyrillic а
        ("\u0430\u043d\u0430", "aha"),  # Cyrillic "ана": н is a small H
        ("ΑΝΑ", "ana"),  # Greek capitals look like ANA
        ("ανα", "ava"),  # ... their small letters like "ava"
        ("ｂｏｂ", "bob"),  # fullwidth (NFKC)
        ("𝐛𝐨𝐛", "bob"),  # mathematical bold (NFKC)
        ("Иван", "иbah"),  # И has no Latin look-alike: stays Cyrillic
        ("ΜΑΡΚΟ", "mapko"),
        ("µ", "u"),  # micro sign = Greek μ, read as u
        ("\u0450va", "èva"),  # Cyrillic ѐ: е + grave accent, like è
        ("e\u0301va", "éva"),  # e + combining acute: NFC
        ("ԁеѕкtор", "desktop"),
        ("Straße", "strasse"),
        ("ana-2_x.y", "ana-2_x.y"),
    ],
)
def test_skeleton(name: str, expected: str) -> None:
    assert skeleton(name) == expected


def test_look_alikes_share_a_skeleton_and_others_do_not() -> None:
    assert skeleton("\u0440\u0430\u0441\u043e") == skeleton("paco")  # all Cyrillic
    assert skeleton("l") != skeleton("I")  # look-alikes within Latin are not folded
    assert skeleton("ana") != skeleton("ama")
    assert skeleton(skeleton("ΑΝΑ")) == skeleton("ΑΝΑ")
