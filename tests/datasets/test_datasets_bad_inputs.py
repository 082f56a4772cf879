"""Every malformed file in tests/bad_inputs/ gives an InputError naming file, row and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from textgen_core.datasets import ColumnMapping, load_dataset, read_table
from textgen_core.errors import InputError

BAD = Path(__file__).resolve().parents[1] / "bad_inputs"

WIDE = ColumnMapping(id="id", query="question", format="wide",
                     wide_predictions={"gpt": "prediction_gpt", "claude": "prediction_claude"})

# file, load_dataset keyword arguments, expected row, expected column, words the message must contain
CASES = [
    ("empty.csv", {}, None, None, ["empty (0 bytes)"]),
    ("whitespace_only.csv", {}, None, None, ["only blank lines"]),
    ("header_only.csv", {}, None, None, ["header", "no data rows", "id, model, question, answer"]),
    ("latin1.csv", {}, 2, "question", ["byte offset 75", "line 3", "not valid UTF-8 (byte fc)", "Re-save", "Windows-1252"]),
    ("latin1.jsonl", {}, 2, None, ["byte offset", "line 2", "UTF-8"]),
    ("ragged_more.csv", {}, 2, "answer", ["line 4", "4 fields", "header has 3", "quotes"]),
    ("ragged_fewer.csv", {}, 3, "reference", ["line 4", "3 fields", "header has 4"]),
    ("unclosed_quote.csv", {}, 2, "answer", ["line 3", "closing double quote"]),
    ("duplicate_header.csv", {}, None, "answer", ["appears twice", "columns 2 and 4"]),
    ("missing_reference.csv", {"required": {"references": "bleu, rouge"}}, None, "references",
     ["bleu, rouge", "references column", "none is mapped", "id, model, question, answer"]),
    ("missing_reference.csv", {"required": ["relevant_contexts"]}, None, "relevant_contexts",
     ["'relevant_contexts' column", "not in the file"]),
    ("duplicate_pair.csv", {}, 4, "id", ["'q2'", "'model-a'", "rows 2 and 4"]),
    ("prediction_object.jsonl", {}, 1, "answer", ["expected text", "a JSON object"]),
    ("query_nested_list.jsonl", {}, 3, "question", ["line 3", "expected text", "a list"]),
    ("reference_item_not_text.jsonl", {}, 1, "references", ["item 2", "a JSON object", "must be text"]),
    ("oversized_cell.csv", {"mapping": ColumnMapping(id="id", query="question", prediction="answer", max_cell_chars=100)},
     2, "answer", ["299 characters", "limit of 100", "max_cell_chars"]),
    ("bad_json_references.csv", {"mapping": ColumnMapping(prediction="answer", references=("reference",), list_format="json")},
     1, "reference", ["starts with '['", "not valid JSON"]),
    ("mapped_column_missing.csv", {"mapping": ColumnMapping(id="id", query="question", prediction="answer")},
     None, "question", ["query column 'question' is not in the file", "did you mean 'question_text'", "id, question_text, answer"]),
    ("unknown_extension.xlsx", {}, None, None, ["'.xlsx'", ".csv", ".jsonl", ".parquet"]),
    ("corrupt.parquet", {}, None, None, ["not a readable Parquet file", "CSV or JSON Lines"]),
    ("malformed.jsonl", {}, 3, None, ["line 4", "not valid JSON"]),
    ("not_object.jsonl", {}, 2, None, ["line 2", "a list", "one JSON object"]),
    ("not_object_array.json", {}, 2, None, ["item 2", "text", "JSON object"]),
    ("empty_id.csv", {}, 3, "id", ["datum id is empty"]),
    ("id_is_object.jsonl", {}, 1, "id", ["datum id", "a JSON object"]),
    ("wide_missing_column.csv", {"mapping": WIDE}, None, "prediction_claude",
     ["model 'claude' prediction column 'prediction_claude' is not in the file", "prediction_gpt"]),
    ("null_model.jsonl", {}, 2, "model", ["line 2", "model is empty"]),
    # nesting deep enough to overflow a recursive reader
    ("deep_list_reference.jsonl", {}, 2, "reference", ["line 2", "more than 64 levels deep"]),
    ("deep_object_metadata.jsonl", {}, 1, "notes", ["line 1", "more than 64 levels deep"]),
    ("deep_list_cell.csv", {}, 2, "reference", ["line 3", "more than 64 levels deep"]),
    ("deep_array.json", {}, None, None, ["more than 64 levels deep"]),
    # text that is not valid Unicode
    ("lone_surrogate.jsonl", {}, 2, "answer", ["line 2", "character 5", "lone surrogate", "\\ud800"]),
    ("lone_surrogate_key.jsonl", {}, None, "note\\udc00", ["column name", "lone surrogate"]),
    ("lone_surrogate_id.jsonl", {}, 1, "id", ["lone surrogate", "\\udfff"]),
    ("lone_surrogate_reference.jsonl", {}, 1, "references", ["lone surrogate", "\\ud83d"]),
    ("surrogate_escape_pair_broken.json", {}, 1, "answer", ["item 1 of the array", "lone surrogate", "\\udc00"]),
    # JSON that readers disagree on
    ("duplicate_key.jsonl", {}, 2, "answer", ["line 2", "key 'answer' appears twice"]),
    ("duplicate_key_array.json", {}, None, "model", ["key 'model' appears twice"]),
    ("infinity.jsonl", {}, 1, None, ["line 1", "Infinity is not a JSON value"]),
    ("empty_objects.jsonl", {}, None, None, ["no data", "empty object {}"]),
    ("empty_objects_array.json", {}, None, None, ["no data", "empty objects {}"]),
    ("top_level_number.json", {}, 1, None, ["line 1", "a number", "one JSON object"]),
    ("array_of_arrays.json", {}, 1, None, ["item 1", "a list", "JSON object"]),
    ("trailing_garbage.json", {}, None, None, ["not valid JSON", "Extra data"]),
    ("unterminated_string.jsonl", {}, 1, None, ["line 1", "not valid JSON", "Unterminated string"]),
    # headers and cells
    ("duplicate_after_cleaning.csv", {}, None, "model", ["'model' appears twice", "columns 2 and 3"]),
    ("header_only_bom.csv", {}, None, None, ["header (id, model, answer)", "no data rows"]),
    ("bom_blank.csv", {}, None, None, ["only blank lines"]),
    ("ragged_after_crlf.csv", {}, 2, "answer", ["line 3", "4 fields", "header has 3"]),
    ("id_is_bool.jsonl", {}, 1, "id", ["datum id", "true/false"]),
    ("model_is_list.jsonl", {}, 1, "model", ["model must be text", "a list"]),
    ("contexts_object.jsonl", {}, 1, "contexts", ["expected text or a list of texts", "a JSON object"]),
    ("truncated.parquet", {}, None, None, ["not a readable Parquet file"]),
    ("not_parquet.parquet", {}, None, None, ["not a readable Parquet file"]),
]

# Files that used to be read wrong and now load right: file -> (models, references of each row, warning words).
LOADABLE = {
    "bom_header.csv": (["m1", "m2"], [("Paris",), ("Paris",)], []),
    "zero_width_header.csv": (["m1", "m2"], [("Paris",), ("Paris",)], []),
    "bom_header.jsonl": (["m1", "m2"], [("Paris",), ("Paris",)], []),
    "code_pipes.csv": (["m"], [("return x || y;",), ("a || b",)], []),
    "nan_references.csv": (["m"], [("Paris",), ("NaN",), ("None",), ("null",)], ["rows 2, 3, 4", "NaN, None or null"]),
    "nan_in_jsonl.jsonl": (["m"], [("a",), ("b",)], []),
    "cr_only_lines.csv": (["m"], [("a",), ("c",)], []),
    "utf16.csv": (["m"], [("a",)], []),
    "formulas.csv": (["@m", "+m"], [("=cmd|' /C calc'!A0",), ("x",)], []),
    "empty_lines_between.jsonl": (["m"], [("a",), ("b",)], []),
    "nul_byte.csv": (["m"], [()], []),
    # a number is read as its text, as a CSV file holds it (issue 34: numeric labels must not refuse the file)
    "prediction_number.jsonl": (["model"], [(), ()], []),
    "references_not_list.jsonl": (["model"], [("3.5",)], []),
}


@pytest.mark.parametrize(("name", "kwargs", "row", "column", "words"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_bad_input_names_file_row_and_column(name: str, kwargs: dict, row: int | None, column: str | None,
                                             words: list[str]) -> None:
    path = BAD / name
    with pytest.raises(InputError) as caught:
        load_dataset(path, **kwargs)
    error = caught.value
    assert error.file == str(path)
    assert error.row == row
    assert error.column == column
    text = str(error)
    for word in words:
        assert word in text, f"{word!r} missing from: {text}"
    assert "Traceback" not in text


def test_every_corpus_file_has_a_case() -> None:
    covered = {case[0] for case in CASES} | set(LOADABLE)
    on_disk = {p.name for p in BAD.iterdir() if p.is_file()}
    assert on_disk == covered
    assert len(on_disk) >= 60


@pytest.mark.parametrize("name", sorted(LOADABLE))
def test_hostile_but_valid_files_load_right(name: str) -> None:
    models, references, warning_words = LOADABLE[name]
    dataset = load_dataset(BAD / name)
    assert dataset.models == models
    assert [r.references for r in dataset.rows] == references
    text = " ".join(dataset.warnings)
    assert all(word in text for word in warning_words), text
    assert bool(dataset.warnings) == bool(warning_words)


def test_null_references_can_be_treated_as_missing() -> None:
    dataset = load_dataset(BAD / "nan_references.csv", ColumnMapping(id="id", model="model", prediction="answer",
                                                                    references=("reference",), null_references="missing"))
    assert [r.references for r in dataset.rows] == [("Paris",), (), (), ()]
    assert "treated as missing" in dataset.warnings[0] and "rows 2, 3, 4" in dataset.warnings[0]


def test_delimiter_splitting_happens_only_when_asked() -> None:
    mapping = ColumnMapping(id="id", model="model", prediction="answer", references=("reference",),
                            list_format="delimiter")
    assert load_dataset(BAD / "code_pipes.csv", mapping).rows[0].references == ("return x", "y;")


@pytest.mark.parametrize("name", ["latin1.csv", "ragged_more.csv", "malformed.jsonl", "corrupt.parquet", "empty.csv"])
def test_read_table_reports_the_same_problem(name: str) -> None:
    """The preview reader fails the same way as the loader, with the same location."""
    with pytest.raises(InputError) as from_read:
        read_table(BAD / name)
    with pytest.raises(InputError) as from_load:
        load_dataset(BAD / name)
    assert str(from_read.value) == str(from_load.value)


def test_bytes_upload_is_labelled_with_its_file_name() -> None:
    data = (BAD / "ragged_fewer.csv").read_bytes()
    with pytest.raises(InputError) as caught:
        load_dataset(data, file_name="upload.csv")
    assert caught.value.file == "upload.csv"
    assert str(caught.value).startswith("file 'upload.csv', row 3, column 'reference':")


def test_bad_json_reference_is_plain_text_in_auto_mode() -> None:
    dataset = load_dataset(BAD / "bad_json_references.csv")
    assert dataset.rows[0].references == ('["Paris", "the City of Light"',)


def test_oversized_cell_at_the_default_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text("id,question,answer\n1,Long?," + "x" * 200_001 + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_dataset(path)
    assert (caught.value.row, caught.value.column) == (1, "answer")
    assert "200,001 characters" in str(caught.value)


def test_oversized_metadata_and_list_items_are_caught(tmp_path: Path) -> None:
    path = tmp_path / "meta.jsonl"
    path.write_text('{"answer": "ok", "notes": "' + "n" * 50 + '", "contexts": ["short"]}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_dataset(path, ColumnMapping(prediction="answer", contexts=("contexts",), max_cell_chars=20))
    assert caught.value.column == "notes"
    path.write_text('{"answer": "ok", "contexts": ["short", "' + "c" * 50 + '"]}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_dataset(path, ColumnMapping(prediction="answer", contexts=("contexts",), max_cell_chars=20))
    assert caught.value.column == "contexts"


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_dataset(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="folder"):
        load_dataset(tmp_path)


def test_required_field_empty_in_every_row(tmp_path: Path) -> None:
    path = tmp_path / "blank_refs.csv"
    path.write_text("id,answer,reference\n1,a,\n2,b,\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_dataset(path, required={"references": "bleu"})
    assert caught.value.column == "reference"
    assert "empty in every row" in str(caught.value) and "bleu" in str(caught.value)


def test_wide_format_without_prediction_columns(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text("id,question\n1,Q?\n", encoding="utf-8")
    with pytest.raises(InputError, match="wide_predictions is empty"):
        load_dataset(path, ColumnMapping(format="wide"))
    with pytest.raises(InputError) as caught:
        load_dataset(path, ColumnMapping(model="question", format="wide", wide_predictions={"m": "id"}))
    assert caught.value.column == "question"


@pytest.mark.parametrize("bad", [{"format": "tall"}, {"list_format": "yaml"}, {"max_cell_chars": 0},
                                 {"default_model": " "}, {"colour": "red"}])
def test_invalid_mapping_values_are_input_errors(bad: dict) -> None:
    with pytest.raises(InputError):
        ColumnMapping.from_dict(bad)
