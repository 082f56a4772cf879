"""textgen-eval core library: datasets, metrics, the DuckDB store, the judge and comparisons.

This package never imports streamlit: the CLI, the dashboard and the tests use it alike.
A notebook needs one call::

    import textgen_core
    scores = textgen_core.score(frame, metrics=["rouge", "bleu"])

and, to keep runs, a store: ``Store("evals.duckdb")``, ``load_dataset``,
``evaluate``, ``resume``, ``extend``, ``run_summary``, ``compare_models``.

The names below load on first use: importing one submodule (a process-pool
worker importing ``textgen_core.evaluate``, the CLI) does not import the judge
client, scipy and the comparison code as well (about 4 s -> 1 s on the
development machine under load). ``evaluate`` and ``resume`` are loaded at once:
the package attribute ``evaluate`` is the function, not the submodule of that
name (``importlib.import_module("textgen_core.evaluate")`` gives the module).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .evaluate import evaluate, resume

__version__ = "0.1.0"

#: Public name -> the submodule that defines it.
_WHERE = {
    "score": ".api",
    "classification_reports": ".compare.classification", "compare_classification": ".compare.classification",
    "compare_models": ".compare", "judge_human_agreement": ".compare", "paired_differences": ".compare",
    "agreement_report": ".compare.human_report", "calibrated_deltas": ".compare.human_report",
    "calibrated_means": ".compare.human_report", "labels_plan": ".compare.human_report",
    "export_labels": ".compare.labels", "import_labels": ".compare.labels", "select_cells": ".compare.labels",
    "ppi_mean": ".compare.calibration",
    "panel_report": ".compare.jury",
    "compare_by": ".compare.slices", "summary_by": ".compare.slices",
    "ColumnMapping": ".datasets", "load_dataset": ".datasets", "load_sample": ".datasets", "read_table": ".datasets",
    "extend": ".runs.extend",
    "InputError": ".errors", "ParameterError": ".errors", "StoreError": ".errors", "TextgenError": ".errors",
    "JudgeSettings": ".judge.settings",
    "all_metrics": ".registry", "get_metric": ".registry",
    "MetricSpec": ".metrics.spec",
    "Store": ".store",
    "long_scores": ".summary", "run_summary": ".summary", "wide_scores": ".summary",
}

__all__ = sorted([*_WHERE, "__version__", "evaluate", "resume"])


def __getattr__(name: str) -> Any:
    """Load a public name from its submodule the first time it is used."""
    if name not in _WHERE:
        raise AttributeError(f"module 'textgen_core' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
