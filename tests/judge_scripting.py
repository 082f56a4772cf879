"""What the loopback judge serves: paths, faults, scripted replies, request records and helpers.

Split from judge_server.py (the HTTP server itself); ``judge_server`` re-exports every name here.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
EMBEDDINGS = "/v1/embeddings"


@dataclass(frozen=True)
class Fault:
    """One misbehaviour. Build with the class methods; ``kind`` names it in records."""

    kind: str
    status: int = 200
    message: str = ""
    code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    content: str | None = None

    @classmethod
    def rate_limit(cls, retry_after: str | float | None = None, retry_after_ms: int | None = None,
                   code: str = "rate_limit_exceeded") -> "Fault":
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        if retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        return cls("429", 429, "Rate limit reached for requests", code, headers)

    @classmethod
    def http(cls, status: int, message: str = "", code: str | None = None) -> "Fault":
        """Any HTTP error status with an OpenAI-style error body."""
        return cls(str(status), status, message or f"simulated HTTP {status}", code)

    @classmethod
    def reject_json_schema(cls) -> "Fault":
        return cls.http(400, "response_format type 'json_schema' is not supported by this server",
                          "unsupported_response_format")

    @classmethod
    def hang(cls, seconds: float = 30.0) -> "Fault":
        """Answer nothing for ``seconds`` (longer than the client's timeout), then a normal reply."""
        return cls("hang", seconds=seconds)

    @classmethod
    def malformed(cls, content: str = '{"verdicts": [{"verdict": "yes",') -> "Fault":
        """A 200 reply whose content is not valid JSON."""
        return cls("malformed", content=content)

    @classmethod
    def length(cls, content: str = '{"verdicts": [{"verdict": "ye') -> "Fault":
        """A reply cut off by max_tokens (finish_reason "length")."""
        return cls("length", content=content)

    @classmethod
    def content_filter(cls) -> "Fault":
        """finish_reason "content_filter" with no content."""
        return cls("content_filter")

    @classmethod
    def refusal(cls, text: str = "I'm sorry, I cannot help with that.") -> "Fault":
        """A structured-output refusal: ``message.refusal`` set, content null."""
        return cls("refusal", content=text)

    @classmethod
    def drop(cls) -> "Fault":
        """Close the connection without answering."""
        return cls("drop")

    @classmethod
    def bad_body(cls) -> "Fault":
        """A 200 whose body is not JSON at all."""
        return cls("bad_body")


#: Faults drawn at random when ``fault_rate`` > 0 and no ``fault_kinds`` are given: all transient.
TRANSIENT_FAULTS: tuple[Fault, ...] = (
    Fault.rate_limit(retry_after_ms=5), Fault.http(500), Fault.http(502), Fault.http(503),
    Fault.http(408), Fault.drop(),
)


@dataclass
class Reply:
    """A chat reply with control over everything the client reads."""

    content: str | None
    finish_reason: str = "stop"
    refusal: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    usage: bool = True
    #: ``choices[0].logprobs.content`` (see tests/judge_logprobs.py), sent when the request asks for logprobs.
    logprobs: list | None = None


@dataclass
class Recorded:
    """One request as the server saw it."""

    path: str
    body: Any
    headers: dict[str, str]
    started: float
    ended: float = 0.0
    status: int = 0
    fault: str | None = None
    reply: str | None = None
    #: The path as sent, with Azure's deployment and api-version (judge_server_limits.Route).
    route: Any = None

    @property
    def messages(self) -> list[dict]:
        return list((self.body or {}).get("messages") or [])

    @property
    def response_format(self) -> str | None:
        fmt = (self.body or {}).get("response_format")
        return fmt.get("type") if isinstance(fmt, dict) else None

    @property
    def prompt_text(self) -> str:
        """All message contents joined: what a responder usually inspects."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages)


Responder = Callable[[dict], Any]


def prompt_text(request: Mapping[str, Any]) -> str:
    """All message contents of a chat request, joined (for responders)."""
    return "\n".join(_content_text(m.get("content")) for m in request.get("messages") or [])


def last_user_text(request: Mapping[str, Any]) -> str:
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


_SCHEMA_IN_PROMPT = re.compile(r"JSON Schema: (\{.*\})\s*$", re.DOTALL)


def request_schema(request: Mapping[str, Any]) -> dict | None:
    """The JSON schema of a chat request: from response_format json_schema, else from the
    schema instruction textgen's client appends in json_object and text modes."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    found = _SCHEMA_IN_PROMPT.search(last_user_text(request))
    if found:
        try:
            return json.loads(found.group(1))
        except ValueError:
            return None
    return None


def example_for(schema: Mapping[str, Any] | None) -> Any:
    """A small value satisfying ``schema`` (first enum value, minimum items, lower bounds)."""
    if not schema:
        return {}
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("anyOf"):
        return example_for(schema["anyOf"][0])
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {name: example_for(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [example_for(schema.get("items")) for _ in range(schema.get("minItems", 1))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        value = schema.get("minimum", 0)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    return None


_FENCED = re.compile(r"(?m)^([^\n:]+):\n(~{3,})\n(.*?)\n\2$", re.DOTALL)


def schema_reply(request: Mapping[str, Any]) -> Any:
    """A reply of the request's schema where every keyed verdict list rules on each numbered item once
    (a list under field F covers the fenced block labelled F; 'verdicts' the passages, or the one list)."""
    value = example_for(request_schema(request))
    if not isinstance(value, dict):
        return value
    blocks = {m.group(1).strip().lower().replace(" ", "_"): m.group(3) for m in _FENCED.finditer(last_user_text(request))}
    lists = {k: len(re.findall(r"(?m)^\d+\. ", v)) for k, v in blocks.items()}
    passages = sum(1 for k in blocks if k.startswith("passage_"))
    for name, rows in value.items():
        if isinstance(rows, list) and rows and isinstance(rows[0], dict) and "item" in rows[0]:
            count = lists.get(name) or passages or max(lists.values(), default=1)
            value[name] = [dict(rows[0], item=i) for i in range(1, count + 1)]
    return value


def count_tokens(text: str) -> int:
    """The server's notion of tokens: whitespace-separated words (at least 1 for non-empty text)."""
    return len(text.split())


def default_embed(text: str, dim: int = 8) -> list[float]:
    """A unit vector derived from the text's sha256: equal texts, equal vectors."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = [(b - 127.5) / 127.5 for b in digest[:dim]]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


def default_logprob(token: str) -> float:
    """Longer words are less likely: -0.1 per character, minus 0.05."""
    return -0.05 - 0.1 * len(token.strip())


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""
