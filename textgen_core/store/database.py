"""The connection the parts of a store share, and the two markers of a store operation.

A :class:`Database` is one file seen from this process: it opens the file when
an operation starts and closes it when the last one ends (see :mod:`.connection`),
gives each thread its own cursor (Streamlit serves each browser session on its
own thread) and runs writes one at a time in a transaction that a stop signal
waits for. Each part of the store (datasets, runs, cells...) is a :class:`Part`
built with that Database, and each of its operations says what it is:

- :func:`reads`: runs inside a session (the file open, this thread's cursor);
- :func:`writes`: runs inside a transaction (all or nothing, one writer, a stop
  waits for the COMMIT); a write called inside another joins its transaction.

Both turn a damaged file into a :class:`StoreError`, and DuckDB's report of a
query stopped by Ctrl-C or SIGTERM back into the KeyboardInterrupt it was.
"""

from __future__ import annotations

import functools
import inspect
import json
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import duckdb
import pyarrow as pa

from ..errors import StoreError
from ..stops import shielded
from .connection import WaitHook, file_connection, interrupted_query, lock_timeout, registered, roll_back

#: DuckDB errors that mean the file itself is damaged or cannot be written, not a bad query.
_FILE_ERRORS = (duckdb.IOException, duckdb.SerializationException)

Method = TypeVar("Method", bound=Callable[..., Any])


class Database:
    """One DuckDB file as this process uses it: sessions, per-thread cursors and the write transaction."""

    def __init__(self, path: str | Path, setup: Callable[[duckdb.DuckDBPyConnection], None], *,
                 read_only: bool = False, timeout: float | None = None, on_wait: WaitHook | None = None) -> None:
        """Nothing is opened here: the first session opens the file (``setup`` runs on its first open)."""
        self.path = str(path)
        self.read_only = read_only
        self.timeout = lock_timeout() if timeout is None else timeout
        self.on_wait = on_wait
        self._file = file_connection(self.path, read_only, setup)
        self._keep = self.path == ":memory:"  # an in-memory database lives as long as its connection
        self._local = threading.local()
        #: One writer at a time in this process (re-entrant: a write may call another).
        self.write_lock = threading.RLock()

    @contextmanager
    def session(self) -> Iterator[None]:
        """Keep the file open across several operations of this thread (one open instead of many)."""
        if getattr(self._local, "depth", 0):
            self._local.depth += 1
            try:
                yield
            finally:
                self._local.depth -= 1
            return
        con = self._file.acquire(self.timeout, self.on_wait)
        self._local.cur, self._local.depth, self._local.writing = con.cursor(), 1, False
        try:
            yield
        except RuntimeError as exc:
            if interrupted_query(exc):  # DuckDB turns Ctrl-C or SIGTERM mid-query into this error
                raise KeyboardInterrupt from exc
            raise
        finally:
            cur, self._local.cur, self._local.depth = self._local.cur, None, 0
            cur.close()
            self._file.release(keep=self._keep)

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """All-or-nothing writes; one writer at a time within this process; nested, it joins the open one."""
        with self.session(), self.write_lock:
            if self._local.writing:
                yield self.cursor()
                return
            with shielded():  # a stop signal waits for the COMMIT
                cur = self.cursor()
                cur.execute("BEGIN TRANSACTION")
                self._local.writing = True
                try:
                    yield cur
                    cur.execute("COMMIT")
                    self._file.wrote()
                except BaseException:
                    roll_back(cur)
                    raise
                finally:
                    self._local.writing = False

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor; only inside an operation (or a session)."""
        cur = getattr(self._local, "cur", None)
        if cur is None:
            raise RuntimeError("a store cursor outside an operation: call it from a @reads or @writes method "
                               "or inside `with store.session():`")
        return cur

    def close(self) -> None:
        """Close the file if no operation is using it (it is closed after each operation anyway)."""
        self._file.close()

    def let_go(self) -> None:
        """Close the file if no operation uses it, and give a program waiting for it the time to take it."""
        self._file.let_go()

    def file_error(self, exc: BaseException) -> StoreError:
        return StoreError(f"the database {self.path} cannot be read or written (a truncated or corrupt file, "
                          f"or a full disk?). DuckDB said: {str(exc).splitlines()[0]}")


class Part:
    """One part of the store (a table or a family of reads), built with the Database it shares."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def cur(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor, inside an operation."""
        return self.db.cursor()


def _marked(method: Method, opened: Callable[[Database], Any]) -> Method:
    if inspect.isgeneratorfunction(method):  # the file stays open until the caller stops reading
        @functools.wraps(method)
        def rows(self: Part, *args: Any, **kwargs: Any) -> Any:
            try:
                with opened(self.db):
                    yield from method(self, *args, **kwargs)
            except _FILE_ERRORS as exc:
                raise self.db.file_error(exc) from None
        return rows  # type: ignore[return-value]

    @functools.wraps(method)
    def operation(self: Part, *args: Any, **kwargs: Any) -> Any:
        try:
            with opened(self.db):
                return method(self, *args, **kwargs)
        except _FILE_ERRORS as exc:
            raise self.db.file_error(exc) from None
    return operation  # type: ignore[return-value]


def reads(method: Method) -> Method:
    """Mark a store operation that only reads: it runs in a session of this thread."""
    return _marked(method, Database.session)


def writes(method: Method) -> Method:
    """Mark a store operation that writes: it runs in one transaction (joined when one is open)."""
    return _marked(method, Database.transaction)


#: json.dumps(value, ensure_ascii=False, default=str) without building an encoder per call (a fifth of the time
#: of a million cells' details).
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode


def json_text(value: Any) -> str | None:
    """``value`` as JSON text for a JSON column (None stays NULL)."""
    return None if value is None else _ENCODE(value)


def insert_arrow(cur: duckdb.DuckDBPyConnection, target: str, table: pa.Table, *, replace: bool = False,
                 by_name: bool = False) -> None:
    """Insert (or upsert) every row of an Arrow table into ``target``, a constant table name
    (``by_name``: columns matched by name, not position)."""
    view = f"incoming_{target}"
    with registered(cur, view, table):
        cur.execute(f"INSERT {'OR REPLACE ' if replace else ''}INTO {target} {'BY NAME ' if by_name else ''}"
                    f"SELECT * FROM {view}")
