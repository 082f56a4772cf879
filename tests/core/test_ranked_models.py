"""ranked_models: the order a run of many models is shown in (CLI summary, Results, Compare)."""

from __future__ import annotations

import pandas as pd

from textgen_core.summary import ranked_models


def counts(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame([(m, metric, s, 2, mean) for m, metric, s, mean in rows],
                        columns=["model", "metric", "score", "n_scored", "mean"])


def test_best_first_in_the_first_metrics_direction_ties_in_run_order_unscored_last() -> None:
    run = {"models": ["a", "b", "c", "d", "e"], "metrics": ["wer", "exact_match"]}
    frame = counts([("a", "exact_match", "exact_match", 1.0), ("b", "exact_match", "exact_match", 0.0),
                    ("c", "wer", "wer", 0.5), ("b", "wer", "wer", 0.1), ("a", "wer", "wer", 0.5),
                    ("e", "exact_match", "exact_match", 0.5)])
    ranked, first = ranked_models(frame, run)
    assert first == "wer"  # the run's first metric, though exact_match sorts first by name
    assert ranked == ["b", "a", "c", "d", "e"]  # lower is better; a before c (run order); d, e have no wer


def test_higher_is_better_and_a_run_without_scores() -> None:
    run = {"models": ["x", "y"], "metrics": ["exact_match"]}
    ranked, first = ranked_models(counts([("x", "exact_match", "exact_match", 0.2),
                                          ("y", "exact_match", "exact_match", 0.9)]), run)
    assert (ranked, first) == (["y", "x"], "exact_match")
    assert ranked_models(counts([]), run) == (["x", "y"], None)
