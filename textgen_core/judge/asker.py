"""The two askers behind the steps: :class:`ClientAsker` asks the judge (each distinct request once per
datum group, see :mod:`.once`); :class:`DryAsker` serves cached replies and counts the rest, for estimates."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import Any, Awaitable, Callable

from .cache import RoundReader, embedding_key, logprobs_key
from .client import JudgeClient, Unscored
from .metric import Answer, StepFailed
from .once import Once
from .prompting import Request, estimate_tokens

class Stopped(Exception):
    """The run is stopping: this step was not started and its cells are dropped, not written."""


class Gate:
    """Admits judge requests until the run starts stopping, and counts those on the wire (their replies
    can be waited for, so a resume never pays twice). ``settled`` runs after each request."""

    def __init__(self, settled: Callable[[], None] | None = None) -> None:
        self.closed = False
        self.active = 0
        self.settled = settled

    async def run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        if self.closed:
            raise Stopped()
        self.active += 1
        try:
            return await make()
        finally:
            self.active -= 1
            if self.settled is not None:
                self.settled()

    async def drain(self, grace: float) -> None:
        """Close, then wait up to ``grace`` seconds for admitted requests to finish."""
        self.closed = True
        deadline = asyncio.get_running_loop().time() + grace
        while self.active and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)


def _failure(exc: Unscored, step: str, messages: Any) -> StepFailed:
    exchange = {"step": step, "messages": exc.messages or messages, "reason": exc.reason, "reply": exc.text,
                "attempts": exc.attempts, "prompt_tokens": exc.prompt_tokens,
                "completion_tokens": exc.completion_tokens, "latency_s": exc.latency_s}
    return StepFailed(exc.reason, exchange)


class ClientAsker:
    """Asks the judge through the client; each distinct request once per group."""

    def __init__(self, client: JudgeClient, gate: Gate) -> None:
        self.client = client
        self.gate = gate
        self._once = Once(remember=True, share_failure=True)

    async def ask(self, request: Request) -> Answer:
        reply = (await self._once.run(request.identity, partial(self._asked, request)))[0]
        return Answer(reply.value, reply.cache_key, reply.logprobs)

    async def _asked(self, request: Request) -> Any:
        """The client's reply to ``request`` through the gate; a failure is the step's."""
        try:
            return await self.gate.run(partial(self.client.ask, request.messages, request.schema,
                                               schema_name=request.step, prompt_version=request.version,
                                               check=request.check, logprobs_field=request.logprobs_field))
        except Unscored as exc:
            raise _failure(exc, request.step, [dict(m) for m in request.messages]) from None

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self._call(("embed", tuple(texts)), "embeddings", list(texts),
                                lambda: self.client.embed(list(texts)))

    async def prompt_logprobs(self, text: str) -> list[float]:
        return await self._call(("logprobs", text), "prompt_logprobs", text, lambda: self.client.prompt_logprobs(text))

    async def _call(self, key: Any, step: str, sent: Any, make: Callable[[], Awaitable[Any]]) -> Any:
        """``make()`` through the gate, once per ``key`` in this group; a failure is the step's."""
        async def once() -> Any:
            try:
                return await self.gate.run(make)
            except Unscored as exc:
                raise _failure(exc, step, sent) from None
        return (await self._once.run(key, once))[0]

    def cancel_pending(self) -> None:
        """Cancel steps nobody waits for any more; mark finished failures as seen."""
        self._once.cancel_pending()


@dataclass
class Tally:
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Calls built on a stand-in for an uncached reply: skipped in a real run when that reply has no items.
    dependent: int = 0
    #: The first request to make (a dry run may time one real call of it on a local endpoint).
    first: Any = None

    def count(self, prompt_tokens: int, reply_tokens: int, *, dependent: bool = False) -> None:
        self.calls += 1
        self.dependent += dependent
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += reply_tokens


def _tagged(value: Any, tag: str) -> Any:
    """A placeholder whose items name the request they stand in for (else requests built on stand-ins of
    different texts would look identical and be counted once)."""
    if not isinstance(value, dict):
        return value
    return {k: [f"{v} [{tag}]" for v in items] if isinstance(items, list) and items and isinstance(items[0], str)
            else items for k, items in value.items()}


