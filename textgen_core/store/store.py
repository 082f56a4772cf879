"""The DuckDB store: the one place that holds a connection and runs SQL.

Every value reaches SQL as a parameter or through a registered Arrow table;
nothing is formatted into a statement. Every public method is one operation:
the file is opened for it (or joins an operation already running in this
process) and closed when the last operation ends, so the dashboard and the
command line can share one file (see :mod:`.connection`). Each thread gets its
own cursor, as Streamlit serves each browser session on its own thread.
"""

from __future__ import annotations

import functools
import inspect
import json
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import duckdb
import pandas as pd
import pyarrow as pa

from ..errors import StoreError
from ..stops import shielded
from .connection import WaitHook, file_connection, interrupted_query, lock_timeout, roll_back, shared_file
from .batch_sql import BATCH_DDL, BatchTablesMixin
from .criteria_sql import CRITERIA_DDL, CriteriaTablesMixin
from .dataset_sql import DatasetTablesMixin, insert_arrow, json_text as _json
from .judge_sql import JudgeTablesMixin
from .judge_writer import StoreWriter, writer_for
from .labels_sql import LABELS_DDL, LabelTablesMixin
from .pair_reads import PairReadsMixin
from .review_sql import ReviewReadsMixin
from .score_reads import ScoreReadsMixin
from .score_writes import CellRecord, insert_cells
from .runner import live_runner, this_runner
from .stream_sql import BLOCK_DDL, StreamTablesMixin
from .votes_sql import VoteTablesMixin
from .schema import DDL, MIGRATIONS, SCHEMA_VERSION

_AGG_SCHEMA = pa.schema([
    ("run_id", pa.int32()), ("model", pa.string()), ("score", pa.string()),
    ("value", pa.float64()), ("details", pa.string()),
])
_RUN_COLUMNS = ("run_id", "dataset_id", "dataset", "created_at", "finished_at", "status", "metrics", "params",
                "signatures", "models", "judge", "error", "duration_s", "judge_calls", "prompt_tokens",
                "completion_tokens", "cost", "kind")


