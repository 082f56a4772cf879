"""The one UI data module: every Streamlit cache of the dashboard lives here.

``st.cache_resource`` holds the :class:`~textgen_core.store.Store` (one per
database path) and the background job registry; ``st.cache_data(ttl=...)``
readers return DataFrames and plain data. Writers go through the store and
then call :func:`refresh`. Pages and render modules never touch DuckDB.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import streamlit as st

from textgen_core.datasets import ColumnMapping, dataset_summary, load_dataset, read_table
from textgen_core.errors import InputError
from textgen_core.evaluate import available_fields
from textgen_core.export import write_table
from textgen_core.judge.metrics.criteria import restore_run
from textgen_core.compare.labels import export_labels
from textgen_core.store import Store

from .jobs import JobRegistry

#: Environment variable naming the database (set by `textgen-eval dashboard`).
DB_ENV = "TEXTGEN_EVAL_DB"
DEFAULT_DB = "textgen_eval.duckdb"
#: Seconds a cached reader result is reused before the database is asked again.
TTL = 30
#: Tables a run can be exported as, with what each holds.
EXPORT_TABLES = {
    "scores_wide": "scores, one row per (datum, model) with its query, prediction, references and metadata",
    "scores_long": "scores, one row per cell, with the reason a cell is unscored and its signature",
    "verdicts": "judge verdicts, one row per item the judge ruled on",
    "labels": "human labels, one row per (datum, model, score, annotator)",
}
EXPORT_FORMATS = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}


def db_path() -> str:
    """The database file: $TEXTGEN_EVAL_DB, else textgen_eval.duckdb in the working directory."""
    return str(Path(os.environ.get(DB_ENV) or DEFAULT_DB).resolve())


@st.cache_resource(show_spinner=False)
def store_at(path: str) -> Store:
    """The Store of one database path, opened once per server process (its readers key their caches on the path)."""
    return Store(path)


def one_open(reader: Callable[..., Any]) -> Callable[..., Any]:
    """A reader making several store calls opens the database file once for all of them (not per call)."""
    @functools.wraps(reader)
    def read(path: str, *args: Any, **kwargs: Any) -> Any:
        with store_at(path).session():
            return reader(path, *args, **kwargs)
    return read


def store() -> Store:
    """The store of the current database; it opens the file per operation, so CLI commands can share it."""
    return store_at(db_path())


@st.cache_resource(show_spinner=False)
def jobs() -> JobRegistry:
    """Background evaluations of this server process; survives reruns and closed tabs."""
    return JobRegistry()


def refresh(*, resources: bool = False) -> None:
    """Drop cached reader results; with ``resources`` also reopen the store.

    The job registry is never cleared: it owns threads that are still running.
    """
    st.cache_data.clear()
    if resources:
        store_at.clear()


# -- readers ---------------------------------------------------------------
@st.cache_data(ttl=TTL, show_spinner=False)
def _datasets(path: str, version: int) -> pd.DataFrame:
    frame = store_at(path).list_datasets()
    frame["models"] = frame["models"].map(lambda v: list(v) if v is not None else [])
    frame["metadata_columns"] = frame["metadata_columns"].map(lambda v: list(v) if v is not None else [])
    return frame


def datasets() -> pd.DataFrame:
    """dataset_id, name, source, created_at, n_rows, models, metadata_columns, n_runs."""
    return _datasets(db_path(), jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False)
def _versions(path: str, dataset_id: int, version: int) -> pd.DataFrame:
    from textgen_core.catalog import version_table

    store = store_at(path)
    frame = version_table(store, store.versions.family_of_dataset(dataset_id)[0])
    frame["models"] = frame["models"].map(lambda v: list(v) if v is not None else [])
    return frame


def dataset_versions(dataset_id: int) -> pd.DataFrame:
    """Every version of the named dataset ``dataset_id`` is a version of (catalog.version_table), oldest first."""
    return _versions(db_path(), int(dataset_id), jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False)
def _runs(path: str, version: int) -> pd.DataFrame:
    store = store_at(path)
    frame = store.list_runs().merge(store.run_names.run_labels(), on="run_id", how="left")
    for column in ("metrics", "models", "tags"):
        frame[column] = frame[column].map(lambda v: [] if v is None or isinstance(v, float) else list(v))  # NaN: none
    return frame


def runs() -> pd.DataFrame:
    """Run history, newest first, as the store lists it, with each run's name, tags and note."""
    return _runs(db_path(), jobs().version)


def counts() -> tuple[int, int]:
    """(datasets, runs) in the database."""
    return len(datasets()), len(runs())


@st.cache_data(ttl=TTL, show_spinner="Reading the dataset...")
def _fields(path: str, dataset_id: int) -> list[str]:
    return sorted(available_fields(store_at(path), dataset_id))


