"""The headless CLI, end to end on real files and a real DuckDB file."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
from rouge_score import rouge_scorer

from textgen_core.cli.main import main
from textgen_core.store import Store

LEXICAL = "rouge,bleu,exact_match,token_f1,wer,lengths"


def _write_csv(path, rows):
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture
def small_csv(tmp_path):
    return _write_csv(tmp_path / "outputs.csv", [
        {"id": "q1", "model": "m1", "question": "Capital of France?", "answer": "Paris is the capital.",
         "reference": "The capital of France is Paris."},
        {"id": "q1", "model": "m2", "question": "Capital of France?", "answer": "=HYPERLINK(\"x\")",
         "reference": "The capital of France is Paris."},
        {"id": "q2", "model": "m1", "question": "2+2?", "answer": "4", "reference": "4"},
        {"id": "q2", "model": "m2", "question": "2+2?", "answer": "five", "reference": "4"},
    ])


def test_run_writes_scores_equal_to_reference(tmp_path, small_csv, capsys):
    db, out = tmp_path / "t.duckdb", tmp_path / "scores.csv"
    assert main(["run", str(small_csv), "--metrics", LEXICAL, "--db", str(db), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "run 1" in printed and "finished" in printed and "rouge1" in printed
    frame = pd.read_csv(out, dtype={"datum_id": str})
    expected_columns = {"datum_id", "model", "query", "prediction", "references", "rouge1", "rouge2", "rougeL", "rougeLsum", "bleu", "exact_match", "f1", "wer",
                        "answer_length", "reference_length"}
    assert expected_columns <= set(frame.columns)
    assert len(frame) == 4
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"])
    row = frame[(frame["datum_id"] == "q1") & (frame["model"] == "m1")].iloc[0]
    reference = scorer.score("The capital of France is Paris.", "Paris is the capital.")
    assert row["rouge1"] == pytest.approx(reference["rouge1"].fmeasure, abs=1e-12)
    assert row["rougeL"] == pytest.approx(reference["rougeL"].fmeasure, abs=1e-12)
    exact = frame.set_index(["datum_id", "model"])["exact_match"]
    assert exact[("q2", "m1")] == 1.0 and exact[("q2", "m2")] == 0.0


def test_export_is_formula_safe_and_runs_are_listed(tmp_path, small_csv, capsys):
    db = tmp_path / "t.duckdb"
    assert main(["--db", str(db), "run", str(small_csv), "--metrics", "exact_match"]) == 0
    out = tmp_path / "long.csv"
    assert main(["--db", str(db), "export", "1", "--out", str(out), "--long"]) == 0
    text = out.read_text()
    assert "exact_match" in text
    assert main(["--db", str(db), "runs"]) == 0
    listing = capsys.readouterr().out
    assert "outputs" in listing and "finished" in listing
    # the dataset's own text keeps its formula neutralised when exported through the store
    dataset = Store(db).load_dataset(1)
    assert any(r.prediction.startswith("=") for r in dataset.rows)


def test_parameters_reach_the_signature(tmp_path, small_csv):
    db = tmp_path / "t.duckdb"
    assert main(["--db", str(db), "run", str(small_csv), "--metrics", "rouge",
                 "--param", "rouge.use_stemmer=true", "--param", "rouge.rouge_types=rouge1"]) == 0
    run = Store(db).get_run(1)
    assert run["params"]["rouge"]["use_stemmer"] is True
    assert "use_stemmer:True" in run["signatures"]["rouge"]
    assert set(Store(db).scores(1)["score"]) == {"rouge1"}


@pytest.mark.parametrize("argv, message", [
    (["run", "missing.csv", "--metrics", "rouge"], "missing.csv"),
    (["run", "{csv}", "--metrics", "no_such_metric"], "unknown metric"),
    (["run", "{csv}", "--metrics", "rouge", "--param", "rouge.use_stemmer=maybe"], "use_stemmer"),
    (["run", "{csv}", "--metrics", "rouge", "--param", "bleu.weights=1"], "bleu"),
    (["export", "42", "--out", "x.csv"], "no database at"),  # read commands never create the file
])
def test_errors_are_one_clear_line(tmp_path, small_csv, capsys, argv, message):
    argv = [a.replace("{csv}", str(small_csv)) for a in argv]
    assert main(["--db", str(tmp_path / "t.duckdb"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_file_leaves_database_unchanged(tmp_path, small_csv):
    db = tmp_path / "t.duckdb"
    assert main(["--db", str(db), "run", str(small_csv), "--metrics", "exact_match"]) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("id,model,answer,reference\n1,m,a,b\n1,m,c,d\n")
    assert main(["--db", str(db), "run", str(bad), "--metrics", "exact_match"]) == 2
    store = Store(db)
    assert store.list_datasets()["name"].tolist() == ["outputs"]
    assert len(store.list_runs()) == 1


def test_sample_runs_from_a_fresh_process(tmp_path):
    db = tmp_path / "t.duckdb"
    result = subprocess.run([sys.executable, "-m", "textgen_core", "--db", str(db), "run", "sample",
                             "--metrics", "rouge,token_f1", "--out", str(tmp_path / "s.parquet")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    frame = pd.read_parquet(tmp_path / "s.parquet")
    assert len(frame) >= 80 and frame["model"].nunique() == 2
    assert frame["f1"].notna().all()


def test_running_a_file_again_keeps_earlier_runs(tmp_path, small_csv, capsys):
    db = tmp_path / "t.duckdb"
    assert main(["--db", str(db), "run", str(small_csv), "--metrics", "exact_match"]) == 0
    assert main(["--db", str(db), "run", str(small_csv), "--metrics", "token_f1"]) == 0
    assert "using stored dataset 'outputs'" in capsys.readouterr().out
    changed = _write_csv(tmp_path / "outputs.csv", [
        {"id": "q1", "model": "m1", "question": "Capital of France?", "answer": "Lyon", "reference": "Paris"}])
    assert main(["--db", str(db), "run", str(changed), "--metrics", "exact_match"]) == 0
    assert "stored dataset 'outputs (2)'" in capsys.readouterr().out
    store = Store(db)
    runs = store.list_runs()
    assert len(runs) == 3 and set(runs["status"]) == {"finished"}
    assert sorted(store.list_datasets()["name"]) == ["outputs", "outputs (2)"]
    assert len(store.scores(1)) == 4  # the first run's cells survive the later runs
