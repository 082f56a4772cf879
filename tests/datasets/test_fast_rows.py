"""The column-wise normalization of a chunk gives exactly the rows of the row-by-row path, or declines.

Chunks of hostile text cells (padded and empty keys, JSON-looking references, delimiters,
'NaN' references, several reference columns, lone surrogates, over-long cells, numbers
among the texts, repeated pairs) are normalized both ways: the fast path returns the same
rows or None, never other rows and never an error of its own, and it does take the common
case (a plain CSV chunk).
"""

from __future__ import annotations

import random

import pytest

from textgen_core.datasets.fast_rows import fast_rows
from textgen_core.datasets.formats import RawTable
from textgen_core.datasets.loader import normalize_each_row, normalize_rows
from textgen_core.datasets.mapping import ColumnMapping
from textgen_core.errors import InputError

TEXTS = ["plain text", "  padded  ", "", "   ", "[1] Smith et al.", '["one", "two"]', '["one", 2]', "[broken",
         "NaN", " null ", "a || b || ", "x||y", "line one\nline two", "\ud800 lone", "é ü 中文 😀", "[]", '[""]',
         '["NaN", "ok"]', "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]


def _chunk(rng: random.Random, columns: list[str], rows: int, hostile: float) -> RawTable:
    table = []
    for i in range(rows):
        row = []
        for column in columns:
            if column == "id":
                value = rng.choice([f"d{i}", f" d{i} ", "", f"d{rng.randrange(3)}"]) if rng.random() < hostile else f"d{i}"
            elif column == "model":
                value = rng.choice(["m", " m", "", "n"]) if rng.random() < hostile else "m"
            else:
                value = rng.choice(TEXTS) if rng.random() < hostile else f"text {rng.randrange(1000)}"
            if rng.random() < hostile / 10:
                value = rng.choice([None, 3, 2.5, ["a"]])  # what JSON Lines may hold
            row.append(value)
        table.append(row)
    return RawTable(columns=columns, rows=table, row_numbers=list(range(1, rows + 1)), lines=[], label="f.csv")


def _both(raw: RawTable, mapping: ColumnMapping) -> tuple[object, object]:
    used = set(mapping.columns_used())
    meta = tuple(c for c in raw.columns if c not in used)
    try:
        slow: object = normalize_each_row(raw, mapping, meta)
    except InputError as exc:
        slow = exc.describe()
    return fast_rows(raw, mapping, meta), slow


MAPPINGS = [
    ({"id": "id", "model": "model", "prediction": "prediction", "references": ["reference"]}, ["id", "model", "prediction", "reference"]),
    ({"id": "id", "prediction": "prediction", "references": ["reference"], "query": "query",
      "contexts": ["context"], "null_references": "missing"}, ["id", "query", "prediction", "reference", "context", "extra"]),
    ({"id": "id", "model": "model", "prediction": "prediction", "references": ["r1", "r2"], "list_format": "json"},
     ["id", "model", "prediction", "r1", "r2"]),
    ({"id": "id", "model": "model", "prediction": "prediction", "references": ["reference"],
      "list_format": "delimiter", "max_cell_chars": 12}, ["id", "model", "prediction", "reference", "note"]),
    ({"prediction": "prediction", "references": ["reference"], "list_format": "single"}, ["prediction", "reference"]),
]


@pytest.mark.parametrize("case", range(len(MAPPINGS)))
@pytest.mark.parametrize("hostile", [0.0, 0.05, 0.3])
def test_fast_rows_equal_the_row_by_row_path_or_decline(case: int, hostile: float) -> None:
    spec, columns = MAPPINGS[case]
    mapping = ColumnMapping.from_dict(spec)
    rng = random.Random(case * 100 + int(hostile * 100))
    taken = declined = 0
    for _ in range(40):
        raw = _chunk(rng, columns, rng.choice([1, 2, 7, 30]), hostile)
        fast, slow = _both(raw, mapping)
        if fast is None:
            declined += 1
            continue
        taken += 1
        assert fast == slow  # same Datum objects, field for field (the slow path raised nothing)
        assert normalize_rows(raw, mapping)[0] == slow
    if hostile == 0.0:
        assert declined == 0 and taken == 40  # a clean chunk always takes the fast path
    else:
        assert declined > 0 and taken > 0  # both paths met hostile chunks


def test_a_refused_chunk_keeps_its_located_message() -> None:
    mapping = ColumnMapping.from_dict({"id": "id", "model": "model", "prediction": "prediction",
                                       "references": ["reference"], "list_format": "json"})
    raw = RawTable(columns=["id", "model", "prediction", "reference"],
                   rows=[["d1", "m", "p", "r"], ["d2", "m", "p", "[not json"], ["d1", "m", "p", "r"]],
                   row_numbers=[1, 2, 3], lines=[2, 3, 4], label="f.csv")
    assert fast_rows(raw, mapping, ()) is None
    with pytest.raises(InputError) as caught:
        normalize_rows(raw, mapping)
    assert (caught.value.file, caught.value.row, caught.value.column) == ("f.csv", 2, "reference")
    raw.rows[1][3] = "r"
    with pytest.raises(InputError) as caught:
        normalize_rows(raw, mapping)
    assert caught.value.row == 3 and "rows 1 and 3" in caught.value.message


@pytest.mark.parametrize("list_format", ["auto", "json", "delimiter", "single"])
def test_null_reference_rows_skip_only_chunks_without_a_marker(list_format: str) -> None:
    """The quick look for 'NaN', 'None' or 'null' anywhere in a column never misses a row the full reading finds
    (markers in any case, inside JSON lists, spelled with JSON escapes, between delimiters)."""
    from textgen_core.datasets.cells import CellProblem, is_null_marker, list_cell
    from textgen_core.datasets.loader import null_reference_rows

    texts = TEXTS + ["NONE", " nAn ", "nu\x00ll", "\x00", '["a", "\\u006eull"]', '["N\\u0061N"]', "x || null",
                     "nullable", "banana"]
    mapping = ColumnMapping.from_dict({"id": "id", "prediction": "p", "references": ["r1", "r2"] if list_format ==
                                       "single" else ["r1"], "list_format": list_format})
    rng = random.Random(list_format)
    for _ in range(200):
        rows = [[f"d{i}", "p", rng.choice(texts), rng.choice(texts)] for i in range(rng.choice([1, 3, 8]))]
        raw = RawTable(columns=["id", "p", "r1", "r2"], rows=rows, row_numbers=list(range(1, len(rows) + 1)),
                       lines=[], label="f.csv")
        expected: dict[str, list[int]] = {}
        for column, position in (("r1", 2), ("r2", 3)):
            if column not in mapping.references:
                continue
            for number, row in zip(raw.row_numbers, rows):
                try:
                    items = list_cell(row[position], mapping.list_format, mapping.delimiter, mapping.max_cell_chars,
                                      one_item=len(mapping.references) > 1)
                except CellProblem:
                    continue
                if any(is_null_marker(item) for item in items):
                    expected.setdefault(column, []).append(number)
        assert null_reference_rows(raw, mapping) == expected


@pytest.mark.parametrize("query", ["What is 2+2?", "  padded  ", "é ü 中文 😀", "line one\nline two"])
def test_rows_paired_by_query_get_the_same_ids_on_both_paths(query: str) -> None:
    raw = RawTable(columns=["model", "query", "prediction"],
                   rows=[["a", query, "x"], ["b", query, "y"], ["a", "other", "z"]],
                   row_numbers=[1, 2, 3], lines=[], label="f.csv")
    mapping = ColumnMapping(model="model", query="query", prediction="prediction", pair_by_query=True)
    fast, slow = _both(raw, mapping)
    assert fast == slow
    assert fast[0].datum_id == fast[1].datum_id != fast[2].datum_id
