"""Per-model summary of the pairwise preference judge: wins, ties, losses, win rate, flips, length bias.

Reads the candidate cells :mod:`textgen_core.judge.metrics.pairwise_preference`
wrote (1 / 0 / 0.5, both orders' verdicts and both answers' lengths in details).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..judge.metrics.pairwise_preference import BASELINE_FIRST, CANDIDATE_FIRST, INCONSISTENT, IS_BASELINE, NAME
from ..store import Store
from .small_sample import mean_interval
from .stats import rng_for

COLUMNS = ["baseline", "candidate", "pairs", "wins", "ties", "losses", "order_inconsistent", "unscored",
           "win_rate", "ci_low", "ci_high", "flip_rate", "judged", "longer_preferred", "length_verdicts"]


def pairwise_summary(store: Store, run_id: int, *, confidence: float = 0.95, resamples: int = 2000,
                     seed: int = 0) -> pd.DataFrame:
    """One row per candidate model; empty when the run has no pairwise preference cells.

    ``pairs``: scored cells; ``ties`` counts agreed ties (both orders said TIE) and
    ``order_inconsistent`` the pairs whose two orders disagreed (both score 0.5).
    ``win_rate``: the mean cell (a tie or a flip counts half) with its interval
    under the small-sample rule of :mod:`.small_sample` (NaN below 2 pairs). ``flip_rate``: order-inconsistent
    share of the ``judged`` pairs (those the judge saw in both orders).
    ``longer_preferred``: of the single-order verdicts that picked a side between
    answers of different lengths (``length_verdicts``), the share that picked the
    longer one; near 1 means the judge rewards length.
    """
    cells = store.scores(run_id, scores=[NAME])
    rows = []
    for model, part in cells.groupby("model", sort=False):
        counted = [_details(d) for d in part["details"]]
        if all(r == IS_BASELINE for r in part["reason"]):
            continue
        values = part["value"].dropna().to_numpy(dtype=float)
        outcomes = [str(d.get("outcome", "")) for d, v in zip(counted, part["value"]) if pd.notna(v)]
        judged = [d for d in counted if BASELINE_FIRST in d]
        found = mean_interval(values, bounds=(0.0, 1.0), confidence=confidence, resamples=resamples,
                              rng=rng_for(seed, "pairwise", str(model)))  # the small-sample rule: never zero width
        low, high = found.low, found.high
        longer, verdicts = _length_bias(judged)
        rows.append({
            "baseline": next((d["baseline"] for d in counted if "baseline" in d), None), "candidate": model,
            "pairs": int(values.size), "wins": sum(o.startswith("win") for o in outcomes),
            "ties": sum(o.startswith("tie") for o in outcomes),
            "losses": sum(o.startswith("loss") for o in outcomes),
            "order_inconsistent": sum(o == INCONSISTENT for o in outcomes),
            "unscored": int(part["value"].isna().sum()),
            "win_rate": float(values.mean()) if values.size else np.nan, "ci_low": low, "ci_high": high,
            "flip_rate": sum(d.get("outcome") == INCONSISTENT for d in judged) / len(judged) if judged else np.nan,
            "judged": len(judged), "longer_preferred": longer / verdicts if verdicts else np.nan,
            "length_verdicts": verdicts,
        })
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs.update(run_id=run_id, confidence=confidence, resamples=resamples, seed=seed)
    return frame


def _length_bias(judged: list[Mapping[str, Any]]) -> tuple[int, int]:
    """(verdicts that picked the longer answer, verdicts that picked a side between unequal lengths)."""
    longer = verdicts = 0
    for d in judged:
        words = {"candidate": d.get("candidate_words", 0), "baseline": d.get("baseline_words", 0)}
        if words["candidate"] == words["baseline"]:
            continue
        longest = max(words, key=words.get)
        for order in (BASELINE_FIRST, CANDIDATE_FIRST):
            if d.get(order) in words:
                verdicts += 1
                longer += d[order] == longest
    return longer, verdicts


def _details(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return dict(raw) if isinstance(raw, Mapping) else {}
