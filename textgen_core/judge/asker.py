"""The two askers behind the steps: one asks the judge (memoized per datum), one only counts.

:class:`ClientAsker` shares one task per distinct request within a datum group,
shielded so that one cancelled cell cannot cancel a step other cells await.
:class:`DryAsker` serves cached replies and counts every other request, for
:func:`textgen_core.judge.engine.estimate`.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from .cache import embedding_key, logprobs_key
from .client import JudgeClient, Unscored
from .prompts import Request
from .steps import Answer, StepFailed

#: Characters per token for the estimate (a common rule of thumb for English text).
CHARS_PER_TOKEN = 4


def _failure(exc: Unscored, step: str, messages: Any) -> StepFailed:
    exchange = {"step": step, "messages": exc.messages or messages, "reason": exc.reason, "reply": exc.text,
                "attempts": exc.attempts}
    return StepFailed(exc.reason, exchange)


class ClientAsker:
    """Asks the judge through the client; each distinct request once per group."""

    def __init__(self, client: JudgeClient) -> None:
        self.client = client
        self._tasks: dict[Any, asyncio.Future] = {}

    async def _shared(self, key: Any, make: Callable[[], Awaitable[Any]]) -> Any:
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.ensure_future(make())
            self._tasks[key] = task
        return await asyncio.shield(task)

    async def ask(self, request: Request) -> Answer:
        return await self._shared(("chat", request.key), lambda: self._ask(request))

    async def _ask(self, request: Request) -> Answer:
        messages = [dict(m) for m in request.messages]
        try:
            reply = await self.client.ask(messages, request.schema, schema_name=request.step,
                                          prompt_version=request.version)
        except Unscored as exc:
            raise _failure(exc, request.step, messages) from None
        return Answer(reply.value, reply.cache_key)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        async def call() -> list[list[float]]:
            try:
                return await self.client.embed(list(texts))
            except Unscored as exc:
                raise _failure(exc, "embeddings", list(texts)) from None
        return await self._shared(("embed", tuple(texts)), call)

    async def prompt_logprobs(self, text: str) -> list[float]:
        async def call() -> list[float]:
            try:
                return await self.client.prompt_logprobs(text)
            except Unscored as exc:
                raise _failure(exc, "prompt_logprobs", text) from None
        return await self._shared(("logprobs", text), call)

    def cancel_pending(self) -> None:
        """Cancel steps nobody waits for any more; mark finished failures as seen."""
        for task in self._tasks.values():
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()


@dataclass
class Tally:
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def count(self, prompt_chars: int, reply_tokens: int) -> None:
        self.calls += 1
        self.prompt_tokens += math.ceil(prompt_chars / CHARS_PER_TOKEN)
        self.completion_tokens += reply_tokens


class DryAsker:
    """Answers from the cache when it can, otherwise counts the call and returns a placeholder.

    ``counted`` is shared by every group of one estimate: a request made by
    several datums (the same reference, the same contexts) is paid once in a
    run, so it is counted once.
    """

    def __init__(self, client: JudgeClient, tally: Tally, counted: set[bytes]) -> None:
        self.client = client
        self.tally = tally
        self.counted = counted
        self._seen: dict[Any, Any] = {}

    def _first(self, key: str) -> bool:
        digest = bytes.fromhex(key[:32])
        if digest in self.counted:
            return False
        self.counted.add(digest)
        return True

    async def ask(self, request: Request) -> Answer:
        memo = ("chat", request.key)
        if memo not in self._seen:
            messages = [dict(m) for m in request.messages]
            key = self.client.cache_key(messages, request.schema, prompt_version=request.version)
            if self.client.cached_keys([key]):
                reply = await self.client.ask(messages, request.schema, schema_name=request.step,
                                              prompt_version=request.version)
                self.tally.cached += self._first(key)
                self._seen[memo] = Answer(reply.value, reply.cache_key)
            else:
                if self._first(key):
                    self.tally.count(request.prompt_chars, request.reply_tokens)
                self._seen[memo] = Answer(request.placeholder, None)
        return self._seen[memo]

    async def embed(self, texts: list[str]) -> list[list[float]]:
        settings = self.client.settings
        model = settings.embedding_model or settings.model
        keys = [embedding_key(endpoint=settings.endpoint, model=model, text=str(t)) for t in texts]
        cached = self.client.cached_keys(keys)
        missing = [(k, t) for k, t in zip(keys, texts) if k not in cached]
        fresh = [(k, t) for k, t in missing if self._first(k)]
        if fresh:
            self.tally.count(sum(len(t) for _, t in fresh), 0)
        elif not missing and self._first(keys[0] if keys else "0" * 32):
            self.tally.cached += 1
        return [[1.0] for _ in texts]

    async def prompt_logprobs(self, text: str) -> list[float]:
        settings = self.client.settings
        key = logprobs_key(endpoint=settings.endpoint, model=settings.model, text=str(text))
        if self._first(key):
            if self.client.cached_keys([key]):
                self.tally.cached += 1
            else:
                self.tally.count(len(text), 0)
        return [-1.0]
