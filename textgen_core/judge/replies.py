"""What a judge exchange sends and gets back: response modes, reading reply bodies (plain JSON dicts, read
defensively: an odd shape is a classified failure, never a crash), and :class:`Unscored`.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..llm.structured import is_strict_compatible
from ..llm.retry import FailureKind

#: Response modes, from most to least constrained.
MODES = ("json_schema", "json_object", "text")
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")

SCHEMA_INSTRUCTION = (
    "Answer with JSON only: one JSON value that conforms to the JSON Schema below. "
    "No prose and no code fences.\nJSON Schema: "
)
CORRECTION = (
    "Your previous reply could not be used: {error}. Answer again with only the corrected JSON, "
    "conforming exactly to the requested schema."
)


class Unscored(Exception):
    """A judge request that failed for good, after the retry policy; the cell it serves is unscored.

    ``reason`` says why in words a user can act on. ``kind`` classifies it (see
    :data:`~textgen_core.llm.retry.FailureKind`); ``fatal`` is True when every
    further request to the endpoint would fail the same way (bad key, unknown
    model, quota exhausted), so a run can stop early. ``text`` and ``messages``
    hold the last unusable reply and what was sent, for drill-down.
    """

    def __init__(self, reason: str, *, kind: FailureKind = "http", status: int | None = None, attempts: int = 0,
                 fatal: bool = False, text: str | None = None, messages: list[dict] | None = None,
                 prompt_tokens: int = 0, completion_tokens: int = 0, latency_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.status = status
        self.attempts = attempts
        self.fatal = fatal
        self.text = text
        self.messages = messages
        #: What the failed exchange cost and took, all attempts included (the client's copy says: :meth:`but`).
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.latency_s = latency_s

    def but(self, **changes: Any) -> "Unscored":
        """A copy with some fields changed: what the client learns of a failure as it travels up (its cost, its
        time, what was sent) goes into a new exception, never into the one raised below."""
        fields = {"kind": self.kind, "status": self.status, "attempts": self.attempts, "fatal": self.fatal,
                  "text": self.text, "messages": self.messages, "prompt_tokens": self.prompt_tokens,
                  "completion_tokens": self.completion_tokens, "latency_s": self.latency_s}
        return Unscored(changes.pop("reason", self.reason), **(fields | changes))

    def __repr__(self) -> str:
        return f"Unscored({self.reason!r}, kind={self.kind!r})"


@dataclass
class JudgeReply:
    """A validated judge reply, fresh or from the cache.

    ``prompt_tokens``/``completion_tokens`` are what producing this reply cost,
    summed over re-asks; for a cached reply they are the original cost, and
    nothing was spent now (``cached`` is True; :class:`Usage` is unchanged).
    """

    value: Any
    text: str
    messages: list[dict]
    cache_key: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    attempts: int = 1
    mode: str = "json_schema"
    latency_s: float = 0.0
    #: Asked with log-probabilities: the alternatives at the asked field's value, or why there are none
    #: (:func:`~textgen_core.llm.logprobs.field_alternatives`); None when not asked.
    logprobs: Any = None


class Modes:
    """The response mode and token-limit parameter learned for one client's endpoint and model."""

    def __init__(self, pinned: str = "auto") -> None:
        self._lock = threading.Lock()
        #: A mode the settings pin is used as is, never probed or left.
        self.pinned = pinned != "auto"
        self.mode, self.confirmed = (pinned, True) if self.pinned else ("json_schema", False)
        self.tokens_param = "max_tokens"
        #: Why the endpoint refused log-probabilities (then never asked for again), or None.
        self.logprobs_refused: str | None = None

    def copy(self) -> "Modes":
        """A new object in the state learned so far (for another client: nothing is shared between them)."""
        other = Modes()
        with self._lock:
            other.pinned, other.mode, other.confirmed, other.tokens_param = (self.pinned, self.mode, self.confirmed,
                                                                             self.tokens_param)
            other.logprobs_refused = self.logprobs_refused
        return other

    def now(self) -> tuple[str, bool]:
        with self._lock:
            return self.mode, self.confirmed

    def confirm(self, mode: str) -> None:
        with self._lock:
            if self.mode == mode:
                self.confirmed = True

    def downgrade(self, mode: str) -> str | None:
        """Move past a rejected ``mode``; the new mode, or None when another request already moved on."""
        with self._lock:
            if self.mode != mode:
                return None
            self.mode, self.confirmed = MODES[MODES.index(mode) + 1], False
            return self.mode

    def refuse_logprobs(self, reason: str) -> None:
        """Remember that the endpoint refused log-probabilities: later requests do not ask for them."""
        with self._lock:
            self.logprobs_refused = self.logprobs_refused or reason

    def switch_tokens_param(self, exc: Unscored) -> bool:
        """Newer OpenAI models want max_completion_tokens instead of max_tokens; switch once."""
        with self._lock:
            if exc.status != 400 or self.tokens_param != "max_tokens" or "max_completion_tokens" not in exc.reason:
                return False
            self.tokens_param = "max_completion_tokens"
            return True


def copy_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise ValueError("judge messages must be a non-empty list of {'role', 'content'} mappings")
    copied = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ValueError(f"judge message {i} must be a mapping with 'role' and 'content'")
        copied.append(dict(message))
    return copied


