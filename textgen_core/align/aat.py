"""The Alternative Annotator Test: may the judge stand in for one of the people who labelled?

From the description in Calderon, Reichart and Dror (2025), "The Alternative Annotator Test for LLM-as-a-Judge"
(arXiv 2501.10970), written here from that description:

1. Leave one annotator j out. On every cell j labelled that at least one other annotator also labelled,
   score how well the judge and j each match the *other* annotators: for yes/no and label scores the share
   of them it agrees with; for ratings the negative root mean squared difference from them.
2. Per cell, the judge "wins" when its match is at least j's, and j wins when j's is at least the judge's
   (a tie is a win for both). The advantage probabilities rho_f and rho_j are the shares of cells won.
3. Test H0: rho_f <= rho_j - epsilon against H1: rho_f > rho_j - epsilon with a one-sided paired t-test
   on the per-cell differences (judge's win minus j's win).
4. Correct the annotators' p-values with Benjamini-Yekutieli (they are not independent: the annotators
   serve as each other's reference), at level alpha.
5. The winning rate omega is the share of annotators whose H0 is rejected; the judge passes when
   omega >= 0.5. epsilon is the cost-benefit margin: the paper suggests 0.2 when the annotators are
   crowd workers or skilled annotators and 0.1 when they are experts.

It needs at least three annotators with shared cells. Everything it used is kept in the result, so the
CLI and the dashboard print the inputs beside the verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

#: Fewest annotators the test is defined for.
MIN_ANNOTATORS = 3
#: The margin used unless told otherwise.
EPSILON = 0.2
#: Level of the Benjamini-Yekutieli correction.
ALPHA = 0.05
#: Winning rate at which the judge passes.
PASS_RATE = 0.5


@dataclass(frozen=True)
class AnnotatorResult:
    """The test of one left-out annotator."""

    annotator: str
    cells: int
    rho_judge: float
    rho_annotator: float
    t: float
    p: float
    p_adjusted: float
    rejected: bool


@dataclass(frozen=True)
class AltTest:
    """The whole test: its inputs, each annotator's result, the winning rate and the verdict."""

    epsilon: float
    alpha: float
    measure: str
    annotators: int
    shared_cells: int
    results: tuple[AnnotatorResult, ...] = ()
    #: Why the test could not be made ('' when it was).
    why: str = ""
    winning_rate: float = float("nan")
    passed: bool = False
    #: The mean of the judge's advantage probabilities over annotators (the paper's measure for comparing judges).
    advantage: float = float("nan")
    notes: tuple[str, ...] = field(default=())

    def verdict(self) -> str:
        if self.why:
            return f"not made: {self.why}"
        rate = f"winning rate {self.winning_rate:.2f} ({sum(r.rejected for r in self.results)} of {len(self.results)})"
        if self.passed:
            return f"the judge may replace an annotator at epsilon = {self.epsilon:g}: {rate} >= {PASS_RATE}"
        return f"the judge may not replace an annotator at epsilon = {self.epsilon:g}: {rate} < {PASS_RATE}"


def by_adjust(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Yekutieli adjusted p-values (statsmodels' 'fdr_by' is the reference in the tests)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return []
    c = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p)
    scaled = p[order] * m * c / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out.tolist()


def one_sided_t(differences: np.ndarray, epsilon: float) -> tuple[float, float]:
    """(t, p) of H0: mean(d) <= -epsilon against mean(d) > -epsilon, d = judge's win - annotator's win.

    Without spread (every cell the same difference) t is infinite: p is 0 when that difference exceeds
    -epsilon and 1 otherwise."""
    from scipy import stats

    n = differences.size
    shifted = differences + epsilon
    mean = float(shifted.mean())
    sd = float(shifted.std(ddof=1)) if n > 1 else 0.0
    if sd == 0.0:
        if n < 2:
            return float("nan"), 1.0
        return (math.inf, 0.0) if mean > 0 else (-math.inf if mean < 0 else float("nan"), 1.0)
    t = mean / (sd / math.sqrt(n))
    return t, float(stats.t.sf(t, n - 1))


def alt_test(labels: pd.DataFrame, judge: Mapping[tuple[str, str], float], *, categorical: bool,
             epsilon: float = EPSILON, alpha: float = ALPHA) -> AltTest:
    """The test on ``labels`` (datum_id, model, annotator, value) against the judge's value of each cell.

    ``categorical``: yes/no and label scores (match = agreement share), else ratings (match = -RMSE)."""
    measure = "share of the other annotators matched" if categorical else "negative RMSE to the other annotators"
    if not 0 <= epsilon < 1:
        return AltTest(epsilon, alpha, measure, 0, 0, why=f"epsilon must be from 0 to below 1, got {epsilon:g}")
    keyed = labels.assign(cell=list(zip(labels["datum_id"], labels["model"])))
    keyed = keyed[keyed["cell"].isin(set(judge))]
    per_cell = keyed.groupby("cell")["annotator"].nunique()
    shared = set(per_cell[per_cell >= 2].index)
    keyed = keyed[keyed["cell"].isin(shared)]
    people = sorted(keyed["annotator"].unique())
    if len(people) < MIN_ANNOTATORS:
        return AltTest(epsilon, alpha, measure, len(people), len(shared),
                       why=f"it needs at least {MIN_ANNOTATORS} annotators on shared cells (cells two or more "
                           f"labelled); found {len(people)} on {len(shared)} shared cells")
    table = keyed.pivot_table(index="cell", columns="annotator", values="value", aggfunc="first")
    rows = []
    for j in people:
        mine = table[j].notna()
        others = table.drop(columns=[j])[mine]
        cells = others.index[others.notna().any(axis=1)]
        if len(cells) < 2:
            rows.append((j, len(cells), float("nan"), float("nan"), float("nan"), 1.0))
            continue
        theirs = table.loc[cells].drop(columns=[j]).to_numpy(dtype=float)
        own = table.loc[cells, j].to_numpy(dtype=float)
        made = np.array([judge[c] for c in cells], dtype=float)
        s_judge, s_own = _match(made, theirs, categorical), _match(own, theirs, categorical)
        w_judge, w_own = (s_judge >= s_own).astype(float), (s_own >= s_judge).astype(float)
        t, p = one_sided_t(w_judge - w_own, epsilon)
        rows.append((j, len(cells), float(w_judge.mean()), float(w_own.mean()), t, p))
    adjusted = by_adjust([r[5] for r in rows])
    results = tuple(AnnotatorResult(j, n, rf, rh, t, p, q, q <= alpha)
                    for (j, n, rf, rh, t, p), q in zip(rows, adjusted))
    rate = sum(r.rejected for r in results) / len(results)
    advantage = float(np.nanmean([r.rho_judge for r in results])) if any(r.cells >= 2 for r in results) \
        else float("nan")
    return AltTest(epsilon, alpha, measure, len(people), len(shared), results, winning_rate=rate,
                   passed=rate >= PASS_RATE, advantage=advantage)


def _match(values: np.ndarray, others: np.ndarray, categorical: bool) -> np.ndarray:
    """Per cell, how well ``values`` match the other annotators' (NaN where one did not label the cell)."""
    present = ~np.isnan(others)
    count = present.sum(axis=1)
    if categorical:
        return np.where(present, others == values[:, None], False).sum(axis=1) / count
    squared = np.where(present, (others - values[:, None]) ** 2, 0.0).sum(axis=1) / count
    return -np.sqrt(squared)