def dataset_fields(dataset_id: int) -> set[str]:
    """Normalized fields with values, plus metadata columns, of one dataset."""
    return set(_fields(db_path(), dataset_id))


@st.cache_data(ttl=TTL, show_spinner=False)
def _run(path: str, run_id: int, version: int) -> dict[str, Any]:
    return store_at(path).get_run(run_id)


def run(run_id: int) -> dict[str, Any]:
    """One run's record (status, metrics, params, signatures, public judge settings, usage)."""
    record = _run(db_path(), run_id, jobs().version)
    restore_run(record)  # its custom judge metrics show their own direction and scale
    return record


@st.cache_data(ttl=600, max_entries=4, show_spinner="Reading the file...")
def upload_table(file_name: str, data: bytes) -> pd.DataFrame:
    """An uploaded file as a DataFrame of text cells (raises InputError naming row and column)."""
    return read_table(data, file_name=file_name)


@st.cache_data(ttl=600, max_entries=16, show_spinner="Checking the mapping...")
def check_upload(file_name: str, data: bytes, mapping: str) -> dict[str, Any]:
    """Load the file under a mapping (JSON text): its summary, or {'error', 'row', 'column'}."""
    try:
        dataset = load_dataset(data, ColumnMapping.from_dict(json.loads(mapping)), file_name=file_name)
    except InputError as exc:
        return {"error": exc.describe(), "row": exc.row, "column": exc.column}
    return dataset_summary(dataset)


def export_frame(run_id: int, table: str) -> pd.DataFrame:
    """The DataFrame behind one export table of a run."""
    from textgen_core.summary import long_scores, scores_with_texts  # scipy: not for Home's first paint

    db = store()
    if table == "scores_wide":
        return scores_with_texts(db, run_id)
    if table == "scores_long":
        return long_scores(db, run_id)
    if table == "verdicts":
        return db.run_verdicts(run_id)
    if table == "labels":
        return export_labels(db, run_id)
    raise ValueError(f"unknown export table {table!r}; known: {', '.join(EXPORT_TABLES)}")


