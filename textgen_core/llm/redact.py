"""The one scrub between an endpoint and anything stored, shown, logged or sent back: the API key goes.

Every text that came from the endpoint (error messages, batch error lines, a
failed batch's errors, a refused upload, a reply quoted in a re-ask) passes
through :func:`scrub` with the client's key before it leaves the judge client.
"""

from __future__ import annotations

from typing import Any

REDACTED = "[redacted]"
#: Keys shorter than this are not scrubbed (a 1-3 character "key" would redact ordinary words).
MIN_KEY = 4


def scrub(text: str | None, key: str | None) -> str:
    """``text`` without ``key`` (empty text stays empty)."""
    if not text:
        return text or ""
    text = str(text)
    if key and len(key) >= MIN_KEY and key in text:
        text = text.replace(key, REDACTED)
    return text


def scrub_value(value: Any, key: str | None) -> Any:
    """A copy of a JSON value with ``key`` removed from every string in it (keys of objects included)."""
    if isinstance(value, str):
        return scrub(value, key)
    if isinstance(value, list):
        return [scrub_value(v, key) for v in value]
    if isinstance(value, dict):
        return {scrub(str(k), key): scrub_value(v, key) for k, v in value.items()}
    return value
