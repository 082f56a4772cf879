"""SQL for the judge: verdicts, exchanges, finished cells. A part of the store.

The reply cache is in :mod:`.judge_cache_sql`.

Bulk writes go through registered Arrow tables inside one transaction, as the
rest of the store does; every value is a parameter. Nothing here ever sees an
API key: callers pass public settings and request bodies without headers.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

import pyarrow as pa

from .connection import registered
from .database import Database, Part, insert_arrow, reads, writes
from .cells_sql import Cells
from .judge_cache_sql import CacheRow, JudgeCache, cache_table
from .run_sql import add_usage

if TYPE_CHECKING:
    import duckdb
    import pandas as pd


class CellRows(Protocol):
    """One finished judge cell: its score row, verdict and exchange rows, and the usage behind it."""

    run_id: int
    cell: Sequence[Any]
    verdicts: Sequence[Sequence[Any]]
    exchanges: Sequence[Any]
    rewritten: bool
    #: (calls, prompt tokens, completion tokens, cost or None) spent since the run's previous cell.
    usage: tuple[int, int, int, float | None]


#: A verdict row's fields, in the order of a verdict tuple (mappings with these keys are accepted too).
VERDICT_FIELDS = ("datum_id", "model", "metric", "step", "item_index", "item", "verdict", "reason", "cache_key")

#: An exchange row; see :data:`EXCHANGE_FIELDS` (mappings with these keys are accepted too).
EXCHANGE_FIELDS = ("datum_id", "model", "metric", "step", "call_index", "status", "reason", "cache_key",
                   "messages", "reply", "prompt_tokens", "completion_tokens", "attempts", "latency_s")
EXCHANGE_STATUSES = frozenset({"ok", "cached", "unscored"})

_VERDICT_SCHEMA = pa.schema([
    ("run_id", pa.int32()), ("datum_id", pa.string()), ("model", pa.string()), ("metric", pa.string()),
    ("step", pa.string()), ("item_index", pa.int32()), ("item", pa.string()), ("verdict", pa.string()),
    ("reason", pa.string()), ("cache_key", pa.string()),
])
_EXCHANGE_SCHEMA = pa.schema([
    ("run_id", pa.int32()), ("datum_id", pa.string()), ("model", pa.string()), ("metric", pa.string()),
    ("step", pa.string()), ("call_index", pa.int32()), ("status", pa.string()), ("reason", pa.string()),
    ("cache_key", pa.string()), ("messages", pa.string()), ("reply", pa.string()),
    ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()), ("attempts", pa.int32()),
    ("latency_s", pa.float64()),
])


def _as_record(row: Sequence[Any] | Mapping[str, Any], names: Sequence[str], kind: str) -> list[Any]:
    if isinstance(row, Mapping):
        unknown = set(row) - set(names)
        if unknown:
            raise ValueError(f"{kind} row has unknown field(s): {', '.join(sorted(unknown))}")
        return [row.get(name) for name in names]
    values = list(row)
    if len(values) != len(names):
        raise ValueError(f"{kind} row needs {len(names)} values ({', '.join(names)}), got {len(values)}")
    return values


def _text(value: Any) -> str | None:
    """Verdict values are stored as text: "yes", "0.8", or JSON for structures."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


