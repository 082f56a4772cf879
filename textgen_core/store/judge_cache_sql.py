"""SQL for the judge's reply cache: a part of the store, the one write path of ``judge_cache``.

A reply is stored under a key of what changes the answer; the key index (the first 60 bits of every key,
in memory) lets a run prove a miss without opening the database file.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa

from .database import Database, Part, insert_arrow, reads, writes

if TYPE_CHECKING:
    import pandas as pd

#: A validated judge reply as the judge_cache table keeps it: any record with these fields (the judge's
#: CacheEntry fits by field name; the store imports nothing of the judge).
CACHE_FIELDS = ("cache_key", "base_url", "model", "prompt_version", "request", "reply", "parsed", "prompt_tokens",
                "completion_tokens")
CacheRow = Any

_CACHE_SCHEMA = pa.schema([
    ("cache_key", pa.string()), ("base_url", pa.string()), ("model", pa.string()), ("prompt_version", pa.string()),
    ("request", pa.string()), ("reply", pa.string()), ("parsed", pa.string()),
    ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
])


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


class _KeyIndex:
    """The first 60 bits of every judge_cache key, in memory: a key whose prefix is absent is not cached.

    A may-contain filter: a present prefix means "query to be sure", an absent
    one is a certain miss, so a run on a cold cache asks the database nothing.
    8 bytes per entry (10 MB for 1.3M replies). It sees every write made
    through its Store; a write through another Store object on the same file
    is not seen, which can only cost a paid call for a reply that was cached.
    """

    def __init__(self, loaded: np.ndarray) -> None:
        self._lock = threading.Lock()
        self._sorted = np.unique(loaded.astype(np.int64, copy=False))
        self._recent: set[int] = set()

    @staticmethod
    def prefix(key: str) -> int | None:
        try:
            return int(key[:15], 16)
        except ValueError:
            return None

    def add(self, keys: Iterable[str]) -> None:
        with self._lock:
            self._recent.update(p for p in map(self.prefix, keys) if p is not None)
            if len(self._recent) > 100_000:  # fold into the sorted array
                merged = np.fromiter(self._recent, dtype=np.int64, count=len(self._recent))
                self._sorted = np.union1d(self._sorted, merged)
                self._recent = set()

    def maybe_one(self, key: str) -> bool:
        """Whether one key may be cached (the per-ask path: no arrays built)."""
        p = self.prefix(key)
        if p is None:
            return True
        with self._lock:
            if p in self._recent:
                return True
            ordered = self._sorted
        at = int(ordered.searchsorted(p))
        return at < len(ordered) and int(ordered[at]) == p

    def maybe(self, keys: Sequence[str]) -> list[str]:
        """The keys that may be cached (a superset of those that are)."""
        prefixes = [self.prefix(k) for k in keys]
        with self._lock:
            recent, ordered = self._recent, self._sorted
            known = [p is None or p in recent for p in prefixes]
        wanted = np.array([p if p is not None else 0 for p in prefixes], dtype=np.int64)
        at = np.searchsorted(ordered, wanted)
        hit = (at < len(ordered)) & (ordered[np.minimum(at, len(ordered) - 1)] == wanted) if len(ordered) else \
            np.zeros(len(wanted), dtype=bool)
        return [k for k, seen, present in zip(keys, known, hit.tolist()) if seen or present]


class JudgeCache(Part):
    """The reply cache's reads and writes, with an in-memory index of its keys (one per store)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self._judge_keys: _KeyIndex | None = None

    def _judge_key_index(self) -> _KeyIndex:
        """The in-memory prefix index of the cache, loaded on first use (0.2 s per million entries)."""
        index = self._judge_keys
        if index is None:
            with self.db.write_lock:  # no cache write between the load and the first add
                index = self._judge_keys
                if index is None:
                    loaded = self.cur.execute(
                        "SELECT p FROM (SELECT TRY_CAST('0x' || substr(cache_key, 1, 15) AS BIGINT) AS p "
                        "FROM judge_cache) WHERE p IS NOT NULL").fetchnumpy()["p"]
                    index = self._judge_keys = _KeyIndex(np.asarray(loaded))
        return index

    @reads
    def judge_cache_maybe(self, cache_keys: Sequence[str]) -> list[str]:
        """The keys that may be in the cache, from memory (no query): every other key certainly is not."""
        return self._judge_key_index().maybe(list(cache_keys))

    @property
    def judge_cache_surely_missing(self) -> Callable[[str], bool]:
        """(cache_key) -> True when the in-memory index proves it is not cached; False when unsure or not loaded.

        It reads no file, so it is a plain function, not a store operation (an operation opens the file,
        15-20 ms: per ask, that was most of a judge run's time).
        """
        return self._judge_cache_surely_missing

    def _judge_cache_surely_missing(self, cache_key: str) -> bool:
        index = self._judge_keys
        return index is not None and not index.maybe_one(cache_key)

    def keys_added(self, keys: Iterable[str]) -> None:
        """Inside the write that stores them: the index learns ``keys`` before any reader can see them."""
        index = self._judge_keys
        if index is not None:
            index.add(keys)

    @reads
    def judge_cache_get(self, cache_key: str) -> dict[str, Any] | None:
        """One cached reply as a dict of :class:`CacheRow` fields, or None."""
        row = self.cur.execute(f"SELECT {_CACHE_COLUMNS} FROM judge_cache WHERE cache_key = ?",
                                  [cache_key]).fetchone()
        return None if row is None else _cache_row(row)

    @reads
    def judge_cache_entries(self, cache_keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Many cached replies in one query: {cache_key: CacheRow fields} for the keys present."""
        keys = self.judge_cache_maybe(list(dict.fromkeys(cache_keys)))
        if not keys:
            return {}
        rows = self.cur.execute(
            f"SELECT {_CACHE_COLUMNS} FROM judge_cache WHERE cache_key IN (SELECT unnest(?::VARCHAR[]))",
            [keys]).fetchall()
        return {row[0]: _cache_row(row) for row in rows}

    @reads
    def judge_cache_has(self, cache_keys: Sequence[str]) -> set[str]:
        """The subset of ``cache_keys`` present in the cache (one query, for pre-run estimates)."""
        keys = self.judge_cache_maybe(list(dict.fromkeys(cache_keys)))
        if not keys:
            return set()
        rows = self.cur.execute(
            "SELECT cache_key FROM judge_cache WHERE cache_key IN (SELECT unnest(?::VARCHAR[]))", [keys]).fetchall()
        return {r[0] for r in rows}

    @reads
    def judge_cache_values(self, cache_keys: Sequence[str]) -> dict[str, Any]:
        """Parsed replies of many cached exchanges in one query: {cache_key: parsed} for those present."""
        keys = self.judge_cache_maybe(list(dict.fromkeys(cache_keys)))
        if not keys:
            return {}
        rows = self.cur.execute(
            "SELECT cache_key, parsed FROM judge_cache WHERE cache_key IN (SELECT unnest(?::VARCHAR[]))",
            [keys]).fetchall()
        return {key: json.loads(parsed) if parsed is not None else None for key, parsed in rows}

    @reads
    def judge_cache_rows(self, base_url: str, models: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Every cached reply of this endpoint for ``models``: {cache_key: CacheRow fields} (for Ray workers,
        which cannot open the file the driver holds)."""
        rows = self.cur.execute(
            f"SELECT {_CACHE_COLUMNS} FROM judge_cache WHERE base_url = ? AND list_contains(?::VARCHAR[], model)",
            [base_url, list(models)]).fetchall()
        return {row[0]: _cache_row(row) for row in rows}

    @reads
    def judge_cache_holds(self, base_url: str, models: Sequence[str]) -> bool:
        """True when the cache has any reply from this endpoint for one of ``models``."""
        row = self.cur.execute(
            "SELECT 1 FROM judge_cache WHERE base_url = ? AND list_contains(?::VARCHAR[], model) LIMIT 1",
            [base_url, list(models)]).fetchone()
        return row is not None


_CACHE_COLUMNS = ("cache_key, base_url, model, prompt_version, request, reply, parsed, prompt_tokens, "
                  "completion_tokens")


def _cache_row(row: Sequence[Any]) -> dict[str, Any]:
    key, base_url, model, version, request, reply, parsed, p_tokens, c_tokens = row
    return {
        "cache_key": key, "base_url": base_url or "", "model": model or "", "prompt_version": version or "",
        "request": json.loads(request) if request else {}, "reply": reply or "",
        "parsed": json.loads(parsed) if parsed is not None else None,
        "prompt_tokens": int(p_tokens or 0), "completion_tokens": int(c_tokens or 0),
    }


def cache_table(entries: Sequence[CacheRow]) -> pa.Table:
    columns = {name: [getattr(e, name) for e in entries] for name in CACHE_FIELDS}
    columns["request"] = [_json_text(dict(r)) for r in columns["request"]]
    columns["parsed"] = [_json_text(v) for v in columns["parsed"]]
    for name in ("prompt_tokens", "completion_tokens"):
        columns[name] = [int(v) for v in columns[name]]
    return pa.Table.from_pydict(columns, schema=_CACHE_SCHEMA)
