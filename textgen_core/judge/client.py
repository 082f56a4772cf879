"""The judge client: one place for retries, concurrency, structured output, cache and token accounting.

Every judge request of textgen-eval goes through :class:`JudgeClient`:

* **Structured output.** Each ask sends the response schema as
  ``response_format: json_schema``. An endpoint that rejects it (a 400 blaming
  the response format, or a 422) is asked again with ``json_object`` and the
  schema written into the prompt, then with plain text; the mode that works is
  remembered for the client's lifetime, so the rejection is paid once.
* **Validation.** A reply is read tolerantly (code fences, text around the JSON)
  and validated against the schema. An invalid reply is re-asked with the error
  spelled out, up to ``retries`` times; after that the ask raises
  :class:`Unscored` with the reason. A failure is never a 0.
* **Retries.** 429 (honouring Retry-After), 408, 409, 5xx, timeouts and dropped
  connections are retried with jittered exponential backoff; other 4xx are final.
  A reply cut off at ``max_tokens`` or refused by a content filter is final.
* **Concurrency.** One semaphore per endpoint and model bounds requests in flight.
* **Cache.** Validated replies are stored under a key of what changes the answer
  (see :mod:`textgen_core.judge.cache`); a hit makes no HTTP request.
* **Accounting.** Tokens from each reply's usage are summed in :class:`Usage`;
  :meth:`JudgeClient.cost` prices them.

The API key is handed to the ``openai`` client and nowhere else: it is not in any
repr, stored row, log line or error message (error text is scrubbed of it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import random
import re
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import openai
from openai.types import Completion, CreateEmbeddingResponse
from openai.types.chat import ChatCompletion

from . import schema_check
from .cache import CacheEntry, MemoryCache, ReplyCache, StoreCache, chat_key, embedding_key, logprobs_key
from .retry import Failure, FailureKind, RetryPolicy, classify
from .settings import JudgeSettings

if TYPE_CHECKING:
    from ..store import Store

log = logging.getLogger("textgen_core.judge")
T = TypeVar("T")

#: Response modes, from most to least constrained.
MODES = ("json_schema", "json_object", "text")
#: Texts per /embeddings request.
EMBED_BATCH = 128
#: Requests in a row that fail for good on connection errors before the endpoint is deemed down.
UNREACHABLE_AFTER = 3
_PLACEHOLDER_KEY = "no-key"  # local servers need none; the openai client insists on a value
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
    :data:`~textgen_core.judge.retry.FailureKind`); ``fatal`` is True when every
    further request to the endpoint would fail the same way (bad key, unknown
    model, quota exhausted), so a run can stop early. ``text`` and ``messages``
    hold the last unusable reply and what was sent, for drill-down.
    """

    def __init__(self, reason: str, *, kind: FailureKind = "http", status: int | None = None, attempts: int = 0,
                 fatal: bool = False, text: str | None = None, messages: list[dict] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.status = status
        self.attempts = attempts
        self.fatal = fatal
        self.text = text
        self.messages = messages

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


@dataclass
class Usage:
    """Running totals of a client.

    ``calls``: HTTP requests answered by the endpoint (each is billed);
    ``cached``: requests answered from the cache; ``failed``: requests that
    ended :class:`Unscored`; ``retries``: extra attempts (transient errors,
    re-asks of invalid replies, format fallbacks); ``in_flight``: HTTP requests
    on the wire right now.
    """

    calls: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _FormatRejected(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class _Budget:
    """Attempts left for transient failures within one client method call."""

    def __init__(self, retries: int) -> None:
        self.transient_left = retries
        self.attempts = 0


@dataclass
class _LoopState:
    """Resources bound to one event loop (asyncio primitives and HTTP pools cannot cross loops)."""

    api: openai.AsyncOpenAI
    slots: asyncio.Semaphore
    probe: asyncio.Lock
    key_locks: dict[str, tuple[asyncio.Lock, int]]


class JudgeClient:
    """Ask an OpenAI-compatible judge for schema-valid JSON, with retries, a cap on concurrency and a cache.

    Create one per run (or one per dashboard process) and share it between all
    tasks: the concurrency limit and the learned response mode are per client.
    It may be used from several event loops in turn (each ``asyncio.run``);
    loop-bound resources are made per loop.
    """

    def __init__(self, settings: JudgeSettings, store: "Store | None" = None, *,
                 on_change: Callable[[Usage], None] | None = None, retry_policy: RetryPolicy | None = None) -> None:
        self.settings = settings
        self.store = store
        self.on_change = on_change
        self.policy = retry_policy or RetryPolicy()
        self.usage = Usage()
        self._cache: ReplyCache = StoreCache(store) if store is not None else MemoryCache()
        self._rng = random.Random(self.policy.seed)
        self._lock = threading.Lock()
        self._states: dict[asyncio.AbstractEventLoop, _LoopState] = {}
        self._mode = ["json_schema", False]  # [mode, confirmed]
        self._tokens_param = "max_tokens"
        self._fatal: dict[str, Unscored] = {}
        self._pause_until = 0.0
        self._warned_usage = False
        self._on_change_failed = False
        self._active = 0  # client calls under way; the cache is flushed when this drops to 0
        self._unreachable = 0  # requests in a row that failed for good on connection errors

    def __repr__(self) -> str:
        return f"JudgeClient(base_url={self.settings.base_url!r}, model={self.settings.model!r}, usage={self.usage})"

    # -- public API ---------------------------------------------------------------
    def cache_key(self, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any], *, prompt_version: str) -> str:
        """The cache key of an ask: endpoint, model, messages, schema, temperature, seed, prompt version."""
        try:
            return chat_key(endpoint=self.settings.endpoint, model=self.settings.model, messages=list(messages),
                            schema=schema, temperature=self.settings.temperature, seed=self.settings.seed,
                            prompt_version=prompt_version)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"judge messages and schema must be plain JSON values: {exc}") from None

    def is_cached(self, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any], *,
                  schema_name: str, prompt_version: str) -> bool:
        """True when :meth:`ask` would answer from the cache (no HTTP, no cost)."""
        return bool(self._cache.has([self.cache_key(messages, schema, prompt_version=prompt_version)]))

    def cached_keys(self, keys: Iterable[str]) -> set[str]:
        """Which of many cache keys are cached, in one lookup (for pre-run estimates)."""
        return self._cache.has(list(keys))

    def cost(self) -> float | None:
        """Spend so far at the configured prices per million tokens; None when no price is set."""
        return self.settings.price(self.usage.prompt_tokens, self.usage.completion_tokens)

    async def ask(self, messages: list[dict], schema: dict, *, schema_name: str, prompt_version: str) -> JudgeReply:
        """Ask the judge; return its schema-valid reply or raise :class:`Unscored`.

        ``messages`` are chat messages (role, content); ``schema`` is the JSON
        Schema of the answer (the subset in :mod:`.schema_check`); a schema
        outside that subset is a programming error (ValueError).
        """
        schema_check.check_schema(schema)
        messages = _copy_messages(messages)
        key = self.cache_key(messages, schema, prompt_version=prompt_version)
        hit = self._cached_reply(key)
        if hit is not None:
            return hit
        state = self._state()
        with self._busy():
            async with self._same_key(state, key):
                hit = self._cached_reply(key)  # an identical ask may have finished while we waited
                if hit is not None:
                    return hit
                try:
                    return await self._ask_fresh(state, key, messages, schema, schema_name, prompt_version)
                except Unscored:
                    self._bump(failed=1)
                    raise

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embedding vectors of ``texts``, in order; cached per text. Raises :class:`Unscored`."""
        texts = [str(t) for t in texts]
        if not texts:
            return []
        model = self.settings.embedding_model or self.settings.model
        keys = [embedding_key(endpoint=self.settings.endpoint, model=model, text=t) for t in texts]
        vectors: dict[str, list[float]] = {}
        for key in dict.fromkeys(keys):
            entry = self._cache.get(key)
            if entry is not None:
                vectors[key] = entry.parsed
        todo = [(k, t) for k, t in dict(zip(keys, texts)).items() if k not in vectors]
        if not todo:
            self._bump(cached=1)
            return [vectors[k] for k in keys]
        state = self._state()
        with self._busy():
            return await self._embed_fresh(state, model, keys, todo, vectors)

    async def _embed_fresh(self, state: _LoopState, model: str, keys: list[str], todo: list[tuple[str, str]],
                           vectors: dict[str, list[float]]) -> list[list[float]]:
        try:
            for start in range(0, len(todo), EMBED_BATCH):
                batch = todo[start:start + EMBED_BATCH]
                inputs = [t for _, t in batch]
                budget = _Budget(self.settings.retries)
                reply = await self._send(
                    state, "embeddings", budget, CreateEmbeddingResponse,
                    lambda: state.api.embeddings.create(model=model, input=inputs, encoding_format="float"))
                got = self._read_embeddings(reply, len(inputs))
                tokens = int(getattr(reply.usage, "prompt_tokens", 0) or 0)
                self._count_call(tokens, 0, reply.usage is not None)
                for (key, text), vector in zip(batch, got):
                    vectors[key] = vector
                    self._cache.put(CacheEntry(key, self.settings.endpoint, model, "embedding",
                                               {"model": model, "input": text}, "", vector, 0, 0))
        except Unscored:
            self._bump(failed=1)
            raise
        return [vectors[k] for k in keys]

    async def prompt_logprobs(self, text: str) -> list[float]:
        """Log-probabilities of the tokens of ``text`` given the text before them.

        Uses ``/v1/completions`` with ``echo=True, logprobs=1, max_tokens=1``
        (vLLM, llama.cpp and legacy OpenAI models support it; chat-only endpoints
        do not). The first token has no conditional probability and is left out,
        so the list has one value per prompt token after the first. Cached.
        """
        text = str(text)
        model = self.settings.model
        key = logprobs_key(endpoint=self.settings.endpoint, model=model, text=text)
        entry = self._cache.get(key)
        if entry is not None:
            self._bump(cached=1)
            return list(entry.parsed)
        state = self._state()
        with self._busy():
            return await self._logprobs_fresh(state, key, model, text)

    async def _logprobs_fresh(self, state: _LoopState, key: str, model: str, text: str) -> list[float]:
        budget = _Budget(self.settings.retries)
        try:
            reply = await self._send(
                state, "completions", budget, Completion,
                lambda: state.api.completions.create(model=model, prompt=text, echo=True, logprobs=1,
                                                     max_tokens=1, temperature=0.0))
            usage = reply.usage
            self._count_call(int(getattr(usage, "prompt_tokens", 0) or 0),
                             int(getattr(usage, "completion_tokens", 0) or 0), usage is not None)
            values = self._read_logprobs(reply, text)
        except Unscored:
            self._bump(failed=1)
            raise
        self._cache.put(CacheEntry(key, self.settings.endpoint, model, "prompt_logprobs",
                                   {"model": model, "prompt": text}, "", values,
                                   int(getattr(usage, "prompt_tokens", 0) or 0), 0))
        return values

    def flush(self) -> int:
        """Write buffered cache entries to the store now (also done when the client goes idle)."""
        return self._cache.flush()

    async def aclose(self) -> None:
        """Flush the cache, close the HTTP pool of the running loop and forget those of closed loops."""
        self._cache.flush()
        loop = asyncio.get_running_loop()
        with self._lock:
            state = self._states.pop(loop, None)
            self._forget_closed_loops()
        if state is not None:
            await state.api.close()

    async def __aenter__(self) -> "JudgeClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- chat: modes, validation, re-asks --------------------------------------------
    async def _ask_fresh(self, state: _LoopState, key: str, messages: list[dict], schema: dict,
                         schema_name: str, prompt_version: str) -> JudgeReply:
        started = time.monotonic()
        budget = _Budget(self.settings.retries)
        reasks_left = self.settings.retries
        convo = messages
        prompt_tokens = completion_tokens = replies = 0
        while True:
            completion, sent, mode = await self._chat(state, convo, schema, schema_name, budget)
            replies += 1
            usage = completion.usage
            p_tok = int(getattr(usage, "prompt_tokens", 0) or 0)
            c_tok = int(getattr(usage, "completion_tokens", 0) or 0)
            prompt_tokens += p_tok
            completion_tokens += c_tok
            self._count_call(p_tok, c_tok, usage is not None)
            text, problem = self._read_choice(completion)
            if problem is not None:
                kind, reason = problem
                raise Unscored(self._scrub(reason), kind=kind, attempts=budget.attempts,
                               text=self._scrub(text), messages=sent)
            try:
                value = schema_check.parse_reply(text, schema)
            except schema_check.ReplyError as err:
                if reasks_left <= 0:
                    raise Unscored(self._scrub(f"invalid JSON after {replies} attempts: {err}"), kind="invalid",
                                   attempts=budget.attempts, text=self._scrub(text), messages=sent) from None
                reasks_left -= 1
                self._bump(retries=1)
                log.info("judge reply invalid (%s); asking again", self._scrub(str(err)))
                convo = convo + [{"role": "assistant", "content": text or "(empty reply)"},
                                 {"role": "user", "content": CORRECTION.format(error=err)}]
                continue
            request = {"model": self.settings.model, "messages": sent, "mode": mode, "schema_name": schema_name,
                       "temperature": self.settings.temperature, "seed": self.settings.seed,
                       "max_tokens": self.settings.max_tokens}
            self._cache.put(CacheEntry(key, self.settings.endpoint, self.settings.model, prompt_version,
                                       request, text, value, prompt_tokens, completion_tokens))
            return JudgeReply(value, text, sent, key, prompt_tokens, completion_tokens, False,
                              attempts=budget.attempts, mode=mode, latency_s=time.monotonic() - started)

    async def _chat(self, state: _LoopState, convo: list[dict], schema: dict, schema_name: str,
                    budget: _Budget) -> tuple[ChatCompletion, list[dict], str]:
        """One chat completion in the best response mode the endpoint accepts.

        While the mode is unconfirmed, one request at a time probes it (the
        others wait), so a rejected mode costs exactly one rejected request.
        """
        while True:
            mode, confirmed = self._mode_now()
            guard: contextlib.AbstractAsyncContextManager = state.probe if not confirmed else contextlib.nullcontext()
            async with guard:
                if not confirmed and self._mode_now() != (mode, confirmed):
                    continue  # another request settled the mode while we waited
                used: dict[str, Any] = {}

                def request() -> Awaitable[ChatCompletion]:
                    # Rendered once a slot is ours, so a fallback learned meanwhile is already applied.
                    used["mode"] = self._mode_now()[0]
                    used["sent"], response_format = _render(convo, schema, schema_name, used["mode"])
                    kwargs: dict[str, Any] = {"model": self.settings.model, "messages": used["sent"],
                                              "temperature": self.settings.temperature,
                                              self._tokens_param: self.settings.max_tokens}
                    if self.settings.seed is not None:
                        kwargs["seed"] = self.settings.seed
                    if response_format is not None:
                        kwargs["response_format"] = response_format
                    return state.api.chat.completions.create(**kwargs)

                try:
                    completion = await self._send(state, "chat", budget, ChatCompletion, request,
                                                  mode=lambda: used.get("mode"))
                except _FormatRejected as rejected:
                    self._downgrade(used["mode"], rejected.failure.message)
                    self._bump(retries=1)
                    continue
                except Unscored as exc:
                    if exc.messages is None:
                        exc.messages = used.get("sent")
                    if self._switch_tokens_param(exc):
                        self._bump(retries=1)
                        continue
                    self._confirm(used.get("mode", mode))  # the probe learned nothing; do not serialise the rest
                    raise
                self._confirm(used["mode"])
                return completion, used["sent"], used["mode"]

    def _read_choice(self, completion: ChatCompletion) -> tuple[str, tuple[FailureKind, str] | None]:
        """The reply text, and (kind, reason) when the reply is final without being usable."""
        if not completion.choices:
            return "", None  # no choice: treated as an invalid (empty) reply and re-asked
        choice = completion.choices[0]
        message = choice.message
        text = (message.content if message is not None else None) or ""
        refusal = getattr(message, "refusal", None) if message is not None else None
        if choice.finish_reason == "content_filter":
            return text, ("refused", "the judge's content filter blocked the reply (finish_reason content_filter)")
        if refusal:
            return text, ("refused", f"the judge refused to answer: {refusal}")
        if choice.finish_reason == "length":
            return text, ("length", f"the reply was cut off at max_tokens={self.settings.max_tokens} before it "
                                    "was complete; raise --max-tokens")
        return text, None

    # -- one HTTP request with the retry policy ---------------------------------------
    async def _send(self, state: _LoopState, op: str, budget: _Budget, expected: type,
                    request: Callable[[], Awaitable[T]], *, mode: Callable[[], str | None] | None = None) -> T:
        """Send ``request`` under the semaphore, retrying transient failures; raise Unscored when final.

        ``mode`` tells which response mode the last attempt used, so a 400 that
        blames the response format can be told from one that blames the request.
        """
        guard_timeout = self.settings.timeout * 2 + 1.0
        while True:
            self._raise_if_fatal(op)
            await self._wait_for_pause()
            async with state.slots:
                await self._wait_for_pause()  # a 429 elsewhere may have paused us while queued
                self._raise_if_fatal(op)  # or a bad key may have been found
                self._bump(in_flight=1)
                budget.attempts += 1
                failure: Failure | None = None
                try:
                    result = await asyncio.wait_for(request(), guard_timeout)
                except (openai.OpenAIError, TimeoutError) as exc:
                    used_mode = mode() if mode is not None else None
                    failure = classify(exc, mode=None if used_mode in (None, "text") else used_mode)
                finally:
                    self._bump(in_flight=-1)
            if failure is None and not isinstance(result, expected):
                failure = Failure("server", f"the endpoint answered with a {type(result).__name__}, not JSON", True)
            if failure is None:
                self._unreachable = 0
                return result
            if failure.format_rejected:
                raise _FormatRejected(failure)
            if failure.retry_after is not None:
                self._pause(self.policy.delay(budget.attempts, self._rng, failure.retry_after))
            if not failure.retryable or budget.transient_left <= 0:
                raise self._final(op, failure, budget)
            budget.transient_left -= 1
            self._bump(retries=1)
            delay = self.policy.delay(budget.attempts, self._rng, failure.retry_after)
            log.info("judge %s attempt %d failed (%s); retrying in %.2f s", op, budget.attempts,
                     self._scrub(failure.message), delay)
            await asyncio.sleep(delay)

    def _raise_if_fatal(self, op: str) -> None:
        known = self._fatal.get(op)
        if known is not None:  # a fresh exception each time: tracebacks must not pile up on one object
            raise Unscored(known.reason, kind=known.kind, status=known.status, fatal=True)

    def _final(self, op: str, failure: Failure, budget: _Budget) -> Unscored:
        message = failure.message
        if failure.kind == "timeout":
            message = f"the judge did not answer within {self.settings.timeout:g} s"
        if failure.retryable:
            message += f" (gave up after {budget.attempts} attempts)"
        fatal = failure.fatal
        with self._lock:
            self._unreachable = self._unreachable + 1 if failure.kind == "connection" else 0
            if self._unreachable >= UNREACHABLE_AFTER:
                fatal = True
                message = f"the judge endpoint is unreachable: {message}"
        error = Unscored(self._scrub(message), kind=failure.kind, status=failure.status,
                         attempts=budget.attempts, fatal=fatal)
        if fatal:
            with self._lock:
                first = op not in self._fatal
                self._fatal.setdefault(op, error)
            if first:
                log.error("judge %s failed for good: %s; further %s requests are not sent", op, error.reason, op)
        return error

    async def _wait_for_pause(self) -> None:
        while True:
            wait = self._pause_until - time.monotonic()
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    def _pause(self, seconds: float) -> None:
        with self._lock:
            self._pause_until = max(self._pause_until, time.monotonic() + seconds)

    # -- response mode bookkeeping ----------------------------------------------------
    def _mode_now(self) -> tuple[str, bool]:
        with self._lock:
            return self._mode[0], self._mode[1]

    def _confirm(self, mode: str) -> None:
        with self._lock:
            if self._mode[0] == mode:
                self._mode[1] = True

    def _downgrade(self, mode: str, why: str) -> None:
        with self._lock:
            if self._mode[0] != mode:
                return  # someone else already moved on
            following = MODES[MODES.index(mode) + 1]
            self._mode = [following, False]
        log.warning("judge endpoint %s rejected response_format %s for model %s (%s); using %s from now on",
                    self.settings.endpoint, mode, self.settings.model, self._scrub(why), following)

    def _switch_tokens_param(self, exc: Unscored) -> bool:
        """Newer OpenAI models want max_completion_tokens instead of max_tokens; switch once."""
        if exc.status != 400 or self._tokens_param != "max_tokens" or "max_completion_tokens" not in exc.reason:
            return False
        self._tokens_param = "max_completion_tokens"
        log.info("judge model %s wants max_completion_tokens; using it from now on", self.settings.model)
        return True

    # -- cache, accounting, plumbing --------------------------------------------------
    def _cached_reply(self, key: str) -> JudgeReply | None:
        entry = self._cache.get(key)
        if entry is None:
            return None
        self._bump(cached=1)
        request = dict(entry.request or {})
        return JudgeReply(entry.parsed, entry.reply, list(request.get("messages") or []), key,
                          entry.prompt_tokens, entry.completion_tokens, True, attempts=0,
                          mode=str(request.get("mode") or "json_schema"))

    @contextlib.contextmanager
    def _busy(self) -> Iterator[None]:
        """Count a client call under way; when the last one ends, buffered cache entries are written."""
        with self._lock:
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                idle = self._active == 0
            if idle:
                self._cache.flush()

    @contextlib.asynccontextmanager
    async def _same_key(self, state: _LoopState, key: str) -> AsyncIterator[None]:
        """Serialise identical asks so a reply is paid for once and the rest read the cache."""
        lock, users = state.key_locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        state.key_locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = state.key_locks[key]
            if users <= 1:
                del state.key_locks[key]
            else:
                state.key_locks[key] = (lock, users - 1)

    def _count_call(self, prompt_tokens: int, completion_tokens: int, reported: bool) -> None:
        if not reported and not self._warned_usage:
            self._warned_usage = True
            log.warning("judge endpoint %s reports no token usage; token counts and costs will be too low",
                        self.settings.endpoint)
        self._bump(calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    def _bump(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self.usage, name, getattr(self.usage, name) + delta)
            snapshot = replace(self.usage)
        if self.on_change is not None:
            try:
                self.on_change(snapshot)
            except Exception:  # noqa: BLE001 - a progress display must not break judging
                if not self._on_change_failed:
                    self._on_change_failed = True
                    log.exception("judge on_change callback failed; further failures are not logged")

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        with self._lock:
            state = self._states.get(loop)
            if state is None:
                self._forget_closed_loops()
                api = openai.AsyncOpenAI(base_url=self.settings.base_url,
                                         api_key=self.settings.api_key or _PLACEHOLDER_KEY,
                                         max_retries=0, timeout=self.settings.timeout)
                state = _LoopState(api, asyncio.Semaphore(self.settings.concurrency), asyncio.Lock(), {})
                self._states[loop] = state
            return state

    def _forget_closed_loops(self) -> None:
        for loop in [lp for lp in self._states if lp.is_closed()]:
            del self._states[loop]

    def _scrub(self, text: str | None) -> str:
        """Remove the API key from any text that may be shown, logged or stored."""
        if not text:
            return text or ""
        key = self.settings.api_key
        if key and len(key) >= 4:
            text = text.replace(key, "[redacted]")
        return text

    @staticmethod
    def _read_embeddings(reply: CreateEmbeddingResponse, expected: int) -> list[list[float]]:
        data = sorted(reply.data or [], key=lambda d: d.index)
        if len(data) != expected:
            raise Unscored(f"the endpoint returned {len(data)} embeddings for {expected} texts", kind="invalid")
        vectors = []
        for item in data:
            vector = [float(x) for x in item.embedding]
            if not vector or not all(math.isfinite(x) for x in vector):
                raise Unscored("the endpoint returned an empty or non-finite embedding", kind="invalid")
            vectors.append(vector)
        return vectors

    @staticmethod
    def _read_logprobs(reply: Completion, text: str) -> list[float]:
        choice = reply.choices[0] if reply.choices else None
        logprobs = choice.logprobs if choice is not None else None
        values = list(getattr(logprobs, "token_logprobs", None) or [])
        if not values:
            raise Unscored("the endpoint returned no prompt log-probabilities; it needs /v1/completions with "
                           "echo and logprobs (vLLM, llama.cpp, legacy OpenAI models)", kind="invalid")
        offsets = list(getattr(logprobs, "text_offset", None) or [])
        if len(offsets) == len(values):
            n_prompt = sum(1 for offset in offsets if offset < len(text))
        else:
            prompt_tokens = int(getattr(reply.usage, "prompt_tokens", 0) or 0)
            n_prompt = prompt_tokens if 0 < prompt_tokens <= len(values) else len(values) - 1
        prompt_values = values[:n_prompt]
        if prompt_values and prompt_values[0] is None:
            prompt_values = prompt_values[1:]
        return [float(v) for v in prompt_values if v is not None and math.isfinite(v)]


def _copy_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise ValueError("judge messages must be a non-empty list of {'role', 'content'} mappings")
    copied = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ValueError(f"judge message {i} must be a mapping with 'role' and 'content'")
        copied.append(dict(message))
    return copied


def _render(convo: list[dict], schema: dict, schema_name: str, mode: str) -> tuple[list[dict], dict | None]:
    """The messages and response_format actually sent in a given mode."""
    if mode == "json_schema":
        name = _SCHEMA_NAME.sub("_", schema_name)[:64] or "verdict"
        return convo, {"type": "json_schema", "json_schema": {
            "name": name, "strict": schema_check.is_strict_compatible(schema), "schema": schema}}
    instruction = SCHEMA_INSTRUCTION + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    sent = [dict(m) for m in convo]
    last = sent[-1]
    if last.get("role") == "user" and isinstance(last.get("content"), str):
        last["content"] = f"{last['content']}\n\n{instruction}"
    else:
        sent.append({"role": "user", "content": instruction})
    return sent, ({"type": "json_object"} if mode == "json_object" else None)
