"""Which endpoint errors are worth retrying, and how long to wait before the next attempt.

Classification follows HTTP semantics: rate limits (429), request timeouts (408),
conflicts (409), server errors (5xx), dropped connections and client-side
timeouts are transient and retried with jittered exponential backoff, honouring
``Retry-After`` when the server sends it. Every other 4xx is the request's own
fault and would fail again, so it is final at once.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass, replace
from typing import Any, Literal, Mapping

import openai

#: What went wrong, as stored in ``Unscored.kind``.
FailureKind = Literal[
    "rate_limit", "server", "timeout", "connection", "http", "auth", "quota", "too_long",
    "refused", "length", "invalid", "format_rejected", "cancelled",
]

#: Requests in a row that fail for good on connection errors before the endpoint is deemed down.
UNREACHABLE_AFTER = 3

_RETRY_STATUSES = frozenset({408, 409, 429})
_FATAL_STATUSES = frozenset({401, 403, 404})
_FATAL_CODES = frozenset({"unsupported_parameter", "unsupported_value", "model_not_found", "invalid_api_key"})


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff timing. The number of attempts comes from ``JudgeSettings.retries``.

    ``base`` doubles per attempt up to ``cap``, with full jitter; a server's
    ``Retry-After`` wins over backoff but is clipped to ``max_retry_after`` so a
    misconfigured server cannot park a run for hours.
    """

    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 120.0
    seed: int | None = None

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Delay before retry number ``attempt`` (1-based): uniform in [ceiling/2, ceiling]."""
        ceiling = min(self.cap, self.base * (2 ** max(0, attempt - 1)))
        return ceiling * (0.5 + 0.5 * rng.random())

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(self.max_retry_after, retry_after) * (1.0 + 0.1 * rng.random())
        return self.backoff(attempt, rng)


#: Tests use this to keep fault drills fast.
FAST_POLICY = RetryPolicy(base=0.005, cap=0.05, max_retry_after=5.0)


@dataclass(frozen=True)
class Failure:
    """One failed HTTP attempt, classified."""

    kind: FailureKind
    message: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None
    #: True when every later request to this endpoint would fail the same way (bad key, unknown model).
    fatal: bool = False
    #: True when the endpoint rejected the response_format rather than the request.
    format_rejected: bool = False
    #: True when a 400/422 blames log-probabilities: a chat request asked with them is asked again without.
    logprobs_rejected: bool = False


def retry_after_seconds(headers: Mapping[str, str] | Any, now: float | None = None) -> float | None:
    """Seconds asked for by ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            value = float(raw_ms) / 1000.0
            if math.isfinite(value) and value >= 0:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        value = float(raw)
        return value if math.isfinite(value) and value >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _error_fields(exc: openai.APIStatusError) -> tuple[str, str]:
    """(code, message) from an OpenAI-style error body, tolerating other shapes."""
    body = exc.body
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        body = body["error"]
    code, message = "", ""
    if isinstance(body, Mapping):
        code = str(body.get("code") or body.get("type") or "")
        message = str(body.get("message") or body.get("detail") or "")
    elif isinstance(body, str):
        message = body
    return code, message or str(exc.message or "")


def _mentions_format(message: str, mode: str) -> bool:
    text = message.lower()
    needles = ("response_format", "response format", "json_schema", "json schema", "structured output",
               "guided_json", "grammar") if mode == "json_schema" else ("response_format", "response format", "json_object", "json mode")
    return any(n in text for n in needles)


def _connection_failure(exc: BaseException) -> str | None:
    """The refused or dropped connection behind a 'timeout', if that is what it was.

    The SDK's aiohttp transport maps every aiohttp connection error (refused,
    server disconnected) to a connect *timeout*; the causes tell them apart.
    """
    chain: list[BaseException] = []
    seen: BaseException | None = exc.__cause__ or exc.__context__
    while seen is not None and len(chain) < 8:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(e, TimeoutError) for e in chain):
        return None
    for error in chain:
        if isinstance(error, OSError) or type(error).__module__.startswith("aiohttp"):
            return f"{type(error).__name__}: {error}"
    return None


def classify(exc: BaseException, *, mode: str | None = None) -> Failure:
    """:func:`_classify`, with ``logprobs_rejected`` set on a 400 or 422 whose message names log-probabilities."""
    failure = _classify(exc, mode=mode)
    if failure.status in (400, 422) and isinstance(exc, openai.APIStatusError):
        code, message = _error_fields(exc)
        if "logprob" in f"{code} {message}".lower():
            return replace(failure, logprobs_rejected=True)
    return failure


def _classify(exc: BaseException, *, mode: str | None = None) -> Failure:
    """Sort an exception from the openai client into retry / final / fall back.

    ``mode`` is the response_format type of the failed request ("json_schema",
    "json_object" or None for plain text): a 400 that blames it, or a 422, means
    the endpoint cannot do that mode rather than that the request is wrong.
    """
    if isinstance(exc, openai.APITimeoutError) and _connection_failure(exc):
        return Failure("connection", f"connection failed ({_connection_failure(exc)})", True)
    if isinstance(exc, openai.APITimeoutError) or isinstance(exc, TimeoutError):
        return Failure("timeout", "the judge did not answer in time", True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
        return Failure("connection", f"connection failed ({detail})", True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        code, message = _error_fields(exc)
        text = f"HTTP {status}: {message}".strip().rstrip(":")
        lowered = f"{code} {message}".lower()
        if status == 429 and ("insufficient_quota" in lowered or "quota" in code.lower()):
            return Failure("quota", f"{text} (quota exhausted; retrying cannot help)", False, status, fatal=True)
        if status in _RETRY_STATUSES or status >= 500:
            kind: FailureKind = "rate_limit" if status == 429 else "server"
            return Failure(kind, text, True, status, retry_after_seconds(exc.response.headers))
        if mode is not None and (status == 422 or (status == 400 and _mentions_format(message + " " + code, mode))):
            return Failure("format_rejected", text, False, status, format_rejected=True)
        if "context_length" in lowered or "context length" in lowered or "maximum context" in lowered:
            return Failure("too_long", f"{text} (the prompt does not fit the judge's context window)", False, status)
        if "content_filter" in lowered or "content management policy" in lowered:
            return Failure("refused", f"{text} (the prompt was refused by a content filter)", False, status)
        if status == 400 and code in _FATAL_CODES and "max_completion_tokens" not in message:
            # e.g. a reasoning model refusing temperature 0: every request would fail the same way
            return Failure("http", text, False, status, fatal=True)
        if status in _FATAL_STATUSES:
            return Failure("auth" if status in (401, 403) else "http", text, False, status, fatal=True)
        return Failure("http", text, False, status)
    if isinstance(exc, openai.APIResponseValidationError):
        return Failure("server", f"malformed response from the endpoint: {exc.message}", True)
    if isinstance(exc, openai.APIError):
        return Failure("server", f"{type(exc).__name__}: {exc.message}", True)
    raise exc