def export_bytes(run_id: int, table: str, fmt: str) -> bytes:
    """A run's table as CSV (formula-safe) or Parquet bytes, written by textgen_core.export."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(EXPORT_FORMATS)}")
    frame = export_frame(run_id, table)
    with tempfile.TemporaryDirectory(prefix="textgen-export-") as folder:
        path = write_table(frame, Path(folder) / f"run{run_id}_{table}.{fmt}")
        return path.read_bytes()


@st.cache_data(ttl=TTL, max_entries=32, show_spinner="Estimating judge calls...")
@one_open
def _estimate(path: str, dataset_id: int, models: tuple[str, ...], metrics: str, judge: str,
              jury: str) -> dict[str, Any]:
    from textgen_core.runs.panel import Jury, restore
    from textgen_core.judge.settings import JudgeSettings
    from textgen_core.runs.jury import estimate_jury

    db = store_at(path)
    wanted = set(models)  # once: a set per row is quadratic in models
    rows = [r for r in db.load_dataset(dataset_id).rows if r.model in wanted]
    lead = JudgeSettings(**json.loads(judge))
    found = estimate_jury(rows, json.loads(metrics), restore(json.loads(jury), lead) or Jury.of(lead), db)
    return dataclasses.asdict(dataclasses.replace(found, first=None))  # the probe request: not picklable, not shown


def judge_estimate(dataset_id: int, models: tuple[str, ...], metrics: str, judge: str,
                   jury: str = "{}") -> dict[str, Any]:
    """Judge calls (cached ones apart), tokens and cost of judge metrics (JSON) under public settings (JSON),
    asked of every panel member and sample of ``jury`` (a Jury's public JSON; '{}': one judge once)."""
    return _estimate(db_path(), dataset_id, models, metrics, judge, jury)


# -- results & explore --
# Readers of the Results and Explore pages. Every distribution is aggregated by the
# store in SQL; only small frames (bins, quartiles, bounded samples, one datum) come back.
# Like the readers above, they key on the job registry's version to see runs that just ended.

#: Rows the Results and Explore tables show at most.
ROW_LIMIT = 500


@st.cache_data(ttl=TTL, show_spinner=False)
@one_open
def _summary(path: str, run_id: int, models: tuple[str, ...] | None, version: int) -> pd.DataFrame:
    from textgen_core.summary import run_summary

    return run_summary(store_at(path), run_id, models)


def summary(run_id: int, models: Any = None) -> pd.DataFrame:
    """Per (model, metric, score) of ``models`` (None: all): counts, mean, median, std, min, max, interval."""
    return _summary(db_path(), run_id, as_tuple(models), jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False)
@one_open
def _review(path: str, run_id: int, version: int) -> tuple[dict[str, str], list[str]]:
    from textgen_core.summary import judge_warnings, unscored_lines

    return unscored_lines(store_at(path), run_id), judge_warnings(store_at(path), run_id)


def review(run_id: int) -> tuple[dict[str, str], list[str]]:
    """Why cells are unscored (one line per score) and warnings about a judge that says nothing."""
    return _review(db_path(), run_id, jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False)
def _aggregates(path: str, run_id: int, version: int) -> pd.DataFrame:
    return store_at(path).aggregates(run_id)


def aggregates(run_id: int) -> pd.DataFrame:
    """Corpus-level values per (model, score), e.g. corpus BLEU."""
    return _aggregates(db_path(), run_id, jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=32)
@one_open
def _classification(path: str, run_id: int, cell: tuple[str, str, str | None] | None, version: int) -> Any:
    from textgen_core.compare import classification as reports

    db = store_at(path)
    return reports.classification_reports(db, run_id) if cell is None else reports.confusion_datums(db, run_id, *cell)


def classification(run_id: int, cell: tuple[str, str, str | None] | None = None) -> Any:
    """{model: classification report}; with ``cell`` (model, gold, predicted or None) the datum ids of that cell."""
    return _classification(db_path(), run_id, cell, jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=64)
def _distribution(path: str, kind: str, run_id: int, score: str, models: tuple[str, ...] | None,
                  low: float | None, high: float | None, size: int, version: int) -> pd.DataFrame:
    db = store_at(path)
    reader = {"histogram": db.score_histogram, "length": db.score_by_length}.get(kind)
    if reader is not None:
        return reader(run_id, score, models=models, low=low, high=high, bins=size)
    if kind == "box":
        return db.score_box(run_id, score, models=models, low=low, high=high)
    if kind == "sample":
        return db.score_sample(run_id, score, models=models, low=low, high=high, per_model=size)
    raise ValueError(f"unknown distribution {kind!r}")


def distribution(kind: str, run_id: int, score: str, *, models: Any = None, low: float | None = None,
                 high: float | None = None, size: int = 30) -> pd.DataFrame:
    """'histogram' (size bins), 'box' (quartiles), 'sample' (size values per model) or 'length' (size bins)."""
    return _distribution(db_path(), kind, run_id, score, as_tuple(models), low, high, size, jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=64)
def _rows(path: str, run_id: int, score: str | None, models: tuple[str, ...] | None, low: float | None,
          high: float | None, unscored: bool, text: str, order: str, limit: int, metadata: tuple[str, str] | None,
          version: int) -> pd.DataFrame:
    return store_at(path).find_rows(run_id, score=score, models=models, low=low, high=high, unscored=unscored,
                                    text=text, order=order, limit=limit, metadata=metadata)


def find_rows(run_id: int, *, score: str | None = None, models: Any = None, low: float | None = None,
              high: float | None = None, unscored: bool = False, text: str = "", order: str = "row",
              limit: int = ROW_LIMIT, metadata: tuple[str, str] | None = None) -> pd.DataFrame:
    """datum_id, model, value, reason, query, prediction (snippets), n_matches: filtered in SQL; ``metadata``
    (column, value) keeps the rows whose metadata column holds the value."""
    return _rows(db_path(), run_id, score, as_tuple(models), low, high, unscored, text.strip(), order, limit,
                 None if metadata is None else (str(metadata[0]), str(metadata[1])), jobs().version)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=128)
@one_open
def _datum(path: str, run_id: int, datum_id: str, version: int) -> dict[str, Any]:
    db = store_at(path)
    run_record = db.get_run(run_id)
    return {
        "rows": [r for r in db.datum(run_record["dataset_id"], datum_id) if r.model in run_record["models"]],
        "scores": db.scores(run_id, datum_id=datum_id),
        "verdicts": db.verdicts(run_id, datum_id),
        "exchanges": db.exchanges(run_id, datum_id),
        "votes": db.votes_for_run(run_id, datum_id=datum_id),
        "every_run": db.datum_scores(run_record["dataset_id"], datum_id),  # in every run of its dataset
    }


def datum(run_id: int, datum_id: str) -> dict[str, Any]:
    """One datum of a run: 'rows' (a Datum per model); 'scores', 'verdicts', judge 'exchanges', panel 'votes'."""
    return _datum(db_path(), run_id, datum_id, jobs().version)


def as_tuple(values: Any) -> tuple[str, ...] | None:
    """A reader's list argument as a hashable cache key (None stays None)."""
    return None if values is None else tuple(values)


@st.cache_data(ttl=TTL, show_spinner=False)
def _scored_counts(path: str, run_id: int, version: int) -> pd.DataFrame:
    return store_at(path).scored_counts(run_id)


def scored_counts(run_id: int) -> pd.DataFrame:
    """model, metric, score, n_scored of every (model, score) with scored values, in the run summary's order."""
    return _scored_counts(db_path(), int(run_id), jobs().version)
