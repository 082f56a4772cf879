"""Compare models on one run: paired by datum id, with verdicts, intervals, tests, power and judge-human agreement."""

from .agreement import cohen_kappa, correlations, judge_human_agreement
from .comparison import ComparisonRow, compare_models, paired_differences
from .intervals import wilson_interval
from .pairwise import pairwise_summary
from .power import datums_needed, mde
from .small_sample import Interval, delta_interval, mean_interval
from .stats import holm_adjust
from .verdicts import VERDICTS, mcnemar_exact
from .word_diff import word_diff, word_diff_text

__all__ = [
    "ComparisonRow",
    "Interval",
    "VERDICTS",
    "cohen_kappa",
    "compare_models",
    "correlations",
    "datums_needed",
    "delta_interval",
    "holm_adjust",
    "judge_human_agreement",
    "mcnemar_exact",
    "mde",
    "mean_interval",
    "paired_differences",
    "pairwise_summary",
    "wilson_interval",
    "word_diff",
    "word_diff_text",
]
