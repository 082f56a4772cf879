"""The judge client: every judge request of textgen-eval goes through :class:`JudgeClient`.

It asks for schema-valid JSON (structured output, falling back to ``json_object`` then plain text once an
endpoint rejects a mode), re-asks an invalid reply with the problem spelled out, and serves validated
replies from the cache. Retries, pacing and the spending cap are the transport's (:mod:`.transport`). A
failure is :class:`Unscored` with its reason, never a 0. The API key reaches the ``openai`` client only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from ..llm.structured import ReplyError, check_schema, parse_reply, strict_compatible
from ..llm.accounting import Meter, Usage
from ..llm.logprobs import TOP_LOGPROBS, content_logprobs, field_alternatives
from .cache import CacheEntry, ReplyCache, chat_key, embedding_key, logprobs_key
from .replies import (CORRECTION, MODES, SCHEMA_INSTRUCTION, JudgeReply, Modes, Unscored, copy_messages,
                      read_choice, read_embeddings, read_logprobs, render, usage_of)
from ..llm.redact import scrub_value
from ..llm.retry import RetryPolicy
from .settings import JudgeSettings
from .transport import (Admission, BatchRoute, BatchTransport, Budget, DirectTransport, FormatRejected,
                        LogprobsRejected, LoopState, Transport)

if TYPE_CHECKING:
    from .storage import JudgeStore

__all__ = ["CORRECTION", "EMBED_BATCH", "MODES", "SCHEMA_INSTRUCTION", "JudgeClient", "JudgeReply", "Unscored",
           "Usage"]

log = logging.getLogger("textgen_core.judge")

#: Texts per /embeddings request.
EMBED_BATCH = 128


class Shared(NamedTuple):
    """What the clients of one judge share: the usage counter and the reply cache (a run's client counts into
    its parent's usage and reads and fills its cache)."""

    meter: Meter
    cache: ReplyCache


class JudgeClient:
    """Ask an OpenAI-compatible judge for schema-valid JSON, with retries, a cap on concurrency and a cache.

    Create one per run (or one per dashboard process) and share it between all
    tasks: the concurrency limit and the learned response mode are per client.
    It may be used from several event loops in turn (each ``asyncio.run``);
    loop-bound resources are made per loop. The transport is chosen here, once:
    direct (HTTP), or batch mode when ``batcher`` is given; ``cap`` (a run's spending
    cap) admits each billed request. Nothing is plugged in later.
    """

    def __init__(self, settings: JudgeSettings, store: "JudgeStore | None" = None, *,
                 on_change: Callable[[Usage], None] | None = None, retry_policy: RetryPolicy | None = None,
                 batcher: BatchRoute | None = None, cap: Admission | None = None, shared: "Shared | None" = None,
                 modes: Modes | None = None, sample: int | None = None) -> None:
        self.settings = settings
        #: Which repeated ask of each request this client makes (None: a plain ask); it enters the cache key,
        #: so every sample of a cell is its own reply.
        self.sample = sample
        self.store = store
        self.policy = retry_policy or settings.retry_policy()
        #: Usage and reply cache; one run's client (:meth:`for_run`) shares its parent's.
        self.shared = shared or Shared(Meter(settings.endpoint, on_change), ReplyCache(store))
        self._meter, self._cache = self.shared
        #: The response mode learned for this client's endpoint and model; this client's own (a run's client
        #: starts from a copy of its parent's).
        self._modes = modes or Modes(settings.response_mode)
        self._endpoint = settings.endpoint
        self._transport: Transport = (
            BatchTransport(settings, self.policy, self._meter, batcher, cap=cap) if batcher is not None
            else DirectTransport(settings, self.policy, self._meter, cap=cap))
        if batcher is not None:  # a probe of the response mode would cost a batch round of its own: start
            self._modes.confirm(self._modes.now()[0])  # from it as confirmed; a rejecting line still moves down
        self._lock = threading.Lock()
        self._active = 0  # client calls under way; the cache is flushed when this drops to 0

    def for_run(self, *, batcher: BatchRoute | None = None, cap: Admission | None = None) -> "JudgeClient":
        """A client for one run, counting into this one's usage and sharing its cache, with the response mode
        learned so far (a copy: what the run learns stays the run's), whose transport is built for the run's
        batch mode (a :class:`~.batch.Batcher`) and spending cap (a :class:`~.budget.SpendingCap`)."""
        return JudgeClient(self.settings, self.store, retry_policy=self.policy, batcher=batcher, cap=cap,
                           shared=self.shared, modes=self._modes.copy(), sample=self.sample)

    def __repr__(self) -> str:
        return f"JudgeClient(base_url={self.settings.base_url!r}, model={self.settings.model!r}, usage={self.usage})"

    @property
    def transport(self) -> Transport:
        """How requests go out, chosen when the client was built: direct, or batch mode; capped or not."""
        return self._transport

    @property
    def response_mode(self) -> tuple[str, bool]:
        """The response mode this client uses now, and whether the endpoint confirmed it."""
        return self._modes.now()

    @property
    def usage(self) -> Usage:
        """Running totals: calls, cache hits, failures, retries, requests in flight, tokens."""
        return self._meter.usage

    # -- public API ---------------------------------------------------------------
    def cache_key(self, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any], *, prompt_version: str,
                  logprobs_field: str | None = None) -> str:
        """The cache key of an ask: endpoint, model, messages, schema, temperature, seed, prompt version (and
        the field whose log-probabilities it asks for)."""
        try:
            return chat_key(endpoint=self._endpoint, model=self.settings.model, messages=list(messages),
                            schema=schema, temperature=self.settings.temperature, seed=self.settings.seed,
                            prompt_version=prompt_version, sample=self.sample,
                            logprobs=None if logprobs_field is None else (logprobs_field, TOP_LOGPROBS))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"judge messages and schema must be plain JSON values: {exc}") from None

    def cached_values(self, keys: Sequence[str]) -> dict[str, Any]:
        """The parsed replies of the cached keys among ``keys``, in one lookup (for pre-run estimates)."""
        return self._cache.values(list(keys))

    def surely_uncached(self, key: str) -> bool:
        """True when it is certain, without a query, that ``key`` is not cached."""
        return self._cache.peek(key) is None and self._cache.surely_missing(key)

    def cost(self) -> float | None:
        """Spend so far at the configured prices per million tokens (attempts that got no reply at their upper
        estimate); None when no price is set."""
        return self.settings.cost_of(self.usage)

    async def ask(self, messages: list[dict], schema: dict, *, schema_name: str, prompt_version: str,
                  check: Callable[[Any], str | None] | None = None, logprobs_field: str | None = None) -> JudgeReply:
        """Ask the judge; return its schema-valid reply or raise :class:`Unscored`.

        ``messages`` are chat messages (role, content); ``schema`` is the JSON
        Schema of the answer (the subset in :mod:`textgen_core.llm.structured`); a schema
        outside that subset is a programming error (ValueError). ``check`` looks
        past the schema (every numbered item ruled on once): a reply it rejects
        is re-asked once with the problem spelled out, then unscored with it. ``logprobs_field``: ask for the
        token log-probabilities (``top_logprobs``) and keep the alternatives at that field's value
        (``reply.logprobs``, cached with the reply); an endpoint that refuses them is asked without, once.
        """
        check_schema(schema)
        messages = copy_messages(messages)
        key = self.cache_key(messages, schema, prompt_version=prompt_version, logprobs_field=logprobs_field)
        state = self._transport.state()
        hit = await self._cached_reply(state, key)
        if hit is not None:
            return hit
        with self._busy():  # identical asks in flight together: one is sent, the others get its reply
            reply, first = await state.once.run(key, partial(
                self._ask_fresh, state, key, messages, schema, schema_name, prompt_version, check, logprobs_field))
        if first:
            return reply
        self._meter.bump(cached=1)
        return replace(reply, cached=True, attempts=0, latency_s=0.0)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embedding vectors of ``texts``, in order; cached per text. Raises :class:`Unscored`."""
        texts = [str(t) for t in texts]
        if not texts:
            return []
        model = self.settings.embedding_model or self.settings.model
        keys = [embedding_key(endpoint=self.settings.endpoint, model=model, text=t) for t in texts]
        vectors = {k: entry.parsed for k, entry in self._cache.get_many(list(dict.fromkeys(keys))).items()}
        todo = [(k, t) for k, t in dict(zip(keys, texts)).items() if k not in vectors]
        if not todo:
            self._meter.bump(cached=1)
            return [vectors[k] for k in keys]
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start:start + EMBED_BATCH]
            inputs = [t for _, t in batch]
            _, read = await self._post("embeddings", "/embeddings", {"model": model, "input": inputs,
                                                                    "encoding_format": "float"},
                                       "data", lambda body: read_embeddings(body, len(inputs)), completion=False)
            for (key, text), vector in zip(batch, read):
                vectors[key] = vector
                self._cache.put(CacheEntry(key, self.settings.endpoint, model, "embedding",
                                           {"model": model, "input": text}, "", vector, 0, 0))
        return [vectors[k] for k in keys]

    async def _post(self, op: str, path: str, payload: dict, field_name: str, read: Callable[[dict], Any], *,
                    completion: bool = True) -> tuple[int, Any]:
        """One embeddings or completions request: (its prompt tokens, what ``read`` makes of the reply)."""
        state = self._transport.state()
        with self._busy():
            try:
                body = await self._transport.post(state, op, path, Budget(self.settings.retries), lambda: payload,
                                                  field_name=field_name)
                prompt_tokens, completion_tokens, reported = usage_of(body)
                self._meter.count_call(prompt_tokens, completion_tokens if completion else 0, reported)
                return prompt_tokens, read(body)
            except Unscored:
                self._meter.bump(failed=1)
                raise

    async def prompt_logprobs(self, text: str) -> list[float]:
        """Log-probabilities of the tokens of ``text`` after the first (``/v1/completions`` with echo and
        logprobs: vLLM, llama.cpp, legacy OpenAI models; chat-only endpoints refuse it). Cached."""
        text = str(text)
        model = self.settings.model
        key = logprobs_key(endpoint=self.settings.endpoint, model=model, text=text)
        entry = self._cache.get(key)
        if entry is not None:
            self._meter.bump(cached=1)
            return list(entry.parsed)
        prompt_tokens, values = await self._post(
            "completions", "/completions", {"model": model, "prompt": text, "echo": True, "logprobs": 1,
                                            "max_tokens": 1, "temperature": 0.0},
            "choices", lambda body: read_logprobs(body, text))
        self._cache.put(CacheEntry(key, self.settings.endpoint, model, "prompt_logprobs",
                                   {"model": model, "prompt": text}, "", values, prompt_tokens, 0))
        return values

    def flush(self) -> int:
        """Wait until buffered cache entries are in the store (the writer starts on them when the client goes idle)."""
        return self._cache.flush()

    def fatal_reasons(self) -> list[str]:
        """Failures that stopped every later request of a kind (bad key, unknown model, quota)."""
        return self._transport.fatal_reasons()

    async def aclose(self) -> None:
        """Flush the cache, close the HTTP pool of the running loop and forget those of closed loops."""
        self._cache.flush()
        await self._transport.aclose()

    async def __aenter__(self) -> "JudgeClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- chat: modes, validation, re-asks --------------------------------------------
    async def _ask_fresh(self, state: LoopState, key: str, messages: list[dict], schema: dict,
                         schema_name: str, prompt_version: str,
                         check: Callable[[Any], str | None] | None = None,
                         logprobs_field: str | None = None) -> JudgeReply:
        started = time.monotonic()
        try:
            budget = Budget(self.settings.retries)
            reasks_left = self.settings.retries
            key_reasks_left = 1
            scrub = self._transport.scrub
            convo = messages
            prompt_tokens = completion_tokens = replies = 0
            while True:
                try:
                    body, sent, mode = await self._chat(state, convo, schema, schema_name, budget,
                                                        logprobs=logprobs_field is not None)
                except Unscored as exc:  # the replies before it (re-asked) were paid for
                    raise exc.but(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens) from None
                replies += 1
                p_tok, c_tok, reported = usage_of(body)
                prompt_tokens += p_tok
                completion_tokens += c_tok
                self._meter.count_call(p_tok, c_tok, reported)
                text, problem = read_choice(body, self.settings.max_tokens, scrub)  # scrubbed, then read

                def failed(reason: str, kind: str) -> Unscored:  # an unscored exchange keeps what it cost
                    return Unscored(scrub(reason), kind=kind, attempts=budget.attempts,  # type: ignore[arg-type]
                                    text=scrub(text), messages=self.scrubbed(sent), prompt_tokens=prompt_tokens,
                                    completion_tokens=completion_tokens)

                if problem is not None:
                    raise failed(problem[1], problem[0])
                try:
                    value = parse_reply(text, schema)
                    problem_text = check(value) if check is not None else None
                    if problem_text is not None:
                        if key_reasks_left <= 0:
                            raise failed(problem_text, "invalid")
                        key_reasks_left = 0
                        raise ReplyError(problem_text, schema=True)
                except ReplyError as err:
                    if reasks_left <= 0:
                        what = "reply does not fit the schema" if err.schema else "invalid JSON"  # valid JSON, wrong shape
                        raise failed(f"{what} after {replies} attempts: {err}", "invalid") from None
                    reasks_left -= 1
                    self._meter.bump(retries=1)
                    log.info("judge reply invalid (%s); asking again", scrub(str(err)))
                    # The re-ask quotes the reply: scrubbed, so a key the endpoint echoed is not sent back to it.
                    convo = convo + [{"role": "assistant", "content": scrub(text) or "(empty reply)"},
                                     {"role": "user", "content": CORRECTION.format(error=scrub(str(err)))}]
                    continue
                # Whatever the endpoint sent back (a reply that repeats the key, in text or in a verdict's
                # reason) is scrubbed before it is cached, returned, stored or shown.
                value, text, sent = self.scrubbed(value), scrub(text), self.scrubbed(sent)
                request = {"model": self.settings.model, "messages": sent, "mode": mode, "schema_name": schema_name,
                           "temperature": self.settings.temperature, "seed": self.settings.seed,
                           "max_tokens": self.settings.max_tokens}
                found = None
                if logprobs_field is not None:  # kept with the reply: a cached ask weighs the same numbers
                    found = self.scrubbed(self._alternatives(body, logprobs_field))
                    request["logprobs"] = {"field": logprobs_field, "top_logprobs": TOP_LOGPROBS, "found": found}
                self._cache.put(CacheEntry(key, self.settings.endpoint, self.settings.model, prompt_version,
                                           request, text, value, prompt_tokens, completion_tokens))
                return JudgeReply(value, text, sent, key, prompt_tokens, completion_tokens, False,
                                  attempts=budget.attempts, mode=mode, latency_s=time.monotonic() - started,
                                  logprobs=found)
        except Unscored as exc:  # counted once, with the time it took (every attempt, waits included)
            self._meter.bump(failed=1)
            if exc.latency_s is None:
                raise exc.but(latency_s=time.monotonic() - started) from None
            raise

    def _alternatives(self, body: Mapping[str, Any], field: str) -> dict[str, Any] | str:
        """The alternatives at ``field``'s value in a reply asked with log-probabilities, or why there are none."""
        content = content_logprobs(body)
        if content is not None:
            return field_alternatives(content, field)
        if self._modes.logprobs_refused is not None:
            return f"the endpoint refused log-probabilities ({self._modes.logprobs_refused})"
        return "the endpoint returned no log-probabilities with its reply"

    async def _chat(self, state: LoopState, convo: list[dict], schema: dict, schema_name: str,
                    budget: Budget, *, logprobs: bool = False) -> tuple[dict, list[dict], str]:
        """One chat completion in the best response mode the endpoint accepts.

        While the mode is unconfirmed, one request at a time probes it (the
        others wait), so a rejected mode costs exactly one rejected request.
        """
        strict = strict_compatible(schema)
        # What the limiter paces by: the prompt's bound (the schema included, as text mode sends it) and the
        # longest reply; the body itself is rendered once a slot is ours.
        tokens = (len(json.dumps(convo, ensure_ascii=False)) + len(json.dumps(schema))) // 4 + 1 \
            + self.settings.max_tokens
        while True:
            mode, confirmed = self._modes.now()
            guard: contextlib.AbstractAsyncContextManager = state.probe if not confirmed else contextlib.nullcontext()
            async with guard:
                if not confirmed and self._modes.now() != (mode, confirmed):
                    continue  # another request settled the mode while we waited
                used: dict[str, Any] = {}

                def body() -> dict:
                    # Rendered once a slot is ours, so a fallback learned meanwhile is already applied.
                    used["mode"] = self._modes.now()[0]
                    used["sent"], response_format = render(convo, schema, schema_name, used["mode"], strict=strict)
                    payload: dict[str, Any] = {"model": self.settings.model, "messages": used["sent"],
                                               "temperature": self.settings.temperature,
                                               self._modes.tokens_param: self.settings.max_tokens}
                    if self.settings.seed is not None:
                        payload["seed"] = self.settings.seed
                    if logprobs and self._modes.logprobs_refused is None:
                        payload["logprobs"], payload["top_logprobs"] = True, TOP_LOGPROBS
                    if response_format is not None:
                        payload["response_format"] = response_format
                    return payload

                try:
                    reply = await self._transport.post(state, "chat", "/chat/completions", budget, body,
                                                       field_name="choices", mode=partial(used.get, "mode"), tokens=tokens)
                except LogprobsRejected as rejected:  # asked again without them; the reply says why
                    reason = self._transport.scrub(rejected.failure.message)
                    if self._modes.logprobs_refused is None:
                        log.warning("judge endpoint %s refused log-probabilities for model %s (%s); ratings keep the "
                                    "chosen value", self.settings.endpoint, self.settings.model, reason)
                    self._modes.refuse_logprobs(reason)
                    self._meter.bump(retries=1)
                    continue
                except FormatRejected as rejected:
                    if self._modes.pinned:
                        raise Unscored(self._transport.scrub(
                            f"{rejected.failure.message} (response_mode {used['mode']} is set; use auto to fall "
                            "back)"), kind="format_rejected", status=rejected.failure.status,
                            messages=self.scrubbed(used.get("sent"))) from None
                    following = self._modes.downgrade(used["mode"])
                    if following is not None:
                        log.warning("judge endpoint %s rejected response_format %s for model %s (%s); using %s "
                                    "from now on", self.settings.endpoint, used["mode"], self.settings.model,
                                    self._transport.scrub(rejected.failure.message), following)
                    self._meter.bump(retries=1)
                    continue
                except Unscored as exc:
                    if exc.messages is None:
                        exc = exc.but(messages=self.scrubbed(used.get("sent")))
                    if self._modes.switch_tokens_param(exc):
                        log.info("judge model %s wants max_completion_tokens; using it from now on",
                                 self.settings.model)
                        self._meter.bump(retries=1)
                        continue
                    self._modes.confirm(used.get("mode", mode))  # the probe learned nothing; do not serialise the rest
                    raise exc from None
                self._modes.confirm(used["mode"])
                return reply, used["sent"], used["mode"]

    def scrubbed(self, value: Any) -> Any:
        """A copy of a JSON value with the API key removed from every string in it."""
        return scrub_value(value, self.settings.api_key)

    # -- cache plumbing ---------------------------------------------------------------
    async def _cached_reply(self, state: LoopState, key: str) -> JudgeReply | None:
        entry = await self._cache.aget(key)  # batched with concurrent asks; none when the key index proves a miss
        if entry is None:
            return None
        self._meter.bump(cached=1)
        request = dict(entry.request or {})
        asked = request.get("logprobs")
        return JudgeReply(entry.parsed, entry.reply, list(request.get("messages") or []), key,
                          entry.prompt_tokens, entry.completion_tokens, True, attempts=0,
                          mode=str(request.get("mode") or "json_schema"),
                          logprobs=asked.get("found") if isinstance(asked, Mapping) else None)

    @contextlib.contextmanager
    def _busy(self) -> Iterator[None]:
        """Count a client call under way; when the last one ends, the writer commits the cache at once."""
        with self._lock:
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                idle = self._active == 0
            if idle:
                self._cache.nudge()
