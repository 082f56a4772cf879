"""HTTP to the judge endpoint: one ``openai`` async client per event loop, the process's limiter of the
endpoint and model, classified retries with jittered backoff. A 429 is waited out (its Retry-After pauses
every request to the endpoint) without spending the retry budget.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

import openai

from ..llm.accounting import Meter
from .once import Once
from ..llm.endpoint import async_openai
from .replies import Unscored, shape_problem
from .prompting import prompt_bound
from ..llm.ratelimit import limiter_for
from ..llm.redact import scrub
from ..llm.retry import UNREACHABLE_AFTER, Failure, RetryPolicy, classify
from .settings import JudgeSettings

log = logging.getLogger("textgen_core.judge")

#: Failed attempts the endpoint may still bill (it received the request): counted as calls, at an upper
#: estimate of their cost, by the run's spending cap. A refused connection is not among them.
BILLED_FAILURES = frozenset({"timeout", "server", "rate_limit"})

try:
    from httpx2 import Response as _RESPONSE  # the SDK's HTTP library from openai 3
except ImportError:  # pragma: no cover - openai 1.x and 2.x use httpx
    from httpx import Response as _RESPONSE  # type: ignore[assignment]

#: Seconds one request keeps waiting out 429s before it counts them against its retries.
MAX_RATE_LIMIT_WAIT = 600.0


async def _send(api: openai.AsyncOpenAI, path: str, payload: dict) -> tuple[Any, Any]:
    """POST a plain JSON body; the reply's JSON and headers. The SDK still authenticates, pools and maps
    errors; skipping its typed transform saves about 6 ms of CPU per call (bench/judge.py)."""
    response = await api.post(path, body=payload, cast_to=_RESPONSE)
    return response.json(), response.headers


def _token_estimate(payload: dict, max_tokens: int) -> int:
    """Tokens a request may count against a tokens-per-minute limit: its prompt bound plus the longest reply."""
    return prompt_bound(payload) + (max_tokens if "messages" in payload else 0)


class Admitted(Protocol):
    """One request admitted by a spending cap, until it is over (:class:`~.budget.Hold`)."""

    def release(self, reply: Any = None, *, billed: bool = True, cut_off: bool = False) -> None: ...


class Admission(Protocol):
    """A run's spending cap (:class:`~.budget.SpendingCap`): admits each billed request, or raises."""

    def admit(self, payload: Mapping[str, Any]) -> Admitted: ...


class BatchRoute(Protocol):
    """Where batch mode sends chat requests (:class:`~.batch.Batcher`)."""

    def takes(self, body: Mapping[str, Any]) -> bool: ...
    async def post(self, body: Mapping[str, Any], budget: Any, *, mode: str | None = None) -> dict | None: ...


class FormatRejected(Exception):
    """The endpoint rejected the response_format of the request (not the request itself)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class LogprobsRejected(Exception):
    """The endpoint rejected the log-probabilities a chat request asked for (not the request itself)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class Budget:
    """Attempts made, and retries left for transient failures, within one client method call."""

    def __init__(self, retries: int) -> None:
        self.transient_left = retries
        self.attempts = 0

    def attempt(self) -> None:
        self.attempts += 1

    def retry(self) -> bool:
        """Take one retry; False when none is left."""
        if self.transient_left <= 0:
            return False
        self.transient_left -= 1
        return True


@dataclass
class LoopState:
    """Resources bound to one event loop (asyncio primitives and HTTP pools cannot cross loops)."""

    api: openai.AsyncOpenAI
    probe: asyncio.Lock
    #: Identical asks in flight on this loop: one is sent (see :class:`~.once.Once`).
    once: Once = field(default_factory=lambda: Once(remember=False, share_failure=False))


@functools.lru_cache(maxsize=1)
def _tls_context(httpx: Any) -> Any:
    """The process's TLS context for judge endpoints, made once: each new one reads the system's CA
    certificates (about 0.1-0.3 s), and a client is built per run and per event loop."""
    make = getattr(httpx, "create_ssl_context", None)  # the SDK's default context: verified, SSL_CERT_FILE/DIR
    return make() if make is not None else True  # True: older httpx makes its own per client


def _http_client(concurrency: int) -> Any:
    """An HTTP client for the SDK whose keep-alive pool holds one connection per concurrency slot."""
    try:
        import httpx2 as httpx  # the SDK's HTTP library from openai 3
    except ImportError:  # pragma: no cover - openai 1.x and 2.x use httpx
        import httpx  # type: ignore[no-redef]
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=max(concurrency, 20))
    verify = _tls_context(httpx)
    if hasattr(openai, "DefaultAioHttpClient"):  # the SDK's aiohttp transport (aiohttp is a dependency)
        try:
            return openai.DefaultAioHttpClient(limits=limits, verify=verify)
        except RuntimeError:  # the SDK found no usable aiohttp after all
            pass
    return openai.DefaultAsyncHttpxClient(limits=limits, verify=verify)