class Store(DatasetTablesMixin, JudgeTablesMixin, BatchTablesMixin, ScoreReadsMixin, PairReadsMixin,
            StreamTablesMixin, LabelTablesMixin, ReviewReadsMixin, CriteriaTablesMixin, VoteTablesMixin):
    """A DuckDB file holding datasets, runs, scores, verdicts and the judge cache."""

    def __init__(self, path: str | Path, *, read_only: bool = False, timeout: float | None = None,
                 on_wait: WaitHook | None = None) -> None:
        """Nothing is opened (or created) here: the first operation opens the file.

        ``read_only`` stores share the file with other readers; ``timeout`` is how long an
        operation waits for a file another program holds (default: :func:`lock_timeout`);
        ``on_wait`` hears one message when an operation starts waiting.
        """
        self.path = str(path)
        self.read_only = read_only
        self.timeout = lock_timeout() if timeout is None else timeout
        self.on_wait = on_wait
        self._file = file_connection(self.path, read_only, _create_schema)
        self._keep = self.path == ":memory:"  # an in-memory database lives as long as its connection
        self._local = threading.local()
        self._write_lock = threading.RLock()

    @property
    def judge_writer(self) -> StoreWriter:
        """The judge's write queue of this store (one per store object; a thread that commits in batches)."""
        return writer_for(self)

    # -- connection plumbing -------------------------------------------------
    @contextmanager
    def session(self) -> Iterator[Store]:
        """Keep the file open across several operations of this thread (one open instead of many)."""
        if getattr(self._local, "depth", 0):
            self._local.depth += 1
            try:
                yield self
            finally:
                self._local.depth -= 1
            return
        con = self._file.acquire(self.timeout, self.on_wait)
        self._local.cur, self._local.depth = con.cursor(), 1
        try:
            yield self
        except RuntimeError as exc:
            if interrupted_query(exc):  # DuckDB turns Ctrl-C or SIGTERM mid-query into this error
                raise KeyboardInterrupt from exc
            raise
        finally:
            cur, self._local.cur, self._local.depth = self._local.cur, None, 0
            cur.close()
            self._file.release(keep=self._keep)

    def check(self) -> None:
        """Open the file once: a StoreError when it is unreadable or stays busy."""
        with self.session():
            pass

    def _cur(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cur", None)
        if cur is None:
            raise RuntimeError("Store._cur() outside an operation: call it from a public Store method "
                               "or inside `with store.session():`")
        return cur

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """All-or-nothing writes; one writer at a time within this process."""
        with self.session(), self._write_lock, shielded():  # a stop signal waits for the COMMIT
            cur = self._cur()
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
                cur.execute("COMMIT")
            except BaseException:
                roll_back(cur)
                raise

    def _frame(self, sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        return self._cur().execute(sql, list(params)).df()

    def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        return self._cur().execute(sql, list(params)).fetchone()

    def close(self) -> None:
        """Close the file if no operation is using it (it is closed after each operation anyway)."""
        self._file.close()

    def remove_if_empty(self) -> bool:
        """Delete this database file when it holds no dataset; True when it did.

        Done while this process holds the file read-write, so no other program has it open, and only when
        this process never met another program on the file: a file another program uses (the dashboard opens
        it for each page) is never unlinked under it.
        """
        if self.read_only or self.path == ":memory:" or shared_file(self.path):
            return False
        cur = self._cur()
        if cur.execute("SELECT count(*) FROM datasets").fetchone()[0]:
            return False
        cur.execute("CHECKPOINT")  # nothing left in the write-ahead log
        for leftover in (Path(self.path), Path(f"{self.path}.wal")):
            leftover.unlink(missing_ok=True)
        return True

    # -- runs ----------------------------------------------------------------
    def create_run(self, dataset_id: int, metrics: Sequence[str], params: Mapping[str, Any],
                   signatures: Mapping[str, str], models: Sequence[str], judge: Mapping[str, Any] | None = None,
                   kind: str | None = None) -> int:
        """Register a run as 'running'. ``judge`` must hold public settings only, never a key. ``kind`` says what
        the run is, for resuming it: 'stored' (a stored dataset), 'streamed' (a file in chunks), 'ray' (Ray)."""
        with self.transaction() as cur:
            run_id = cur.execute(
                "INSERT INTO runs (dataset_id, status, metrics, params, signatures, models, judge, runner, kind) "
                "VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?) RETURNING run_id",
                [dataset_id, list(metrics), _json(params), _json(signatures), list(models), _json(judge),
                 this_runner(), kind],
            ).fetchone()[0]
        return int(run_id)

    def set_run_status(self, run_id: int, status: str, *, error: str | None = None,
                       duration_s: float | None = None) -> None:
        finished = status in {"finished", "failed", "cancelled", "interrupted"}
        with self.transaction() as cur:
            self._require_run(cur, run_id)
            cur.execute(
                "UPDATE runs SET status = ?, error = ?, duration_s = coalesce(?, duration_s), "
                "finished_at = CASE WHEN ? THEN current_timestamp ELSE NULL END WHERE run_id = ?",
                [status, error, duration_s, finished, run_id],
            )

    def claim_run(self, run_id: int) -> None:
        """Mark a run 'running' for this process before resuming it (one transaction).

        Refused with a StoreError while another live program on this machine scores it,
        so two programs never score one run at once; a run whose program died is claimed.
        """
        with self.transaction() as cur:
            self._require_run(cur, run_id)
            status, runner = cur.execute("SELECT status, runner FROM runs WHERE run_id = ?", [run_id]).fetchone()
            holder = live_runner(runner) if status == "running" else None
            if holder is not None:
                raise StoreError(f"run {run_id} is being scored by {holder}: wait for it to finish or stop it, "
                                 "then resume. Nothing was changed.")
            cur.execute("UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, runner = ? "
                        "WHERE run_id = ?", [this_runner(), run_id])

    def add_run_usage(self, run_id: int, *, calls: int = 0, prompt_tokens: int = 0,
                      completion_tokens: int = 0, cost: float | None = None) -> None:
        with self.transaction() as cur:
            cur.execute(
                "UPDATE runs SET judge_calls = judge_calls + ?, prompt_tokens = prompt_tokens + ?, "
                "completion_tokens = completion_tokens + ?, cost = CASE WHEN ? IS NULL THEN cost "
                "ELSE coalesce(cost, 0) + ? END WHERE run_id = ?",
                [calls, prompt_tokens, completion_tokens, cost, cost, run_id],
            )

    def get_run(self, run_id: int) -> dict[str, Any]:
        sql = ("SELECT r.run_id, r.dataset_id, d.name, r.created_at, r.finished_at, r.status, r.metrics, r.params, "
               "r.signatures, r.models, r.judge, r.error, r.duration_s, r.judge_calls, r.prompt_tokens, "
               "r.completion_tokens, r.cost, {kind} FROM runs r LEFT JOIN datasets d USING (dataset_id) "
               "WHERE r.run_id = ?")
        try:
            row = self._one(sql.format(kind="r.kind"), [run_id])
        except duckdb.BinderException:  # a file of schema 2 or older, opened read-only (so not migrated)
            row = self._one(sql.format(kind="NULL"), [run_id])
        if row is None:
            raise StoreError(f"no run with id {run_id}")
        run = dict(zip(_RUN_COLUMNS, row))
        for key in ("params", "signatures", "judge"):
            run[key] = json.loads(run[key]) if run[key] else {}
        run["metrics"] = list(run["metrics"] or [])
        run["models"] = list(run["models"] or [])
        return run

    def list_runs(self) -> pd.DataFrame:
        return self._frame(
            "SELECT r.run_id, d.name AS dataset, r.dataset_id, r.created_at, r.status, r.metrics, r.models, "
            "json_extract_string(r.judge, '$.model') AS judge_model, r.duration_s, r.judge_calls, "
            "r.prompt_tokens, r.completion_tokens, r.cost, r.params, r.signatures, r.error "
            "FROM runs r LEFT JOIN datasets d USING (dataset_id) ORDER BY r.run_id DESC"
        )

    def delete_run(self, run_id: int, *, force: bool = False) -> None:
        """Delete a run with its cells and verdicts; refused while it is scoring unless ``force``."""
        with self.transaction() as cur:
            if not force:
                self._refuse_running(cur, "SELECT run_id, runner FROM runs WHERE run_id = ? AND status = 'running'",
                                     run_id, "its dataset")
            self._delete_run(cur, run_id)

    def _delete_run(self, cur: duckdb.DuckDBPyConnection, run_id: int) -> None:
        for table in ("scores", "run_aggregates"):
            cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])  # table names are constants
        self._delete_judge_rows(cur, run_id)
        self._delete_batch_rows(cur, run_id)
        self._delete_block_rows(cur, run_id)
        self._delete_label_rows(cur, run_id)
        self._delete_vote_rows(cur, run_id)
        cur.execute("DELETE FROM runs WHERE run_id = ?", [run_id])

    @staticmethod
    def _require_run(cur: duckdb.DuckDBPyConnection, run_id: int) -> None:
        """A write for a deleted run is refused, so no orphan row is left behind."""
        if not cur.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchall():
            raise StoreError(f"run {run_id} no longer exists (it was deleted); nothing was written for it")

    # -- scores --------------------------------------------------------------
    def write_cells(self, run_id: int, cells: Iterable[CellRecord]) -> int:
        """Upsert score cells in one transaction; returns how many were written."""
        cells = list(cells)
        if not cells:
            return 0
        with self.transaction() as cur:
            self._require_run(cur, run_id)
            insert_cells(cur, run_id, cells)
        return len(cells)

    def write_aggregates(self, run_id: int, rows: Iterable[tuple[str, str, float | None, Mapping[str, Any] | None]]) -> None:
        """Corpus-level values (corpus BLEU, corpus WER, pass@k over problems) per (model, score)."""
        rows = list(rows)
        if not rows:
            return
        table = pa.Table.from_pydict({
            "run_id": [run_id] * len(rows), "model": [r[0] for r in rows], "score": [r[1] for r in rows],
            "value": [r[2] for r in rows], "details": [_json(r[3]) for r in rows],
        }, schema=_AGG_SCHEMA)
        with self.transaction() as cur:
            insert_arrow(cur, "run_aggregates", table, replace=True)

    def finished_cells(self, run_id: int, *, with_unscored: bool = False) -> set[tuple[str, str, str]]:
        """(datum_id, model, metric) with a scored cell (or any cell, ``with_unscored``), for resuming."""
        rows = self._cur().execute(
            "SELECT DISTINCT datum_id, model, metric FROM scores WHERE run_id = ? AND (? OR value IS NOT NULL)",
            [run_id, with_unscored]).fetchall()
        return {(d, m, k) for d, m, k in rows}

    def summary(self, run_id: int, models: Sequence[str] | None = None) -> pd.DataFrame:
        """Per (model, score): counts, mean, median, std, min, max — computed in SQL."""
        return self._frame(
            "SELECT model, metric, score, count(value) AS n_scored, count(*) - count(value) AS n_unscored, "
            "avg(value) AS mean, median(value) AS median, stddev_samp(value) AS std, "
            "min(value) AS min, max(value) AS max FROM scores WHERE run_id = ? "
            "AND (? IS NULL OR list_contains(?, model)) GROUP BY model, metric, score ORDER BY metric, score, model",
            [run_id, None if models is None else list(models), list(models or [])],
        )

    def aggregates(self, run_id: int) -> pd.DataFrame:
        return self._frame("SELECT model, score, value, details FROM run_aggregates WHERE run_id = ? "
                           "ORDER BY score, model", [run_id])

    def scores(self, run_id: int, *, models: Sequence[str] | None = None, scores: Sequence[str] | None = None,
               datum_id: str | None = None, limit: int | None = None) -> pd.DataFrame:
        """Long-format scores, filtered in SQL."""
        return self._frame(
            "SELECT datum_id, model, metric, score, value, details, reason FROM scores WHERE run_id = ? "
            "AND (? IS NULL OR list_contains(?, model)) AND (? IS NULL OR list_contains(?, score)) "
            "AND (? IS NULL OR datum_id = ?) ORDER BY datum_id, model, score LIMIT ?",
            [run_id, None if models is None else 1, list(models or []), None if scores is None else 1,
             list(scores or []), datum_id, datum_id, limit if limit is not None else 2**62],
        )

    def wide_scores(self, run_id: int, order: Sequence[str] = ()) -> pd.DataFrame:
        """One row per (datum, model), one column per score (``order`` first); empty where unscored."""
        present = [r[0] for r in self._cur().execute(
            "SELECT DISTINCT score FROM scores WHERE run_id = ? ORDER BY score", [run_id]).fetchall()]
        names = [n for n in order if n in present] + [n for n in present if n not in order]
        run = self.get_run(run_id)
        long = self._frame(
            "SELECT s.datum_id AS id, s.model, s.score, s.value, d.row_index FROM scores s "
            "JOIN data d ON d.dataset_id = ? AND d.datum_id = s.datum_id AND d.model = s.model "
            "WHERE s.run_id = ?", [run["dataset_id"], run_id])
        if long.empty:
            return pd.DataFrame(columns=["id", "model", *names])
        wide = long.pivot(index=["row_index", "id", "model"], columns="score", values="value").reset_index()
        wide = wide.sort_values("row_index").drop(columns="row_index")
        wide.columns.name = None
        for name in names:
            if name not in wide.columns:
                wide[name] = float("nan")
        return wide[["id", "model", *names]].reset_index(drop=True)

    # -- verdicts ------------------------------------------------------------
    def verdicts(self, run_id: int, datum_id: str, model: str | None = None) -> pd.DataFrame:
        return self._frame(
            "SELECT model, metric, step, item_index, item, verdict, reason, cache_key FROM verdicts "
            "WHERE run_id = ? AND datum_id = ? AND (? IS NULL OR model = ?) ORDER BY model, metric, step, item_index",
            [run_id, datum_id, model, model],
        )

    def run_verdicts(self, run_id: int) -> pd.DataFrame:
        """Every verdict of a run, for export."""
        return self._frame(
            "SELECT datum_id, model, metric, step, item_index, item, verdict, reason, cache_key FROM verdicts "
            "WHERE run_id = ? ORDER BY datum_id, model, metric, step, item_index", [run_id])

    # -- comparison ----------------------------------------------------------
    def score_values(self, run_id: int, *, models: Sequence[str] | None = None,
                     scores: Sequence[str] | None = None) -> pd.DataFrame:
        """datum_id, model, score, value of scored cells only (no details), for pairing models."""
        return self._frame(
            "SELECT datum_id, model, score, value FROM scores WHERE run_id = ? AND value IS NOT NULL "
            "AND (? IS NULL OR list_contains(?, model)) AND (? IS NULL OR list_contains(?, score)) "
            "ORDER BY score, datum_id, model",
            [run_id, None if models is None else 1, list(models or []), None if scores is None else 1,
             list(scores or [])],
        )


