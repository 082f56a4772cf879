"""The DuckDB store: the one place that holds a connection and runs SQL.

A :class:`Store` is a few parts sharing one :class:`~.database.Database` (one
file, a cursor per thread, one writer at a time): ``datasets``, ``runs``,
``cells`` (the scores of runs), ``charts`` and ``pairs`` (reads for the
dashboard and comparisons), ``judge`` and ``cache`` (verdicts, exchanges, the
reply cache), ``votes`` (of judge panels and repeated judging), ``batches``,
``streams`` (datasets stored chunk by chunk, runs scored in blocks),
``annotations`` (human labels), ``definitions`` (saved custom judge metrics), ``alignment`` (splits and
results of aligning a judge with people's labels), ``report`` (the
rows a report shows datum by datum), ``memory`` (upload mappings by file hash, named judge profiles),
``failures`` (failure modes grouped from the judge's explanations), ``versions`` (datasets as versions of a
named dataset), ``run_names`` (runs' names, tags and notes) and ``over_time`` (reads across the runs of a
dataset: history, leaderboard).
Each operation of a part is marked ``@reads`` or ``@writes`` (see
:mod:`.database`): the file is open only while operations run, so the dashboard
and the command line can share it (see :mod:`.connection`).

Every value reaches SQL as a parameter or through a registered Arrow table;
nothing is formatted into a statement. New code calls a part
(``store.datasets.save_dataset(...)``); the names callers have always used on a
Store (``store.save_dataset(...)``) stay, each declared below as one part's operation.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import duckdb

from .align_sql import ALIGN_DDL, Alignments
from .batch_sql import BATCH_DDL, JudgeBatches
from .cells_sql import Cells
from .connection import WaitHook, shared_file
from .criteria_sql import CRITERIA_DDL, Criteria
from .database import Database
from .dataset_sql import Datasets
from .failures_sql import FAILURES_DDL, FailureTables
from .judge_cache_sql import JudgeCache
from .judge_sql import JudgeTables
from .judge_writer import StoreWriter, writer_for
from .labels_sql import LABELS_DDL, Labels
from .memory_sql import MEMORY_DDL, Memory
from .report_reads import ReportReads
from .over_time_sql import OverTime
from .pair_reads import PairReads
from .run_names_sql import RunNames
from .run_sql import Runs
from .schema import DDL, MIGRATIONS, SCHEMA_VERSION
from .score_reads import ScoreCharts
from .score_writes import CellRecord
from .stream_sql import BLOCK_DDL, StreamTables
from .versions_sql import DatasetVersions
from .votes_sql import Votes

__all__ = ["CellRecord", "Store"]


class _Via:
    """``Store.name``: the operation ``name`` of one part (declared, not looked up by reflection)."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, store: Store | None, owner: type | None = None) -> Any:
        if store is None:
            return self
        return getattr(getattr(store, self.part), self.name)


