"""load_dataset on good inputs: every format and layout gives the same normalized rows."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from textgen_core.datasets import ColumnMapping, load_dataset, read_table
from textgen_core.errors import InputError
from textgen_core.model import Datum

LONG_CSV = """id,model,question,answer,reference,contexts,grade
q1,a,Capital of France?,Paris,"[""Paris"", ""Paris, France""]","[""Paris is the capital."", ""Lyon is a city.""]",5
q1,b,Capital of France?,Lyon,"[""Paris"", ""Paris, France""]","[""Paris is the capital."", ""Lyon is a city.""]",1
q2,a,2+2?,4,4,"[""Two plus two is four.""]",5
q2,b,2+2?,5,4,"[""Two plus two is four.""]",2
"""


def _rows(dataset) -> list[tuple]:
    return [(r.datum_id, r.model, r.query, r.prediction, r.references, r.contexts, dict(r.metadata)) for r in dataset.rows]


def test_long_csv_normalized() -> None:
    dataset = load_dataset(LONG_CSV.encode(), file_name="qa.csv")
    assert dataset.name == "qa" and dataset.source == "qa.csv"
    assert dataset.models == ["a", "b"]
    assert dataset.metadata_columns == ("grade",)
    assert dataset.rows[0] == Datum("q1", "a", "Capital of France?", "Paris", ("Paris", "Paris, France"),
                                    ("Paris is the capital.", "Lyon is a city."), {"grade": "5"})
    assert dataset.rows[2].references == ("4",)
    assert dataset.mapping["query"] == "question" and dataset.mapping["references"] == ["reference"]


def test_long_and_wide_give_identical_rows() -> None:
    wide_csv = """id,question,reference,contexts,grade,prediction_a,prediction_b
