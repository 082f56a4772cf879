"""Streamed runs (file -> stored run in chunks) give the whole-file path's numbers and messages."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from streamed_files import write_csv
from textgen_core.catalog import save_or_reuse
from textgen_core.cli.progress_bar import ProgressBar
from textgen_core.datasets import load_dataset
from textgen_core.errors import InputError
from textgen_core.evaluate import evaluate
from textgen_core.model import Cell
from textgen_core.progress import Progress
from textgen_core.store import Store
from textgen_core.streaming import NotStreamable, stream_file
from textgen_core.runs.packed import RowStats

METRICS = ["rouge", "bleu", "gleu", "wer"]


def _whole_file(tmp_path: Path, path: Path, metrics: list[str]) -> tuple[Store, int]:
    store = Store(tmp_path / "whole.duckdb")
    dataset_id, _, _ = save_or_reuse(store, load_dataset(path), path.stem)
    return store, evaluate(store, dataset_id, metrics, workers=1)


@pytest.mark.parametrize("workers", [1, 2])
def test_streamed_run_equals_whole_file_run(tmp_path: Path, workers: int) -> None:
    path = write_csv(tmp_path / "outputs.csv", 230)
    whole, whole_run = _whole_file(tmp_path, path, METRICS)
    store = Store(tmp_path / "streamed.duckdb")
    seen: list[Progress] = []
    streamed = stream_file(store, path, METRICS, chunk_rows=37, workers=workers, progress=seen.append)
    assert streamed.rows == 230 and not streamed.reused
    pd.testing.assert_frame_equal(store.wide_scores(streamed.run_id), whole.wide_scores(whole_run))
    pd.testing.assert_frame_equal(store.aggregates(streamed.run_id), whole.aggregates(whole_run))
    assert store.load_dataset(streamed.dataset_id).rows == whole.load_dataset(1).rows
    assert store.get_run(streamed.run_id)["status"] == "finished"
    assert store.get_run(streamed.run_id)["models"] == ["m0", "m1"]
    assert seen[0].phase == "reading" and seen[-1] == Progress("done", 230, 230, seen[-1].failed)
    assert seen[-1].failed > 0  # rows without a reference are unscored, and counted


def test_parquet_streams_with_the_same_numbers(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "outputs.csv", 90)
    whole, whole_run = _whole_file(tmp_path, path, ["rouge", "bleu"])
    parquet = tmp_path / "outputs.parquet"
    pd.read_csv(path, dtype=str, keep_default_na=False).to_parquet(parquet)
    store = Store(tmp_path / "streamed.duckdb")
    streamed = stream_file(store, parquet, ["rouge", "bleu"], chunk_rows=20, workers=1)
    pd.testing.assert_frame_equal(store.wide_scores(streamed.run_id), whole.wide_scores(whole_run))
    pd.testing.assert_frame_equal(store.aggregates(streamed.run_id), whole.aggregates(whole_run))


def test_same_file_twice_reuses_the_stored_dataset(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "outputs.csv", 40)
    store = Store(tmp_path / "s.duckdb")
    first = stream_file(store, path, ["rouge"], chunk_rows=9, workers=1)
    second = stream_file(store, path, ["bleu"], chunk_rows=9, workers=1)
    assert second.reused and second.dataset_id == first.dataset_id and second.dataset_name == "outputs"
    assert list(store.list_datasets()["name"]) == ["outputs"]
    assert store.get_run(second.run_id)["dataset_id"] == first.dataset_id
    write_csv(path, 41)
    third = stream_file(store, path, ["bleu"], chunk_rows=9, workers=1)
    assert not third.reused and third.dataset_name == "outputs (2)"


@pytest.mark.parametrize("bad", ["ragged", "duplicate"])
def test_a_bad_row_late_in_the_file_names_it_and_stores_nothing(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "outputs.csv"
    if bad == "ragged":
        write_csv(path, 120, bad_row=101)
    else:
        write_csv(path, 120, duplicate_of=(3, 101))
    with pytest.raises(InputError) as whole:
        load_dataset(path)
    store = Store(tmp_path / "s.duckdb")
    with pytest.raises(InputError) as streamed:
        stream_file(store, path, ["rouge"], chunk_rows=10, workers=1)
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.row == 101
    assert store.list_datasets().empty and store.list_runs().empty


def test_files_and_metrics_that_need_the_whole_file_are_refused_before_anything_is_stored(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.duckdb")
    array = tmp_path / "outputs.json"  # a JSON array is read whole (JSON Lines stream)
    array.write_text('[{"prediction": "a", "reference": "a"}]\n', encoding="utf-8")
    with pytest.raises(NotStreamable):
        stream_file(store, array, ["rouge"])
    with pytest.raises(NotStreamable):
        stream_file(store, write_csv(tmp_path / "o.csv", 4), ["faithfulness"])
    assert store.list_datasets().empty


def test_packed_statistics_give_the_cells_back() -> None:
    rows = [{"bleu": Cell(0.25, {"matches": [3, 2, 1, 0], "totals": [4, 3, 2, 1], "hyp_len": 4, "ref_len": 5,
                                 "p5": (1, 2)})},
            {"bleu": Cell.unscored("no references")},
            {"wer": Cell(1 / 3, {"errors": 1, "reference_words": 3})},
            {"x": Cell(0.5, {"label": "text is kept as it is"})},
            {"bleu": Cell(None, {"matches": [0.5], "totals": [1.0], "hyp_len": 1, "ref_len": 1}, "zero")}]
    packed = RowStats()
    for row in rows:
        packed.add(row)
    again = list(packed)
    assert len(packed) == len(rows)
    for original, back in zip(rows, again):
        assert {k: (c.value, c.details) for k, c in original.items()} == {k: (c.value, c.details) for k, c in back.items()}
        for k in original:
            for key, value in (original[k].details or {}).items():
                assert type(back[k].details[key]) is type(value)


def test_progress_lines_when_output_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    clock = iter([0.0, 0.0, 1.0, 6.0, 7.0, 7.5])
    monkeypatch.setattr("textgen_core.cli.progress_bar.time.monotonic", lambda: next(clock))
    bar = ProgressBar(out)
    bar.update(Progress("reading", 100, 0))
    bar.update(Progress("lexical", 100, 10))  # 1 s after the first line: quiet
    bar.update(Progress("lexical", 100, 60))  # 6 s: a line
    bar.update(Progress("lexical", 100, 70))  # quiet
    bar.update(Progress("done", 100, 100))  # the last line always shows
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["reading", "lexical", "done"]
    assert "\r" not in out.getvalue() and "60/100 rows (60%" in lines[1]