class Store:
    """A DuckDB file holding datasets, runs, scores, verdicts and the judge cache."""

    def __init__(self, path: str | Path, *, read_only: bool = False, timeout: float | None = None,
                 on_wait: WaitHook | None = None) -> None:
        """Nothing is opened (or created) here: the first operation opens the file.

        ``read_only`` stores share the file with other readers; ``timeout`` is how long an
        operation waits for a file another program holds (default: :func:`~.connection.lock_timeout`);
        ``on_wait`` hears one message when an operation starts waiting.
        """
        self.db = Database(path, _create_schema, read_only=read_only, timeout=timeout, on_wait=on_wait)
        self.datasets = Datasets(self.db)
        self.runs = Runs(self.db)
        self.cells = Cells(self.db)
        self.charts = ScoreCharts(self.db)
        self.pairs = PairReads(self.db)
        self.cache = JudgeCache(self.db)
        self.judge = JudgeTables(self.db, self.cache, self.cells)
        self.batches = JudgeBatches(self.db)
        self.streams = StreamTables(self.db)
        self.annotations = Labels(self.db)
        self.definitions = Criteria(self.db)
        self.alignment = Alignments(self.db)
        self.memory = Memory(self.db)
        self.votes = Votes(self.db, self.cache)
        self.report = ReportReads(self.db)
        self.failures = FailureTables(self.db)
        self.versions = DatasetVersions(self.db)
        self.run_names = RunNames(self.db)
        self.over_time = OverTime(self.db)

    @property
    def judge_writer(self) -> StoreWriter:
        """The judge's write queue of this store (one per store object; a thread that commits in batches)."""
        return writer_for(self)

    @property
    def path(self) -> str:
        return self.db.path

    @property
    def read_only(self) -> bool:
        return self.db.read_only

    @contextmanager
    def session(self) -> Iterator[Store]:
        """Keep the file open across several operations of this thread (one open instead of many)."""
        with self.db.session():
            yield self

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Several writes of this thread as one (all or nothing); the operations inside join it."""
        with self.db.transaction() as cur:
            yield cur

    def check(self) -> None:
        """Open the file once: a StoreError when it is unreadable or stays busy."""
        with self.db.session():
            pass

    def close(self) -> None:
        """Close the file if no operation is using it (it is closed after each operation anyway)."""
        self.db.close()

    def remove_if_empty(self) -> bool:
        """Delete this database file when it holds no dataset; True when it did.

        Done while this process holds the file read-write, so no other program has it open, and only when
        this process never met another program on the file: a file another program uses (the dashboard opens
        it for each page) is never unlinked under it.
        """
        if self.read_only or self.path == ":memory:" or shared_file(self.path):
            return False
        self.db.let_go()  # a program waiting for the file while it lingered open here takes it now
        with self.db.session():
            if shared_file(self.path):
                return False
            cur = self.db.cursor()
            if cur.execute("SELECT count(*) FROM datasets").fetchone()[0]:
                return False
            cur.execute("CHECKPOINT")  # nothing left in the write-ahead log
            for leftover in (Path(self.path), Path(f"{self.path}.wal")):
                leftover.unlink(missing_ok=True)
        return True

    # -- datasets ------------------------------------------------------------
    save_dataset = _Via("datasets")
    list_datasets = _Via("datasets")
    dataset_id = _Via("datasets")
    load_dataset = _Via("datasets")
    rename_dataset = _Via("datasets")
    delete_dataset = _Via("datasets")
    dataset_fields = _Via("datasets")
    datum = _Via("datasets")
    # -- runs ----------------------------------------------------------------
    create_run = _Via("runs")
    set_run_status = _Via("runs")
    claim_run = _Via("runs")
    add_run_usage = _Via("runs")
    set_run_models = _Via("runs")
    get_run = _Via("runs")
    list_runs = _Via("runs")
    delete_run = _Via("runs")
    # -- score cells ---------------------------------------------------------
    write_cells = _Via("cells")
    write_aggregates = _Via("cells")
    finished_cells = _Via("cells")
    summary = _Via("cells")
    aggregates = _Via("cells")
    scores = _Via("cells")
    datum_scores = _Via("cells")
    wide_scores = _Via("cells")
    score_values = _Via("cells")
    unscored_reasons = _Via("cells")
    detail_reasons = _Via("cells")
    # -- charts and pairs ----------------------------------------------------
    score_histogram = _Via("charts")
    score_box = _Via("charts")
    score_sample = _Via("charts")
    score_by_length = _Via("charts")
    score_moments = _Via("charts")
    score_counts = _Via("charts")
    find_rows = _Via("charts")
    scored_pairs = _Via("pairs")
    scored_counts = _Via("pairs")
    dataset_datum_ids = _Via("pairs")
    score_arrays = _Via("pairs")
    # -- judge: verdicts, exchanges, reply cache, batches --------------------
    exchanges = _Via("judge")
    write_judge_batch = _Via("judge")
    judge_unscored_cells = _Via("judge")
    verdicts = _Via("judge")
    run_verdicts = _Via("judge")
    verdict_reason_words = _Via("judge")
    judge_cache_maybe = _Via("cache")
    judge_cache_surely_missing = _Via("cache")
    judge_cache_get = _Via("cache")
    judge_cache_entries = _Via("cache")
    judge_cache_has = _Via("cache")
    judge_cache_values = _Via("cache")
    judge_cache_rows = _Via("cache")
    judge_cache_holds = _Via("cache")
    judge_batch_add = _Via("batches")
    judge_batch_status = _Via("batches")
    judge_batches = _Via("batches")
    # -- streamed datasets and block-scored runs -----------------------------
    memory_limit = _Via("streams")
    free_dataset_names = _Via("streams")
    start_dataset = _Via("streams")
    append_rows = _Via("streams")
    finish_dataset = _Via("streams")
    same_rows = _Via("streams")
    move_runs = _Via("streams")
    record_block_run = _Via("streams")
    block_run = _Via("streams")
    finished_blocks = _Via("streams")
    data_arrow = _Via("streams")
    corpus_cells = _Via("streams")
    # -- labels and saved criteria -------------------------------------------
    write_labels = _Via("annotations")
    labels = _Via("annotations")
    save_criterion = _Via("definitions")
    criteria = _Via("definitions")
    load_criterion = _Via("definitions")
    save_split = _Via("alignment")
    split = _Via("alignment")
    record_alignment = _Via("alignment")
    alignments = _Via("alignment")
    # -- remembered upload mappings and judge profiles ------------------------
    remember_mapping = _Via("memory")
    remembered_mapping = _Via("memory")
    save_judge_profile = _Via("memory")
    judge_profiles = _Via("memory")
    # -- votes of panels and repeated judging --------------------------------
    write_votes = _Via("votes")
    write_vote_batch = _Via("votes")
    votes_for_run = _Via("votes")
    vote_cells = _Via("votes")


#: Every table of a new file, in order (each statement safe to run again).
TABLES = DDL + BATCH_DDL + LABELS_DDL + CRITERIA_DDL + ALIGN_DDL + BLOCK_DDL + MEMORY_DDL + FAILURES_DDL
#: What a file whose ``meta`` holds it (with the current version) was set up with: the tables and migrations of
#: this code. Any edit to them changes it, and the next read-write open runs them again (as it did before).
SCHEMA_DIGEST = hashlib.sha256("\n;\n".join([*TABLES, *(s for m in MIGRATIONS for s in m)]).encode()).hexdigest()[:16]


def _create_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Tables of a new file, migrations of an older one; a read-only connection only reads.

    A file already set up by this code (its version and :data:`SCHEMA_DIGEST` in ``meta``) is left as it is:
    the first read-write open of an existing file in a process reads two values instead of running every
    statement in a write transaction (which the close then had to checkpoint). A new file (no table at all)
    gets the tables as they are now and no migration, all statements sent at once: a new store (every
    ``--db new.duckdb``, every test's file) cost ~95 CPU-ms here, two thirds of it migrations of tables just
    created and one DuckDB call per statement.
    """
    config = con.execute("SELECT current_setting('access_mode')").fetchone()
    if config and str(config[0]).lower() == "read_only":
        return
    new = not con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
                          ).fetchone()[0]
    if not new and _set_up(con):
        return
    con.execute("BEGIN TRANSACTION")
    con.execute(";\n".join(TABLES))  # constants, no values: one call runs them in order
    version = SCHEMA_VERSION
    if not new:
        found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(found[0]) if found and str(found[0]).isdigit() else 1
        missing = [s for statements in MIGRATIONS[max(0, version - 1):] for s in statements]
        if missing:
            con.execute(";\n".join(missing))
    con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?), ('schema_digest', ?)",
                [str(max(version, SCHEMA_VERSION)), SCHEMA_DIGEST])
    con.execute("COMMIT")


def _set_up(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the file holds every table and migration of this code (False for a new file: no ``meta`` yet)."""
    try:
        found = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('schema_version', 'schema_digest')"
                                 ).fetchall())
    except duckdb.CatalogException:
        return False
    return found.get("schema_version") == str(SCHEMA_VERSION) and found.get("schema_digest") == SCHEMA_DIGEST
