"""Cells gathered column by column (the streamed path) make the very table the record path makes.

Same rows, same order, same JSON text of details (shared details, nested lists, text with
quotes and non-ASCII, numbers that are not finite, values JSON cannot hold), and the same
unscored rule: a missing score and a non-finite value are unscored with their reasons.
"""

from __future__ import annotations

import math

from textgen_core.model import Cell, Datum
from textgen_core.run_rules import cell_columns, cell_records
from textgen_core.store.database import json_text
from textgen_core.store.score_writes import cell_table, column_table, details_texts

SHARED = {"precision": 0.5333333333333333, "recall": 1e-300}
ROWS = [Datum(f"d{i}", "m" if i % 2 else "n", prediction="p", references=("r",)) for i in range(6)]
CELLS = [
    {"a": Cell(0.25, SHARED), "b": Cell(0.75, SHARED)},
    {"a": Cell(float("nan"), {"x": [1, 2.5, -0.0]}), "b": Cell(float("inf"), None)},
    {"a": Cell(None, {"why": 'a "quoted" é 中文 \n'}, "too long"), "b": Cell(1, {"n": 10**20, "flag": True})},
    {"a": Cell(2.0, {"odd": float("-inf"), "nested": {"k": [None, "v"]}, "tuple": (1, 2)})},  # b missing
    {},
    {"a": Cell(0.0, {"object": object.__name__, 3: "int key"}), "b": Cell(-1e-7, {"set": "{1}"})},
]


def test_column_table_equals_the_record_table() -> None:
    columns: dict[str, list] = {name: [] for name in ("datum_id", "model", "metric", "score", "value", "details",
                                                      "reason")}
    cell_columns(ROWS, "m1", ("a", "b"), CELLS, columns)
    cell_columns(ROWS, "m2", ("b",), CELLS, columns)
    records = [*cell_records(ROWS, "m1", ("a", "b"), CELLS), *cell_records(ROWS, "m2", ("b",), CELLS)]
    fast, slow = column_table(7, columns), cell_table(7, records)
    assert fast.equals(slow)
    assert fast.num_rows == 18
    unscored = [r for r in slow.to_pylist() if r["value"] is None]
    assert {r["reason"] for r in unscored} >= {"non-finite value nan", "non-finite value inf", "too long",
                                                "the metric returned no value"}


def test_details_texts_are_json_text() -> None:
    details = [c.details for cells in CELLS for c in cells.values()] + [None, {"x": math.pi}]
    assert details_texts(details) == [json_text(d) for d in details]
    assert details_texts([SHARED, SHARED])[0] == '{"precision": 0.5333333333333333, "recall": 1e-300}'


def test_cells_of_a_different_count_than_rows_are_refused() -> None:
    columns: dict[str, list] = {name: [] for name in ("datum_id", "model", "metric", "score", "value", "details",
                                                      "reason")}
    try:
        cell_columns(ROWS, "m1", ("a",), CELLS[:2], columns)
    except ValueError as exc:
        assert "2 rows of cells for 6 rows" in str(exc)
    else:
        raise AssertionError("a short list of cells was taken")
