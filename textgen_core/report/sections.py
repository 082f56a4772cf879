"""The optional parts of a report, each read through the library function the CLI prints it with.

Each returns plain data (or None / [] when the run has nothing of the kind):
the comparison (``compare``), bias-corrected numbers (``compare --calibrate``,
``agreement --labels``), the judge panel's agreement (``summary``), the judge
against people (``agreement --labels``), classification reports and slices.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import pandas as pd

from ..export import plain_value
from ..store import Store

#: Disagreements between the judge and people listed per score.
DISAGREEMENTS_SHOWN = 20


def _records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    if frame is None or frame.empty:
        return []
    return [{str(k): plain_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _grid(frame: pd.DataFrame) -> dict[str, Any]:
    """A small table (confusion matrix) as rows, columns and counts, every label as text."""
    if frame is None or frame.empty:
        return {"rows": [], "columns": [], "counts": [], "row_name": "", "column_name": ""}
    return {"rows": [str(i) for i in frame.index], "columns": [str(c) for c in frame.columns],
            "counts": [[plain_value(v) for v in row] for row in frame.to_numpy().tolist()],
            "row_name": str(frame.index.name or ""), "column_name": str(frame.columns.name or "")}


def comparison_part(store: Store, run_id: int, run: dict[str, Any], options: Any) -> dict[str, Any] | None:
    """`compare RUN --baseline B --candidate C...`: the same frame, its settings, notes and warnings."""
    if options.baseline is None:
        return None
    from ..compare import compare_models
    from ..compare.pairwise import pairwise_summary

    frame = compare_models(store, run_id, options.baseline, list(options.candidates) if options.candidates else None,
                           scores=list(options.scores) if options.scores else None, resamples=options.resamples,
                           seed=options.seed, tie_tolerance=options.tie_tolerance, holm=options.holm,
                           confidence=options.confidence)
    attrs = frame.attrs
    pairwise = pairwise_summary(store, run_id, confidence=options.confidence, seed=options.seed)
    part = {
        "baseline": options.baseline, "candidates": list(attrs["candidates"]), "scores": list(attrs["scores"]),
        "settings": {k: attrs[k] for k in ("resamples", "seed", "confidence", "alpha", "tie_tolerance", "holm",
                                           "family", "ci_method")},
        "rows": _records(frame),
        "note": attrs.get("note", ""),
        "undeclared": list(attrs.get("undeclared", [])),
        "warnings": list(dict.fromkeys([*attrs.get("warnings", []), *_row_warnings(frame)])),
        "pairwise": _records(pairwise),
        "classification": [],
    }
    if "classification" in run["metrics"]:
        from ..compare.classification import compare_classification

        for candidate in attrs["candidates"]:
            found = compare_classification(store, run_id, options.baseline, candidate, resamples=options.resamples,
                                           confidence=options.confidence, seed=options.seed)
            part["classification"].append({"candidate": candidate, **{k: plain_value(v)
                                                                     for k, v in asdict(found).items()}})
    return part


def _row_warnings(frame: pd.DataFrame) -> list[str]:
    """The warnings the comparison attaches to its rows (a constant judge, too few labels; each names its score),
    once each, with the candidate."""
    if "warnings" not in frame:
        return []
    out = []
    for candidate, found in zip(frame["candidate"], frame["warnings"]):
        for warning in (found if isinstance(found, (list, tuple)) else [found] if isinstance(found, str) else []):
            if warning:
                out.append(f"{candidate}: {warning}")
    return out


def calibration_part(store: Store, run_id: int, options: Any, comparison: dict[str, Any] | None
                     ) -> dict[str, Any] | None:
    """Bias-corrected means (and, with a comparison, deltas) beside the judge-only ones, from the run's labels."""
    if not options.calibrate:
        return None
    from ..compare.human_report import calibrated_deltas, calibrated_means

    labelled = sorted(set(store.labels(run_id)["score"]))
    if not labelled:
        return {"scores": [], "means": [], "deltas": [],
                "note": "no score of this run has human labels yet (label in the dashboard, or 'textgen-eval labels "
                        "import'): no bias-corrected numbers"}
    means = calibrated_means(store, run_id, labelled, confidence=options.confidence)
    deltas = pd.DataFrame()
    if comparison:
        chosen = [s for s in comparison["scores"] if s in labelled]
        if chosen:
            deltas = calibrated_deltas(store, run_id, comparison["baseline"], comparison["candidates"], chosen,
                                       confidence=options.confidence)
    return {"scores": labelled, "means": _records(means), "deltas": _records(deltas), "note": ""}


