"""Compare models on one run: paired by datum id, with intervals, tests and judge-human agreement."""

from .agreement import cohen_kappa, correlations, judge_human_agreement
from .comparison import ComparisonRow, compare_models, paired_differences
from .stats import holm_adjust

__all__ = [
    "ComparisonRow",
    "cohen_kappa",
    "compare_models",
    "correlations",
    "holm_adjust",
    "judge_human_agreement",
    "paired_differences",
]