class JudgeTables(Part):
    """Verdicts, exchanges and finished judge cells; a batch's cache entries go through ``cache``."""

    def __init__(self, db: Database, cache: JudgeCache, cells: Cells) -> None:
        """``cache``: where a batch's reply-cache entries go; ``cells``: the one writer of its cells."""
        super().__init__(db)
        self.cache, self.cells = cache, cells

    @reads
    def exchanges(self, run_id: int, datum_id: str | None = None, model: str | None = None,
                  metric: str | None = None) -> "pd.DataFrame":
        """Judge requests of a run, optionally of one datum/model/metric, in call order."""
        return self.cur.execute(
            "SELECT datum_id, model, metric, step, call_index, status, reason, cache_key, messages, reply, "
            "prompt_tokens, completion_tokens, attempts, latency_s, created_at FROM exchanges WHERE run_id = ? "
            "AND (? IS NULL OR datum_id = ?) AND (? IS NULL OR model = ?) AND (? IS NULL OR metric = ?) "
            "ORDER BY datum_id, model, metric, step, call_index",
            [run_id, datum_id, datum_id, model, model, metric, metric]).df()

    @writes
    def write_judge_batch(self, entries: Sequence[CacheRow], cells: Sequence[CellRows],
                          usage: Sequence[tuple[int, tuple[int, int, int, float | None]]] = ()) -> None:
        """Reply-cache entries, finished cells and billed usage (of any runs) in one transaction, entries first.

        The judge's store writer commits its queue with this, so a cell never lands without the
        cache entries queued before it. ``usage``: (run id, (calls, prompt tokens, completion tokens,
        cost or None)) of requests that ended, added to their runs' totals like a cell's usage.
        """
        if not entries and not cells and not usage:
            return
        runs: dict[int, list[CellRows]] = {}
        for write in cells:
            runs.setdefault(write.run_id, []).append(write)
        spent: dict[int, list[tuple]] = {}
        for run_id, used in usage:
            spent.setdefault(run_id, []).append(used)
        cache = cache_table(entries) if entries else None
        cur = self.cur
        if cache is not None:
            self.cache.keys_added(e.cache_key for e in entries)
            insert_arrow(cur, "judge_cache", cache, replace=True, by_name=True)
        for run_id, run_cells in runs.items():
            write_results(cur, run_id, [v for w in run_cells for v in w.verdicts],
                          [e for w in run_cells for e in w.exchanges], [w.cell[:3] for w in run_cells if w.rewritten])
            self.cells.write_cells(run_id, [w.cell for w in run_cells])  # joins this transaction
        for run_id in dict.fromkeys([*runs, *spent]):
            add_batch_usage(cur, run_id, [w.usage for w in runs.get(run_id, ())] + spent.get(run_id, []))

    @reads
    def judge_unscored_cells(self, run_id: int) -> set[tuple[str, str, str]]:
        """(datum_id, model, metric) of the run's unscored cells: the ones a resume scores again."""
        rows = self.cur.execute(
            "SELECT DISTINCT datum_id, model, metric FROM scores WHERE run_id = ? AND value IS NULL", [run_id]).fetchall()
        return {(d, m, k) for d, m, k in rows}

    @reads
    def verdicts(self, run_id: int, datum_id: str, model: str | None = None) -> "pd.DataFrame":
        return self.cur.execute(
            "SELECT model, metric, step, item_index, item, verdict, reason, cache_key FROM verdicts "
            "WHERE run_id = ? AND datum_id = ? AND (? IS NULL OR model = ?) ORDER BY model, metric, step, item_index",
            [run_id, datum_id, model, model]).df()

    @reads
    def run_verdicts(self, run_id: int) -> "pd.DataFrame":
        """Every verdict of a run, for export."""
        return self.cur.execute(
            "SELECT datum_id, model, metric, step, item_index, item, verdict, reason, cache_key FROM verdicts "
            "WHERE run_id = ? ORDER BY datum_id, model, metric, step, item_index", [run_id]).df()

    @reads
    def verdict_reason_words(self, run_id: int) -> "pd.DataFrame":
        """metric, n_reasons, n_one_word: the judge's stated reasons per metric, and how many are one word or none."""
        return self.cur.execute(
            "SELECT metric, count(*) AS n_reasons, count(*) FILTER (WHERE len(string_split_regex("
            "trim(coalesce(reason, '')), '\\s+')) <= 1) AS n_one_word FROM verdicts WHERE run_id = ? "
            "GROUP BY metric ORDER BY metric", [run_id]).df()

def add_batch_usage(cur: "duckdb.DuckDBPyConnection", run_id: int, usage: Sequence[tuple]) -> None:
    """Add the judge usage behind a batch of cells to its run, in the batch's transaction."""
    calls, prompt, completion = (sum(int(u[i]) for u in usage) for i in range(3))
    costs = [u[3] for u in usage if u[3] is not None]
    if not (calls or prompt or completion):
        return
    add_usage(cur, run_id, calls, prompt, completion, sum(costs) if costs else None)


_STALE_SCHEMA = pa.schema([("datum_id", pa.string()), ("model", pa.string()), ("metric", pa.string())])


def write_results(cur: "duckdb.DuckDBPyConnection", run_id: int, verdicts: Sequence[Sequence[Any]],
                  exchanges: Sequence[Sequence[Any] | Mapping[str, Any]],
                  rewritten: Sequence[tuple[str, str, str]]) -> None:
    """Inside a transaction: drop stale items of re-scored cells, then upsert their verdicts and exchanges (the
    cells themselves go through :meth:`~.cells_sql.Cells.write_cells`)."""
    verdict_records = [_as_record(v, VERDICT_FIELDS, "verdict") for v in verdicts]
    exchange_records = [_as_record(e, EXCHANGE_FIELDS, "exchange") for e in exchanges]
    for record in exchange_records:
        if record[5] not in EXCHANGE_STATUSES:
            raise ValueError(f"exchange status {record[5]!r} is not one of {sorted(EXCHANGE_STATUSES)}")
    tables: list[tuple[str, str, pa.Table]] = []
    if rewritten:
        stale = pa.Table.from_pydict({"datum_id": [c[0] for c in rewritten], "model": [c[1] for c in rewritten],
                                      "metric": [c[2] for c in rewritten]}, schema=_STALE_SCHEMA)
        with registered(cur, "stale_cells", stale):
            for table in ("verdicts", "exchanges"):  # constants
                cur.execute(f"DELETE FROM {table} WHERE run_id = ? AND (datum_id, model, metric) IN "
                            "(SELECT datum_id, model, metric FROM stale_cells)", [run_id])
    if verdict_records:
        tables.append(("verdicts", "judged_verdicts", pa.Table.from_pydict({
            "run_id": [run_id] * len(verdict_records),
            **{name: [(_text(r[i]) if name in ("item", "verdict", "reason") else r[i]) for r in verdict_records]
               for i, name in enumerate(VERDICT_FIELDS)},
        }, schema=_VERDICT_SCHEMA)))
    if exchange_records:
        tables.append(("exchanges", "judged_exchanges", pa.Table.from_pydict({
            "run_id": [run_id] * len(exchange_records),
            **{name: [(_json_text(r[i]) if name == "messages" else r[i]) for r in exchange_records]
               for i, name in enumerate(EXCHANGE_FIELDS)},
        }, schema=_EXCHANGE_SCHEMA)))
    for table, view, data in tables:  # table names are constants
        with registered(cur, view, data):
            cur.execute(f"INSERT OR REPLACE INTO {table} BY NAME SELECT * FROM {view}")
