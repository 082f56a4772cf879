"""The store's judge write queue: one thread that writes reply-cache entries, finished cells and run usage,
in batches. It belongs to the store (``Store.judge_writer``); the judge only queues plain records on it.

A DuckDB commit costs milliseconds (about 5 in memory, 11 on a file), so a
commit per reply or per cell on the event loop's thread made the loop, not the
judge, the bottleneck. Every judge write of a :class:`~textgen_core.store.Store`
is queued here instead, in the order it was made, and a single writer thread
commits the queue in batches: when ``max_items`` are waiting, when the oldest
has waited ``max_delay`` seconds, or at once on :meth:`StoreWriter.flush` /
:meth:`StoreWriter.nudge`.

Guarantees:

* One queue per store, first in first out, and each batch is one transaction.
  A reply is queued before any cell that uses it, so a cell never lands
  without the cache entries it depends on; a cell lands whole with its
  verdicts and failed exchanges.
* A crash loses at most the batch not yet committed (at most ``max_delay``
  seconds of work). Its cells are scored again on resume; their replies come
  from the cache when their entries landed in an earlier batch.
* What each request billed (:meth:`StoreWriter.put_usage`) is queued as the request
  ends, right after its reply: the run's totals (``runs.judge_calls``, tokens,
  cost) hold every reply the cache holds, whether or not its cell was written,
  so a resume's spending cap starts from them.
* Only validated replies are ever queued as cache entries (errors are not).
* A failed cache write is logged and dropped (it costs money later, not
  correctness); a failed result write is raised by the next
  :meth:`StoreWriter.flush` or :meth:`StoreWriter.check`, which stops the run.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence


class JudgeStore(Protocol):
    """What the writer needs of a store: one transaction writing a batch of replies, cells and usage."""

    def write_judge_batch(self, entries: Sequence[Any], cells: Sequence[Any], usage: Any = ...) -> None: ...

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Usage:
    """What requests of a run billed, queued as they end (or usage no written cell carries)."""

    run_id: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


class StoreWriter:
    """Batches judge writes of one store on a writer thread (started on demand, ends when idle)."""

    def __init__(self, store: JudgeStore, *, max_items: int = 512, max_delay: float = 0.2,
                 idle_exit: float = 2.0) -> None:
        self._store = weakref.ref(store)  # the registry below must not keep a store alive
        self.max_items, self.max_delay, self.idle_exit = max_items, max_delay, idle_exit
        self._cond = threading.Condition()
        self._items: list[tuple[Any, Callable[[], None] | None]] = []
        self._queued = 0  # items ever queued
        self._done = 0  # items ever committed (or given up on)
        self._urgent = False
        self._first_at = 0.0
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._warned = False
        self._closing = False
        self.commits = 0

    # -- producers (any thread) ----------------------------------------------------------
    def put_cache(self, entry: Any, on_done: Callable[[], None] | None = None) -> None:
        """Queue a validated reply (a record with the judge_cache columns as fields); ``on_done`` runs on the
        writer thread once it is written (or dropped)."""
        self._put("cache", entry, on_done)

    def put_cell(self, write: Any) -> None:
        """Queue one finished cell: a record with ``run_id``, ``cell``, ``verdicts``, ``exchanges``, ``rewritten``
        and ``usage`` (spent since the run's previous cell), written with the replies queued before it."""
        self._put("cell", write, None)

    def put_usage(self, run_id: int, calls: int, prompt_tokens: int, completion_tokens: int,
                  cost: float | None) -> None:
        """Queue usage that no cell carries; it lands after everything queued before it."""
        self._put("usage", _Usage(run_id, calls, prompt_tokens, completion_tokens, cost), None)

    def _put(self, kind: str, item: Any, on_done: Callable[[], None] | None) -> None:
        with self._cond:
            if not self._items:
                self._first_at = time.monotonic()
            self._items.append(((kind, item), on_done))
            self._queued += 1
            self._ensure_thread()
            if len(self._items) >= self.max_items:
                self._cond.notify_all()

    def nudge(self) -> None:
        """Write what is queued without waiting for a full batch (e.g. when the client goes idle)."""
        with self._cond:
            if self._items:
                self._urgent = True
                self._cond.notify_all()

    def flush(self, timeout: float | None = None, *, check: bool = True) -> None:
        """Block until everything queued so far is committed; with ``check``, raise a failed result write."""
        with self._cond:
            target = self._queued
            if self._done < target:
                self._urgent = True
                self._ensure_thread()
                self._cond.notify_all()
                if not self._cond.wait_for(lambda: self._done >= target, timeout):
                    raise TimeoutError(f"judge results not written within {timeout} s")
        if check:
            self.check()

    def close(self, timeout: float = 30.0) -> None:
        """Write what is queued, then end the writer thread (a later put starts a new one)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._cond:
            self._closing = False

    def check(self) -> None:
        """Raise the error of a failed result write, once."""
        with self._cond:
            error, self._error = self._error, None
        if error is not None:
            raise error

    # -- the writer thread ----------------------------------------------------------------
    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="judge-store-writer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: bool(self._items) or self._closing, self.idle_exit) \
                        or not self._items:
                    self._thread = None  # idle or closing: end; the next put starts a new thread
                    return
                while (len(self._items) < self.max_items and not self._urgent and not self._closing
                       and time.monotonic() < self._first_at + self.max_delay):
                    self._cond.wait(self._first_at + self.max_delay - time.monotonic())
                batch, self._items, self._urgent = self._items, [], False
            try:
                self._write([item for item, _ in batch])
            finally:
                for _, on_done in batch:
                    if on_done is not None:
                        on_done()
                with self._cond:
                    self._done += len(batch)
                    self._cond.notify_all()

    def _write(self, items: list[tuple[str, Any]]) -> None:
        entries = [i for kind, i in items if kind == "cache"]
        cells = [i for kind, i in items if kind == "cell"]
        usage = [(u.run_id, (u.calls, u.prompt_tokens, u.completion_tokens, u.cost))
                 for kind, u in items if kind == "usage"]
        store = self._store()
        if store is None:  # nobody holds the store any more: there is nothing to write to
            return
        try:
            store.write_judge_batch(entries, cells, usage)
            self.commits += 1
            return
        except Exception:  # noqa: BLE001 - retried apart below, to keep what can be kept
            pass
        if entries or usage:
            try:
                store.write_judge_batch(entries, [], usage)
            except Exception as exc:  # noqa: BLE001 - a cache write must never lose a verdict
                if not self._warned:
                    self._warned = True
                    log.warning("could not write %d replies to the judge cache (%s: %s); they are kept in the "
                                "run but not cached", len(entries), type(exc).__name__, exc)
        if cells:
            try:
                store.write_judge_batch([], cells)
            except Exception as exc:  # noqa: BLE001 - raised in the run's thread by flush()/check()
                with self._cond:
                    self._error = self._error or exc


_WRITERS: "weakref.WeakKeyDictionary[JudgeStore, StoreWriter]" = weakref.WeakKeyDictionary()
_WRITERS_LOCK = threading.Lock()


def writer_for(store: JudgeStore) -> StoreWriter:
    """The writer of ``store`` (one per store object, shared by every client and run in the process)."""
    with _WRITERS_LOCK:
        writer = _WRITERS.get(store)
        if writer is None:
            writer = _WRITERS[store] = StoreWriter(store)
        return writer


@atexit.register
def _flush_all() -> None:
    """A script that never closed its client still gets its replies written on a normal exit."""
    with _WRITERS_LOCK:
        writers = list(_WRITERS.values())
    for writer in writers:
        try:
            writer.flush(timeout=30, check=False)
            writer.close()  # its thread holds a database cursor, which must go before the database does
        except Exception:  # noqa: BLE001 - the process is exiting; nothing else to do
            log.exception("judge writes could not be flushed at exit")
