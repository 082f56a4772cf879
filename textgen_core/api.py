"""`score()`: metrics over a DataFrame, a list of dicts or a file, in one call, for notebooks and scripts.

The rows go through the same loader, checks and runner as the CLI and the
dashboard; only the database is optional (an in-memory one unless a store is
given, so nothing is written to disk).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from .catalog import save_or_reuse
from .datasets import ColumnMapping, load_dataset
from .errors import InputError, ParameterError
from .evaluate import evaluate
from .registry import get_metric
from .store import Store
from .run_export import long_export, wide_export

#: What :func:`score` reads: a DataFrame, rows as dicts, or a CSV / JSON Lines / Parquet file.
Data = pd.DataFrame | Sequence[Mapping[str, Any]] | str | os.PathLike


def score(data: Data, metrics: Sequence[Any], params: Mapping[str, Mapping[str, Any]] | None = None, *,
          judge: Any | None = None, mapping: ColumnMapping | Mapping[str, Any] | None = None,
          store: Store | str | os.PathLike | None = None, name: str | None = None, long: bool = False,
          workers: int | None = None, samples: int = 1, jury: Any | None = None,
          aggregate: str | None = None) -> pd.DataFrame:
    """Score ``data`` with ``metrics``; one row per (datum, model): its ``datum_id``, model, query, prediction,
    references and metadata columns, then one column per score (:func:`textgen_core.run_export.wide_export`).

    ``metrics`` are names, or custom judge metric definitions (a dict with the keys of a rubric file, or a
    :class:`~textgen_core.judge.metrics.criteria.Criterion`), scored under their ``name``.
    ``params`` holds metric parameters (``{"rouge": {"use_stemmer": True}}``); ``judge``
    a :class:`~textgen_core.judge.settings.JudgeSettings` for judge and endpoint
    metrics; ``mapping`` overrides the guessed columns (``{"prediction": "answer"}``).
    ``samples`` asks each judge request that many times; ``jury`` adds judge models to the panel (names on the
    judge's endpoint, or a :class:`~textgen_core.runs.panel.Jury` whose members have their own endpoints);
    each cell is then its votes' mean or majority (``aggregate``), with their spread in its details.
    An unscored cell is NaN in the wide table; ``long=True`` returns one row per cell
    with its ``reason`` and details instead. The run id is in ``frame.attrs["run_id"]``
    (the run lives in ``store``, a Store or a database path, when one is given, else in memory only).
    With the classification metric, ``frame.attrs["classification"]`` holds each model's report (per-label
    scores, averages, confusion matrix, ROC and precision-recall curves, detailed curves).
    Rows given as dicts may lack keys (the value is then missing, as in JSON Lines), except a key the column
    mapping reads that other rows have: that is an error naming the row, never a silently unscored row.
    """
    if isinstance(metrics, str):
        raise ParameterError(f"metrics must be a list of names, e.g. [{metrics!r}]")
    specs = [get_metric(m) if isinstance(m, str) else _define(m) for m in metrics]
    required = {field: ", ".join(s.name for s in specs if field in s.needs) for spec in specs for field in spec.needs}
    dataset = load_dataset(_as_source(data, mapping), mapping, name=name, required=required)
    db = Store(store) if isinstance(store, (str, os.PathLike)) else store if store is not None else Store(":memory:")
    dataset_id, _, _ = save_or_reuse(db, dataset, name or dataset.name)
    run_id = evaluate(db, dataset_id, [spec.name for spec in specs], params, judge=judge, workers=workers,
                      jury=_jury(judge, samples, jury, aggregate))
    frame = long_export(db, run_id) if long else wide_export(db, run_id)
    frame.attrs["run_id"] = run_id
    if "classification" in (spec.name for spec in specs):  # the report a terminal run prints, as data
        from .compare.classification import classification_reports

        frame.attrs["classification"] = classification_reports(db, run_id)
    return frame


def _jury(judge: Any | None, samples: int, jury: Any | None, aggregate: str | None) -> Any | None:
    """The panel and samples of :func:`score` (None: one judge, asked once)."""
    from .runs.panel import Jury

    if isinstance(jury, Jury):
        return jury if samples == 1 and aggregate is None else Jury(jury.members, samples if samples != 1 else
                                                                     jury.samples, aggregate or jury.aggregate,
                                                                     jury.key_vars)
    if samples == 1 and not jury and aggregate is None:
        return None
    if judge is None:
        raise ParameterError("samples and jury need a judge: pass judge=JudgeSettings(...)")
    if isinstance(jury, str):
        raise ParameterError(f"jury must be a list of model names, e.g. [{jury!r}]")
    made = Jury.of(judge, samples=samples, models=list(jury or []), aggregate=aggregate)
    made.warn_if_repeats()
    return made


def _define(definition: Any) -> Any:
    """A custom judge metric given as a definition (a dict with the TOML file's keys, or a Criterion)."""
    from .judge.metrics.criteria import define

    return define(definition, "Python")


def _as_source(data: Data, mapping: ColumnMapping | Mapping[str, Any] | None = None) -> Any:
    """A DataFrame or a path as the loader takes them; rows as dicts become a DataFrame (missing keys None)."""
    if isinstance(data, (pd.DataFrame, str, os.PathLike)):
        if not isinstance(data, pd.DataFrame) and not Path(data).is_file():
            raise ParameterError(f"file not found: {data}")
        return data
    if isinstance(data, Sequence) and all(isinstance(row, Mapping) for row in data):
        columns = list(dict.fromkeys(key for row in data for key in row))
        _check_keys(data, columns, mapping)
        return pd.DataFrame([[row.get(c) for c in columns] for row in data], columns=columns, dtype=object)
    raise ParameterError(f"score() reads a DataFrame, a list of dicts or a file path, not {type(data).__name__}")


def _check_keys(rows: Sequence[Mapping[str, Any]], columns: list[str],
                mapping: ColumnMapping | Mapping[str, Any] | None) -> None:
    """Refuse a dict that lacks a key the mapping reads from the others (a renamed key, most likely)."""
    from .datasets import guess_mapping

    chosen = guess_mapping(columns) if mapping is None else mapping if isinstance(mapping, ColumnMapping) \
        else ColumnMapping.from_dict(mapping)
    used = [c for c in chosen.columns_used() if c in columns]
    for index, row in enumerate(rows):
        lacking = [c for c in used if c not in row]
        if lacking:
            raise InputError(f"this row has no {', '.join(map(repr, lacking))} key, which other rows have and the "
                             f"column mapping reads (its keys: {', '.join(map(str, row)) or 'none'}). Give every row "
                             "the same keys, with None for a missing value", file="rows", row=index + 1,
                             column=lacking[0])
