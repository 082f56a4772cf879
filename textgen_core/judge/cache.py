"""The judge reply cache: what the key covers, and where replies are kept.

A key is the sha256 of a canonical JSON of exactly what changes the answer:
endpoint, model, messages, response schema, temperature, seed and prompt
version. The API key, timeout, concurrency, retries and prices are not part of
it, so changing them never throws away paid-for replies. Only validated replies
are stored; errors never are.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    from ..store import Store

log = logging.getLogger(__name__)

#: Bump when the key layout changes, so old entries are simply never hit.
KEY_VERSION = 1


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, no NaN: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def make_key(kind: str, payload: Mapping[str, Any]) -> str:
    """sha256 hex of the canonical JSON of ``payload`` tagged with its kind and key version."""
    text = canonical_json({"kind": kind, "key_version": KEY_VERSION, **payload})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chat_key(*, endpoint: str, model: str, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any],
             temperature: float, seed: int | None, prompt_version: str) -> str:
    return make_key("chat", {
        "endpoint": endpoint, "model": model, "messages": list(messages), "schema": schema,
        "temperature": float(temperature), "seed": seed, "prompt_version": prompt_version,
    })


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


class ReplyCache(Protocol):
    def get(self, key: str) -> CacheEntry | None: ...
    def has(self, keys: Iterable[str]) -> set[str]: ...
    def put(self, entry: CacheEntry) -> None: ...
    def flush(self) -> int: ...


class MemoryCache:
    """Process-local cache for clients without a store (tests, one-off scripts)."""

    def __init__(self) -> None:
        self._entries: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> CacheEntry | None:
        with self._lock:
            return self._entries.get(key)

    def has(self, keys: Iterable[str]) -> set[str]:
        with self._lock:
            return {k for k in keys if k in self._entries}

    def put(self, entry: CacheEntry) -> None:
        with self._lock:
            self._entries[entry.cache_key] = entry

    def flush(self) -> int:
        return 0


class StoreCache:
    """The judge_cache table of a :class:`Store`, written behind in small batches.

    One DuckDB commit costs milliseconds, which on a fast local judge would
    make the event loop the bottleneck, so validated replies are buffered and
    written together: when ``batch`` are pending, when the oldest has waited
    ``max_age`` seconds, or on :meth:`flush` (the client flushes whenever it
    goes idle and on ``aclose``). Pending entries are visible to
    :meth:`get`/:meth:`has` at once. Calls are made from the thread running the
    client's event loop; the Store gives each thread its own cursor and
    serialises writes. A failed write is logged and the verdicts kept: losing
    a cache entry costs money later, losing a verdict would cost correctness now.
    """

    def __init__(self, store: "Store", *, batch: int = 64, max_age: float = 1.0) -> None:
        self.store = store
        self.batch = batch
        self.max_age = max_age
        self._pending: dict[str, CacheEntry] = {}
        self._oldest = 0.0
        self._lock = threading.Lock()
        self._warned = False

    def get(self, key: str) -> CacheEntry | None:
        with self._lock:
            entry = self._pending.get(key)
        if entry is not None:
            return entry
        row = self.store.judge_cache_get(key)
        return None if row is None else CacheEntry(**row)

    def has(self, keys: Iterable[str]) -> set[str]:
        keys = list(keys)
        with self._lock:
            pending = {k for k in keys if k in self._pending}
        return pending | self.store.judge_cache_has([k for k in keys if k not in pending])

    def put(self, entry: CacheEntry) -> None:
        with self._lock:
            if not self._pending:
                self._oldest = time.monotonic()
            self._pending[entry.cache_key] = entry
            due = len(self._pending) >= self.batch or time.monotonic() - self._oldest >= self.max_age
        if due:
            self.flush()

    def flush(self) -> int:
        """Write every pending entry in one transaction; returns how many were written."""
        with self._lock:
            entries, self._pending = list(self._pending.values()), {}
        if not entries:
            return 0
        try:
            return self.store.judge_cache_put(entries)
        except Exception as exc:  # noqa: BLE001 - a cache write must never lose a verdict
            if not self._warned:
                log.warning("could not write %d replies to the judge cache (%s: %s); they are kept in the run "
                            "but not cached", len(entries), type(exc).__name__, exc)
                self._warned = True
            return 0
