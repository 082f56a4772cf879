"""Readers of the Compare page (and the judge panel's agreement), cached like every reader of ``data``.

compare_models resamples every (candidate, score), a second or two per score at 100k datums, so its tables are
cached per setting for longer than the other readers; a finished job or Refresh still clears them (``data.refresh``
clears every ``st.cache_data``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from textgen_core.summary import jury_view

from .data import as_tuple, db_path, jobs, one_open, store_at

#: Seconds a comparison or an agreement table is reused.
COMPARE_TTL = 600
#: Distinct values of a human column listed at most (for the positive-label picker).
HUMAN_VALUES_MAX = 50


@st.cache_data(ttl=COMPARE_TTL, max_entries=32, show_spinner="Comparing models (bootstrap and permutation test)...")
@one_open
def _comparison(path: str, run_id: int, baseline: str, candidates: tuple[str, ...], scores: tuple[str, ...] | None,
                resamples: int, seed: int, tie_tolerance: float, holm: bool, version: int) -> pd.DataFrame:
    from textgen_core.compare import compare_models  # scipy.stats: ~1 CPU-s of a page's first visit

    return compare_models(store_at(path), run_id, baseline, list(candidates),
                          scores=None if scores is None else list(scores), resamples=resamples, seed=seed,
                          tie_tolerance=tie_tolerance, holm=holm)


def comparison(run_id: int, baseline: str, candidates: Any, *, scores: Any = None, resamples: int = 2000,
               seed: int = 0, tie_tolerance: float = 1e-9, holm: bool = True) -> pd.DataFrame:
    """compare_models of a run: a row per (candidate, score); settings, note, ci_method, undeclared in attrs."""
    return _comparison(db_path(), int(run_id), baseline, tuple(candidates), as_tuple(scores), int(resamples),
                       int(seed), float(tie_tolerance), bool(holm), jobs().version)


@st.cache_data(ttl=COMPARE_TTL, max_entries=32, show_spinner="Comparing...")
def _across(path: str, base_run: int, base_model: str, cand_run: int, cand_model: str, allow: bool,
            version: int) -> pd.DataFrame:
    from textgen_core.compare.across_runs import Side, compare_across

    return compare_across(store_at(path), Side(base_run, base_model), Side(cand_run, cand_model), allow_different=allow)


def comparison_across(base_run: int, base_model: str, cand_run: int, cand_model: str, allow: bool) -> pd.DataFrame:
    """compare_across of two run:model sides with the CLI's defaults (2,000 resamples, seed 0, Holm)."""
    return _across(db_path(), int(base_run), str(base_model), int(cand_run), str(cand_model), bool(allow),
                   jobs().version)


@st.cache_data(ttl=COMPARE_TTL, max_entries=32, show_spinner=False)
def _pairwise(path: str, run_id: int, version: int) -> pd.DataFrame:
    from textgen_core.compare.pairwise import pairwise_summary

    return pairwise_summary(store_at(path), run_id)


def pairwise(run_id: int) -> pd.DataFrame:
    """pairwise_summary of a run: per candidate wins/ties/losses, win rate and interval, flip rate, length bias."""
    return _pairwise(db_path(), int(run_id), jobs().version)


@st.cache_data(ttl=COMPARE_TTL, max_entries=64, show_spinner=False)
@one_open
def _paired(path: str, run_id: int, baseline: str, candidate: str, score: str, version: int) -> pd.DataFrame:
    from textgen_core.compare import paired_differences

    return paired_differences(store_at(path), run_id, baseline, candidate, score)


def paired(run_id: int, baseline: str, candidate: str, score: str) -> pd.DataFrame:
    """datum_id, baseline, candidate, diff of one score over the datums scored for both (paired_differences)."""
    return _paired(db_path(), int(run_id), baseline, candidate, score, jobs().version)


