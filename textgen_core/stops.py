"""Ctrl-C and SIGTERM stop a run between database writes, never inside one.

A Python signal handler that raises runs at the next bytecode, which may be in
the middle of a DuckDB query: DuckDB then drops the exception and reports a
query error of its own ("Query interrupted", or a failed Arrow scan), and the
stop would be recorded as a failed run. With :func:`install`, a signal that
arrives inside a :func:`shielded` block (the store wraps every write
transaction in one) is held until the block ends, then raised: the write is
whole, and the run is marked interrupted and can be resumed.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the run is marked interrupted and can be resumed."""


_depth = 0  # open shielded blocks of the main thread (signal handlers run only there)
_held: KeyboardInterrupt | None = None


def _handle(signum: int, frame: Any) -> None:
    global _held
    stop = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
    if _depth:
        _held = _held or stop
        return
    raise stop


def install() -> dict[int, Any]:
    """Handle SIGINT and SIGTERM this way (main thread only); returns the handlers to restore."""
    return {sig: signal.signal(sig, _handle) for sig in (signal.SIGINT, signal.SIGTERM)}


def restore(previous: dict[int, Any]) -> None:
    """Put back the handlers :func:`install` replaced."""
    for sig, handler in previous.items():
        signal.signal(sig, handler)


@contextmanager
def shielded() -> Iterator[None]:
    """A stop signal that arrives while the block runs is raised when it ends (no-op off the main thread)."""
    global _depth, _held
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _held is not None:
            stop, _held = _held, None
            raise stop