class CacheLookup:
    """The dry asks' cache questions: a key the store's index proves absent is a miss at once; the rest are
    read together by the batched :class:`RoundReader` (inline: an estimate holds the file open)."""

    def __init__(self, client: JudgeClient, *, empty: bool = False) -> None:
        self.client = client
        #: True when the cache holds nothing for this judge: every lookup is a miss, no key is computed.
        self.empty = empty
        self._reader = RoundReader(client.cached_values, offload=False, settle=4)

    async def check(self, key: str) -> tuple[bool, Any]:
        """(cached?, parsed reply or None)."""
        if self.empty or self.client.surely_uncached(key):
            return False, None
        return await self._reader.read(key)


class DryAsker:
    """Answers from the cache when it can, otherwise counts the call and returns a placeholder. ``counted``
    is shared by the estimate's groups: a request several datums make is paid once in a run."""

    def __init__(self, client: JudgeClient, tally: Tally, counted: set[Any], lookup: CacheLookup) -> None:
        self.client = client
        self.tally = tally
        self.counted = counted
        self.lookup = lookup
        self._once = Once(remember=True, share_failure=True)
        self._stand_ins: list[str] = []  # tags of placeholders this asker returned

    def _first(self, key: Any) -> bool:
        digest = bytes.fromhex(key[:32]) if isinstance(key, str) else hash(key)
        if digest in self.counted:
            return False
        self.counted.add(digest)
        return True

    async def ask(self, request: Request) -> Answer:
        return (await self._once.run(request.identity, lambda: self._dry(request)))[0]

    async def _dry(self, request: Request) -> Answer:
        memo = request.identity
        if self.lookup.empty:  # nothing cached: skip the costly exact key
            key: Any = memo
            cached, value = False, None
        else:
            key = self.client.cache_key(request.messages, request.schema, prompt_version=request.version,
                                        logprobs_field=request.logprobs_field)
            cached, value = await self.lookup.check(key)
        if cached:
            self.tally.cached += self._first(key)
            answer = Answer(value, key)
        else:
            if self._first(key):  # a reply is at most max_tokens long, however much the schema invites
                self.tally.count(request.prompt_tokens, min(request.reply_tokens, self.client.settings.max_tokens),
                                 dependent=self._built_on_stand_in(request))
                if self.tally.first is None and not self._built_on_stand_in(request):
                    self.tally.first = request
            tag = f"{hash(memo) & 0xFFFFFFFF:08x}"
            self._stand_ins.append(f"[{tag}]")
            answer = Answer(_tagged(request.placeholder, tag), None)
        return answer

    def _built_on_stand_in(self, request: Request) -> bool:
        """True when the prompt quotes items of a placeholder (verdicts on statements not yet extracted)."""
        if not self._stand_ins:
            return False
        text = "".join(str(m.get("content", "")) for m in request.messages)
        return any(tag in text for tag in self._stand_ins)

    async def _counted(self, keys: list[str], prompt_tokens: int) -> None:
        cached = [hit for hit, _ in await asyncio.gather(*(self.lookup.check(k) for k in keys))]
        fresh = [k for k, hit in zip(keys, cached) if not hit and self._first(k)]
        if fresh:
            self.tally.count(prompt_tokens, 0)
        elif all(cached) and keys and self._first(keys[0]):
            self.tally.cached += 1

    async def embed(self, texts: list[str]) -> list[list[float]]:
        settings = self.client.settings
        model = settings.embedding_model or settings.model
        await self._counted([embedding_key(endpoint=settings.endpoint, model=model, text=str(t)) for t in texts]
                            if not self.lookup.empty else [("embed", str(t)) for t in texts],
                            sum(estimate_tokens(str(t)) for t in texts))
        return [[1.0] for _ in texts]

    async def prompt_logprobs(self, text: str) -> list[float]:
        settings = self.client.settings
        await self._counted([logprobs_key(endpoint=settings.endpoint, model=settings.model, text=str(text))
                             if not self.lookup.empty else ("logprobs", str(text))],
                            estimate_tokens(str(text)))
        return [-1.0]
