"""`runs` and `datasets` print clean tables, and every place shows a run's duration with one function."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from textgen_core.cli.main import main
from textgen_core.datasets import load_sample
from textgen_core.evaluate import evaluate, resume
from textgen_core.formatting import duration_text, plain_table, text_table
from textgen_core.store import Store


@pytest.mark.parametrize("seconds, text", [
    (None, ""), (float("nan"), ""), (0, "0.0 s"), (0.04, "0.0 s"), (12.345, "12.3 s"), (59.94, "59.9 s"),
    (60, "1 min 00 s"), (125.4, "2 min 05 s"), (3599.6, "1 h 00 min"), (3720, "1 h 02 min"), (-1, "0.0 s"),
])
def test_duration_text(seconds, text):
    assert duration_text(seconds) == text


def test_plain_table_leaves_no_none_nan_or_microseconds():
    frame = pd.DataFrame({"when": pd.to_datetime(["2026-01-02 03:04:05.678901", None]),
                          "cost": [0.5, float("nan")], "calls": [1, 2], "judge": ["m", None],
                          "models": [["a", "b"], None]})
    shown = plain_table(frame)
    assert shown.values.tolist() == [["2026-01-02 03:04:05", "0.5", 1, "m", "a, b"], ["", "", 2, "", ""]]
    text = text_table(frame)
    assert "None" not in text and "NaN" not in text and "NaT" not in text and ".678901" not in text


@pytest.fixture
def db_with_runs(tmp_path):
    path = tmp_path / "t.duckdb"
    store = Store(str(path))
    dataset_id = store.save_dataset(load_sample(), "sample-qa")
    run_id = evaluate(store, dataset_id, ["exact_match"], workers=1)
    return path, store, run_id


def test_runs_and_datasets_print_clean_tables(db_with_runs, capsys):
    path, store, run_id = db_with_runs
    assert main(["--db", str(path), "runs"]) == 0
    runs = capsys.readouterr().out
    assert main(["--db", str(path), "datasets"]) == 0
    datasets = capsys.readouterr().out
    for text in (runs, datasets):
        assert not re.search(r"\b(None|NaN|NaT|nan)\b", text), text
    assert re.search(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b", runs) and not re.search(r":\d\d\.\d+", runs)
    assert duration_text(store.get_run(run_id)["duration_s"]) in runs
    assert runs.split()[:5] == ["run", "name", "tags", "dataset", "created"]
    assert "sample-qa" in datasets and "model-a, model-b" in datasets


def test_a_resumed_run_adds_its_time_to_the_earlier_duration(db_with_runs, capsys):
    path, store, run_id = db_with_runs
    first = store.get_run(run_id)["duration_s"]
    resume(store, run_id)
    assert store.get_run(run_id)["duration_s"] >= first  # not replaced by the (short) resume session
    assert main(["--db", str(path), "resume", str(run_id)]) == 0
    out = capsys.readouterr().out
    assert f"finished in {duration_text(store.get_run(run_id)['duration_s'])}" in out
