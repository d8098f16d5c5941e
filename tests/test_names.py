"""`perudo_ssh.names`: `clean_name` keeps only what shows on screen as what it is (UTS #39's
General Security Profile and "Moderately Restrictive" script mixing, adapted), and
`skeleton` gives look-alike names (Cyrillic and Greek letters shaped like Latin ones,
fullwidth forms, the separators `_.-`) one skeleton while names that look different keep
apart."""

from __future__ import annotations

import unicodedata

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len, get_character_cell_size

from perudo_ssh.names import DEFAULT_NAME, MAX_MARKS, MAX_NAME_LENGTH, clean_name, skeleton

# ---- clean_name ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        # conjoining Hangul jamo left over by NFKC: no width, or half a syllable
        ("alice\u1161", "alice"),  # a vowel jamo: would show as "alice"
        ("\u1161\u1162\u11a8", DEFAULT_NAME),  # only jamo: would show blank
        ("\ua960\ud7b0\ud7cb", DEFAULT_NAME),  # the extended jamo blocks
        ("\u1100ana", "\u1100ana"),  # a leading consonant alone is drawn: kept
        ("\u1100\u1161", "가"),  # L + V: NFKC makes the syllable
        ("\u1100\u1161\u11a8", "각"),  # L + V + T
        ("한국어", "한국어"),
        ("\u3164\u3164", DEFAULT_NAME),  # Hangul fillers (NFKC: U+1160, default ignorable)
        ("ㅎㅎ", "\u1112\u1112"),  # compatibility jamo: NFKC makes them leading consonants,
        ("ㅎ가", "\u1112가"),  # which are drawn two cells wide
    ],
)
def test_hangul_keeps_syllables_and_drops_leftover_jamo(username: str, expected: str) -> None:
    assert clean_name(username) == expected


@pytest.mark.parametrize(
    "invisible",
    [
        "\u200b",  # zero-width space
        "\u200c",  # zero-width non-joiner
        "\u200d",  # zero-width joiner
        "\u2060",  # word joiner
        "\ufeff",  # zero-width no-break space (BOM)
        "\u00ad",  # soft hyphen
        "\u034f",  # combining grapheme joiner
        "\u202e",  # right-to-left override (RLO)
        "\u2067",  # right-to-left isolate
        "\u200f",  # right-to-left mark
        "\ufe0f",  # variation selector 16
        "\U000e0100",  # variation selector 17
        "\u180b",  # Mongolian free variation selector 1
        "\u180f",  # Mongolian free variation selector 4
        "\u180e",  # Mongolian vowel separator
        "\U000e0041",  # tag latin capital A
        "\u115f",  # Hangul choseong filler
    ],
)
def test_default_ignorable_characters_are_dropped(invisible: str) -> None:
    assert clean_name(f"ab{invisible}cd") == "abcd"
    assert clean_name(invisible * 3) == DEFAULT_NAME


def test_khmer_inherent_vowels_are_dropped_and_khmer_kept() -> None:
    assert clean_name("\u1780\u17b4\u1781\u17b5") == "\u1780\u1781"  # ក឴ខ឵ -> កខ
    assert clean_name("សុខា") == "សុខា"  # a vowel sign (Mn) on a consonant stays


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        ("\u0301", DEFAULT_NAME),  # a combining acute alone
        ("\u0301ana", "ana"),  # ... at the start: nothing to sit on
        ("e\u0301", "é"),  # composed by NFKC
        ("e\u0301lise", "élise"),
        ("_\u0301", "_"),  # not on a separator
        ("a-\u0308b", "a-b"),
        ("a\u200b\u0301", "a"),  # not on a character dropped before it
        ("\u0430\u0301", "\u0430\u0301"),  # Cyrillic а + acute (no precomposed form)
        ("a\u0301\u0302\u0303\u0304\u0306", "\u00e1\u0302\u0303\u0304"),  # MAX_MARKS
        ("\u1e69\u0302\u0303\u0304", "\u1e69\u0302\u0303"),  # ṩ holds two marks already
        ("ကြွေး", "ကြွေး"),  # a Myanmar syllable: 4 marks
        ("e\u0301\u0301", "é"),  # not the same mark twice in a row
        ("a\u0308\u0308\u0308", "ä"),
        ("a\u0301\u0302\u0301", "\u00e1\u0302\u0301"),  # the same mark, but not in a row
        ("a\u20dd", "a"),  # an enclosing mark (Me) is never kept
    ],
)
def test_combining_marks_only_attached_and_few(username: str, expected: str) -> None:
    assert MAX_MARKS == 4
    assert clean_name(username) == expected


