"""One database file, two programs: the file is open only while an operation uses it, and briefly after.

DuckDB lets one process hold a file for reading and writing, or several
processes hold it read-only (duckdb.org/docs/2.0/connect/concurrency), and a
process that holds it, even idle, locks the others out. So a :class:`FileConnection`, one
per file and mode in a process, opens the file when the first operation starts
and closes it once no operation has used it for :data:`DEFAULT_LINGER` seconds: the dashboard can
stay open while the command line lists, exports or scores on the same file. The short
linger spares back-to-back operations (a command makes dozens) a new DuckDB instance each,
about 28 ms apiece (DuckDB builds its whole function catalog per instance); another program
that wants the file waits at most that long more. When another program
holds the file, opening is retried with backoff up to a timeout, then reported
as a :class:`StoreError` naming the holder; an unreadable file is a StoreError
too, never a traceback. Read-only commands open read-only, so they also run
beside one another; the dashboard opens read-write, as its background jobs
write and one process cannot hold a file in two modes at once.
"""

from __future__ import annotations

import atexit
import os
import random
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Callable, Iterator

import duckdb

from ..errors import StoreBusy, StoreError

#: Environment variable: seconds to wait for a file another program holds (default DEFAULT_LOCK_TIMEOUT).
LOCK_TIMEOUT_ENV = "TEXTGEN_EVAL_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 30.0
#: Words of DuckDB's messages when another process (or this one, in another mode) holds the file.
_BUSY = ("could not set lock", "conflicting lock", "different configuration", "unique file handle conflict")

#: Longest pause between two tries: a reader that lets go of the file briefly (the dashboard between two
#: pages) must not be missed, and a failed try costs DuckDB well under a millisecond.
_MAX_POLL = 0.05

#: Seconds a process lets go of a file before deciding no other program wants it (longer than two polls).
HANDOFF = 0.1

WaitHook = Callable[[str], None]

#: A wait shorter than this is not reported (another program's operation, or its linger, ending).
_QUIET_WAIT = 0.5

#: Environment variable: seconds an idle file stays open in this process (default DEFAULT_LINGER; 0: close at once).
LINGER_ENV = "TEXTGEN_EVAL_LINGER"
DEFAULT_LINGER = 0.2
#: Seconds after which an idle file is closed at once instead of lingering: a process whose operations follow
#: one another closer than the linger (a page polling a run) still lets another program in at least this often.
MAX_HOLD = 0.5


def linger_seconds() -> float:
    """Seconds an idle file stays open: $TEXTGEN_EVAL_LINGER, else DEFAULT_LINGER."""
    try:
        return min(5.0, max(0.0, float(os.environ.get(LINGER_ENV, DEFAULT_LINGER))))
    except ValueError:
        return DEFAULT_LINGER


def lock_timeout() -> float:
    """Seconds to wait for a busy file: $TEXTGEN_EVAL_LOCK_TIMEOUT, else DEFAULT_LOCK_TIMEOUT."""
    try:
        return max(0.0, float(os.environ.get(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT)))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


def _holder(message: str) -> str:
    """'PID 123' (and the program) from DuckDB's lock message, or a plain description."""
    text = message.split("Conflicting lock is held in", 1)
    if len(text) == 2:
        return text[1].split("See also", 1)[0].split(". However", 1)[0].strip().rstrip(".")
    return "another program"


