"""The judge reply cache: what the key covers, and where replies are kept.

A key is the sha256 of a canonical JSON of exactly what changes the answer:
endpoint, model, messages, response schema, temperature, seed and prompt
version. The API key, timeout, concurrency, retries and prices are not part of
it, so changing them never throws away paid-for replies. Only validated replies
are stored; errors never are.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

if TYPE_CHECKING:
    from .storage import JudgeStore

log = logging.getLogger(__name__)

#: Bump when the key layout changes, so old entries are simply never hit.
KEY_VERSION = 1


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, no NaN: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def make_key(kind: str, payload: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical JSON of ``payload`` tagged with its kind and key version."""
    text = json.dumps({"kind": kind, "key_version": KEY_VERSION, **payload}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)  # canonical_json, written out: every ask makes a key
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chat_key(*, endpoint: str, model: str, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any],
             temperature: float, seed: int | None, prompt_version: str, sample: int | None = None,
             logprobs: Sequence[Any] | None = None) -> str:
    """``sample``: which of a cell's repeated asks (see :mod:`textgen_core.runs.jury`); ``logprobs``: the field
    whose token log-probabilities are asked for and how many alternatives; None for a plain ask, so keys made
    before repeated judging and weighted ratings existed stay the same."""
    return make_key("chat", {
        "endpoint": endpoint, "model": model, "messages": list(messages), "schema": schema,
        "temperature": float(temperature), "seed": seed, "prompt_version": prompt_version,
    } | ({} if sample is None else {"sample": int(sample)}) | ({} if logprobs is None else {"logprobs": list(logprobs)}))


def embedding_key(*, endpoint: str, model: str, text: str) -> str:
    return make_key("embedding", {"endpoint": endpoint, "model": model, "input": text})


def logprobs_key(*, endpoint: str, model: str, text: str) -> str:
    return make_key("prompt_logprobs", {"endpoint": endpoint, "model": model, "prompt": text})


@dataclass(frozen=True)
class CacheEntry:
    """A validated reply as stored: what was sent, what came back, what it cost."""

    cache_key: str
    base_url: str
    model: str
    prompt_version: str
    request: Mapping[str, Any]
    reply: str
    parsed: Any
    prompt_tokens: int = 0
    completion_tokens: int = 0


class RoundReader:
    """The one batched cache reader: keys asked during a turn of the event loop (or ``settle`` turns) are
    fetched by one call of ``fetch`` ({key: value} of those found), on a worker thread when ``offload``.

    A real ask reads entries this way (a store operation opens the file, so never one per ask, and never on
    the loop); an estimate reads parsed replies inline, its file held open by its session.
    """

    def __init__(self, fetch: Callable[[list[str]], Mapping[str, Any]], *, offload: bool, settle: int = 0) -> None:
        self.fetch, self.offload, self.settle = fetch, offload, settle
        self._rounds: dict[asyncio.AbstractEventLoop, dict[str, asyncio.Future]] = {}
        self._tasks: set[asyncio.Task] = set()  # strong references until each round is read
        self.queries = 0

    async def read(self, key: str) -> tuple[bool, Any]:
        """(found?, value) of ``key``, read with the other keys of its round."""
        loop = asyncio.get_running_loop()
        batch = self._rounds.get(loop)
        if batch is None:
            batch = self._rounds[loop] = {}
            task = loop.create_task(self._read(loop))  # after the asks already runnable in this turn
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        future = batch.get(key)
        if future is None:
            future = batch[key] = loop.create_future()
        return await asyncio.shield(future)

    async def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        for _ in range(self.settle):  # let every runnable task reach its read
            await asyncio.sleep(0)
        batch = self._rounds.pop(loop, {})
        self.queries += 1
        try:
            keys = list(batch)
            found = await loop.run_in_executor(None, self.fetch, keys) if self.offload else self.fetch(keys)
        except Exception as exc:  # noqa: BLE001 - delivered to every waiting ask
            for future in batch.values():
                if not future.done():
                    future.set_exception(exc)
            return
        for key, future in batch.items():
            if not future.done():
                future.set_result((key in found, found.get(key)))


class ReplyCache:
    """The reply cache: the store's judge_cache table, or (without a store) this process's memory.

    :meth:`put` queues an entry on the store's writer (before any cell that uses it) and keeps it in memory
    until committed (for good, without a store); reads skip keys the store's index proves absent.
    """

    def __init__(self, store: "JudgeStore | None") -> None:
        self.store = store
        self.writer = store.judge_writer if store is not None else None
        self._pending: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()
        self._reader = RoundReader(self.get_many, offload=True)

    def peek(self, key: str) -> CacheEntry | None:
        """An entry not yet committed, without a query."""
        with self._lock:
            return self._pending.get(key)

    def surely_missing(self, key: str) -> bool:
        """True when nothing but memory holds replies, or the store's key index proves ``key`` absent (no query)."""
        return self.store is None or self.store.judge_cache_surely_missing(key)

    def get(self, key: str) -> CacheEntry | None:
        entry = self.peek(key)
        if entry is not None:
            return entry
        if self.surely_missing(key):
            return None
        row = self.store.judge_cache_entries([key]).get(key)
        return None if row is None else CacheEntry(**row)

    async def aget(self, key: str) -> CacheEntry | None:
        """:meth:`get` for the event loop: the asks of one moment share one read on a worker thread (a store
        operation opens the file, 15-20 ms; holding it open for a run would lock other programs out)."""
        entry = self.peek(key)
        if entry is not None or self.surely_missing(key):
            return entry
        return (await self._reader.read(key))[1]

    def get_many(self, keys: Sequence[str]) -> dict[str, CacheEntry]:
        with self._lock:
            found = {k: self._pending[k] for k in keys if k in self._pending}
        rest = [k for k in keys if k not in found]
        if rest and self.store is not None:
            found.update((k, CacheEntry(**row)) for k, row in self.store.judge_cache_entries(rest).items())
        return found

    def values(self, keys: Sequence[str]) -> dict[str, Any]:
        """Parsed replies only (lighter than :meth:`get_many`), for estimates."""
        with self._lock:
            found = {k: self._pending[k].parsed for k in keys if k in self._pending}
        rest = [k for k in keys if k not in found]
        if rest and self.store is not None:
            found.update(self.store.judge_cache_values(rest))
        return found

    def put(self, entry: CacheEntry) -> None:
        with self._lock:
            self._pending[entry.cache_key] = entry
        if self.writer is None:
            return

        def written() -> None:
            with self._lock:
                if self._pending.get(entry.cache_key) is entry:
                    del self._pending[entry.cache_key]

        self.writer.put_cache(entry, written)

    def nudge(self) -> None:
        if self.writer is not None:
            self.writer.nudge()

    def flush(self) -> int:
        """Wait until every entry put so far is committed; returns how many were waiting."""
        if self.writer is None:
            return 0
        with self._lock:
            waiting = len(self._pending)
        if waiting:
            self.writer.flush(check=False)  # a failed result write is the run's to raise
        return waiting
