"""What comparisons read from a finished run, kept in this process: a finished run's cells no longer change.

An entry belongs to a database file, a run id and the run's stamp (created_at, finished_at).
Resuming a run makes it 'running' (not cached) and finishing it again sets a new finished_at,
so the first read after either drops the entries of the old stamp; a deleted run cannot be
read any more, and a file made anew gives its runs a new created_at. Unfinished runs and
in-memory databases are read every time. Beyond :data:`MAX_BYTES`, the least recently used
entries go first. Cached arrays are read-only, so no caller can change what the next one gets.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, Hashable, Mapping

import numpy as np

#: Memory the cached values may take (a 1,000,000-row run of 2 models and 4 scores takes about 70 MB).
MAX_BYTES = 512 * 2**20
#: Bytes counted per Python object in an object array (a short datum id string) or per small value.
_OBJECT_BYTES = 64


class RunCache:
    """Values read from finished runs, per (database file, run id, run stamp) and a key of the caller's."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Hashable, ...], tuple[Any, int]] = OrderedDict()
        self._stamps: dict[tuple[str, int], tuple[Any, Any]] = {}
        self._bytes = 0
        #: Lookups answered from memory (tests and benchmarks read it).
        self.hits = 0

    def lookup(self, path: str, run: Mapping[str, Any], key: Hashable) -> Any | None:
        """The value kept for ``key`` of this run (``run`` as :meth:`Store.get_run` read it just now), or None."""
        place = self._place(path, run)
        if place is None:
            return None
        with self._lock:
            self._check_stamp(place, run)
            found = self._entries.get((*place, key))
            if found is None:
                return None
            self._entries.move_to_end((*place, key))
            self.hits += 1
            return found[0]

    def keep(self, path: str, run: Mapping[str, Any], key: Hashable, value: Any) -> None:
        """Keep ``value`` for ``key`` of this run, if the run is finished; arrays are made read-only."""
        place = self._place(path, run)
        if place is None:
            return
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
        size = _size(value)
        with self._lock:
            self._check_stamp(place, run)
            old = self._entries.pop((*place, key), None)
            self._bytes -= old[1] if old else 0
            if size > self.max_bytes:
                return
            self._entries[(*place, key)] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
            self._stamps.clear()
            self._bytes = 0

    @staticmethod
    def _place(path: str, run: Mapping[str, Any]) -> tuple[str, int] | None:
        if path == ":memory:" or run.get("status") != "finished":
            return None
        return os.path.abspath(path), int(run["run_id"])  # one key per file, whatever the working directory

    def _check_stamp(self, place: tuple[str, int], run: Mapping[str, Any]) -> None:
        """Drop the run's entries when it is not the run they were read from (resumed, finished again, new file)."""
        stamp = (run.get("created_at"), run.get("finished_at"))
        if self._stamps.get(place) == stamp:
            return
        for entry in [k for k in self._entries if k[:2] == place]:
            self._bytes -= self._entries.pop(entry)[1]
        self._stamps[place] = stamp


def _size(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes + (value.size * _OBJECT_BYTES if value.dtype == object else 0)
    if isinstance(value, (list, tuple, dict)):
        return (len(value) + 1) * _OBJECT_BYTES
    return _OBJECT_BYTES


#: The process's cache of finished runs (the dashboard's server and a notebook each have one).
RUNS = RunCache()