def render(convo: list[dict], schema: dict, schema_name: str, mode: str, *,
           strict: bool | None = None) -> tuple[list[dict], dict | None]:
    """The messages and response_format actually sent in a given mode."""
    if mode == "json_schema":
        name = _SCHEMA_NAME.sub("_", schema_name)[:64] or "verdict"
        if strict is None:
            strict = is_strict_compatible(schema)
        return convo, {"type": "json_schema", "json_schema": {"name": name, "strict": strict, "schema": schema}}
    instruction = SCHEMA_INSTRUCTION + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    sent = [dict(m) for m in convo]
    last = sent[-1]
    if last.get("role") == "user" and isinstance(last.get("content"), str):
        last["content"] = f"{last['content']}\n\n{instruction}"
    else:
        sent.append({"role": "user", "content": instruction})
    return sent, ({"type": "json_object"} if mode == "json_object" else None)


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_of(body: Mapping[str, Any]) -> tuple[int, int, bool]:
    """(prompt tokens, completion tokens, whether the endpoint reported usage at all)."""
    usage = body.get("usage")
    if not isinstance(usage, Mapping):
        return 0, 0, False
    return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), True


def shape_problem(body: Any, field: str) -> str | None:
    """Why a 2xx body cannot be an answer (not a JSON object, or ``field`` is not a list), else None."""
    if not isinstance(body, Mapping):
        return f"the endpoint answered with a {type(body).__name__}, not a JSON object"
    if not isinstance(body.get(field), list):
        return f"the endpoint's answer has no {field!r} list"
    return None


def read_choice(body: Mapping[str, Any], max_tokens: int,
                clean: Callable[[str], str]) -> tuple[str, tuple[FailureKind, str] | None]:
    """The reply text, and (kind, reason) when the reply is final without being usable. ``clean`` (the key's
    scrub) runs on the endpoint's texts first, before anything reads, quotes or cuts them."""
    choices = body.get("choices") or []
    if not choices:
        return "", None  # no choice: treated as an invalid (empty) reply and re-asked
    choice = _dict(choices[0])
    message = _dict(choice.get("message"))
    content = message.get("content")
    text = clean(content) if isinstance(content, str) else ""
    refusal = clean(str(message.get("refusal") or ""))
    finish = choice.get("finish_reason")
    if finish == "content_filter":
        return text, ("refused", "the judge's content filter blocked the reply (finish_reason content_filter)")
    if refusal:
        return text, ("refused", f"the judge refused to answer: {refusal}")
    if finish == "length":
        loop = repeated_tail(text or "")
        if loop is not None:  # a longer limit would only buy more of the same
            return text, ("length", f"the reply repeated {loop!r} over and over until max_tokens={max_tokens} "
                                    "cut it off (the judge model loops; a larger --max-tokens will not help: try "
                                    "another model, a temperature above 0, or a smaller --max-tokens)")
        return text, ("length", f"the reply was cut off at max_tokens={max_tokens} before it was complete; "
                                "raise --max-tokens")
    return text, None


def repeated_tail(text: str, *, min_repeats: int = 4, max_period: int = 200) -> str | None:
    """The piece a reply ends by repeating (``min_repeats`` times or more in a row), or None.

    A model that loops writes one phrase again and again until the token limit; an honest long reply
    does not end in four identical copies of anything.
    """
    tail = text.rstrip()[-(max_period * (min_repeats + 1)):]
    for period in range(1, min(max_period, len(tail) // min_repeats) + 1):
        piece = tail[-period:]
        if not piece.strip():
            continue
        if tail.endswith(piece * min_repeats):
            count = min_repeats
            while tail.endswith(piece * (count + 1)):
                count += 1
            if period * count >= 24:  # "aaaa" is not a loop; a phrase written over and over is
                return piece.strip()[:60]
    return None


def _vector(raw: Any) -> list[float]:
    if isinstance(raw, str):  # base64 little-endian float32, as some servers send regardless
        data = base64.b64decode(raw)
        return list(struct.unpack(f"<{len(data) // 4}f", data[: len(data) // 4 * 4]))
    if not isinstance(raw, list):
        return []
    return [float(x) for x in raw]


def read_embeddings(body: Mapping[str, Any], expected: int) -> list[list[float]]:
    items = [_dict(d) for d in body.get("data") or []]
    items.sort(key=lambda d: d.get("index") if isinstance(d.get("index"), int) else 0)
    if len(items) != expected:
        raise Unscored(f"the endpoint returned {len(items)} embeddings for {expected} texts", kind="invalid")
    vectors = []
    for item in items:
        try:
            vector = _vector(item.get("embedding"))
        except (TypeError, ValueError, struct.error):
            vector = []
        if not vector or not all(math.isfinite(x) for x in vector):
            raise Unscored("the endpoint returned an empty or non-finite embedding", kind="invalid")
        vectors.append(vector)
    return vectors


def read_logprobs(body: Mapping[str, Any], text: str) -> list[float]:
    """Log-probabilities of the prompt tokens after the first, from an echoed /completions reply."""
    choices = body.get("choices") or []
    logprobs = _dict(_dict(choices[0]).get("logprobs")) if choices else {}
    values = list(logprobs.get("token_logprobs") or [])
    if not values:
        raise Unscored("the endpoint returned no prompt log-probabilities; it needs /v1/completions with "
                       "echo and logprobs (vLLM, llama.cpp, legacy OpenAI models)", kind="invalid")
    offsets = list(logprobs.get("text_offset") or [])
    if len(offsets) == len(values):
        n_prompt = sum(1 for offset in offsets if isinstance(offset, (int, float)) and offset < len(text))
    else:
        prompt_tokens = usage_of(body)[0]
        n_prompt = prompt_tokens if 0 < prompt_tokens <= len(values) else len(values) - 1
    prompt_values = values[:n_prompt]
    if prompt_values and prompt_values[0] is None:
        prompt_values = prompt_values[1:]
    return [float(v) for v in prompt_values
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
