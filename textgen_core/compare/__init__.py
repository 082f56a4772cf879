"""Compare models on one run: paired by datum id, with verdicts, intervals, tests, power and judge-human agreement.

The names below load their module on first use (PEP 562), so that importing one submodule, such as
``textgen_core.compare.labels`` for the dashboard's label pages, does not pull scipy in through the package."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "cohen_kappa": "agreement",
    "correlations": "agreement",
    "judge_human_agreement": "agreement",
    "ComparisonRow": "comparison",
    "compare_models": "comparison",
    "paired_differences": "comparison",
    "wilson_interval": "intervals",
    "pairwise_summary": "pairwise",
    "datums_needed": "power",
    "mde": "power",
    "Interval": "small_sample",
    "delta_interval": "small_sample",
    "mean_interval": "small_sample",
    "holm_adjust": "stats",
    "VERDICTS": "verdicts",
    "mcnemar_exact": "verdicts",
    "word_diff": "word_diff",
    "word_diff_text": "word_diff",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
