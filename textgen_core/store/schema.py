"""DDL of the DuckDB store. Owned by :mod:`textgen_core.store`; nothing else runs SQL."""

from __future__ import annotations

from .run_names_sql import RUN_NAMES_DDL
from .versions_sql import BACKFILL, VERSIONS_DDL

#: Columns of the ``scores`` table.
SCORE_COLUMNS = """run_id INTEGER NOT NULL,
        datum_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,
        score VARCHAR NOT NULL,
        value DOUBLE,
        details JSON,
        reason VARCHAR"""

#: The votes of repeated judging and judge panels (store/votes_sql.py): one row per member x sample x score of a
#: cell; the cell in ``scores`` is their aggregate. A plain run (one judge, one sample) has none.
VOTES_DDL = """CREATE TABLE IF NOT EXISTS votes (
        run_id INTEGER NOT NULL,
        datum_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,
        score VARCHAR NOT NULL,
        judge VARCHAR NOT NULL,
        sample INTEGER NOT NULL,
        value DOUBLE,
        reason VARCHAR,
        label VARCHAR,
        PRIMARY KEY (run_id, datum_id, model, score, judge, sample))"""

#: Numbered migrations: ``MIGRATIONS[i]`` takes a file at schema version ``i + 1`` to ``i + 2`` (every statement
#: safe to run again). A new file gets the tables as they are now (DDL) and no migration; an older file gets DDL's
#: tables it lacks, then the migrations it lacks, on the first read-write open in a process;
#: ``meta.schema_version`` says where a file is. A migration that adds a column adds it where DDL has it: last.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1 -> 2: which program scores the run (store/runner.py)
    ("ALTER TABLE runs ADD COLUMN IF NOT EXISTS runner VARCHAR",),
    # 2 -> 3: what the run is (a stored dataset, a file streamed in chunks, Ray blocks): resume dispatches on it
    ("ALTER TABLE runs ADD COLUMN IF NOT EXISTS kind VARCHAR",),
    # 3 -> 4: the votes table
    (VOTES_DDL,),
    # 4 -> 5: a vote's label (label and yes/no metrics), which a majority counts (a file at 4 has votes without it)
    ("ALTER TABLE votes ADD COLUMN IF NOT EXISTS label VARCHAR",),
    # 5 -> 6: the scores table without its primary-key index (see DDL), rebuilt with the same rows
    (f"""CREATE OR REPLACE TABLE scores_unkeyed ({SCORE_COLUMNS})""",
     "INSERT INTO scores_unkeyed SELECT * FROM scores",
     "DROP TABLE scores",
     "ALTER TABLE scores_unkeyed RENAME TO scores"),
    # 6 -> 7: dataset versions (store/versions_sql.py: every stored dataset numbered in its family and hashed)
    # and run names, tags and notes (store/run_names_sql.py)
    (*VERSIONS_DDL, BACKFILL, *RUN_NAMES_DDL),
)
SCHEMA_VERSION = 1 + len(MIGRATIONS)

#: The tables of this schema version, as a new file gets them (every statement safe to run again).
DDL: tuple[str, ...] = (
    "CREATE SEQUENCE IF NOT EXISTS dataset_ids START 1",
    "CREATE SEQUENCE IF NOT EXISTS run_ids START 1",
    """CREATE TABLE IF NOT EXISTS meta (
        key VARCHAR PRIMARY KEY,
        value VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS datasets (
        dataset_id INTEGER PRIMARY KEY DEFAULT nextval('dataset_ids'),
        name VARCHAR NOT NULL UNIQUE,
        source VARCHAR,
        created_at TIMESTAMP DEFAULT current_timestamp,
        n_rows INTEGER,
        models VARCHAR[],
        mapping JSON,
        metadata_columns VARCHAR[])""",
    """CREATE TABLE IF NOT EXISTS data (
        dataset_id INTEGER NOT NULL,
        row_index INTEGER NOT NULL,
        datum_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        query VARCHAR,
        prediction VARCHAR,
        refs VARCHAR[],
        contexts VARCHAR[],
        metadata JSON,
        PRIMARY KEY (dataset_id, datum_id, model))""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id INTEGER PRIMARY KEY DEFAULT nextval('run_ids'),
        dataset_id INTEGER NOT NULL,
        created_at TIMESTAMP DEFAULT current_timestamp,
        finished_at TIMESTAMP,
        status VARCHAR NOT NULL,
        metrics VARCHAR[],
        params JSON,
        signatures JSON,
        models VARCHAR[],
        judge JSON,
        error VARCHAR,
        duration_s DOUBLE,
        judge_calls BIGINT DEFAULT 0,
        prompt_tokens BIGINT DEFAULT 0,
        completion_tokens BIGINT DEFAULT 0,
        cost DOUBLE,
        runner VARCHAR,
        kind VARCHAR)""",
    # One cell per (run_id, datum_id, model, score), kept by its one write path (store/score_writes.py), not
    # by an index: a fresh run appends (an index made storing cost more than scoring), a re-scored cell
    # replaces its row. Files of schema 5 and older had a primary key here (migration 5 -> 6).
    f"""CREATE TABLE IF NOT EXISTS scores ({SCORE_COLUMNS})""",
    """CREATE TABLE IF NOT EXISTS run_aggregates (
        run_id INTEGER NOT NULL,
        model VARCHAR NOT NULL,
        score VARCHAR NOT NULL,
        value DOUBLE,
        details JSON,
        PRIMARY KEY (run_id, model, score))""",
    # Judge tables (see textgen_core.judge): one row per item the judge ruled on,
    # the cache of successful replies, and the exchange log behind each step.
    """CREATE TABLE IF NOT EXISTS verdicts (
        run_id INTEGER NOT NULL,
        datum_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,
        step VARCHAR NOT NULL,
        item_index INTEGER NOT NULL,
        item VARCHAR,
        verdict VARCHAR,
        reason VARCHAR,
        cache_key VARCHAR,
        PRIMARY KEY (run_id, datum_id, model, metric, step, item_index))""",
    """CREATE TABLE IF NOT EXISTS judge_cache (
        cache_key VARCHAR PRIMARY KEY,
        base_url VARCHAR,
        model VARCHAR,
        prompt_version VARCHAR,
        request JSON,
        reply VARCHAR,
        parsed JSON,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        created_at TIMESTAMP DEFAULT current_timestamp)""",
    # One row per judge request of a run, kept whatever its outcome, so an
    # unscored cell can show the prompt and the reply that could not be used.
    """CREATE TABLE IF NOT EXISTS exchanges (
        run_id INTEGER NOT NULL,
        datum_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,
        step VARCHAR NOT NULL,
        call_index INTEGER NOT NULL DEFAULT 0,
        status VARCHAR NOT NULL,
        reason VARCHAR,
        cache_key VARCHAR,
        messages JSON,
        reply VARCHAR,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        attempts INTEGER,
        latency_s DOUBLE,
        created_at TIMESTAMP DEFAULT current_timestamp,
        PRIMARY KEY (run_id, datum_id, model, metric, step, call_index))""",
    VOTES_DDL,
    *VERSIONS_DDL,
    *RUN_NAMES_DDL,
)
