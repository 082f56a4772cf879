"""Shared pieces of every judge prompt: the request record, strict schemas, text blocks."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

#: Rough size of one extracted statement or opinion in a reply, in tokens (estimates only).
TOKENS_PER_EXTRACTED = 22
#: Rough size of one verdict item (echoed item, reason, label), in tokens (estimates only).
TOKENS_PER_VERDICT = 40
#: Rough size of a single rating or grade reply, in tokens (estimates only).
TOKENS_PER_RATING = 70


@dataclass(frozen=True, eq=False)
class Request:
    """One judge exchange, fully rendered: what the client sends and how to read the reply."""

    step: str
    version: str
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    #: A reply of the right shape, used by the estimate when the real reply is not known yet.
    placeholder: dict[str, Any] = field(repr=False)
    #: Expected completion size, for the token estimate.
    reply_tokens: int = 0

    @property
    def identity(self) -> tuple[str, ...]:
        """A cheap in-process identity (step, version, message texts): the schema follows from them."""
        return (self.step, self.version, *(m["content"] for m in self.messages))

    @property
    def key(self) -> str:
        """Identity of the exchange: identical keys are asked once per datum."""
        blob = json.dumps([self.step, self.version, list(self.messages), self.schema], sort_keys=True,
                          ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def prompt_chars(self) -> int:
        """Characters sent: the messages plus the schema (its size depends on the step only)."""
        size = _SCHEMA_CHARS.get(self.step)
        if size is None:
            size = _SCHEMA_CHARS[self.step] = len(json.dumps(self.schema))
        return sum(len(m["content"]) for m in self.messages) + size


_SCHEMA_CHARS: dict[str, int] = {}


def strict_object(properties: dict[str, Any]) -> dict[str, Any]:
    """A strict-mode object schema: every property required, nothing else allowed."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


STRING = {"type": "string"}


def labels(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def exact_array(item: dict[str, Any], count: int) -> dict[str, Any]:
    """An array that must hold exactly ``count`` items (one per judged item)."""
    return {"type": "array", "items": item, "minItems": count, "maxItems": count}


def free_array(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


def messages(system: str, user: str) -> tuple[dict[str, str], ...]:
    return ({"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()})


def block(tag: str, text: str) -> str:
    """A tagged block of input text; the tags tell the judge where each input starts and ends."""
    return f"<{tag}>\n{text.strip()}\n</{tag}>"


def numbered(tag: str, items: Sequence[str]) -> str:
    """A tagged, 1-based numbered list (statements, opinions)."""
    body = "\n".join(f"{i}. {' '.join(item.split())}" for i, item in enumerate(items, start=1))
    return block(tag, body or "(none)")


def passages(items: Sequence[str]) -> str:
    """Retrieved contexts as numbered passages, in retrieval order."""
    body = "\n\n".join(f"[{i}]\n{item.strip()}" for i, item in enumerate(items, start=1))
    return block("passages", body)


def guess_units(text: str | None) -> int:
    """About how many statements a text holds (one per sentence, at least one); estimates only."""
    if not text or not text.strip():
        return 0
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]
    return max(1, len(sentences))


def placeholder_items(count: int, **fields: Any) -> list[dict[str, Any]]:
    return [dict(fields) for _ in range(count)]
