"""JSON Lines files stream in chunks to the same dataset, cells and messages as the whole-file reader."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from streamed_files import write_jsonl
from textgen_core.catalog import save_or_reuse
from textgen_core.datasets import load_dataset
from textgen_core.errors import InputError
from textgen_core.evaluate import evaluate
from textgen_core.store import Store
from textgen_core.streaming import NotStreamable, stream_file

METRICS = ["rouge", "bleu", "wer"]


def _described(store: Store) -> list[tuple]:
    return [(d.name, d.n_rows, list(d.models), list(d.metadata_columns)) for d in store.list_datasets().itertuples()]


def _whole(tmp_path: Path, path: Path) -> tuple[Store, int, int]:
    store = Store(tmp_path / "whole.duckdb")
    dataset_id, _, _ = save_or_reuse(store, load_dataset(path), path.stem)
    return store, dataset_id, evaluate(store, dataset_id, METRICS, workers=1)


@pytest.mark.parametrize("suffix", [".jsonl", ".ndjson"])  # through a process pool: test_streaming_resume
def test_jsonl_streams_to_the_whole_file_dataset_and_cells(tmp_path: Path, suffix: str) -> None:
    path = write_jsonl(tmp_path / f"outputs{suffix}", 180)
    whole, whole_dataset, whole_run = _whole(tmp_path, path)
    store = Store(tmp_path / "streamed.duckdb")
    streamed = stream_file(store, path, METRICS, chunk_rows=23, workers=1)
    assert streamed.rows == 180
    assert store.load_dataset(streamed.dataset_id).rows == whole.load_dataset(whole_dataset).rows
    assert _described(store) == _described(whole)
    assert _described(store)[0][3] == ["info", "score", "late"]  # first-seen order
    pd.testing.assert_frame_equal(store.scores(streamed.run_id), whole.scores(whole_run), check_exact=True)
    pd.testing.assert_frame_equal(store.aggregates(streamed.run_id), whole.aggregates(whole_run), check_exact=True)


@pytest.mark.parametrize("bad", [
    b'{"id": "d1", "model": "m0", "prediction": "cut off',
    b'["a", "list", "on", "a", "line"]',
    b'{"id": "x", "model": "m0", "prediction": "p", "prediction": "twice"}',
    b'{"id": "x", "model": "m0", "prediction": "Infinity is not JSON", "n": Infinity}',
    b'{"id": "x", "model": "m0", "prediction": "caf\xe9 in Latin-1"}',
    b'{"id": "x", "model": "m0", "prediction": ["a list is not a prediction"]}',
], ids=["syntax", "list", "duplicate-key", "infinity", "not-utf8", "bad-value"])
def test_a_bad_line_late_in_the_file_is_named_as_the_whole_file_reader_names_it(tmp_path: Path, bad: bytes) -> None:
    path = write_jsonl(tmp_path / "outputs.jsonl", 150, bad_line=(170, bad))
    with pytest.raises(InputError) as whole:
        load_dataset(path)
    store = Store(tmp_path / "s.duckdb")
    with pytest.raises(InputError) as streamed:
        stream_file(store, path, METRICS, chunk_rows=20, workers=1)
    assert (str(streamed.value), streamed.value.row, streamed.value.column) == \
        (str(whole.value), whole.value.row, whole.value.column)
    assert "outputs.jsonl" in str(streamed.value) and "line 170" in str(streamed.value)
    assert store.list_datasets().empty and store.list_runs().empty


def test_json_arrays_and_files_without_data_are_read_whole(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\xef\xbb\xbf\r\n{}\r\n  \r\n")
    array = tmp_path / "array.json"
    array.write_text('[{"prediction": "a", "reference": "a"}]', encoding="utf-8")
    for path in (blank, array):
        with pytest.raises(NotStreamable):
            stream_file(store, path, ["rouge"])
    assert store.list_datasets().empty
