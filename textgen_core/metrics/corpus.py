"""The corpus-aggregate contract: per-row sufficient statistics and a value from their sum.

A corpus metric (corpus BLEU, GLEU, WER) declares two functions: ``stats`` turns
one row's cells into numbers (None when the row adds nothing: no references,
unscored), and ``value`` turns their sum into the corpus value. Sums of chunks
and blocks add up in any grouping, so the whole-file, streamed and Ray paths
compute the same value from the same numbers: no path needs the rows or the
cells, and a metric needs no special case anywhere. Besides the sum, a
:class:`CorpusSum` keeps the row count and the last contributing row's numbers
(nltk's BLEU smoothing methods 5 to 7 read the last sentence); both combine in
file order like the sum.

:class:`SummedCorpus` is the declaration (``corpus=SummedCorpus(stats, value)``
on a MetricSpec); it is also callable as a plain corpus scorer
``(rows, cells, params) -> {score: value}`` for callers of the older form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..model import Cell

RowStatistics = Callable[[Mapping[str, Cell], Mapping[str, Any]], Sequence[float] | None]
CorpusValue = Callable[["CorpusSum", Mapping[str, Any]], dict[str, float]]


@dataclass
class CorpusSum:
    """The sum of the rows' statistics, how many rows added some, and the last such row's statistics."""

    total: list[float] = field(default_factory=list)
    rows: int = 0
    last: tuple[float, ...] = ()

    def add(self, stats: Sequence[float] | None) -> None:
        if stats is None:
            return
        if not self.total:
            self.total = [float(v) for v in stats]
        else:
            if len(stats) != len(self.total):
                raise ValueError(f"row statistics of {len(stats)} numbers, the sum has {len(self.total)}")
            self.total = [a + float(b) for a, b in zip(self.total, stats)]
        self.rows += 1
        self.last = tuple(float(v) for v in stats)

    def extend(self, later: CorpusSum) -> None:
        """Add the sum of rows that come after these (chunks and blocks merge in file order)."""
        if not later.rows:
            return
        if not self.rows:
            self.total, self.rows, self.last = list(later.total), later.rows, later.last
            return
        self.total = [a + b for a, b in zip(self.total, later.total)]
        self.rows += later.rows
        self.last = later.last


@dataclass(frozen=True)
class SummedCorpus:
    """A corpus aggregate declared as per-row statistics (``stats``) and a value of their sum (``value``)."""

    stats: RowStatistics
    value: CorpusValue

    def sum(self, cells: Iterable[Mapping[str, Cell]], params: Mapping[str, Any]) -> CorpusSum:
        total = CorpusSum()
        for row_cells in cells:
            total.add(self.stats(row_cells, params))
        return total

    def __call__(self, rows: Sequence[Any], cells: Iterable[Mapping[str, Cell]],
                 params: Mapping[str, Any]) -> dict[str, float]:
        """The corpus value of ``cells`` (``rows`` are not read: the statistics are all a corpus value needs)."""
        total = self.sum(cells, params)
        return self.value(total, params) if total.rows else {}


def summed(spec: Any) -> SummedCorpus | None:
    """The metric's summed corpus declaration, or None (no corpus value, or one that reads whole rows)."""
    corpus = getattr(spec, "corpus", None)
    return corpus if isinstance(corpus, SummedCorpus) else None