def _create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Tables of a new file (a no-op on an existing one); a read-only connection only reads."""
    config = con.execute("SELECT current_setting('access_mode')").fetchone()
    if config and str(config[0]).lower() == "read_only":
        return
    con.execute("BEGIN TRANSACTION")
    for statement in DDL + BATCH_DDL + LABELS_DDL + CRITERIA_DDL + BLOCK_DDL:
        con.execute(statement)
    found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = int(found[0]) if found and str(found[0]).isdigit() else 1
    for statements in MIGRATIONS[max(0, version - 1):]:
        for statement in statements:
            con.execute(statement)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(max(version, SCHEMA_VERSION))])
    con.execute("COMMIT")


#: DuckDB errors that mean the file itself is damaged or cannot be written, not a bad query.
_FILE_ERRORS = (duckdb.IOException, duckdb.SerializationException)


def _one_operation(method: Any) -> Any:
    @functools.wraps(method)
    def operation(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            with self.session():
                return method(self, *args, **kwargs)
        except _FILE_ERRORS as exc:
            raise StoreError(f"the database {self.path} cannot be read or written (a truncated or corrupt file, "
                             f"or a full disk?). DuckDB said: {str(exc).splitlines()[0]}") from None
    return operation


# Every public method (the mixins' too) runs as one operation: the file is open only while it runs.
for _name in dir(Store):
    _value = inspect.getattr_static(Store, _name)
    if not _name.startswith("_") and inspect.isfunction(_value) and _name not in {"session", "transaction", "check", "close"}:
        setattr(Store, _name, _one_operation(_value))
