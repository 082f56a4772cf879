"""Agreement between metric scores (LLM judges or lexical) and a human label or score column."""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import ParameterError
from ..judge.metrics.criteria import restore_run
from ..store import Store
from .comparison import score_direction

Kind = Literal["label", "score"]


def cohen_kappa(first: Sequence[Any], second: Sequence[Any]) -> float:
    """Unweighted Cohen's kappa of two raters' labels; NaN when chance agreement is total."""
    a = np.asarray(first, dtype=object)
    b = np.asarray(second, dtype=object)
    if a.shape != b.shape or a.ndim != 1:
        raise ParameterError(f"kappa needs two label lists of one length, got {a.shape} and {b.shape}")
    n = a.size
    if n == 0:
        return float("nan")
    codes, labels = pd.factorize(np.concatenate([a, b]))
    k = len(labels)
    confusion = np.zeros((k, k))
    np.add.at(confusion, (codes[:n], codes[n:]), 1.0)
    observed = np.trace(confusion) / n
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0)) / n ** 2
    if expected >= 1.0:
        return float("nan")
    return float((observed - expected) / (1.0 - expected))


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """Spearman and Pearson coefficients with their two-sided p-values (scipy); NaN when undefined."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    nan = float("nan")
    out = {"spearman": nan, "spearman_p": nan, "pearson": nan, "pearson_p": nan}
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = stats.spearmanr(x, y)
        r = stats.pearsonr(x, y)
    out.update(spearman=float(rho.statistic), spearman_p=float(rho.pvalue),
               pearson=float(r.statistic), pearson_p=float(r.pvalue))
    return out


def judge_human_agreement(store: Store, run_id: int, human_column: str, *, kind: Kind = "score",
                          threshold: float | None = None, positive_label: str | None = None,
                          scores: Sequence[str] | None = None,
                          human_threshold: float | None = None) -> pd.DataFrame:
    """Per (model, score): agreement of the score with a human column of the datums' metadata.

    Rows pair by (datum id, model). ``kind='score'``: Spearman and Pearson with
    p-values. ``kind='label'``: Cohen's kappa and raw agreement, where a score
    counts as positive when ``value >= threshold``; without a threshold, each
    score's own: the middle of its declared range (0.5 for 0-1 scores, 3 for a
    1-5 scale), so the worst rating is never positive. A human value is positive
    when it equals ``positive_label`` (case-insensitive) or, without one, when it
    is a number >= ``human_threshold`` (default: the score's threshold, as humans
    rate on the score's scale). ``n`` is the number of datums used.
    """
    if kind not in ("label", "score"):
        raise ParameterError(f"kind must be 'label' or 'score', got {kind!r}")
    for name, value in (("threshold", threshold), ("human threshold", human_threshold)):
        if value is not None and not math.isfinite(value):
            raise ParameterError(f"{name} must be a finite number, got {value!r}")
    run = store.get_run(run_id)
    restore_run(run)
    human, skipped = _human_values(store, run["dataset_id"], human_column, kind, positive_label)
    values = store.score_values(run_id, scores=scores)
    names = list(scores) if scores is not None else list(dict.fromkeys(values["score"]))
    missing = [s for s in names if s not in set(values["score"])]
    if missing or not names:
        raise ParameterError(f"run {run_id} has no scored values for {', '.join(map(repr, missing)) or 'any score'}")
    cuts = {name: threshold if threshold is not None else middle_of_range(name) for name in names} \
        if kind == "label" else {}
    joined = values.merge(human, on=["datum_id", "model"], how="inner")
    models = list(dict.fromkeys([*run["models"], *values["model"]]))
    rows = []
    for model in models:
        for name in names:
            part = joined[(joined["model"] == model) & (joined["score"] == name)]
            row: dict[str, Any] = {"model": model, "score": name, "direction": score_direction(name, None),
                                   "n": len(part)}
            if kind == "label":
                judged = part["value"].to_numpy(dtype=float) >= cuts[name]
                if positive_label is not None:
                    said = part["human"].to_numpy(dtype=bool)
                else:
                    cut = human_threshold if human_threshold is not None else cuts[name]
                    said = part["human"].to_numpy(dtype=float) >= cut
                row["threshold"] = cuts[name]
                row["kappa"] = cohen_kappa(judged.tolist(), said.tolist())
                row["agreement"] = float(np.mean(judged == said)) if len(part) else float("nan")
            else:
                row.update(correlations(part["value"].to_numpy(dtype=float), part["human"].to_numpy(dtype=float)))
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs.update(run_id=run_id, human_column=human_column, kind=kind, threshold=threshold,
                       human_threshold=human_threshold, positive_label=positive_label, skipped=skipped,
                       thresholds=cuts)
    return frame


def middle_of_range(score: str) -> float:
    """The middle of a score's declared range: the default cut between negative and positive labels."""
    try:
        from ..registry import get_metric

        low, high = get_metric(score).value_range
    except ParameterError:
        raise ParameterError(f"score {score!r} declares no range; give a threshold for its labels") from None
    if high is None:
        raise ParameterError(f"score {score!r} has an open range ({low:g} and up); give a threshold for its labels")
    return (float(low) + float(high)) / 2.0


def _human_values(store: Store, dataset_id: int, column: str, kind: Kind,
                  positive_label: str | None) -> tuple[pd.DataFrame, int]:
    """(datum_id, model, human) for rows with a usable human value, and how many non-empty values were unusable."""
    dataset = store.load_dataset(dataset_id)
    raw = [(r.datum_id, r.model, r.metadata[column]) for r in dataset.rows if column in r.metadata]
    if not raw:
        shown = ", ".join(dataset.metadata_columns) or "none"
        raise ParameterError(f"no datum has a human column {column!r}; metadata columns: {shown}")
    given = [(d, m, v) for d, m, v in raw if not _empty(v)]
    if kind == "label" and positive_label is not None:
        wanted = positive_label.strip().casefold()
        parsed = [(d, m, str(v).strip().casefold() == wanted) for d, m, v in given]
        if not any(p for _, _, p in parsed):
            seen = ", ".join(sorted({str(v) for _, _, v in given})[:10])
            raise ParameterError(f"no datum has the label {positive_label!r} in column {column!r}; labels: {seen}")
    else:
        numbers = [(d, m, _number(v)) for d, m, v in given]
        parsed = [(d, m, x) for d, m, x in numbers if x is not None]
        if given and not parsed:
            seen = ", ".join(sorted({str(v) for _, _, v in given})[:10])
            hint = ("say which label is positive (positive_label)" if kind == "label"
                    else "use kind 'label' with a positive label")
            raise ParameterError(f"human column {column!r} holds no numbers ({seen}); {hint}")
    frame = pd.DataFrame(parsed, columns=["datum_id", "model", "human"])
    return frame, len(given) - len(parsed)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
