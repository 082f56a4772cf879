"""read_table: CSV, TSV, JSON Lines, JSON and Parquet into text cells, whatever pandas would guess."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textgen_core.datasets import read_table
from textgen_core.datasets.reader import unpack_ints
from textgen_core.errors import InputError


def _parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def test_csv_cells_stay_text_with_leading_zeros_and_none_free() -> None:
    frame = read_table(b"id,score,flag,note\n007,4.50,TRUE,\n010,1e3,no,x\n", file_name="t.csv")
    assert list(frame.columns) == ["id", "score", "flag", "note"]
    assert frame["id"].tolist() == ["007", "010"]
    assert frame["score"].tolist() == ["4.50", "1e3"]
    assert frame["flag"].tolist() == ["TRUE", "no"]
    assert frame["note"].tolist() == ["", "x"]  # an empty CSV cell is empty text
    # pandas 3 would make these columns "str" and turn None into NaN; object keeps values as read.
    assert all(dtype == object for dtype in frame.dtypes)
    assert frame.index.name == "row" and frame.index.tolist() == [1, 2]


def test_csv_with_bom_and_crlf() -> None:
    data = "\ufeffid,question\r\n1,Qué?\r\n".encode("utf-8")
    frame = read_table(data, file_name="bom.csv")
    assert list(frame.columns) == ["id", "question"]
    assert frame.iloc[0].tolist() == ["1", "Qué?"]


def test_utf16_with_bom_is_read() -> None:
    data = "id,question\n1,Straße?\n".encode("utf-16")
    frame = read_table(data, file_name="u16.csv")
    assert frame["question"].tolist() == ["Straße?"]


def test_csv_quoted_multiline_cells_and_row_numbers() -> None:
    text = 'id,answer\n1,"first line\nsecond line, with comma"\n\n2,"say ""hi"""\n'
    frame = read_table(text.encode(), file_name="multi.csv")
    assert frame["answer"].tolist() == ["first line\nsecond line, with comma", 'say "hi"']
    # the blank record between them still counts as a row, as a spreadsheet shows it
    assert frame.index.tolist() == [1, 3]


def test_semicolon_and_tab_separated() -> None:
    assert read_table(b"id;answer\n1;yes, really\n", file_name="eu.csv")["answer"].tolist() == ["yes, really"]
    assert read_table(b"id\tanswer\n1\ta,b\n", file_name="t.tsv")["answer"].tolist() == ["a,b"]


def test_blank_header_cells() -> None:
    # a named-less column with values gets a name; one with nothing in it is dropped
    frame = read_table(b"id,,answer,,\n1,x,a,,\n2,,b,,\n", file_name="trailing.csv")
    assert list(frame.columns) == ["id", "column_2", "answer"]
    assert frame.loc[1].tolist() == ["1", "x", "a"]


def test_jsonl_values_become_text_and_attrs_remember_them() -> None:
    data = (b'{"id": 1, "answer": "a", "references": ["x", "y"], "meta": {"k": 1}}\n'
            b'\n'
            b'{"id": "2", "answer": null, "extra": true}\n')
    frame = read_table(data, file_name="t.jsonl")
    assert list(frame.columns) == ["id", "answer", "references", "meta", "extra"]
    assert frame.loc[1].tolist() == ["1", "a", '["x", "y"]', '{"k": 1}', None]
    assert frame.loc[2].tolist() == ["2", None, None, None, "true"]
    source = frame.attrs["textgen_source"]
    assert source["file"] == "t.jsonl"
    assert {name: unpack_ints(rows) for name, rows in source["json_cells"].items()} == {
        "id": [1], "references": [1], "meta": [1], "extra": [2]}
    assert unpack_ints(source["row_numbers"]) == [1, 2] and unpack_ints(source["lines"]) == [1, 3]


def test_json_array_and_jsonl_saved_as_json() -> None:
    array = read_table(b'[{"a": "1"}, {"a": "2", "b": "x"}]', file_name="t.json")
    assert array.to_dict("list") == {"a": ["1", "2"], "b": [None, "x"]}
    lines = read_table(b'{"a": "1"}\n{"a": "2"}\n', file_name="t.json")
    assert lines["a"].tolist() == ["1", "2"]


def test_jsonl_line_separator_inside_a_string_is_not_a_new_line() -> None:
    frame = read_table('{"a": "one\u2028two"}\n'.encode(), file_name="t.jsonl")
    assert frame["a"].tolist() == ["one\u2028two"]


def test_parquet_with_list_and_numeric_columns() -> None:
    table = pa.table({
        "id": pa.array(["001", "002"]),
        "n": pa.array([1, None], pa.int64()),
        "refs": pa.array([["a", "b"], []], pa.list_(pa.string())),
    })
    frame = read_table(_parquet_bytes(table), file_name="t.parquet")
    assert frame["id"].tolist() == ["001", "002"]
    assert frame["n"].tolist() == ["1", None]
    assert frame["refs"].tolist() == ['["a", "b"]', "[]"]


def test_path_and_open_file_sources(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_bytes(b"id,answer\n1,a\n")
    assert read_table(path)["answer"].tolist() == ["a"]
    assert read_table(str(path)).attrs["textgen_source"]["file"] == str(path)
    with path.open("rb") as fh:
        frame = read_table(fh)
    assert frame.attrs["textgen_source"]["file"] == "data.csv"


def test_content_is_sniffed_only_without_any_name() -> None:
    assert list(read_table(b'{"a": "x"}\n').columns) == ["a"]
    assert list(read_table(b"a,b\n1,2\n").columns) == ["a", "b"]
    table = pa.table({"a": ["x"]})
    assert read_table(_parquet_bytes(table))["a"].tolist() == ["x"]
    with pytest.raises(InputError, match="no extension"):
        read_table(b"a,b\n1,2\n", file_name="noext")


def test_unsupported_source_type() -> None:
    with pytest.raises(InputError, match="cannot read a dataset from int"):
        read_table(42)  # type: ignore[arg-type]


def test_large_csv_and_cheap_frame_operations() -> None:
    rows = "".join(f"{i},model-{i % 3},question {i},answer {i}\n" for i in range(20_000))
    frame = read_table(("id,model,question,answer\n" + rows).encode(), file_name="big.csv")
    assert len(frame) == 20_000
    assert frame.iloc[-1].tolist() == ["19999", "model-1", "question 19999", "answer 19999"]
    assert isinstance(frame, pd.DataFrame)
    # pandas deep-copies attrs on each operation: they must stay small arrays, not per-row dicts
    start = time.perf_counter()
    for _ in range(20):
        frame.head()
    assert time.perf_counter() - start < 1.0
    both = pd.concat([frame, frame])  # compares attrs with ==
    assert len(both) == 40_000 and both.merge(frame.head(), on="id").shape[0] == 10
