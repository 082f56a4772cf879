"""Words for people where the store keeps identifiers: step names, parameter and column names, numbers.

Nothing here changes a value; it only changes how a name or a number is written on a page.
"""

from __future__ import annotations

import math
import re
from typing import Any

from textgen_core.compare.verdicts import NO_DIFFERENCE

#: Abbreviations in step names and identifiers, as words.
_WORDS = {"lam": "lambda", "ref": "reference", "refs": "references", "ctx": "context", "ctxs": "contexts", "pred": "prediction",
          "n": "number of", "ci": "interval", "p": "p", "std": "standard deviation", "id": "id",
          "llm": "LLM", "rpm": "requests per minute", "tpm": "tokens per minute"}
_NUMBERED = re.compile(r"^([a-z]+?)_?(\d+)$")


def step_words(step: Any) -> str:
    """'statements.reference.ref1' -> 'statements · reference 1': a judge step as words."""
    parts: list[str] = []
    for token in str(step).replace("/", ".").split("."):
        numbered = _NUMBERED.match(token)
        if numbered:
            word = _WORDS.get(numbered.group(1), numbered.group(1).replace("_", " "))
            token = f"{word} {numbered.group(2)}"
        else:
            token = _WORDS.get(token, token.replace("_", " "))
        if parts and token.startswith(parts[-1] + " "):  # 'reference · reference 1' -> 'reference 1'
            parts[-1] = token
        elif not parts or parts[-1] != token:
            parts.append(token)
    return " · ".join(parts)


def name_words(name: Any) -> str:
    """'rouge_types' -> 'Rouge types', 'n_labels' -> 'Number of labels': an identifier as a label."""
    tokens = [_WORDS.get(t, t) for t in str(name).split("_") if t]
    text = " ".join(tokens)
    return text[:1].upper() + text[1:]


def number_text(value: Any, digits: int = 4) -> str:
    """A number as people read it: fixed decimals ('0.0000', never '8.68e-234'), thousands separated,
    '' for a missing value."""
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return ""
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    if number.is_integer() and abs(number) >= 1:
        return f"{number:,.0f}"
    if abs(number) >= 1e6:
        return f"{number:,.0f}"
    text = f"{number:.{digits}f}"
    return "0." + "0" * digits if text.startswith("-") and float(text) == 0 else text


def interval_text(low: Any, high: Any) -> str:
    """'[-0.0267, +0.0375]' for a delta's interval; 'too few' when there is none."""
    if low is None or high is None or math.isnan(float(low)) or math.isnan(float(high)):
        return "too few"
    return f"[{float(low):+.4f}, {float(high):+.4f}]"


def verdict_words(verdict: str, low: Any, high: Any) -> str:
    """A verdict as the pages write it: a difference the test did not detect is 'not significant', with the
    interval of the differences the data still allow; never 'no difference', which reads as 'equal'."""
    if verdict == NO_DIFFERENCE:
        return f"not significant, delta in {interval_text(low, high)}"
    return verdict