def panel_part(store: Store, run_id: int) -> dict[str, Any] | None:
    """A judge panel's (or repeated judging's) agreement per score, unstable cells and each member's mean."""
    from ..summary import jury_summary, jury_view

    reports, unstable = jury_view(store, run_id)
    members = jury_summary(store, run_id)
    if not reports and unstable.empty and members.empty:
        return None
    scores = []
    for r in reports:
        scores.append({"score": r.score, "level": r.level, "members": list(r.members), "n_cells": r.n_cells,
                       "n_units": r.n_units, "alpha": plain_value(r.alpha), "low": plain_value(r.low),
                       "high": plain_value(r.high), "reason": r.reason, "threshold": r.threshold,
                       "n_split": r.n_split,
                       "split": [{"datum_id": str(d), "model": str(m)}
                                 for d, m in zip(r.split.get("datum_id", []), r.split.get("model", []))][:20]})
    return {"scores": scores, "unstable": _records(unstable), "members": _records(members)}


def people_part(store: Store, run_id: int) -> list[dict[str, Any]]:
    """The judge against people (`agreement RUN --labels`) for every score with labels."""
    from ..compare.human_report import agreement_report

    labels = store.labels(run_id)
    out = []
    for score in sorted(set(labels["score"])):
        report = agreement_report(store, run_id, score)
        out.append({
            "score": report.score, "kind": report.kind, "annotators": list(report.annotators),
            "table": _records(report.table), "confusion": _grid(report.confusion),
            "disagreements": _records(report.disagreements.head(DISAGREEMENTS_SHOWN)),
            "n_disagreements": len(report.disagreements),
            "alpha": plain_value(report.alpha), "alpha_low": plain_value(report.alpha_low),
            "alpha_high": plain_value(report.alpha_high), "alpha_units": report.alpha_units,
            "notes": list(report.notes),
            "n_labels": int((labels["score"] == score).sum()),
        })
    return out


def classification_part(store: Store, run_id: int, run: dict[str, Any]) -> dict[str, Any]:
    """Each model's classification report with its confusion matrix ({} for a run without the metric)."""
    if "classification" not in run["metrics"]:
        return {}
    from ..compare.classification import classification_reports

    return {str(model): plain_value(rep) for model, rep in classification_reports(store, run_id).items()}


def slices_part(store: Store, run_id: int, options: Any) -> dict[str, Any] | None:
    """`summary RUN --by COLUMN` (and with a comparison, `compare ... --by COLUMN`): each slice's means and paired
    comparisons, the comparisons in one Holm family over slices, candidates and scores; None without ``by``."""
    if not options.by:
        return None
    from ..compare.slices import compare_by, summary_by

    means = summary_by(store, run_id, options.by, confidence=options.confidence)
    part: dict[str, Any] = {"column": options.by, "slices": [str(s) for s in means.attrs.get("slices", [])],
                            "means": _records(means), "comparison": None}
    if options.baseline is not None:  # over the scores with a scored value (compare_by refuses the others)
        frame = compare_by(store, run_id, options.baseline, options.by,
                           list(options.candidates) if options.candidates else None,
                           scores=list(options.scores) if options.scores else list(dict.fromkeys(means["score"])),
                           resamples=options.resamples,
                           seed=options.seed, tie_tolerance=options.tie_tolerance, holm=options.holm,
                           confidence=options.confidence)
        part["comparison"] = {"family": frame.attrs.get("family"), "holm": frame.attrs.get("holm"),
                              "rows": _records(frame)}
    return part


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: Example judgements shown per failure mode.
FAILURE_EXAMPLES = 3


def failures_part(store: Store, run_id: int, options: Any) -> dict[str, Any] | None:
    """The run's stored failure modes (`textgen-eval failures RUN` groups them; the report only reads): each mode's
    name, words and size, each model's rate with its interval, a few examples, and with a comparison the paired
    change of each mode's rate (Holm family). None when no modes are stored."""
    from ..failures import stored_modes
    from ..failures.report import method_line

    modes = stored_modes(store, run_id)
    if modes is None:
        return None
    part: dict[str, Any] = {
        "method": method_line(modes), "params": plain_value(modes.params),
        "modes": [{"mode": int(m), "name": modes.title(int(m)), "word_name": str(n), "size": int(s),
                   "words": [str(w) for w in list(words)],
                   "examples": _records(modes.examples(int(m), FAILURE_EXAMPLES))}
                  for m, n, s, words in zip(modes.modes["mode"], modes.modes["name"], modes.modes["size"],
                                            modes.modes["words"])],
        "rates": _records(modes.rates(confidence=options.confidence)), "comparison": None}
    if options.baseline is not None and options.baseline in modes.models:
        table = modes.compare(options.baseline, list(options.candidates) if options.candidates else None,
                              alpha=1.0 - options.confidence, confidence=options.confidence)
        part["comparison"] = {"family": table.attrs.get("family", 0), "rows": _records(table)}
    return part