class DirectTransport:
    """Sends requests over HTTP under the process's limiter with classified retries, a shared pause and
    fail-fast; each billed attempt first admitted by the run's spending cap (``cap``), when it has one."""

    def __init__(self, settings: JudgeSettings, policy: RetryPolicy, meter: Meter, *,
                 cap: Admission | None = None) -> None:
        self.settings = settings
        self.policy = policy
        self.meter = meter
        self._rng = random.Random(policy.seed)
        self._lock = threading.Lock()
        self._states: dict[asyncio.AbstractEventLoop, LoopState] = {}
        self._fatal: dict[str, Unscored] = {}
        #: Concurrency, pacing and pauses, shared by every client of this endpoint and model in the process.
        self.limiter = limiter_for(settings.endpoint, settings.model, settings.concurrency, settings.rpm, settings.tpm)
        self._unreachable = 0  # requests in a row that failed for good on connection errors
        self.cap = cap

    def fatal_reasons(self) -> list[str]:
        """Why requests stopped for good (bad key, unknown model, quota...); empty while all is well."""
        with self._lock:
            return [error.reason for error in self._fatal.values()]

    # -- per-loop resources -----------------------------------------------------------
    def state(self) -> LoopState:
        loop = asyncio.get_running_loop()
        with self._lock:
            state = self._states.get(loop)
            if state is None:
                self._forget_closed_loops()
                api = async_openai(self.settings, http_client=_http_client(self.settings.concurrency))
                state = LoopState(api, asyncio.Lock())
                self._states[loop] = state
            return state

    async def aclose(self) -> None:
        """Close the HTTP pool of the running loop and forget those of closed loops."""
        loop = asyncio.get_running_loop()
        with self._lock:
            state = self._states.pop(loop, None)
            self._forget_closed_loops()
        if state is not None:
            await state.api.close()

    def _forget_closed_loops(self) -> None:
        for loop in [lp for lp in self._states if lp.is_closed()]:
            del self._states[loop]

    # -- one request with the retry policy ----------------------------------------------
    async def post(self, state: LoopState, op: str, path: str, budget: Budget, body: Callable[[], dict], *,
                   field_name: str, mode: Callable[[], str | None] | None = None, tokens: int | None = None) -> dict:
        """POST ``body()`` (rendered once a slot is ours) to ``path``, retrying transient failures; the reply
        must be an object with a list under ``field_name``. ``mode``: the response mode the attempt used, to
        tell a 400 blaming the format; ``tokens``: what the request may count against a tokens-per-minute
        limit (default: estimated from the body). Raises :class:`Unscored` when final, :class:`FormatRejected`."""
        guard_timeout = self.settings.timeout * 2 + 1.0
        limited_since: float | None = None  # first 429 of this request: rate limits are waited out
        while True:
            if self._fatal:
                self._raise_if_fatal(op)
            permit = await self.limiter.acquire(tokens if tokens is not None
                                                else _token_estimate(body(), self.settings.max_tokens))
            if permit.paced_s:  # held by pacing or a Retry-After pause
                self.meter.bump(waited_s=permit.paced_s)
            payload = body()  # rendered once a slot is ours: a response mode learned meanwhile applies
            hold = None
            status: int | None = None
            headers: Any = None
            failure: Failure | None = None
            result: Any = None
            sent_at = time.monotonic()
            try:
                if self._fatal:  # a bad key may have been found while we waited
                    self._raise_if_fatal(op)
                hold = self.cap.admit(payload) if self.cap is not None else None
                self.meter.bump(in_flight=1)
                budget.attempts += 1
                sent_at = time.monotonic()
                try:
                    result, headers = await asyncio.wait_for(_send(state.api, path, payload), guard_timeout)
                    status = 200
                except (openai.OpenAIError, TimeoutError) as exc:
                    used_mode = mode() if mode is not None else None
                    failure = classify(exc, mode=None if used_mode in (None, "text") else used_mode)
                    response = getattr(exc, "response", None)
                    status, headers = getattr(exc, "status_code", None), getattr(response, "headers", None)
                except ValueError as exc:  # a JSON content type with a body that is not JSON
                    failure = Failure("server", f"malformed response from the endpoint: {exc}", True)
                finally:
                    self.meter.bump(in_flight=-1)
            finally:
                billed = failure is None or failure.kind in BILLED_FAILURES
                if failure is not None and billed:  # the endpoint may have billed it: a call for the caps too,
                    self.meter.bump(calls=1, unanswered=1,  # at an upper estimate of its cost (as the cap holds it)
                                    unanswered_prompt_tokens=prompt_bound(payload),
                                    unanswered_completion_tokens=self.settings.max_tokens
                                    if failure.kind == "timeout" else 0)
                if hold is not None:
                    hold.release(result, billed=billed, cut_off=failure is not None and failure.kind == "timeout")
                retry_after = failure.retry_after if failure is not None else None
                self.limiter.release(permit, status=status, headers=headers, retry_after=None if retry_after is None
                                     else self.policy.delay(budget.attempts, self._rng, retry_after),
                                     timed_out=failure is not None and failure.kind == "timeout",
                                     slow=time.monotonic() - sent_at > self.settings.timeout / 2)
            if failure is None:
                problem = shape_problem(result, field_name)
                if problem is not None:
                    failure = Failure("server", problem, True)
            if failure is None:
                self._unreachable = 0
                return result
            if failure.logprobs_rejected and op == "chat":
                raise LogprobsRejected(failure)
            if failure.format_rejected:
                raise FormatRejected(failure)
            if failure.kind == "rate_limit":  # never a lost cell: wait it out, up to MAX_RATE_LIMIT_WAIT
                self.meter.bump(rate_limited=1, retries=1)
                limited_since = limited_since or time.monotonic()
                if time.monotonic() - limited_since < MAX_RATE_LIMIT_WAIT:
                    if failure.retry_after is None:  # no Retry-After: back off (the limiter has cut concurrency)
                        await asyncio.sleep(self.policy.delay(budget.attempts, self._rng, None))
                    continue
            if not failure.retryable or not budget.retry():
                raise self._final(op, failure, budget)
            self.meter.bump(retries=1)
            delay = self.policy.delay(budget.attempts, self._rng, failure.retry_after)
            log.info("judge %s attempt %d failed (%s); retrying in %.2f s", op, budget.attempts,
                     self.scrub(failure.message), delay)
            await asyncio.sleep(delay)

    def _raise_if_fatal(self, op: str) -> None:
        known = self._fatal.get(op)
        if known is not None:  # a fresh exception each time: tracebacks must not pile up on one object
            raise Unscored(known.reason, kind=known.kind, status=known.status, fatal=True)

    def _final(self, op: str, failure: Failure, budget: Budget) -> Unscored:
        message = failure.message
        if failure.kind == "timeout":
            message = f"the judge did not answer within {self.settings.timeout:g} s"
        if failure.retryable:
            message += f" (gave up after {budget.attempts} attempt{'s' if budget.attempts != 1 else ''})"
        fatal = failure.fatal
        with self._lock:
            self._unreachable = self._unreachable + 1 if failure.kind == "connection" else 0
            if self._unreachable >= UNREACHABLE_AFTER:
                fatal = True
                message = f"the judge endpoint is unreachable: {message}"
        error = Unscored(self.scrub(message), kind=failure.kind, status=failure.status,
                         attempts=budget.attempts, fatal=fatal)
        if fatal:
            with self._lock:
                first = op not in self._fatal
                self._fatal.setdefault(op, error)
            if first:
                log.error("judge %s failed for good: %s; further %s requests are not sent", op, error.reason, op)
        return error

    def scrub(self, text: str | None) -> str:
        """Remove the API key from any text that may be shown, logged or stored (see :mod:`textgen_core.llm.redact`)."""
        return scrub(text, self.settings.api_key)


