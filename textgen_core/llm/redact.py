"""The one scrub between an endpoint and anything stored, shown, logged or sent back: the API key goes.

Every text that came from the endpoint (a reply, error messages, batch error lines, a failed batch's
errors, a refused upload, a reply quoted in a re-ask) passes through :func:`scrub` with the client's key
before it is parsed, cut short or leaves the judge client. Besides the whole key, any run of
:data:`MIN_PIECE` or more of its characters goes too: a text cut short (by the endpoint at its token
limit, or by a message that quotes the start of a reply) may end inside the key, and a piece of a key is
a secret as well.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

REDACTED = "[redacted]"
#: Keys shorter than this are not scrubbed (a 1-3 character "key" would redact ordinary words).
MIN_KEY = 4
#: Characters of the key in a row that are removed wherever they appear (keys longer than this).
MIN_PIECE = 8


def scrub(text: str | None, key: str | None) -> str:
    """``text`` without ``key`` and without any run of :data:`MIN_PIECE` of its characters (empty stays empty)."""
    if not text:
        return text or ""
    text = str(text)
    if not key or len(key) < MIN_KEY:
        return text
    if key in text:
        text = text.replace(key, REDACTED)
    if len(key) > MIN_PIECE:
        spans = _pieces(text, key)
        for start, end in reversed(spans):
            text = text[:start] + REDACTED + text[end:]
    return text


@lru_cache(maxsize=16)
def _runs(key: str) -> "re.Pattern[str]":
    """Runs of MIN_PIECE or more characters that all occur in ``key``: the only places a piece of it can be."""
    return re.compile("[" + "".join(re.escape(c) for c in sorted(set(key))) + "]{%d,}" % MIN_PIECE)


def _pieces(text: str, key: str) -> list[tuple[int, int]]:
    """(start, end) of the runs of at least MIN_PIECE characters of ``key`` in ``text``, left to right."""
    spans: list[tuple[int, int]] = []
    for found in _runs(key).finditer(text):  # one scan in C; words of ordinary text rarely qualify
        run, base, i = found.group(), found.start(), 0
        while i <= len(run) - MIN_PIECE:
            if run[i:i + MIN_PIECE] not in key:
                i += 1
                continue
            end = i + MIN_PIECE
            while end < len(run) and run[i:end + 1] in key:
                end += 1
            spans.append((base + i, base + end))
            i = end
    return spans


def scrub_value(value: Any, key: str | None) -> Any:
    """A copy of a JSON value with ``key`` removed from every string in it (keys of objects included)."""
    if isinstance(value, str):
        return scrub(value, key)
    if isinstance(value, list):
        return [scrub_value(v, key) for v in value]
    if isinstance(value, dict):
        return {scrub(str(k), key): scrub_value(v, key) for k, v in value.items()}
    return value
