"""What a report says, as plain JSON data: the run, its summary, comparisons, the judge's reliability, the rows.

Every number is read from the store through the functions the CLI prints
(:func:`textgen_core.summary.run_summary`, :func:`textgen_core.compare.compare_models`,
:mod:`textgen_core.compare.human_report`, :mod:`textgen_core.compare.jury`,
:mod:`textgen_core.compare.classification`), never recomputed and never re-judged.
The result is the JSON twin of the HTML page (``--format json``; schema in docs/report.md);
every text in it has been scrubbed of the API keys :func:`secrets_of` finds.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from ..errors import ParameterError
from ..export import plain_value
from ..llm.redact import scrub_value
from ..store import Store
from .datums import WHOLE_LIMIT, datum_section

#: The ``schema`` field of every report; raised when a field changes meaning or goes away.
SCHEMA = "textgen-eval-report/1"
#: Environment variables whose values are API keys (as the judge settings read them).
KEY_VARIABLES = ("TEXTGEN_EVAL_JUDGE_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class ReportOptions:
    """What to put in a report besides the run itself."""

    #: Compare these models: the baseline, then candidates (none: every other model).
    baseline: str | None = None
    candidates: tuple[str, ...] | None = None
    #: Bias-corrected (PPI++) means and deltas from the run's human labels beside the judge-only ones.
    calibrate: bool = False
    #: A metadata column to slice the summary and the comparison by.
    by: str | None = None
    #: The comparison's settings, as `compare` takes them (scores None: every score).
    scores: tuple[str, ...] | None = None
    resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95
    tie_tolerance: float = 1e-9
    holm: bool = True
    #: Rows (datum x model) up to which the per-datum section holds the whole run.
    whole_limit: int = WHOLE_LIMIT
    #: More secrets to scrub (a key typed into the dashboard); the environment's keys always are.
    secrets: tuple[str, ...] = ()


def compare_option(text: str) -> tuple[str, tuple[str, ...] | None]:
    """``BASELINE[,CANDIDATE...]`` as (baseline, candidates or None)."""
    names = [part.strip() for part in str(text).split(",")]
    if not names or not names[0] or any(not n for n in names[1:]):
        raise ParameterError(f"--compare takes BASELINE[,CANDIDATE...] (model names), got {text!r}")
    return names[0], tuple(names[1:]) or None


def secrets_of(run: dict[str, Any], extra: Sequence[str] = ()) -> list[str]:
    """The API keys a report must not hold: the environment's judge keys, a panel member's key variables, ``extra``."""
    names = list(KEY_VARIABLES)

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if str(key).endswith("api_key_env") and isinstance(inner, str):
                    names.append(inner)
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(run.get("judge") or {})
    found = [os.environ.get(name, "").strip() for name in names] + [str(s).strip() for s in extra]
    return sorted({s for s in found if s}, key=len, reverse=True)  # a key inside another goes after it


def build_report(store: Store, run_id: int, options: ReportOptions | None = None) -> dict[str, Any]:
    """The report of a stored run as plain JSON data (see docs/report.md), keys scrubbed."""
    from ..summary import judge_warnings, run_summary, scale_text, score_order, unscored_lines

    options = options or ReportOptions()
    run = store.get_run(run_id)
    with store.session():
        order = score_order(store, run_id)
        summary = run_summary(store, run_id, confidence=options.confidence)
        present = list(dict.fromkeys([s for s in order if s in set(summary["score"])]
                                     + sorted(set(summary["score"]) - set(order))))
        report: dict[str, Any] = {
            "schema": SCHEMA,
            "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "run": _run_part(store, run),
            "summary": {
                "confidence": options.confidence,
                "scores": present,
                "models": [m for m in run["models"] if m in set(summary["model"])],
                "rows": _records(summary),
                "scales": {s: scale_text(s) for s in present},
                "why_unscored": unscored_lines(store, run_id),
                "corpus": _records(store.aggregates(run_id).drop(columns=["details"], errors="ignore")),
            },
            "warnings": judge_warnings(store, run_id),
        }
        from .sections import (calibration_part, classification_part, comparison_part, failures_part, panel_part,
                               people_part, slices_part)

        report["comparison"] = comparison_part(store, run_id, run, options)
        report["calibration"] = calibration_part(store, run_id, options, report["comparison"])
        report["panel"] = panel_part(store, run_id)
        report["human_agreement"] = people_part(store, run_id)
        report["classification"] = classification_part(store, run_id, run)
        report["slices"] = slices_part(store, run_id, options)
        report["failure_modes"] = failures_part(store, run_id, options)
        if report["comparison"]:
            report["warnings"] += report["comparison"]["warnings"]
        report["datums"] = datum_section(store, run_id, run, present, whole_limit=options.whole_limit)
    clean = plain_value(report)
    for key in secrets_of(run, options.secrets):
        clean = scrub_value(clean, key)
    return clean


def _run_part(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    """What was run: dataset, models, metrics with parameters and signatures, judge, dates, calls, tokens, cost."""
    from .. import __version__
    from ..formatting import duration_text

    judge = dict(run.get("judge") or {})
    fingerprint = judge.get("fingerprint") or {}
    dataset = {"id": run["dataset_id"], "name": run.get("dataset")}
    dataset.update(_dataset_version(store, run))
    return {
        "id": run["run_id"], "status": run["status"], "error": run.get("error"), "kind": run.get("kind"),
        "dataset": dataset,
        "created_at": run.get("created_at"), "finished_at": run.get("finished_at"),
        "duration_s": run.get("duration_s"), "duration": duration_text(run.get("duration_s")),
        "models": run["models"],
        "metrics": [{"name": m, "params": run["params"].get(m, {}), "signature": run["signatures"].get(m, "")}
                    for m in run["metrics"]],
        "judge": ({"model": judge.get("model"), "base_url": judge.get("base_url"),
                   "temperature": judge.get("temperature"), "seed": judge.get("seed"),
                   "fingerprint": fingerprint, "prompt_versions": sorted((fingerprint.get("prompts") or {}).keys()),
                   "panel": judge.get("jury"), "settings": judge} if judge else None),
        "usage": {"judge_calls": run.get("judge_calls"), "prompt_tokens": run.get("prompt_tokens"),
                  "completion_tokens": run.get("completion_tokens"), "cost": run.get("cost")},
        "textgen_eval_version": __version__,
    }


def _dataset_version(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    """The named dataset and version the run is pinned to, and the run's name, tags and note."""
    family, version = store.versions.family_of_dataset(run["dataset_id"])
    labels = store.run_names.run_labels()
    mine = labels[labels["run_id"] == run["run_id"]]
    found: dict[str, Any] = {"family": family, "version": version}
    if not mine.empty:
        row = mine.iloc[0]
        found["run_name"] = None if pd.isna(row["name"]) else str(row["name"])
        found["run_tags"] = [str(t) for t in list(row["tags"])]
        found["run_note"] = None if pd.isna(row["note"]) else str(row["note"])
    return found


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a frame as plain dicts (NaN as None)."""
    if frame is None or frame.empty:
        return []
    return [{str(k): plain_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
