"""SQL for runs: create, claim, status, usage, read, list, delete. The one write path of ``runs``.

A run that another live program on this machine is scoring is neither resumed
nor deleted under it (see :mod:`.runner`); a write for a deleted run is refused,
so no orphan row is left behind.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import duckdb
import pandas as pd

from ..errors import StoreError
from .database import Part, json_text, reads, writes
from .runner import live_runner, this_runner
from .score_writes import duplicate_cells

_RUN_COLUMNS = ("run_id", "dataset_id", "dataset", "created_at", "finished_at", "status", "metrics", "params",
                "signatures", "models", "judge", "error", "duration_s", "judge_calls", "prompt_tokens",
                "completion_tokens", "cost", "kind")

#: Every table with rows of a run (beside ``runs``): a deleted run leaves none behind (the judge cache is shared).
RUN_TABLES = ("scores", "run_aggregates", "verdicts", "exchanges", "judge_batches", "block_runs", "run_blocks",
              "labels", "votes", "failure_members", "failure_modes", "run_names", "align_splits", "alignments")


def require_run(cur: duckdb.DuckDBPyConnection, run_id: int) -> None:
    """A write for a deleted run is refused, so no orphan row is left behind."""
    if not cur.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchall():
        raise StoreError(f"run {run_id} no longer exists (it was deleted); nothing was written for it")


def delete_run_rows(cur: duckdb.DuckDBPyConnection, run_id: int) -> None:
    """Inside a transaction: a run and every row of it."""
    for table in RUN_TABLES:  # constants
        cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    cur.execute("DELETE FROM runs WHERE run_id = ?", [run_id])


def refuse_running(cur: duckdb.DuckDBPyConnection, sql: str, key: int, what: str) -> None:
    """Refuse while a run (``sql``: run_id, runner of 'running' runs) has a live program or an unknown one;
    a run whose program died is deleted like any other."""
    running = [(run_id, live_runner(runner, this_process=True) if runner else "an unknown program")
               for run_id, runner in cur.execute(sql, [key]).fetchall()]
    running = [(run_id, holder) for run_id, holder in running if holder]
    if running:
        runs = ", ".join(str(run_id) for run_id, _ in running)
        holders = ", ".join(dict.fromkeys(holder for _, holder in running))
        raise StoreError(f"run {runs} is still scoring {what} (by {holders}): cancel it (or let it finish) "
                         "before deleting. "
                         "Nothing was deleted. If the program that ran it has stopped, resume the run "
                         f"or delete it anyway: 'textgen-eval delete-run {runs.split(', ')[0]} --force'.")


class Runs(Part):
    """The ``runs`` table: a run's record, status, runner and judge usage."""

    @writes
    def create_run(self, dataset_id: int, metrics: Sequence[str], params: Mapping[str, Any],
                   signatures: Mapping[str, str], models: Sequence[str], judge: Mapping[str, Any] | None = None,
                   kind: str | None = None) -> int:
        """Register a run as 'running'. ``judge`` must hold public settings only, never a key. ``kind`` says what
        the run is, for resuming it: 'stored' (a stored dataset), 'streamed' (a file in chunks), 'ray' (Ray)."""
        run_id = self.cur.execute(
            "INSERT INTO runs (dataset_id, status, metrics, params, signatures, models, judge, runner, kind) "
            "VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?) RETURNING run_id",
            [dataset_id, list(metrics), json_text(params), json_text(signatures), list(models), json_text(judge),
             this_runner(), kind],
        ).fetchone()[0]
        return int(run_id)

    @writes
    def set_run_status(self, run_id: int, status: str, *, error: str | None = None,
                       duration_s: float | None = None) -> None:
        finished = status in {"finished", "failed", "cancelled", "interrupted"}
        require_run(self.cur, run_id)
        if status == "finished":  # a fresh run's cells were appended without an index: checked once, here
            repeated = duplicate_cells(self.cur, run_id)
            if repeated:
                raise StoreError(f"run {run_id} stored {repeated} cell(s) twice for one (datum, model, score); "
                                 "it is not marked finished. Delete it and run again.")
        self.cur.execute(
            "UPDATE runs SET status = ?, error = ?, duration_s = coalesce(?, duration_s), "
            "finished_at = CASE WHEN ? THEN current_timestamp ELSE NULL END WHERE run_id = ?",
            [status, error, duration_s, finished, run_id],
        )

    @writes
    def claim_run(self, run_id: int) -> None:
        """Mark a run 'running' for this process before resuming it (one transaction).

        Refused with a StoreError while another live program on this machine scores it,
        so two programs never score one run at once; a run whose program died is claimed.
        """
        cur = self.cur
        require_run(cur, run_id)
        status, runner = cur.execute("SELECT status, runner FROM runs WHERE run_id = ?", [run_id]).fetchone()
        holder = live_runner(runner) if status == "running" else None
        if holder is not None:
            raise StoreError(f"run {run_id} is being scored by {holder}: wait for it to finish or stop it, "
                             "then resume. Nothing was changed.")
        cur.execute("UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, runner = ? "
                    "WHERE run_id = ?", [this_runner(), run_id])

    @writes
    def extend_run(self, run_id: int, metrics: Sequence[str], params: Mapping[str, Any],
                   signatures: Mapping[str, str], judge: Mapping[str, Any] | None) -> None:
        """Add metrics to a finished run and claim it for this process (one transaction): ``metrics``,
        ``params``, ``signatures`` and ``judge`` are the run's new whole record (public settings only, never a
        key). The run is scored from its stored dataset from now on (kind 'stored'). Refused unless the run
        is finished."""
        cur = self.cur
        require_run(cur, run_id)
        status = cur.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
        if status != "finished":
            raise StoreError(f"run {run_id} is {status}, not finished: resume it first "
                             f"('textgen-eval resume {run_id}'); nothing was changed")
        cur.execute("UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, runner = ?, metrics = ?, "
                    "params = ?, signatures = ?, judge = ?, kind = 'stored' WHERE run_id = ?",
                    [this_runner(), list(metrics), json_text(params), json_text(signatures), json_text(judge),
                     run_id])

    @writes
    def add_run_usage(self, run_id: int, *, calls: int = 0, prompt_tokens: int = 0,
                      completion_tokens: int = 0, cost: float | None = None) -> None:
        add_usage(self.cur, run_id, calls, prompt_tokens, completion_tokens, cost)

    @writes
    def set_run_models(self, run_id: int, models: Sequence[str]) -> None:
        self.cur.execute("UPDATE runs SET models = ? WHERE run_id = ?", [list(models), run_id])

    @reads
    def get_run(self, run_id: int) -> dict[str, Any]:
        sql = ("SELECT r.run_id, r.dataset_id, d.name, r.created_at, r.finished_at, r.status, r.metrics, r.params, "
               "r.signatures, r.models, r.judge, r.error, r.duration_s, r.judge_calls, r.prompt_tokens, "
               "r.completion_tokens, r.cost, {kind} FROM runs r LEFT JOIN datasets d USING (dataset_id) "
               "WHERE r.run_id = ?")
        try:
            row = self.cur.execute(sql.format(kind="r.kind"), [run_id]).fetchone()
        except duckdb.BinderException:  # a file of schema 2 or older, opened read-only (so not migrated)
            row = self.cur.execute(sql.format(kind="NULL"), [run_id]).fetchone()
        if row is None:
            raise StoreError(f"no run with id {run_id}")
        run = dict(zip(_RUN_COLUMNS, row))
        for key in ("params", "signatures", "judge"):
            run[key] = json.loads(run[key]) if run[key] else {}
        run["metrics"] = list(run["metrics"] or [])
        run["models"] = list(run["models"] or [])
        return run

    @reads
    def list_runs(self) -> pd.DataFrame:
        return self.cur.execute(
            "SELECT r.run_id, d.name AS dataset, r.dataset_id, r.created_at, r.status, r.metrics, r.models, "
            "json_extract_string(r.judge, '$.model') AS judge_model, r.duration_s, r.judge_calls, "
            "r.prompt_tokens, r.completion_tokens, r.cost, r.params, r.signatures, r.error "
            "FROM runs r LEFT JOIN datasets d USING (dataset_id) ORDER BY r.run_id DESC").df()

    @writes
    def delete_run(self, run_id: int, *, force: bool = False) -> None:
        """Delete a run with its cells and verdicts; refused while it is scoring unless ``force``."""
        if not force:
            refuse_running(self.cur, "SELECT run_id, runner FROM runs WHERE run_id = ? AND status = 'running'",
                           run_id, "its dataset")
        delete_run_rows(self.cur, run_id)


def add_usage(cur: duckdb.DuckDBPyConnection, run_id: int, calls: int, prompt_tokens: int, completion_tokens: int,
              cost: float | None) -> None:
    """Inside a transaction: add judge calls, tokens and cost (None: unknown, the stored cost stays) to a run."""
    cur.execute(
        "UPDATE runs SET judge_calls = judge_calls + ?, prompt_tokens = prompt_tokens + ?, "
        "completion_tokens = completion_tokens + ?, cost = CASE WHEN ? IS NULL THEN cost "
        "ELSE coalesce(cost, 0) + ? END WHERE run_id = ?",
        [calls, prompt_tokens, completion_tokens, cost, cost, run_id],
    )
