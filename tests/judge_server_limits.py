"""Rate limits and Azure-style routing for the loopback judge (tests/judge_server.py).

:class:`RateLimit` enforces requests (and optionally tokens) per minute the way
a paid OpenAI tier does: every answer carries ``x-ratelimit-limit-*``,
``x-ratelimit-remaining-*`` and ``x-ratelimit-reset-*`` headers, and a request
beyond the limit is answered 429 with ``Retry-After`` (whole seconds) and
``retry-after-ms``. Capacity refills continuously (a token bucket) and holds
``burst_seconds`` worth of the per-minute rate, so 600 rpm allows about 10
requests in a burst, then one every 100 ms::

    server = JudgeServer(latency=0.05)
    server.limits = RateLimit(rpm=600, tpm=None)
    ...
    server.count(status=429)       # refused requests
    server.limits.admitted          # requests let through

:func:`azure_route` maps Azure OpenAI paths (``/openai/deployments/{name}/chat/completions``,
``/openai/batches``...) to the OpenAI ones, so one server serves both clients.
"""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import parse_qs

from judge_scripting import count_tokens, prompt_text


def reset_text(seconds: float) -> str:
    """OpenAI's duration format for reset headers: "20ms", "1.5s", "6m0s"."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    if seconds < 60:
        return f"{seconds:.3g}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.0f}s"


@dataclass
class _Bucket:
    per_minute: float
    capacity: float
    level: float
    stamp: float

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.per_minute / 60.0)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` is available (0 when it is now)."""
        missing = min(amount, self.capacity) - self.level
        return max(0.0, missing * 60.0 / self.per_minute)

    def reset_after(self) -> float:
        return (self.capacity - self.level) * 60.0 / self.per_minute


@dataclass
class Verdict:
    """The limiter's answer to one request: allowed or not, and the headers to send."""

    allowed: bool
    headers: dict[str, str] = field(default_factory=dict)
    retry_after: float = 0.0
    message: str = ""


class RateLimit:
    """Requests (and tokens) per minute, refilled continuously; thread-safe."""

    def __init__(self, rpm: int, tpm: int | None = None, *, burst_seconds: float = 1.0) -> None:
        now = time.monotonic()
        self.rpm, self.tpm = rpm, tpm
        cap = max(1.0, rpm * burst_seconds / 60.0)
        self._requests = _Bucket(rpm, cap, cap, now)
        self._tokens = None
        if tpm is not None:
            tcap = max(1.0, tpm * burst_seconds / 60.0)
            self._tokens = _Bucket(tpm, tcap, tcap, now)
        self._lock = threading.Lock()
        self.admitted = 0
        self.refused = 0
        self.first_admitted: float | None = None
        self.last_admitted: float | None = None

    @staticmethod
    def request_tokens(body: Mapping[str, Any]) -> int:
        """Tokens a request counts against the limit: its prompt plus the reply it may get (as OpenAI counts)."""
        reply = body.get("max_completion_tokens") or body.get("max_tokens") or 0
        text = prompt_text(body) if "messages" in body else str(body.get("input") or body.get("prompt") or "")
        return max(1, count_tokens(text)) + int(reply)

    def admit(self, body: Mapping[str, Any]) -> Verdict:
        tokens = self.request_tokens(body)
        with self._lock:
            now = time.monotonic()
            self._requests.refill(now)
            wait = self._requests.wait_for(1)
            what = "requests"
            if self._tokens is not None:
                self._tokens.refill(now)
                token_wait = self._tokens.wait_for(tokens)
                if token_wait > wait:
                    wait, what = token_wait, "tokens"
            allowed = wait <= 0
            if allowed:
                self._requests.level -= 1
                if self._tokens is not None:
                    self._tokens.level -= min(tokens, self._tokens.capacity)
                self.admitted += 1
                self.first_admitted = self.first_admitted or now
                self.last_admitted = now
            else:
                self.refused += 1
            headers = self._headers()
        verdict = Verdict(allowed, headers)
        if not allowed:
            verdict.retry_after = wait
            verdict.headers = {**headers, "Retry-After": str(max(1, math.ceil(wait))),
                               "retry-after-ms": str(max(1, math.ceil(wait * 1000)))}
            limit = self.rpm if what == "requests" else self.tpm
            verdict.message = (f"Rate limit reached for judge-test on {what} per min (RPM/TPM): "
                               f"Limit {limit}. Please try again in {reset_text(wait)}.")
        return verdict

    def _headers(self) -> dict[str, str]:
        headers = {
            "x-ratelimit-limit-requests": str(self.rpm),
            "x-ratelimit-remaining-requests": str(max(0, int(self._requests.level))),
            "x-ratelimit-reset-requests": reset_text(self._requests.reset_after()),
        }
        if self._tokens is not None:
            headers.update({
                "x-ratelimit-limit-tokens": str(self.tpm),
                "x-ratelimit-remaining-tokens": str(max(0, int(self._tokens.level))),
                "x-ratelimit-reset-tokens": reset_text(self._tokens.reset_after()),
            })
        return headers

    def achieved_rpm(self) -> float:
        """Admitted requests per minute between the first and the last admitted one."""
        if not self.first_admitted or not self.last_admitted or self.last_admitted <= self.first_admitted:
            return 0.0
        return (self.admitted - 1) * 60.0 / (self.last_admitted - self.first_admitted)


_AZURE = re.compile(r"^/openai(?:/deployments/(?P<deployment>[^/]+))?(?P<rest>/.*)$")


@dataclass(frozen=True)
class Route:
    """A request path as the OpenAI API names it, with what Azure added to it."""

    path: str
    deployment: str | None = None
    api_version: str | None = None


def azure_route(raw_path: str) -> Route:
    """``/openai/deployments/d/chat/completions?api-version=v`` -> Route("/v1/chat/completions", "d", "v")."""
    path, _, query = raw_path.partition("?")
    versions = parse_qs(query).get("api-version")
    version = versions[0] if versions else None
    match = _AZURE.match(path)
    if match is None:
        return Route(path.rstrip("/"), None, version)
    return Route("/v1" + match.group("rest").rstrip("/"), match.group("deployment"), version)