@st.cache_data(ttl=COMPARE_TTL, max_entries=32, show_spinner="Measuring agreement with the human column...")
@one_open
def _agreement(path: str, run_id: int, column: str, kind: str, threshold: float | None, positive_label: str | None,
               human_threshold: float | None, scores: tuple[str, ...] | None, version: int) -> pd.DataFrame:
    from textgen_core.compare import judge_human_agreement

    return judge_human_agreement(store_at(path), run_id, column, kind=kind, threshold=threshold,
                                 positive_label=positive_label, human_threshold=human_threshold,
                                 scores=None if scores is None else list(scores))


def agreement(run_id: int, column: str, *, kind: str = "score", threshold: float | None = None,
              positive_label: str | None = None, human_threshold: float | None = None,
              scores: Any = None) -> pd.DataFrame:
    """judge_human_agreement of a run: per (model, score) n and kappa, or Spearman and Pearson with p-values."""
    return _agreement(db_path(), int(run_id), column, kind, None if threshold is None else float(threshold),
                      positive_label,
                      None if human_threshold is None else float(human_threshold), as_tuple(scores), jobs().version)


@st.cache_data(ttl=COMPARE_TTL, max_entries=32, show_spinner=False)
@one_open
def _human_values(path: str, dataset_id: int, column: str, version: int) -> dict[str, Any]:
    values = [r.metadata.get(column) for r in store_at(path).load_dataset(dataset_id).rows]
    given = [v for v in values if v is not None and str(v).strip() != ""]
    numbers = pd.to_numeric(pd.Series([str(v) for v in given], dtype=object), errors="coerce")
    distinct = sorted({str(v).strip() for v in given})
    return {"count": len(given), "numeric": bool(given) and bool(numbers.notna().all()),
            "min": float(numbers.min()) if numbers.notna().any() else None,
            "max": float(numbers.max()) if numbers.notna().any() else None,
            "distinct": len(distinct), "values": distinct[:HUMAN_VALUES_MAX]}


def human_values(dataset_id: int, column: str) -> dict[str, Any]:
    """What a metadata column holds: count, numeric, min, max, distinct and the first distinct values."""
    return _human_values(db_path(), int(dataset_id), column, jobs().version)


@st.cache_data(ttl=COMPARE_TTL, max_entries=64, show_spinner=False)
@one_open
def _datum_texts(path: str, dataset_id: int, datum_ids: tuple[str, ...], models: tuple[str, ...], width: int,
                 version: int) -> pd.DataFrame:
    db = store_at(path)
    rows = []
    for datum_id in datum_ids:
        found = {r.model: r for r in db.datum(dataset_id, datum_id)}
        first = next(iter(found.values()), None)
        row = {"datum_id": datum_id, "query": _cut(first.query if first else "", width)}
        row.update({f"prediction_{i}": _cut(found[m].prediction if m in found else "", width)
                    for i, m in enumerate(models, start=1)})
        rows.append(row)
    return pd.DataFrame(rows, columns=["datum_id", "query", *(f"prediction_{i}" for i in range(1, len(models) + 1))])


def datum_texts(dataset_id: int, datum_ids: Any, models: Any, width: int = 120) -> pd.DataFrame:
    """datum_id, query, prediction_1... (one per model, in order), cut to ``width`` characters, for a few datums."""
    return _datum_texts(db_path(), int(dataset_id), tuple(datum_ids), tuple(models), int(width), jobs().version)


@st.cache_data(ttl=COMPARE_TTL, max_entries=16, show_spinner="Measuring the judge panel's agreement...")
@one_open
def _panel(path: str, run_id: int, version: int) -> tuple[list[Any], pd.DataFrame]:
    return jury_view(store_at(path), run_id)


def panel(run_id: int) -> tuple[list[Any], pd.DataFrame]:
    """A panel's agreement per score (compare.jury.PanelAgreement) and the unstable cells per model and score of
    a panel or repeated run (summary.jury_view); ([], empty) for a plain run."""
    return _panel(db_path(), int(run_id), jobs().version)


def _cut(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"
