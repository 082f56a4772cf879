"""Pure formulas behind the judge metrics: verdict lists in, a number out.

Nothing here calls a judge; every function is tested against hand-computed
values and the worked examples of the metric definitions.
"""

from __future__ import annotations

import math
from typing import Sequence


def proportion(hits: int, total: int) -> float | None:
    """hits / total, or None when there is nothing to count."""
    return None if total <= 0 else hits / total


def f1_statements(tp: int, fp: int, fn: int) -> float:
    """Answer correctness: tp / (tp + 0.5 (fp + fn)); 0 when there is no true positive."""
    if tp <= 0:
        return 0.0
    return tp / (tp + 0.5 * (fp + fn))


def average_precision(relevant: Sequence[bool]) -> float:
    """Mean of precision@k over the positions k that are relevant; 0 when none is.

    >>> average_precision([True, False, False, True])
    0.75
    >>> average_precision([False, True, False, True])
    0.5
    """
    hits = 0
    total = 0.0
    for k, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            hits += 1
            total += hits / k
    return 0.0 if hits == 0 else total / hits


def any_over(columns: Sequence[Sequence[bool]]) -> list[bool]:
    """OR element-wise over several equally long verdict lists (one per reference)."""
    if not columns:
        return []
    width = len(columns[0])
    if any(len(col) != width for col in columns):
        raise ValueError("verdict lists differ in length")
    return [any(col[i] for col in columns) for i in range(width)]


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cosine similarity; None when a vector is empty, zero or the lengths differ."""
    if not a or len(a) != len(b):
        return None
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return None
    return max(-1.0, min(1.0, dot / (na * nb)))


def perplexity(logprobs: Sequence[float]) -> float:
    """exp of the mean negative natural-log probability per token."""
    if not logprobs:
        raise ValueError("no token log-probabilities")
    return math.exp(-sum(logprobs) / len(logprobs))
