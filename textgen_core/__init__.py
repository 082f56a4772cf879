"""textgen-eval core library: datasets, metrics, the DuckDB store, the judge and comparisons.

This package never imports streamlit: the CLI, the dashboard and the tests use it alike.
A notebook needs one call::

    import textgen_core
    scores = textgen_core.score(frame, metrics=["rouge", "bleu"])

and, to keep runs, a store: ``Store("evals.duckdb")``, ``load_dataset``,
``evaluate``, ``resume``, ``run_summary``, ``compare_models``.
"""

__version__ = "0.1.0"

from .api import score
from .compare import compare_models, judge_human_agreement, paired_differences
from .datasets import ColumnMapping, load_dataset, load_sample, read_table
from .errors import InputError, ParameterError, StoreError, TextgenError
from .evaluate import evaluate, resume
from .judge.settings import JudgeSettings
from .metrics.registry import all_metrics, get_metric
from .metrics.spec import MetricSpec
from .store import Store
from .summary import long_scores, run_summary, wide_scores

__all__ = [
    "ColumnMapping",
    "InputError",
    "JudgeSettings",
    "MetricSpec",
    "ParameterError",
    "Store",
    "StoreError",
    "TextgenError",
    "__version__",
    "all_metrics",
    "compare_models",
    "evaluate",
    "get_metric",
    "judge_human_agreement",
    "load_dataset",
    "load_sample",
    "long_scores",
    "paired_differences",
    "read_table",
    "resume",
    "run_summary",
    "score",
    "wide_scores",
]
