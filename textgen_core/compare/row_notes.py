"""What must be said beside a comparison row wherever it is shown: a judge that never varies, too few labels."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .pairing import RunScores
from .small_sample import MIN_LABELS

#: A judge score needs this many scored cells before a constant value is called degenerate.
CONSTANT_MIN = 3


def row_warnings(data: RunScores, score: str, models: Sequence[str], labelled: Mapping[str, int]) -> str:
    """What must be said wherever this comparison row is shown: a judge score whose verdicts never vary over
    the two models, and a judge score with some human labels but fewer than the rule's minimum."""
    said = []
    if is_judge(score) and score in data.score_names:
        rows = [data.models.index(m) for m in models if m in data.models]
        values = data.array(score)[rows]
        values = values[~np.isnan(values)]
        if values.size >= CONSTANT_MIN and np.ptp(values) == 0:
            said.append(f"{score}: every one of the {values.size} scored cells of {' and '.join(models)} is "
                        f"{values[0]:g}; a judge whose verdicts do not vary cannot tell answers apart, so this "
                        "comparison says nothing about the answers - check the judge against people")
        labels = labelled.get(score, 0)
        if 0 < labels < MIN_LABELS:
            said.append(f"{score}: only {labels} human label(s); at least {MIN_LABELS} are needed to check the "
                        "judge against people (label more cells on the Label page)")
    return "; ".join(said)


def label_counts(data: RunScores) -> dict[str, int]:
    """Human labels per score (read every time: people label a finished run, so no cache holds them)."""
    labels = data.store.labels(data.run_id)
    return {str(k): int(v) for k, v in labels.groupby("score").size().items()} if not labels.empty else {}


def is_judge(score: str) -> bool:
    try:
        from ..registry import get_metric

        return get_metric(score).group == "llm"
    except Exception:  # a score no metric declares any more
        return False
