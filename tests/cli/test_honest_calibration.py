"""Issue 34 points 1-3 and issue 28's small samples, as a user meets them on the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from textgen_core.cli.main import main
from textgen_core.compare.calibration import ppi_mean
from textgen_core.compare.human_report import agreement_report, calibrated_means, labels_plan
from textgen_core.errors import ParameterError
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store
from textgen_core.summary import run_summary


def write_file(path: Path, n: int, stars: list, labels: list | None = None) -> Path:
    """n answers that never match their reference (exact_match 0), a 'stars' column and a text 'verdict'."""
    frame = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "model": "m", "question": "q",
                          "answer": [f"answer {i}" for i in range(n)], "reference": [f"ref {i}" for i in range(n)],
                          "stars": stars, "verdict": labels or ["fine"] * n})
    frame.to_csv(path, index=False)
    return path


def test_a_human_column_off_the_scale_is_refused_not_calibrated(tmp_path: Path, capsys) -> None:
    source = write_file(tmp_path / "five.csv", 46, [1 + i % 5 for i in range(46)])
    db = tmp_path / "r.duckdb"
    code = main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--workers", "1",
                 "--calibrate", "exact_match=stars"])
    captured = capsys.readouterr()
    assert code == 2 and "calibrated" not in captured.out.split("Bias-corrected")[-1]
    assert "'stars' is not on the scale of exact_match (0, 1): 36 of 46 values are off it" in captured.err
    assert "Traceback" not in captured.err
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--workers", "1", "--name", "t",
                 "--calibrate", "exact_match=verdict"]) == 2
    assert "'verdict' holds no numbers (e.g. 'fine')" in capsys.readouterr().err
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--workers", "1", "--name", "u",
                 "--calibrate", "qa_grade=stars"]) == 2
    assert "has no score 'qa_grade'; its scores: exact_match" in capsys.readouterr().err


def test_the_judge_only_mean_has_the_summarys_interval(tmp_path: Path, capsys) -> None:
    source = write_file(tmp_path / "zeros.csv", 46, [i % 2 for i in range(46)])
    db = tmp_path / "z.duckdb"
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--workers", "1",
                 "--calibrate", "exact_match=stars"]) == 0
    printed = capsys.readouterr().out
    store = Store(db, read_only=True)
    summary = run_summary(store, 1).iloc[0]
    means = calibrated_means(store, 1, ["exact_match"], human_column="stars").iloc[0]
    assert (means["judge_ci_low"], means["judge_ci_high"]) == (summary["ci_low"], summary["ci_high"])
    assert printed.count("0.0000 [0.0000, 0.0771]") == 2  # the summary's cell and the calibration's judge column
    assert 0.0 <= means["ci_low"] <= means["calibrated"] <= means["ci_high"] <= 1.0


@pytest.fixture
def f1_run(tmp_path: Path) -> tuple[Path, int]:
    """token_f1 (0-1) and coherence (1-5, a judge that always says 4) of 40 answers of one model."""
    rng = np.random.default_rng(1)
    rows = [Datum(f"d{i}", "m", "q", "p", ("r",)) for i in range(40)]
    db = tmp_path / "f1.duckdb"
    store = Store(db)
    run_id = store.create_run(store.save_dataset(Dataset("f1", rows)), ["token_f1", "coherence"], {}, {}, ["m"])
    store.write_cells(run_id, [(f"d{i}", "m", "token_f1", "token_f1", float(rng.beta(2, 2)), None, None)
                               for i in range(40)] +
                      [(f"d{i}", "m", "coherence", "coherence", 4.0, None, None) for i in range(40)])
    store.close()
    return db, run_id


def test_weighted_labels_give_a_ratio_estimate_inside_the_range(f1_run, tmp_path: Path, capsys) -> None:
    db, run_id = f1_run
    rows = [{"id": f"d{i}", "model": "m", "value": 1, "annotator": "ana", "probability": 0.001 if i == 0 else 0.5}
            for i in range(6)]
    path = tmp_path / "w.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert main(["--db", str(db), "labels", "import", str(run_id), str(path), "--score", "token_f1"]) == 0
    assert "assumed a uniformly random" not in capsys.readouterr().out  # weighted, not 'import'
    means = calibrated_means(Store(db, read_only=True), run_id, ["token_f1"]).iloc[0]
    assert 0.0 <= means["calibrated"] <= 1.0 and np.isnan(means["ci_low"]) and means["method"] == "too few"
    assert "6 labels; at least 10 are needed" in means["note"] or "do not vary" in means["note"]
    assert main(["--db", str(db), "agreement", str(run_id), "--scores", "token_f1"]) == 0
    printed = capsys.readouterr().out
    assert "21.9565" not in printed and "too few" in printed
    # the ratio estimate against a direct computation: weights only matter relative to each other
    human, judge, every = np.array([1.0, 0.0, 1.0]), np.array([0.9, 0.2, 0.7]), np.linspace(0, 1, 50)
    pi = np.array([0.001, 0.5, 0.5])
    got = ppi_mean(human, judge, every, probabilities=pi, lam=0.0, minimum=2, bounds=(0.0, 1.0))
    assert got.estimate == pytest.approx(np.sum(human / pi) / np.sum(1 / pi), abs=1e-12)
    assert "stand for 1,004 cells" in got.note and 0.0 <= got.ci_low and got.ci_high <= 1.0


def test_calibrated_intervals_are_clipped_and_never_zero_width() -> None:
    human, judge, every = np.ones(12), np.r_[np.ones(9), np.zeros(3)], np.r_[np.ones(30), np.zeros(10)]
    flat = ppi_mean(human, judge, every, bounds=(0.0, 1.0))
    assert np.isnan(flat.ci_low) and "do not vary" in flat.note  # 12 labels of 1 would have given [1, 1]
    wide = ppi_mean(np.r_[np.ones(10), 0.0, 1.0], np.r_[np.ones(6), np.zeros(6)], every, bounds=(0.0, 1.0))
    assert 0.0 <= wide.ci_low < wide.ci_high == 1.0  # the normal interval would pass 1
    nine = ppi_mean(np.full(9, 4.0), np.r_[np.full(5, 4.0), np.full(4, 3.0)], np.linspace(1, 5, 80),
                    bounds=(1.0, 5.0))
    assert np.isnan(nine.ci_low) and "on every one of the 9 labels" in nine.note and nine.estimate == 4.0


def test_the_planner_never_answers_below_the_minimum(f1_run, capsys) -> None:
    db, run_id = f1_run
    store = Store(db)
    store.write_labels(run_id, [("d1", "m", "token_f1", "ana", 1.0, None, "random", None),
                                ("d2", "m", "token_f1", "ana", 1.0, None, "random", None)])
    store.close()
    plan = labels_plan(Store(db, read_only=True), run_id, "token_f1", 1e-9).iloc[0]
    assert np.isnan(plan["labels_needed"]) and plan["why"] == "2 random labels so far; label at least 8 more first"
    assert main(["--db", str(db), "labels", "plan", str(run_id), "--score", "token_f1", "--width", "1e-9"]) == 0
    printed = capsys.readouterr().out
    assert "label at least 8 more first" in printed and "NaN" not in printed and "nan" not in printed
    code = main(["--db", str(db), "labels", "plan", str(run_id), "--score", "qa_grade", "--width", "0.03"])
    err = capsys.readouterr().err
    assert code == 2 and "run 1 has no score 'qa_grade'; its scores:" in err and "KeyError" not in err
    with pytest.raises(ParameterError, match="no score 'qa_grade'"):
        calibrated_means(Store(db, read_only=True), run_id, ["qa_grade"])


def test_kappa_with_a_judge_that_never_varies_is_undefined_with_its_reason(f1_run, capsys) -> None:
    db, run_id = f1_run
    store = Store(db)
    store.write_labels(run_id, [(f"d{i}", "m", "coherence", "ana", float(1 + i % 5), None, "random", None)
                                for i in range(20)])
    report = agreement_report(store, run_id, "coherence")
    row = report.table.set_index("model").loc["m"]
    assert np.isnan(row["weighted_kappa"]) and np.isnan(row["weighted_kappa_low"]) and np.isnan(row["kappa"])
    assert any("the judge gives every one of the 20 cells 4" in note for note in report.notes)
    store.close()
    assert main(["--db", str(db), "agreement", str(run_id), "--scores", "coherence"]) == 0
    printed = capsys.readouterr().out
    assert "0.0000 [0.0000, 0.0000]" not in printed and "agreement is undefined" in printed
