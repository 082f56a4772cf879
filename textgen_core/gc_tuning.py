"""Fewer cyclic-GC passes while a hot loop builds many short-lived objects.

Scoring and estimating allocate millions of small containers with no reference
cycles; reference counting frees them at once, but at the default thresholds
the cyclic collector keeps re-walking every live row (7-30% of the time).
The thresholds are process-wide, so concurrent users (the dashboard runs jobs
on threads) share one raised setting: the first to enter raises it, the last
to leave restores what was there before.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_users = 0
_saved: tuple[int, ...] = ()


@contextmanager
def fewer_gc_passes() -> Iterator[None]:
    """Raise the collector's thresholds for the duration; safe to nest and to use from threads."""
    global _users, _saved
    with _lock:
        if _users == 0:
            _saved = gc.get_threshold()
            gen0, gen1, gen2 = _saved
            gc.set_threshold(max(gen0, 50_000), max(gen1, 50), max(gen2, 100))
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                gc.set_threshold(*_saved)