class FileConnection:
    """The process's connection to one file in one mode, open while at least one operation runs and for
    ``linger`` seconds after the last one ended (then closed by a timer, unless an operation started again)."""

    def __init__(self, path: str, read_only: bool, setup: Callable[[duckdb.DuckDBPyConnection], None],
                 linger: float = 0.0) -> None:
        self.path, self.read_only, self._setup, self.linger = path, read_only, setup, linger
        self._lock = threading.Lock()
        self._con: duckdb.DuckDBPyConnection | None = None
        self._users = 0
        self._ready = False  # setup ran once for this file in this process
        #: (device, inode, size, modified) of the file when the last operation ended: changed by the next one's
        #: start, something other than DuckDB wrote, replaced or deleted it meanwhile
        self._identity: tuple[int, ...] | None = None
        self._dirty = False  # a write committed since the last checkpoint
        self._opened_at = 0.0  # when the open connection was opened (time.monotonic)
        self._idle = 0  # bumped by every acquire: a timer set before it finds its number stale and does nothing

    def acquire(self, timeout: float, on_wait: WaitHook | None = None) -> duckdb.DuckDBPyConnection:
        """The open connection (opening the file if needed); pair every call with :meth:`release`."""
        if self._con is None:  # one process cannot hold a file in two modes: let an idle other mode go first
            _close_other_mode(self.path, self.read_only)
        with self._lock:
            self._idle += 1
            if self._con is not None and self._users == 0 and not self._same_file():
                self._close_now()  # the file was deleted or replaced while idle: open what is there now
            if self._con is None:
                self._con = self._open(timeout, on_wait)
                self._opened_at = time.monotonic()
            self._users += 1
            return self._con

    def release(self, keep: bool = False) -> None:
        """One operation ended; the file is closed when none is left (unless ``keep``), after the linger."""
        with self._lock:
            self._users -= 1
            if self._users or keep or self._con is None:
                return
            if self.linger <= 0 or time.monotonic() - self._opened_at >= MAX_HOLD:
                self._close_now()  # held long enough: a program waiting for the file gets a gap now
                return
            if self._dirty:  # written since the last checkpoint: the file itself holds it all, as after a close
                self._dirty = False
                with suppress(duckdb.Error):
                    self._con.execute("CHECKPOINT")
            self._identity = self._file_identity()  # what the file is as this process leaves it
            timer = threading.Timer(self.linger, self._close_if_idle, (self._idle,))
            timer.daemon = True
            timer.start()

    def let_go(self) -> None:
        """Close the file if idle and wait :data:`HANDOFF`: a program that waited for it (unseen, while it
        lingered open here) has it when this process opens it again, and this process then meets it."""
        self.close()
        time.sleep(HANDOFF)

    def wrote(self) -> None:
        """A write transaction committed: the file is checkpointed when the last operation ends."""
        self._dirty = True

    def close(self) -> None:
        """Close the file now if no operation is using it."""
        with self._lock:
            if self._users == 0:
                self._close_now()

    def _close_if_idle(self, idle: int) -> None:
        with self._lock:
            if self._users == 0 and idle == self._idle:
                self._close_now()

    def _close_now(self) -> None:
        if self._con is not None:
            con, self._con, self._dirty = self._con, None, False
            con.close()  # DuckDB checkpoints on close

    def _file_identity(self) -> tuple[int, ...] | None:
        if self.path == ":memory:":
            return None
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns

    def _same_file(self) -> bool:
        return self._file_identity() == self._identity

    def _open(self, timeout: float, on_wait: WaitHook | None) -> duckdb.DuckDBPyConnection:
        if self.read_only and not Path(self.path).exists():
            raise StoreError(f"no database at {self.path}: nothing has been stored there yet")
        if not self.read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            if self.path != ":memory:" and not Path(self.path).exists():
                self._ready = False  # a new (or deleted and recreated) file needs its tables
        deadline, delay, told = time.monotonic() + timeout, 0.02, False
        while True:
            try:
                con = duckdb.connect(self.path, read_only=self.read_only)
                break
            except duckdb.Error as exc:
                message = str(exc)
                if not any(word in message.lower() for word in _BUSY):
                    raise StoreError(f"cannot open the database {self.path}: it is not a readable DuckDB file "
                                     f"(truncated, corrupt or another kind of file?). DuckDB said: "
                                     f"{message.splitlines()[0]}") from None
                _SHARED.add(self.path)
                if time.monotonic() >= deadline:
                    raise StoreBusy(f"the database {self.path} is in use by {_holder(message)} and stayed busy "
                                     f"for {timeout:g} s; try again when it is done, or raise "
                                     f"${LOCK_TIMEOUT_ENV}") from None
                if not told and on_wait is not None and time.monotonic() >= deadline - timeout + _QUIET_WAIT:
                    on_wait(f"the database {self.path} is busy ({_holder(message)} is using it); "
                            f"waiting up to {timeout:g} s...")
                    told = True
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 1.6, _MAX_POLL)
        if not self._ready:
            try:
                self._setup(con)
            except BaseException:
                con.close()
                raise
            self._ready = True
        return con


_FILES: dict[tuple[str, bool], FileConnection] = {}
_SHARED: set[str] = set()  # files this process met another program on


def shared_file(path: str) -> bool:
    """Whether this process met another program holding ``path`` (it uses the file too: never delete it)."""
    return str(Path(path).resolve()) in _SHARED
_FILES_LOCK = threading.Lock()


def file_connection(path: str, read_only: bool,
                    setup: Callable[[duckdb.DuckDBPyConnection], None]) -> FileConnection:
    """The process-wide FileConnection of ``path`` in this mode (so two Store objects share one)."""
    key = (path if path == ":memory:" else str(Path(path).resolve()), read_only)
    with _FILES_LOCK:
        found = _FILES.get(key)
        if found is None or path == ":memory:":
            found = FileConnection(key[0], read_only, setup, 0.0 if path == ":memory:" else linger_seconds())
            if path != ":memory:":
                _FILES[key] = found
        return found


def _close_other_mode(path: str, read_only: bool) -> None:
    """Close this process's idle connection to ``path`` in the other mode (DuckDB refuses a second mode)."""
    with _FILES_LOCK:
        other = _FILES.get((path, not read_only))
    if other is not None:
        other.close()


@atexit.register
def _close_idle_files() -> None:
    """At exit, close what lingers (DuckDB then writes its checkpoint, as a closed file always has)."""
    with _FILES_LOCK:
        files = list(_FILES.values())
    for found in files:
        with suppress(Exception):
            found.close()


def interrupted_query(exc: BaseException) -> bool:
    """Whether ``exc`` is DuckDB's report of a query stopped by a signal (Ctrl-C, SIGTERM).

    DuckDB runs Python's signal handler during a query, drops what it raised and
    raises ``RuntimeError("Query interrupted")`` instead; the store turns that back
    into the KeyboardInterrupt it was, so a stop is never recorded as a failure.
    """
    return isinstance(exc, RuntimeError) and "Query interrupted" in str(exc)


def roll_back(cur: duckdb.DuckDBPyConnection) -> None:
    """End the open transaction without its writes; nothing to do when none is open (its COMMIT ran)."""
    with suppress(duckdb.TransactionException):
        cur.execute("ROLLBACK")


@contextmanager
def registered(cur: duckdb.DuckDBPyConnection, name: str, table: Any) -> Iterator[None]:
    """``table`` (Arrow or pandas) readable as ``name`` in SQL while the block runs.

    When the block fails its transaction is aborted and DuckDB refuses even the
    unregistering; that refusal must not hide the block's own error.
    """
    cur.register(name, table)
    try:
        yield
    except BaseException:
        with suppress(duckdb.Error):
            cur.unregister(name)
        raise
    cur.unregister(name)
