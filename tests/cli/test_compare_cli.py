"""`textgen-eval compare` and `agreement` through the real entry point."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from textgen_core.cli.main import main
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

FORMULA = "=HYPERLINK(\"http://x\")"
DOCUMENTED = ["metric", "n", "baseline_mean", "candidate_mean", "delta", "ci_low", "ci_high", "p_value",
              "wins", "ties", "losses"]


@pytest.fixture
def run_db(db_path: Path) -> tuple[Path, int]:
    """Three models (one with a formula-like name), two scores, a human rating in the metadata."""
    rng = np.random.default_rng(2)
    models = {"base": 0.0, "better": 0.25, FORMULA: 0.0}
    rows, cells = [], []
    for i in range(24):
        quality = rng.uniform(0, 0.6)
        for model, shift in models.items():
            rows.append(Datum(f"q{i}", model, prediction="p", metadata={"rating": round(quality * 10)}))
            value = quality + shift + rng.normal(0, 0.05)
            cells.append((f"q{i}", model, "judge", "faithfulness", value, None, None))
            cells.append((f"q{i}", model, "lex", "overlap", value / 2, None, None))
    store = Store(db_path)
    run_id = store.create_run(store.save_dataset(Dataset("d", rows, metadata_columns=("rating",))),
                              ["judge", "lex"], {}, {}, list(models))
    store.write_cells(run_id, cells)
    store.close()
    return db_path, run_id


def test_compare_prints_the_table(run_db: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    db, run_id = run_db
    assert main(["--db", str(db), "compare", str(run_id), "--baseline", "base", "--candidate", "better",
                 "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert "baseline base; 1 candidate(s), 2 score(s); 300 resamples, seed 0" in out
    assert "95% CI" in out and "W/T/L" in out and "24/0/0" in out
    assert "paired sign-flip permutation test" in out and "verdict" in out
    assert "2 comparisons are made; p_adjusted is Holm-adjusted" in out


def test_compare_writes_csv_with_documented_columns_and_safe_cells(
        run_db: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, run_id = run_db
    out = tmp_path / "cmp.csv"
    assert main(["compare", str(run_id), "--baseline", "base", "--resamples", "200", "--scores", "faithfulness",
                 "--out", str(out), "--db", str(db)]) == 0
    assert f"wrote {out} (2 rows)" in capsys.readouterr().out
    table = pd.read_csv(out)
    assert list(table.columns[:11]) == DOCUMENTED
    assert table["metric"].tolist() == ["faithfulness", "faithfulness"]
    assert table["candidate"].tolist() == ["better", "'" + FORMULA]
    better = table.iloc[0]
    # 24 pairs: the interval also allows for an unseen share of pairs at either end (the small-sample rule)
    assert better["wins"] == 24 and better["p_value"] < 0.01 and better["ci_low"] > 0.05


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_compare_writes_jsonl_and_parquet(run_db: tuple[Path, int], tmp_path: Path, suffix: str) -> None:
    db, run_id = run_db
    out = tmp_path / f"cmp{suffix}"
    assert main(["--db", str(db), "compare", str(run_id), "--baseline", "base", "--candidate", "better",
                 "--candidate", FORMULA, "--scores", "faithfulness,overlap", "--no-holm", "--resamples", "200",
                 "--out", str(out)]) == 0
    table = pd.read_json(out, lines=True) if suffix == ".jsonl" else pd.read_parquet(out)
    assert len(table) == 4 and table["p_adjusted"].isna().all()
    assert table["candidate"].tolist() == ["better", "better", FORMULA, FORMULA]


def test_same_seed_same_output(run_db: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    db, run_id = run_db
    argv = ["--db", str(db), "compare", str(run_id), "--baseline", "base", "--resamples", "200", "--seed", "4"]
    main(argv)
    first = capsys.readouterr().out
    main(argv)
    assert capsys.readouterr().out == first


@pytest.mark.parametrize(("extra", "message"), [
    (["--baseline", "nobody"], "error: model 'nobody' is not in run"),
    (["--baseline", "base", "--resamples", "0"], "error: resamples"),
    (["--baseline", "base", "--out", "table.xlsx"], "error: cannot write table.xlsx"),
])
def test_compare_errors_are_one_line(run_db: tuple[Path, int], capsys: pytest.CaptureFixture[str],
                                     extra: list[str], message: str) -> None:
    db, run_id = run_db
    assert main(["--db", str(db), "compare", str(run_id), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_agreement_scores_and_labels(run_db: tuple[Path, int], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    db, run_id = run_db
    assert main(["--db", str(db), "agreement", str(run_id), "--human-column", "rating"]) == 0
    out = capsys.readouterr().out
    assert "spearman" in out and "pearson_p" in out and "n: datums with both" in out
    target = tmp_path / "agree.csv"
    assert main(["--db", str(db), "agreement", str(run_id), "--human-column", "rating", "--kind", "label",
                 "--threshold", "0.3", "--human-threshold", "3", "--scores", "faithfulness",
                 "--out", str(target)]) == 0
    out = capsys.readouterr().out
    assert ("Cohen's kappa: a score counts as positive when faithfulness >= 0.3 (0-1, higher is better); "
            "a human value when a number >= 3.") in out
    table = pd.read_csv(target)
    assert list(table.columns) == ["model", "score", "direction", "n", "threshold", "kappa", "agreement"]
    assert (table["n"] == 24).all() and table["kappa"].notna().all()


def test_agreement_unknown_column_is_an_error(run_db: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    db, run_id = run_db
    assert main(["--db", str(db), "agreement", str(run_id), "--human-column", "stars"]) == 2
    assert "no datum has a human column 'stars'" in capsys.readouterr().err


def test_direction_option_and_undeclared_note(run_db: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    db, run_id = run_db
    argv = ["--db", str(db), "compare", str(run_id), "--baseline", "base", "--candidate", "better",
            "--scores", "overlap", "--resamples", "200"]
    assert main([*argv, "--direction", "overlap=lower"]) == 0
    out = capsys.readouterr().out
    assert "0/0/24" in out and "lower is better: overlap" in out and "Direction not declared" not in out
    assert main([*argv, "--direction", "overlap"]) == 2
    assert "error: --direction takes SCORE=higher|lower|none" in capsys.readouterr().err
