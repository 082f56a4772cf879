"""Which judgements count as failures: the verdicts that count against a score, and the lowest lexical cells.

A verdict fails when it is one that lowers its metric's score: "no" of a
yes/no check (faithfulness, relevance, recall, precision, a yes/no criterion),
"unsupported" and "missing" (answer correctness), "contradicted"
(hallucination), "INCORRECT" (QA grade), "yes" of bias and toxicity (a biased
or toxic opinion), a rating at the bottom of its scale, and any label the user
names. Extraction steps (statements, claims, opinions) carry no verdict and
never fail. Only verdicts of scored cells are read (the store's
``judged_items``): an unscored cell is not a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ParameterError

#: Verdict words that count against the score of any metric that is not an exception below.
FAILING_WORDS = frozenset({"no", "unsupported", "missing", "contradicted", "incorrect"})
#: Metrics where "yes" is the bad verdict (the share of biased / toxic opinions: lower is better).
YES_FAILS = frozenset({"bias", "toxicity"})
#: Metrics whose verdicts are not judgements of one answer (a preference between two answers).
NOT_FAILURES = frozenset({"pairwise_preference"})


@dataclass(frozen=True)
class FailureRule:
    """How failing judgements are chosen.

    ``bottom``: ratings at or below the lowest ``bottom`` points of a 1-based scale fail (1: only the lowest).
    ``labels``: further verdict labels that count as failures (case-insensitive), e.g. a criterion's "off_topic".
    ``lowest``: for a lexical score, the share of each model's scored cells, lowest first, whose predictions
    are grouped (ties at the cut are all taken).
    """

    bottom: int = 1
    labels: tuple[str, ...] = ()
    lowest: float = 0.1
    _labels: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.bottom < 1:
            raise ParameterError(f"bottom must be at least 1 (the lowest rating), got {self.bottom}")
        if not 0 < self.lowest <= 0.5:
            raise ParameterError(f"lowest must be a share above 0 and at most 0.5, got {self.lowest}")
        object.__setattr__(self, "_labels", frozenset(label.strip().casefold() for label in self.labels))

    def fails(self, metric: str, verdict: str | None) -> bool:
        """True when this verdict of ``metric`` counts against its score."""
        if verdict is None or metric in NOT_FAILURES:
            return False
        word = verdict.strip().casefold()
        if word in self._labels:
            return True
        if word.lstrip("-").isdigit():  # a rating: 1..5 (coherence, summary coherence, rating criteria)
            return int(word) <= self.bottom
        if metric in YES_FAILS:
            return word == "yes"
        return word in FAILING_WORDS

    def as_params(self) -> dict[str, object]:
        return {"bottom": self.bottom, "labels": sorted(self._labels), "lowest": self.lowest}