q1,Capital of France?,"[""Paris"", ""Paris, France""]","[""Paris is the capital."", ""Lyon is a city.""]",5,Paris,Lyon
q2,2+2?,4,"[""Two plus two is four.""]",5,4,5
"""
    wide = load_dataset(wide_csv.encode(), file_name="wide.csv")
    assert wide.mapping["format"] == "wide"
    long = load_dataset(LONG_CSV.encode(), file_name="qa.csv")
    # grade differs per model in the long file; compare everything else
    strip = lambda rows: [row[:6] for row in rows]  # noqa: E731
    assert strip(_rows(wide)) == strip(_rows(long))
    assert wide.metadata_columns == ("grade",)


def test_wide_without_id_uses_row_numbers() -> None:
    dataset = load_dataset(b"question,response_x,response_y\nQ1,a,b\nQ2,c,\n", file_name="w.csv")
    assert [(r.datum_id, r.model, r.prediction) for r in dataset.rows] == [
        ("1", "x", "a"), ("1", "y", "b"), ("2", "x", "c"), ("2", "y", "")]


def test_long_without_model_or_id_uses_defaults() -> None:
    dataset = load_dataset(b"question,answer\nQ1,A1\nQ2,A2\n", file_name="single.csv",
                           mapping=ColumnMapping(query="question", prediction="answer", default_model="gpt-x"))
    assert [(r.datum_id, r.model) for r in dataset.rows] == [("1", "gpt-x"), ("2", "gpt-x")]


def test_jsonl_with_list_references_and_numeric_metadata() -> None:
    lines = [
        {"id": 7, "question": "Q?", "answer": "A", "references": ["A", "", "a"], "contexts": ["c1", None, "c2"],
         "score": 0.5, "tags": ["x"], "ok": True},
        {"id": "007", "question": None, "answer": "", "references": "single", "contexts": []},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    dataset = load_dataset(data, file_name="t.jsonl")
    first, second = dataset.rows
    assert first.datum_id == "7" and second.datum_id == "007"
    assert first.references == ("A", "a")  # empty items dropped
    assert first.contexts == ("c1", "c2")  # order kept
    assert first.metadata == {"score": "0.5", "tags": '["x"]', "ok": "true"}
    assert second.metadata == {"score": None, "tags": None, "ok": None}
    assert second.query is None and second.prediction == "" and second.references == ("single",)


def test_parquet_with_list_columns(tmp_path: Path) -> None:
    table = pa.table({
        "qid": ["001", "002"],
        "model": ["m", "m"],
        "prompt": ["P1", "P2"],
        "output": ["O1", "O2"],
        "gold": pa.array([["g1", "g2"], ["g3"]], pa.list_(pa.string())),
        "retrieved_contexts": pa.array([["c1"], None], pa.list_(pa.string())),
        "n": pa.array([3, None], pa.int64()),
    })
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    dataset = load_dataset(path)
    assert [(r.datum_id, r.references, r.contexts) for r in dataset.rows] == [
        ("001", ("g1", "g2"), ("c1",)), ("002", ("g3",), ())]
    assert dataset.rows[0].metadata == {"n": "3"} and dataset.rows[1].metadata == {"n": None}


def test_numbered_reference_columns() -> None:
    data = b"id,answer,reference_1,reference_2,reference_3\n1,a,r1,,r3 || still one\n"
    dataset = load_dataset(data, file_name="n.csv")
    # each numbered cell is one item: no splitting on the delimiter, blanks dropped
    assert dataset.rows[0].references == ("r1", "r3 || still one")


@pytest.mark.parametrize(
    ("list_format", "cell", "expected"),
    [
        ("auto", "a || b ||  || c", ("a || b ||  || c",)),  # plain text is never split
        ("auto", "return x || y;", ("return x || y;",)),
        ("delimiter", "a || b ||  || c", ("a", "b", "c")),
        ("auto", '["x", "y || z"]', ("x", "y || z")),
        ("auto", "[1] Smith et al.", ("[1] Smith et al.",)),
        ("auto", "[1, 2]", ("[1, 2]",)),
        ("json", '["x", "y"]', ("x", "y")),
        ("json", "plain text", ("plain text",)),
        ("delimiter", '["x" || "y"]', ('["x"', '"y"]')),
        ("single", "a || b", ("a || b",)),
        ("single", '["x", "y"]', ('["x", "y"]',)),
    ],
)
def test_list_formats(list_format: str, cell: str, expected: tuple) -> None:
    frame = pd.DataFrame({"answer": ["p"], "reference": [cell]})
    dataset = load_dataset(frame, ColumnMapping(prediction="answer", references=("reference",), list_format=list_format))
    assert dataset.rows[0].references == expected


def test_custom_delimiter() -> None:
    frame = pd.DataFrame({"answer": ["p"], "ctx": ["one; two;three"]})
    mapping = ColumnMapping(prediction="answer", contexts=("ctx",), list_format="delimiter", delimiter=";")
    assert load_dataset(frame, mapping).rows[0].contexts == ("one", "two", "three")


def test_explicit_mapping_overrides_the_guess() -> None:
    data = b"id,question,answer,answer_v2,notes\n1,Q?,old,new,r1 || r2\n"
    guess = load_dataset(data, file_name="v.csv")
    assert guess.rows[0].prediction == "old" and guess.rows[0].references == ()
    mapping = ColumnMapping(id="id", query="question", prediction="answer_v2", references=("notes",),
                            default_model="solo")
    dataset = load_dataset(data, mapping, file_name="v.csv", name="custom")
    assert dataset.name == "custom"
    assert dataset.rows[0] == Datum("1", "solo", "Q?", "new", ("r1 || r2",), (), {"answer": "old"})
    assert dataset.metadata_columns == ("answer",)


def test_mapping_as_plain_dict() -> None:
    dataset = load_dataset(LONG_CSV.encode(), {"prediction": "answer", "model": "model", "id": "id"}, file_name="x.csv")
    assert dataset.rows[1].model == "b" and dataset.rows[1].query is None
    assert "question" in dataset.metadata_columns


def test_dataframe_input_with_pandas_defaults() -> None:
    frame = pd.DataFrame({
        "id": ["001", "002"],
        "question": pd.array(["Q1", None], dtype="string"),
        "answer": ["A1", "A2"],
        "references": [np.array(["r1", "r2"], dtype=object), np.array([], dtype=object)],
        "score": [1.5, np.nan],
        "count": pd.array([3, None], dtype="Int64"),
    })
    dataset = load_dataset(frame)
    assert dataset.name == "dataset" and dataset.source == "DataFrame"
    first, second = dataset.rows
    assert (first.datum_id, first.query, first.references) == ("001", "Q1", ("r1", "r2"))
    assert second.query is None and second.references == ()
    assert first.metadata == {"score": "1.5", "count": "3"}
    assert second.metadata == {"score": None, "count": None}


def test_dataframe_errors_count_rows_from_one() -> None:
    frame = pd.DataFrame({"id": ["a", "b"], "answer": ["x", {"text": 5}]}, index=[10, 20])  # a number is text now
    with pytest.raises(InputError) as caught:
        load_dataset(frame, file_name="frame")
    assert (caught.value.file, caught.value.row, caught.value.column) == ("frame", 2, "answer")


def test_read_table_frame_loads_like_the_file(tmp_path: Path) -> None:
    """A preview frame from read_table keeps the file's row numbers, lines and value types."""
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "q1", "answer": "ok", "refs": ["a", "b"], "n": 2}\n\n'
                    '{"id": "q2", "answer": {"n": 17}}\n', encoding="utf-8")
    mapping = ColumnMapping(id="id", prediction="answer", references=("refs",), list_format="single")
    frame = read_table(path)
    with pytest.raises(InputError) as from_frame:
        load_dataset(frame, mapping)
    with pytest.raises(InputError) as from_file:
        load_dataset(path, mapping)
    assert str(from_frame.value) == str(from_file.value)
    assert "line 3" in str(from_frame.value) and from_frame.value.row == 2
    good = load_dataset(frame.iloc[:1], mapping)
    assert good.rows[0].references == ("a", "b") and good.rows[0].metadata == {"n": "2"}


