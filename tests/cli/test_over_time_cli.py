"""`history` and `leaderboard` from the command line: the tables a person reads, the flag and its reason, files
written, and bad requests as one clear line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from textgen_core.cli.main import main


def write(path: Path, right: dict[str, np.ndarray]) -> Path:
    lines = ["id,model,query,prediction,reference"]
    for i in range(len(next(iter(right.values())))):
        lines += [f"d{i},{model},question {i},{'yes' if ok[i] else 'no'},yes" for model, ok in right.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    db = folder / "t.duckdb"
    rng = np.random.default_rng(4)
    for week, chance in enumerate([0.9, 0.9, 0.2], start=1):
        right = {"prod": rng.random(60) < chance, "small": rng.random(60) < 0.5}
        assert main(["--db", str(db), "run", str(write(folder / "qa.csv", right)), "--metrics", "exact_match"]) == 0
        assert main(["--db", str(db), "rename", str(week), f"week {week}"]) == 0
    return db


def test_history_prints_every_run_and_flags_the_drop(db: Path, tmp_path: Path, capsys) -> None:
    capsys.readouterr()
    out_file = tmp_path / "h.csv"
    assert main(["--db", str(db), "history", "qa", "--score", "exact_match", "--out", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "history of 'qa': 3 finished run(s)" in out
    assert out.count("week 1") >= 2 and "week 3" in out
    assert "1 change(s) flagged" in out and "week 3 (prod, exact_match): worse than run 2" in out
    saved = pd.read_csv(out_file)
    assert len(saved) == 6 and saved["flag"].fillna("").tolist().count("worse") == 1


def test_leaderboard_ranks_with_intervals(db: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["--db", str(db), "leaderboard", "qa", "--score", "exact_match"]) == 0
    out = capsys.readouterr().out
    assert "ranks from 1000 bootstrap resamples" in out and "week 3" in out
    assert main(["--db", str(db), "leaderboard", "qa", "--score", "exact_match", "--run", "week 1"]) == 0
    first = capsys.readouterr().out
    assert any(line.split()[:3] == ["1", "prod", "first"] for line in first.splitlines()), first


@pytest.mark.parametrize("args, message", [
    (["history", "nope"], "no dataset named 'nope'; datasets: qa"),
    (["history", "qa", "--score", "bleu"], "no finished run of 'qa' has 'bleu'; scores: exact_match"),
    (["leaderboard", "qa", "--score", "bleu"], "has scored values of 'bleu'; scores: exact_match"),
    (["leaderboard", "qa", "--score", "exact_match", "--run", "ghost"], "no run named 'ghost'"),
    (["leaderboard", "qa", "--score", "exact_match", "--resamples", "0"], "resamples must be a whole number"),
    (["history", "qa", "--confidence", "95"], "between 0 and 1"),
])
def test_bad_requests(db: Path, capsys, args, message) -> None:
    capsys.readouterr()
    assert main(["--db", str(db), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_three_datums_print_too_few_with_the_reason_never_a_zero_width_interval(tmp_path: Path, capsys) -> None:
    source = tmp_path / "tiny.csv"
    source.write_text("id,model,query,prediction,reference\nd0,a,q0,yes,yes\nd1,a,q1,yes,yes\nd2,a,q2,yes,yes\n")
    db = str(tmp_path / "tiny.duckdb")
    assert main(["--db", db, "run", str(source), "--metrics", "exact_match,lengths"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "history", "tiny"]) == 0
    out = capsys.readouterr().out
    # answer_length (no bounded range) from 3 values: too few, and why
    assert "too few (3 values; a score without a bounded range needs at least 5)" in out
    assert "1.0000 [0.2924, 1.0000]" in out  # 3 of 3 right: the exact bound, not [1, 1]
    assert "[1.0000, 1.0000]" not in out and "intervals: Intervals follow one small-sample rule" in out
    assert main(["--db", db, "leaderboard", "tiny", "--score", "answer_length"]) == 0
    out = capsys.readouterr().out
    assert "too few (3 values; a score without a bounded range needs at least 5)" in out
