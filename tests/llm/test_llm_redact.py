"""The key's scrub (#34.7): the whole key and every run of 8 or more of its characters go, nothing else."""

from __future__ import annotations

import pytest

from textgen_core.llm.redact import MIN_PIECE, REDACTED, scrub, scrub_value

KEY = "sk-proj-" + "Zq81xK_mW3-vTt0ePa7Lr9cYh2NbG5dUs4fJ6oIw" * 4


@pytest.mark.parametrize("text, expected", [
    (f"cut here: {KEY[:80]}", f"cut here: {REDACTED}"),             # a reply cut inside the key
    (f"{KEY[-30:]} was the end", f"{REDACTED} was the end"),         # a text that starts inside it
    (f"a{KEY[40:48]}b", f"a{REDACTED}b"),                            # 8 characters of its middle
    (f"a{KEY[40:47]}b", f"a{KEY[40:47]}b"),                          # 7 are not a piece
    (f"x {KEY} y {KEY[:9]}", f"x {REDACTED} y {REDACTED}"),
    (f"{KEY[:20]} {KEY[100:130]}", f"{REDACTED} {REDACTED}"),
    ("an ordinary sentence with a project and a key-word", "an ordinary sentence with a project and a key-word"),
    ("", ""),
])
def test_the_key_and_its_pieces_are_removed(text: str, expected: str) -> None:
    assert scrub(text, KEY) == expected


def test_no_run_of_eight_characters_of_the_key_survives_any_cut() -> None:
    for start in range(0, len(KEY), 7):
        for end in range(start + MIN_PIECE, len(KEY) + 1, 11):
            out = scrub(f"<{KEY[start:end]}>", KEY)
            assert out == f"<{REDACTED}>", (start, end)


def test_short_keys_and_missing_keys() -> None:
    assert scrub("a sk-x b", "sk-x") == f"a {REDACTED} b"  # whole-key only below 9 characters
    assert scrub("abc abc", "abc") == "abc abc"                # below MIN_KEY: nothing is scrubbed
    assert scrub("text", None) == "text" and scrub(None, KEY) == ""


def test_values_are_scrubbed_in_keys_and_strings() -> None:
    value = {KEY[:12]: [f"reason {KEY[3:40]}", 1, None], "ok": "fine"}
    assert scrub_value(value, KEY) == {REDACTED: [f"reason {REDACTED}", 1, None], "ok": "fine"}
