"""Word-level difference of two answers (difflib), as plain segments: nothing here is HTML."""

from __future__ import annotations

import difflib
import re
from typing import Literal

Op = Literal["same", "removed", "added"]
_WORDS = re.compile(r"\S+")


def word_diff(first: str | None, second: str | None) -> list[tuple[Op, str]]:
    """Segments that turn ``first`` into ``second``: ('same' | 'removed' | 'added', words joined by spaces).

    Words are runs of non-space characters; a changed stretch is a removal then an addition.
    """
    a, b = _WORDS.findall(first or ""), _WORDS.findall(second or "")
    segments: list[tuple[Op, str]] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            segments.append(("same", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            segments.append(("removed", " ".join(a[i1:i2])))
        if j2 > j1:
            segments.append(("added", " ".join(b[j1:j2])))
    return segments


def word_diff_text(first: str | None, second: str | None) -> str:
    """The diff in git's word-diff notation: ``[-removed-]`` and ``{+added+}`` around changed words."""
    marks = {"same": "{}", "removed": "[-{}-]", "added": "{{+{}+}}"}
    return " ".join(marks[op].format(text) for op, text in word_diff(first, second))


def similarity(first: str | None, second: str | None) -> float:
    """Share of words the two answers have in common, in order (difflib ratio over words): 1.0 when identical."""
    a, b = _WORDS.findall(first or ""), _WORDS.findall(second or "")
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()