def test_bom_csv_header_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffid,question,answer\n01,Q?,A\n".encode("utf-8"))
    dataset = load_dataset(path)
    assert dataset.mapping["id"] == "id" and dataset.rows[0].datum_id == "01"


def test_multiline_cells_survive(tmp_path: Path) -> None:
    path = tmp_path / "multi.csv"
    path.write_text('id,question,answer\n1,"Line one\nline two","A1\n\nA2"\n', encoding="utf-8")
    row = load_dataset(path).rows[0]
    assert row.query == "Line one\nline two" and row.prediction == "A1\n\nA2"


def test_ids_and_models_are_trimmed_and_integral_floats_read_as_ints() -> None:
    frame = pd.DataFrame({"id": [1.0, 2.0], "model": [" m ", "m"], "answer": ["a", "b"]})
    dataset = load_dataset(frame)
    assert [(r.datum_id, r.model) for r in dataset.rows] == [("1", "m"), ("2", "m")]


def test_required_fields_satisfied() -> None:
    dataset = load_dataset(LONG_CSV.encode(), file_name="qa.csv",
                           required=["query", "prediction", "references", "contexts", "grade"])
    assert len(dataset.rows) == 4
    wide = load_dataset(b"id,prediction_a\n1,x\n", file_name="w.csv", required={"prediction": "exact_match"})
    assert wide.rows[0].prediction == "x"


def test_metadata_values_are_text_copies_per_row() -> None:
    wide = load_dataset(b"id,note,prediction_a,prediction_b\n1,hi,x,y\n", file_name="w.csv")
    a, b = wide.rows
    assert a.metadata == b.metadata == {"note": "hi"}
    assert a.metadata is not b.metadata


def test_round_trip_through_the_store(tmp_path: Path) -> None:
    from textgen_core.store.store import Store

    dataset = load_dataset(LONG_CSV.encode(), file_name="qa.csv")
    store = Store(":memory:")
    try:
        loaded = store.load_dataset(store.save_dataset(dataset))
    finally:
        store.close()
    assert _rows(loaded) == _rows(dataset)
    assert loaded.metadata_columns == dataset.metadata_columns
    assert ColumnMapping.from_dict(loaded.mapping) == ColumnMapping.from_dict(dataset.mapping)


def test_stream_source_reads_whole_upload_even_after_a_preview() -> None:
    upload = io.BytesIO(LONG_CSV.encode())
    upload.name = "upload.csv"  # as Streamlit's UploadedFile has
    preview = read_table(upload)
    dataset = load_dataset(upload)
    assert dataset.name == "upload" and len(dataset.rows) == len(preview) == 4


def test_binary_parquet_text_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "b.parquet"
    pq.write_table(pa.table({"answer": pa.array([b"caf\xc3\xa9"], pa.binary())}), path)
    assert load_dataset(path).rows[0].prediction == "café"


def test_text_instead_of_a_path() -> None:
    with pytest.raises(InputError, match="pass the file's contents as bytes"):
        load_dataset("id,answer\n1,a\n")


def test_rows_without_an_id_pair_by_identical_query_text_when_asked() -> None:
    from textgen_core.datasets import ColumnMapping, dataset_summary, load_dataset
    from textgen_core.datasets.mapping import query_datum_id

    payload = (b"model,question,answer\n"
               b"a,What is 2+2?,4\nb,What is 2+2?,four\na,Capital of France?,Paris\nb, Capital of France? ,Lyon\n")
    unpaired = load_dataset(payload, ColumnMapping(model="model", query="question", prediction="answer"),
                            file_name="t.csv")
    summary = dataset_summary(unpaired)
    assert (summary["datums"], summary["paired_datums"]) == (4, 0)  # every row its own datum: nothing to pair
    paired = load_dataset(payload, ColumnMapping(model="model", query="question", prediction="answer",
                                                 pair_by_query=True), file_name="t.csv")
    summary = dataset_summary(paired)
    assert (summary["datums"], summary["paired_datums"]) == (2, 2)
    ids = {(r.datum_id, r.model) for r in paired.rows}
    assert ids == {(query_datum_id("What is 2+2?"), "a"), (query_datum_id("What is 2+2?"), "b"),
                   (query_datum_id("Capital of France?"), "a"), (query_datum_id("Capital of France?"), "b")}
    # a second answer of one model to the same question is the usual duplicate, named by its rows
    import pytest as _pytest

    from textgen_core.errors import InputError
    with _pytest.raises(InputError, match="rows 1 and 2"):
        load_dataset(b"model,question,answer\na,Q,x\na,Q,y\n",
                     ColumnMapping(model="model", query="question", prediction="answer", pair_by_query=True),
                     file_name="t.csv")
