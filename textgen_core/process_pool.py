"""Chunks of work on a pool of processes, results in input order, and a clean stop on Ctrl-C or SIGTERM.

Workers ignore SIGINT and SIGTERM: a terminal's Ctrl-C and a service manager's
SIGTERM reach the whole process group, and the parent alone decides what a stop
means (mark the run interrupted, keep finished cells). A worker killed by the
signal would break the pool, and on Python 3.11 the pool's manager thread then
fails on the futures the parent cancels, leaving the program hanging at exit.
On a stop the parent cancels what has not started and waits only for the chunks
the workers are on (at most one each).
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import signal
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterable, Iterator

log = logging.getLogger(__name__)


def _ignore_stop_signals() -> None:
    """Pool worker initializer: stop signals are the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def in_order(chunks: Iterable[Any], work: Callable[..., Any], args: tuple, workers: int,
             ahead: int = 1) -> Iterator[Any]:
    """``work(chunk, *args)`` for every chunk, in input order, on a pool of ``workers`` processes (inline for 1).

    At most ``workers + ahead`` chunks are in flight, so memory stays bounded however many chunks come; a
    caller that sometimes stops taking results for a while (to store them) asks for more ``ahead``, so the
    workers keep going meanwhile. A single
    chunk is worked on inline: only one worker could take it, and starting the pool costs seconds (each
    spawned worker imports the package), which made a small file's run slow.
    """
    chunks = iter(chunks)
    first = list(itertools.islice(chunks, 2))
    if workers <= 1 or len(first) < 2:
        for chunk in itertools.chain(first, chunks):
            yield work(chunk, *args)
        return
    chunks = itertools.chain(first, chunks)
    pending: deque[tuple[Any, Future | None]] = deque()
    context = multiprocessing.get_context("spawn")  # safe inside threaded hosts such as Streamlit
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_ignore_stop_signals)
        try:
            for chunk in chunks:
                pending.append((chunk, None))
                pending[-1] = (chunk, pool.submit(work, chunk, *args))
                while len(pending) >= workers + max(1, ahead):
                    yield _oldest(pending)
            while pending:
                yield _oldest(pending)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    except BrokenProcessPool as exc:
        # e.g. a script without an `if __name__ == "__main__":` guard, which spawned workers re-run
        log.warning("process pool unavailable (%s); working on the remaining chunks in this process", exc)
        for chunk in itertools.chain((c for c, _ in pending), chunks):
            yield work(chunk, *args)


def _oldest(pending: deque[tuple[Any, Future | None]]) -> Any:
    """The first chunk's result; the chunk leaves the queue only once it is there (a broken pool keeps it)."""
    result = pending[0][1].result()  # type: ignore[union-attr]
    pending.popleft()
    return result
