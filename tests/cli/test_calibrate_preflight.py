"""`run --calibrate SCORE=COLUMN` is checked before anything is stored, scored or asked of the judge."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from textgen_core.cli.main import main
from textgen_core.store import Store


def rated_file(path: Path, stars: list) -> Path:
    n = len(stars)
    pd.DataFrame({"id": [f"q{i}" for i in range(n)], "model": "m", "question": [f"question {i}" for i in range(n)],
                  "answer": [f"answer {i}" for i in range(n)], "reference": [f"ref {i}" for i in range(n)],
                  "stars": stars, "note": ["fine"] * n}).to_csv(path, index=False)
    return path


BAD = [
    ("qa_grade=stars", "'stars' is not on the scale of qa_grade (0, 1): 8 of 12 values are off it"),
    ("qa_grade=note", "'note' holds no numbers (e.g. 'fine')"),
    ("qa_grade=nowhere", "no human column 'nowhere' in the dataset; metadata columns: stars, note"),
    ("faithfulness=stars", "this run has no score 'faithfulness'; its scores: qa_grade"),
]


@pytest.mark.parametrize(("spec", "words"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_human_column_costs_no_judge_call_and_stores_nothing(tmp_path: Path, judge_server, spec: str,
                                                                   words: str, capsys) -> None:
    source = rated_file(tmp_path / "rated.csv", [1 + i % 3 for i in range(12)])
    db = tmp_path / "c.duckdb"
    code = main(["--db", str(db), "run", str(source), "--metrics", "qa_grade", "--judge-base-url", judge_server.url,
                 "--judge-model", "judge-test", "--calibrate", spec])
    err = capsys.readouterr().err
    assert code == 2, err
    assert judge_server.count() == 0  # refused before the first request
    assert f"--calibrate {spec}: " in err and words in err and "nothing was stored or scored" in err
    assert "Traceback" not in err and err.count("\n") <= 2  # one clear message
    assert not db.exists()  # the refused command created no database


def test_a_lexical_run_is_refused_before_its_file_is_streamed(tmp_path: Path, capsys) -> None:
    """A streamable lexical run reads its file whole when it calibrates, so the column is checked first."""
    source = rated_file(tmp_path / "rated.csv", [1 + i % 5 for i in range(46)])
    db = tmp_path / "l.duckdb"
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--name", "first"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--name", "second",
                 "--calibrate", "exact_match=stars"]) == 2
    assert "36 of 46 values are off it" in capsys.readouterr().err
    store = Store(db, read_only=True)
    assert len(store.list_runs()) == 1 and store.list_datasets()["name"].tolist() == ["first"]


def test_a_good_column_calibrates_after_the_run(tmp_path: Path, judge_server, capsys) -> None:
    source = rated_file(tmp_path / "rated.csv", [i % 2 for i in range(12)])
    db = tmp_path / "g.duckdb"
    assert main(["--db", str(db), "run", str(source), "--metrics", "qa_grade", "--judge-base-url", judge_server.url,
                 "--judge-model", "judge-test",
                 "--calibrate", "qa_grade=stars"]) == 0, capsys.readouterr()
    assert "Bias-corrected means" in capsys.readouterr().out
    assert judge_server.count() == 12
