"""Scripted pairwise judges for the loopback server and the capitals data they judge (compare and dashboard tests)."""

from __future__ import annotations

import re
from typing import Any

from judge_scripting import last_user_text
from textgen_core.model import Datum

_BLOCK = re.compile(r"(?m)^(Answer [AB]):\n(~{3,})\n(.*?)\n\2$", re.DOTALL)
N = 8


def answers(request: dict[str, Any]) -> dict[str, str]:
    return {m.group(1)[-1]: m.group(3) for m in _BLOCK.finditer(last_user_text(request))}


def first_position(request: dict[str, Any]) -> dict[str, str]:
    return {"reason": "the first answer is always better", "preferred": "A"}


def longer_answer(request: dict[str, Any]) -> dict[str, str]:
    shown = answers(request)
    a, b = len(shown["A"].split()), len(shown["B"].split())
    return {"reason": "more words", "preferred": "A" if a > b else "B" if b > a else "TIE"}


def mentions_paris(request: dict[str, Any]) -> dict[str, str]:
    """A fair judge: the answer that says Paris is better, whatever its position and length."""
    shown = answers(request)
    right = [k for k in ("A", "B") if "Paris" in shown[k]]
    return {"reason": "says Paris", "preferred": right[0] if len(right) == 1 else "TIE"}


def rows() -> list[Datum]:
    """'base' answers briefly and wrongly; 'wordy' at length, wrongly; 'right' briefly and rightly."""
    out = []
    for i in range(N):
        query = f"What is the capital of France? ({i})"
        out += [Datum(f"d{i}", "base", query, "Lyon.", ("Paris",)),
                Datum(f"d{i}", "wordy", query, f"It is most likely Lyon, a large city in the south east {i}.",
                      ("Paris",)),
                Datum(f"d{i}", "right", query, "Paris.", ("Paris",))]
    return out