@pytest.mark.parametrize(
    "name",
    [
        "किरण",  # Devanagari: vowel sign ि (Mc)
        "प्रिया",  # virama ् (Mn), vowel signs ि ा (Mc)
        "अंकित",  # anusvara ं
        "সৌরভ",  # Bengali ৌ (NFC keeps it precomposed)
        "ਗੁਰਪ੍ਰੀਤ",  # Gurmukhi
        "தமிழ்",  # Tamil
        "ಕನ್ನಡ",  # Kannada
        "മലയാളം",  # Malayalam
        "සිංහල",  # Sinhala
        "สมชาย",  # Thai
        "བསྒྲུབས",  # Tibetan: three subjoined/vowel marks in a row
        "ქართული",  # Georgian
        "Հայերեն",  # Armenian
        "עברית",  # Hebrew
        "محمد",  # Arabic
        "ދިވެހި",  # Thaana
        "አማርኛ",  # Ethiopic
        "ລາວ",  # Lao
        "မြန်မာ",  # Myanmar
        "ㄅㄆㄇ",  # Bopomofo
        "Ελένη",  # Greek
        "Иван",  # Cyrillic
    ],
)
def test_names_of_the_recommended_scripts_are_kept_whole(name: str) -> None:
    assert clean_name(name) == name


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        # Latin with Cyrillic or Greek: the first script wins, the intruder goes
        ("alic\u0435", "alic"),  # Cyrillic е
        ("p\u0430ypal", "pypal"),  # Cyrillic а
        ("Иванa", "Иван"),
        ("alphaα", "alpha"),
        ("Ελένηe", "Ελένη"),
        # Cyrillic with Greek: no
        ("Иванα", "Иван"),
        ("αβИ", "αβ"),
        # Latin with one other script but Greek or Cyrillic: yes
        ("alice山田", "alice山田"),
        ("priyaप्रिया", "priyaप्रिया"),
        ("ali_محمد", "ali_محمد"),
        ("kimΑ김", "kim김"),  # ... and only one: Latin + Hangul, then Greek is dropped
        ("ana山ก", "ana山"),  # Latin + Han, then Thai would be a third
        ("प्रियाمحمد", "प्रिया"),  # two non-Latin scripts
        # the CJK combinations
        ("山田たろうタロー", "山田たろうタロー"),  # Han + Hiragana + Katakana (and ー, Common)
        ("Ken山田たろうタロー", "Ken山田たろうタロー"),  # ... with Latin
        ("김金", "김金"),  # Hangul + Han
        ("Lee김金", "Lee김金"),
        ("ㄅ山", "ㄅ山"),  # Bopomofo + Han
        ("たろ김", "たろ"),  # Hiragana + Hangul: no
        ("金たろ김", "金たろ"),
        ("ㄅた", "ㄅ"),  # Bopomofo + Hiragana: no
        # digits (Common) fit anything; `_.-` too
        ("Иван_42", "Иван_42"),
        ("42山", "42山"),
        ("٤٢محمد", "٤٢محمد"),  # Arabic-Indic digits with Arabic
        # not a recommended script: dropped
        ("Ꭰ\u13a1ana", "ana"),  # Cherokee
        ("ᚠᚢᚦ", DEFAULT_NAME),  # Runic
        ("\U00010400", DEFAULT_NAME),  # Deseret
        ("ᠮᠣᠩ", DEFAULT_NAME),  # Mongolian
        ("❶❷", DEFAULT_NAME),  # Common, but not a digit
        ("ana\u02b9", "ana"),  # a Common modifier letter (prime)
    ],
)
def test_scripts_mix_only_as_moderately_restrictive_allows(username: str, expected: str) -> None:
    assert clean_name(username) == expected


def test_the_name_is_cut_and_defaults() -> None:
    assert clean_name("x" * 40) == "x" * MAX_NAME_LENGTH
    assert clean_name("ψ" * 40) == "ψ" * MAX_NAME_LENGTH
    assert clean_name("कि" * 20) == "कि" * 8  # marks count as characters
    assert clean_name("!" * 100_000 + "ana") == DEFAULT_NAME  # only the start is read
    assert clean_name("") == DEFAULT_NAME


def _is_mark(char: str) -> bool:
    return unicodedata.category(char) in ("Mn", "Mc")


_INVISIBLE = regex.compile(r"[\p{DI}\u1160-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]")


def _check_shown(name: str) -> None:
    """What every clean name is: short, not starting with a mark, with no default-ignorable
    or conjoining jamo, every character but an attached mark at least one cell wide, and
    cleaning it again changes nothing."""
    assert 1 <= len(name) <= MAX_NAME_LENGTH
    assert cell_len(name) >= 1
    assert not _is_mark(name[0])
    assert not _INVISIBLE.search(name)
    assert all(_is_mark(char) or get_character_cell_size(char) >= 1 for char in name)
    assert clean_name(name) == name


@pytest.mark.slow
def test_no_single_character_cleans_to_something_invisible() -> None:
    """Every code point of planes 0-3 alone (a fuzz of the character rules)."""
    for code in range(0x40000):
        name = clean_name(chr(code))
        if name != DEFAULT_NAME:
            _check_shown(name)


_NAME_CHARS = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from("ae_.-1\u0301\u0308\u200b\u200d\u202e\ufe0f\u1100\u1161\u11a8\u0435αи山たタ김"),
    st.sampled_from("कपरि्ािංසු\u17b4\u180bᅠ"),
)


@settings(max_examples=500, deadline=None)
@given(st.text(_NAME_CHARS, max_size=40))
def test_any_user_name_cleans_to_a_visible_name(username: str) -> None:
    _check_shown(clean_name(username))


# ---- skeleton ---------------------------------------------------------------------------------


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
        ("ana-2_x.y", "ana-2-x-y"),  # the separators are one
    ],
)
def test_skeleton(name: str, expected: str) -> None:
    assert skeleton(name) == expected


def test_look_alikes_share_a_skeleton_and_others_do_not() -> None:
    assert skeleton("\u0440\u0430\u0441\u043e") == skeleton("paco")  # all Cyrillic
    assert skeleton("l") != skeleton("I")  # look-alikes within Latin are not folded
    assert skeleton("ana") != skeleton("ama")
    assert skeleton(skeleton("ΑΝΑ")) == skeleton("ΑΝΑ")
    # alice's second session is `alice-2`: `alice_2` and `alice.2` look like it
    assert skeleton("alice_2") == skeleton("alice-2") == skeleton("alice.2")
    assert skeleton("alice2") != skeleton("alice-2")
