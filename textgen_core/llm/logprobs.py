"""Token log-probabilities of a chat reply, read at one JSON field's value (what a G-Eval rating weighs).

An endpoint asked with ``logprobs`` and ``top_logprobs`` returns, for every token of the reply, the token,
its log-probability and the most likely alternatives at that place. :func:`field_alternatives` finds the
token where a field's number begins (``"score": 4``) and keeps only what a weighting needs there: the
chosen token and the alternatives with finite log-probabilities. Anything it cannot read is a reason in
words, never an exception: the caller falls back to the rating the judge wrote.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

#: Alternatives asked for at every token (the most OpenAI's chat API allows; vLLM's default maximum too).
TOP_LOGPROBS = 20

#: A log-probability above 0 is a probability above 1: within this rounding slack it is read as 0.
_SLACK = 1e-9
_LEAD = re.compile(r'^[\s:"]*$')
_DIGITS = re.compile(r"\d+")


def content_logprobs(body: Mapping[str, Any]) -> list[Any] | None:
    """``choices[0].logprobs.content`` of a chat completion, or None when the endpoint sent none."""
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) else {}
    logprobs = first.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    return content if isinstance(content, list) and content else None


def _logprob(raw: Any) -> float | None:
    """A usable log-probability (-inf included: probability 0), or None for NaN, text or a value above 0."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    value = float(raw)
    if math.isnan(value) or value > _SLACK:
        return None
    return min(value, 0.0)


def _token(raw: Any) -> str | None:
    if isinstance(raw, Mapping) and isinstance(raw.get("token"), str):
        return raw["token"]
    return None


def _value_start(text: str, field: str) -> int | None:
    """Where the value of the last unescaped ``"field":`` key of ``text`` begins (after spaces and a quote)."""
    found = None
    for match in re.finditer(r'(?<!\\)"' + re.escape(field) + r'"\s*:\s*"?', text):
        found = match.end()
    return found


def field_alternatives(content: list[Any], field: str) -> dict[str, Any] | str:
    """The alternatives at the first token of ``field``'s number in a reply, or why they cannot be read.

    Returns ``{"value": "4", "token": " 4", "logprob": -0.1, "top": [[token, logprob], ...], "ignored": n}``:
    the number as written, the token that begins it, and the alternatives there (``ignored`` counts those
    without a usable log-probability: NaN, not a number, above 0; -inf is kept as a probability of 0 and
    written as None, since JSON has no infinity). A number written across several tokens ("1", "0" for 10)
    is refused: the alternatives at its first token are not alternatives to the whole number.
    """
    tokens = [_token(item) for item in content]
    if any(t is None for t in tokens):
        return "the endpoint's log-probabilities name no token at some place of the reply"
    text = "".join(tokens)  # type: ignore[arg-type]
    start = _value_start(text, field)
    if start is None:
        return f"the tokens of the reply hold no {field!r} field"
    number = _DIGITS.match(text, start)
    if number is None:
        return f"the {field!r} value in the reply's tokens is not a whole number"
    offset = 0
    for index, token in enumerate(tokens):
        end = offset + len(token)  # type: ignore[arg-type]
        if offset <= start < end:
            break
        offset = end
    else:
        return f"no token of the reply holds its {field!r} value"
    token = str(tokens[index])
    before, inside = token[:start - offset], token[start - offset:]
    if not _LEAD.match(before):
        return f"the rating shares its token {token!r} with other text of the reply"
    digits = _DIGITS.match(inside)
    if digits is None or digits.group() != number.group():
        pieces = []
        covered = offset
        for piece in tokens[index:]:
            pieces.append(piece)
            covered += len(piece)  # type: ignore[arg-type]
            if covered >= number.end():
                break
        return (f"the rating {number.group()} is written across {len(pieces)} tokens "
                f"({', '.join(repr(p) for p in pieces)}); the alternatives at its first token are not "
                "alternatives to the whole rating")
    item = content[index]
    top, ignored = [], 0
    raw_top = item.get("top_logprobs")
    for alternative in raw_top if isinstance(raw_top, list) else []:
        name, value = _token(alternative), _logprob(alternative.get("logprob") if isinstance(alternative, Mapping)
                                                    else None)
        if name is None or value is None:
            ignored += 1
            continue
        top.append([name, None if value == -math.inf else value])
    chosen = _logprob(item.get("logprob"))
    return {"value": number.group(), "token": token,
            "logprob": None if chosen is None or chosen == -math.inf else chosen, "top": top, "ignored": ignored}