class BatchTransport(DirectTransport):
    """Batch mode: chat requests go into batch rounds (``batcher``, a :class:`~.batch.Batcher`), each admitted
    by the cap as a direct request is; the rest (embeddings, log-probabilities, and a line of a taken-over
    batch that failed) go over HTTP."""

    def __init__(self, settings: JudgeSettings, policy: RetryPolicy, meter: Meter, batcher: BatchRoute, *,
                 cap: Admission | None = None) -> None:
        super().__init__(settings, policy, meter, cap=cap)
        self.batcher = batcher

    async def post(self, state: LoopState, op: str, path: str, budget: Budget, body: Callable[[], dict], *,
                   field_name: str, mode: Callable[[], str | None] | None = None, tokens: int | None = None) -> dict:
        if op == "chat" and self.batcher.takes(payload := body()):
            hold = self.cap.admit(payload) if self.cap is not None else None
            result: Any = None
            try:
                result = await self.batcher.post(payload, budget, mode=mode() if mode is not None else None)
            finally:
                if hold is not None:  # a line the batch did not answer is not billed
                    hold.release(result, billed=result is not None)
            if result is not None:
                return result  # None: a taken-over batch failed this line; it is sent directly
        return await super().post(state, op, path, budget, body, field_name=field_name, mode=mode, tokens=tokens)


#: A judge client's transport, chosen when the client is built.
Transport = DirectTransport | BatchTransport
