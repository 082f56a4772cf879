"""The Python API: textgen_core.score() and the names the package exports."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from rouge_score import rouge_scorer

import textgen_core
from textgen_core import ParameterError, Store, score

PREDICTIONS = ["The cat sat on the mat.", "Paris is the capital of France", "no idea"]
REFERENCES = ["A cat was sitting on the mat.", "Paris is the capital of France.", "Berlin"]


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"prediction": PREDICTIONS, "reference": REFERENCES})


def test_a_dataframe_scores_like_rouge_score_itself(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scores = score(_frame(), metrics=["rouge"])
    assert isinstance(scores, pd.DataFrame) and len(scores) == 3
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    for row, prediction, reference in zip(scores.itertuples(), PREDICTIONS, REFERENCES):
        expected = scorer.score(reference, prediction)
        for name in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
            assert getattr(row, name) == pytest.approx(expected[name].fmeasure, abs=1e-9)
    assert list(tmp_path.iterdir()) == []  # no database file: the store was in memory


def test_rows_as_dicts_and_several_metrics_with_parameters():
    rows = [{"question": "capital of France?", "answer": "Paris", "gold": "paris"},
            {"question": "2+2?", "answer": "five", "gold": "4"}]
    scores = score(rows, metrics=["exact_match", "token_f1", "rouge"], params={"rouge": {"rouge_types": ["rouge1"]}})
    assert list(scores["exact_match"]) == [1.0, 0.0]
    assert list(scores["f1"]) == [1.0, 0.0]
    assert "rouge1" in scores.columns and "rouge2" not in scores.columns


def test_a_file_path_and_a_given_store_keep_the_run(tmp_path):
    path = tmp_path / "outputs.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "model": m, "prediction": p, "references": [r]}) + "\n"
                            for i, (p, r) in enumerate(zip(PREDICTIONS, REFERENCES)) for m in ("a", "b")))
    db = Store(str(tmp_path / "runs.duckdb"))
    scores = score(path, metrics=["bleu"], store=db)
    assert sorted(set(scores["model"])) == ["a", "b"] and len(scores) == 6
    run_id = scores.attrs["run_id"]
    assert db.get_run(run_id)["status"] == "finished"
    assert list(db.list_datasets()["name"]) == ["outputs"]
    again = score(str(path), metrics=["bleu"], store=db)
    assert list(db.list_datasets()["name"]) == ["outputs"]  # the same rows reuse the stored dataset
    assert again.attrs["run_id"] == run_id + 1


def test_unscored_cells_are_nan_wide_and_keep_their_reason_long():
    rows = [{"prediction": "a b c", "reference": "a b c"}, {"prediction": "", "reference": "x"}]
    long = score(rows, metrics=["bleu"], long=True)
    assert set(long.columns) >= {"datum_id", "model", "score", "value", "reason"}
    wide = score(rows, metrics=["bleu"])
    for value, reason in zip(long["value"], long["reason"]):
        assert (value is None or math.isnan(value)) == bool(reason)
    assert wide["bleu"].isna().sum() == long["value"].isna().sum()


@pytest.mark.parametrize("data, message", [
    ("missing.csv", "file not found: missing.csv"),
    (42, "not int"),
    ([1, 2], "not list"),
])
def test_bad_data_is_refused_with_a_message(data, message):
    with pytest.raises(ParameterError, match=message):
        score(data, metrics=["rouge"])


def test_metrics_must_be_a_list_and_known():
    with pytest.raises(ParameterError, match=r"\['rouge'\]"):
        score(_frame(), metrics="rouge")
    with pytest.raises(textgen_core.TextgenError, match="nosuch"):
        score(_frame(), metrics=["nosuch"])


def test_a_metric_without_its_columns_is_refused_before_scoring():
    with pytest.raises(textgen_core.TextgenError, match="contexts"):
        score(_frame(), metrics=["mrr"])


def test_judge_metric_through_the_loopback_judge(judge_server, judge_settings):
    rows = [{"query": "capital of France?", "prediction": "Paris", "reference": "Paris"}]
    scores = score(rows, metrics=["qa_grade"], judge=judge_settings, long=True)
    assert judge_server.count() >= 1
    assert len(scores) == 1 and (scores["value"].notna() | scores["reason"].notna()).all()


def test_all_names_resolve_and_are_listed():
    assert sorted(textgen_core.__all__) == sorted(set(textgen_core.__all__))
    for name in textgen_core.__all__:
        assert getattr(textgen_core, name) is not None, name
    for needed in ("Store", "load_dataset", "evaluate", "resume", "compare_models", "judge_human_agreement",
                   "JudgeSettings", "all_metrics", "get_metric", "score"):
        assert needed in textgen_core.__all__


def test_the_library_never_imports_streamlit():
    """Every module of textgen_core, imported in a fresh interpreter, leaves Streamlit unloaded."""
    code = (
        "import importlib, pkgutil, sys, textgen_core\n"
        "names = [m.name for m in pkgutil.walk_packages(textgen_core.__path__, 'textgen_core.')\n"
        "         if not m.name.endswith('__main__')]  # __main__ runs the CLI\n"
        "for name in names: importlib.import_module(name)\n"
        "print(len(names), 'streamlit' in sys.modules, sorted(m for m in sys.modules if m.startswith('streamlit'))[:3])\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    count, loaded, _ = done.stdout.split(" ", 2)
    assert int(count) > 30 and loaded == "False", done.stdout
