"""A chunk's rows counted at once in the corpus parts equal the same rows counted one by one.

BLEU (summed statistics) over two interleaved models with unscored rows and rows without
references, and an older-form corpus scorer (packed cells): same sums, row counts, last
rows and packed cells; a chunk whose rows give statistics of different lengths is refused.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from textgen_core.metrics.corpus import SummedCorpus
from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.metrics.local import score_local
from textgen_core.registry import get_metric
from textgen_core.model import Cell, Datum
from textgen_core.runs.corpus import add_row, add_rows, corpus_aggregates


def _rows() -> list[Datum]:
    pairs = synthetic_pairs(300, seed=5, min_words=0, max_words=12)
    rows = [Datum(f"d{i}", "ab"[i % 3 == 0], prediction=p, references=(r,) if i % 7 else ()) for i, (r, p) in
            enumerate(pairs)]
    return rows + [Datum("x", "a", prediction=None, references=("r",))]


@pytest.mark.parametrize("smoothing", ["none", "method7"])
def test_bleu_rows_at_once_equal_rows_one_by_one(smoothing: str) -> None:
    spec = get_metric("bleu")
    params = spec.resolve({"smoothing": smoothing})
    rows = _rows()
    cells = score_local(rows, {"bleu": params})["bleu"]
    one, many = {}, {}
    for row, row_cells in zip(rows, cells):
        add_row(one, "bleu", row.model, row_cells, params)
    add_rows(many, spec, [r.model for r in rows[:150]], cells[:150], params)
    add_rows(many, spec, [r.model for r in rows[150:]], cells[150:], params)  # a second chunk extends
    assert set(one) == set(many) == {("bleu", "a"), ("bleu", "b")}
    for key in one:
        assert (one[key].total, one[key].rows, one[key].last) == (many[key].total, many[key].rows, many[key].last)
    assert corpus_aggregates({"bleu": params}, one) == corpus_aggregates({"bleu": params}, many)


def test_older_form_corpus_keeps_every_cell_in_order() -> None:
    spec = replace(get_metric("bleu"), corpus=lambda rows, cells, params: {"bleu": float(len(list(cells)))})
    cells = [{"bleu": Cell(float(i), {"n": [i, i + 1]})} for i in range(5)] + [{"bleu": Cell.unscored("no")}]
    parts: dict = {}
    add_rows(parts, spec, ["a", "b", "a", "a", "b", "a"], cells, {})
    assert [row["bleu"].value for row in parts[("bleu", "a")]] == [0.0, 2.0, 3.0, None]
    assert [row["bleu"].details for row in parts[("bleu", "b")]] == [{"n": [1, 2]}, {"n": [4, 5]}]


def test_statistics_of_different_lengths_are_refused() -> None:
    spec = replace(get_metric("bleu"), corpus=SummedCorpus(lambda cells, params: [1.0] * int(cells["bleu"].value),
                                                           lambda total, params: {}))
    cells = [{"bleu": Cell(2.0)}, {"bleu": Cell(3.0)}]
    with pytest.raises(ValueError, match="different lengths"):
        add_rows({}, spec, ["a", "a"], cells, {})
