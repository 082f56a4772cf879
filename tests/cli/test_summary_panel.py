"""`textgen-eval summary RUN` and the closing summary: a judge panel's alpha, interval, cells and split datums."""

from __future__ import annotations

import re

import krippendorff
import numpy as np
import pandas as pd
import pytest

from judge_server import JudgeServer
from textgen_core.cli.main import main
from textgen_core.store import Store

#: judge-a and judge-b on qa_grade (1 yes, 0 no, None unscored), by datum: they split on d02, d05 and d07.
PANEL = {"d00": (1, 1), "d01": (0, 0), "d02": (1, 0), "d03": (1, 1), "d04": (0, 0), "d05": (0, 1),
         "d06": (1, None), "d07": (1, 0), "d08": (0, 0), "d09": (1, 1)}


@pytest.fixture()
def stored_run(tmp_path) -> str:
    """Run 1 judged by the loopback judge, then two members' votes stored through the store's write path."""
    data = tmp_path / "answers.csv"
    pd.DataFrame({"id": list(PANEL), "model": "model-a", "query": "Which city?", "prediction": "Paris",
                  "reference": "Paris"}).to_csv(data, index=False)
    db = str(tmp_path / "runs.duckdb")
    with JudgeServer() as server:
        assert main(["--db", db, "run", str(data), "--metrics", "qa_grade", "--judge-base-url", server.url,
                     "--judge-model", "judge-a"]) == 0
    votes = [(datum, "model-a", "qa_grade", "qa_grade", member, 0, None if value is None else float(value),
              "no verdict" if value is None else "ok")
             for datum, pair in PANEL.items() for member, value in zip(("judge-a", "judge-b"), pair)]
    store = Store(db)
    store.write_votes(1, votes)
    store.close()
    return db


def test_summary_prints_the_panel_agreement(stored_run, capsys) -> None:
    assert main(["--db", stored_run, "summary", "1"]) == 0
    out = capsys.readouterr().out
    matrix = np.array([[np.nan if v is None else v for v in pair] for pair in PANEL.values()], dtype=float).T
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    line = next(line for line in out.splitlines() if line.startswith("panel agreement, qa_grade"))
    assert f"alpha {expected:.3f} [" in line
    low, high = map(float, re.search(r"\[(-?[\d.]+), (-?[\d.]+)\]", line).groups())
    assert low <= expected <= high
    assert "(nominal, 2 members)" in line and "9 of 10 cells judged by two or more members" in line
    assert "3 split (members not unanimous): d02 (model-a), d05 (model-a), d07 (model-a)" in line
    assert "Krippendorff's alpha among the judge panel's members" in out


def test_summary_lists_a_few_split_datums_and_counts_the_rest(stored_run, capsys) -> None:
    store = Store(stored_run)
    store.write_votes(1, [(f"d{i:02d}", "model-a", "qa_grade", "qa_grade", "judge-b", 0, 1.0 - v[0], "ok")
                          for i, v in enumerate(PANEL.values()) if i < 6])  # judge-b now disagrees on d00-d05
    store.close()
    assert main(["--db", stored_run, "summary", "1"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("panel agreement"))
    assert "7 split (members not unanimous): d00 (model-a), d01 (model-a), d02 (model-a), d03 (model-a), " \
           "d04 (model-a), 2 more" in line


def test_a_run_without_a_panel_prints_no_agreement(tmp_path, capsys) -> None:
    data = tmp_path / "answers.csv"
    pd.DataFrame({"id": ["1", "2"], "model": "m", "prediction": "a b", "reference": "a b"}).to_csv(data, index=False)
    db = str(tmp_path / "plain.duckdb")
    assert main(["--db", db, "run", str(data), "--metrics", "exact_match"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "summary", "1"]) == 0
    out = capsys.readouterr().out
    assert "exact_match" in out and "panel agreement" not in out


def test_summary_of_an_unknown_run_is_one_clear_error(stored_run, capsys) -> None:
    assert main(["--db", stored_run, "summary", "7"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "7" in err and "Traceback" not in err
