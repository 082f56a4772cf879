"""Slices by a metadata column: means with the shared interval rule, per-slice comparisons in one Holm family,
and the CLI's `summary --by` / `compare --by` printing the library's numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from textgen_core.cli.main import main
from textgen_core.compare.slices import EMPTY, compare_by, slice_of, summary_by
from textgen_core.compare.small_sample import mean_interval
from textgen_core.compare.stats import holm_adjust, rng_for
from textgen_core.errors import ParameterError
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

CATEGORY = ["billing"] * 14 + ["account"] * 9 + ["shipping"] * 5 + [""] * 2  # 30 datums, two without a category


@pytest.fixture
def sliced(tmp_path: Path) -> tuple[Path, int, dict]:
    """Two models; token_f1 (0-1) where 'large' is better on billing only; answer_length (no direction)."""
    rng = np.random.default_rng(8)
    rows, cells, truth = [], [], {}
    for i, category in enumerate(CATEGORY):
        for model in ("small", "large"):
            rows.append(Datum(f"t{i}", model, "q", "p", ("r",), metadata={"category": category, "team": "x"}))
            f1 = float(np.clip(rng.beta(2, 3) + (0.4 if model == "large" and category == "billing" else 0), 0, 1))
            truth[(f"t{i}", model)] = f1
            cells.append((f"t{i}", model, "token_f1", "token_f1", f1, None, None))
            cells.append((f"t{i}", model, "answer_length", "answer_length", float(rng.integers(5, 40)), None, None))
    db = tmp_path / "sliced.duckdb"
    store = Store(db)
    dataset_id = store.save_dataset(Dataset("tickets", rows, metadata_columns=("category", "team")))
    run_id = store.create_run(dataset_id, ["token_f1", "answer_length"], {}, {}, ["small", "large"])
    store.write_cells(run_id, cells)
    store.close()
    return db, run_id, truth


def test_means_per_slice_follow_the_shared_rule(sliced) -> None:
    db, run_id, truth = sliced
    frame = summary_by(Store(db, read_only=True), run_id, "category")
    assert frame.attrs["slices"] == ["billing", "account", "shipping", EMPTY]
    for row in frame.itertuples():
        ids = sorted(f"t{i}" for i, c in enumerate(CATEGORY) if (c or EMPTY) == row.slice)  # the store's order
        if row.score != "token_f1":
            continue
        values = np.array([truth[(d, row.model)] for d in ids])
        expected = mean_interval(values, bounds=(0.0, 1.0), confidence=0.95,
                                 rng=rng_for(0, row.model, row.score, "slice", row.slice))
        assert row.n_scored == len(ids) and row.mean == pytest.approx(values.mean(), abs=1e-12)
        assert (row.ci_low, row.ci_high, row.ci_method) == (expected.low, expected.high, expected.method)
    lengths = frame[(frame["score"] == "answer_length") & (frame["slice"] == EMPTY)]
    assert lengths["ci_method"].eq("too few").all() and lengths["ci_note"].str.contains("at least 5").all()


def test_per_slice_comparisons_are_one_holm_family(sliced) -> None:
    db, run_id, truth = sliced
    frame = compare_by(Store(db, read_only=True), run_id, "small", "category", resamples=300)
    family = frame[frame["family"] == "holm"]
    assert frame.attrs["family"] == 4 * 1 * 1 and (family["family_size"] == 4).all()  # 4 slices x 1 x token_f1
    assert family["p_adjusted"].tolist() == pytest.approx(holm_adjust(family["p_value"].tolist()), abs=1e-15)
    for row in family.itertuples():
        ids = [f"t{i}" for i, c in enumerate(CATEGORY) if (c or EMPTY) == row.slice]
        diffs = [truth[(d, "large")] - truth[(d, "small")] for d in ids]
        assert row.n == len(ids) and row.delta == pytest.approx(np.mean(diffs), abs=1e-12)
    verdicts = dict(zip(family["slice"], family["verdict"]))
    assert verdicts["billing"] == "better" and verdicts["account"] == "not significant"
    assert (frame.loc[frame["family"] == "apart", "family_size"] == 1).all()


def test_an_unknown_column_names_the_metadata_columns(sliced, capsys) -> None:
    db, run_id, _ = sliced
    with pytest.raises(ParameterError, match="its metadata columns: category, team"):
        slice_of(Store(db, read_only=True), run_id, "channel")
    for argv in (["summary", str(run_id), "--by", "channel"],
                 ["compare", str(run_id), "--baseline", "small", "--by", "channel"]):
        assert main(["--db", str(db), *argv]) == 2
        err = capsys.readouterr().err
        assert "no metadata column 'channel'" in err and "category, team" in err and "Traceback" not in err


def test_the_cli_prints_the_librarys_numbers(sliced, capsys, tmp_path: Path) -> None:
    db, run_id, _ = sliced
    store = Store(db, read_only=True)
    means = summary_by(store, run_id, "category")
    assert main(["--db", str(db), "summary", str(run_id), "--by", "category"]) == 0
    printed = capsys.readouterr().out
    for row in means[means["score"] == "token_f1"].itertuples():
        assert f"{row.mean:.4f} [{row.ci_low:.4f}, {row.ci_high:.4f}] n={row.n_scored}" in printed
    out = tmp_path / "by.csv"
    assert main(["--db", str(db), "compare", str(run_id), "--baseline", "small", "--by", "category",
                 "--resamples", "300", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "adjusted over one family of 4 comparisons (4 slices" in printed
    library = compare_by(store, run_id, "small", "category", resamples=300)
    for row in library[library["family"] == "holm"].itertuples():
        assert f"[{row.ci_low:+.4f}, {row.ci_high:+.4f}]" in printed and row.verdict in printed
    import pandas as pd

    written = pd.read_csv(out)
    assert written["delta"].tolist() == pytest.approx(library["delta"].tolist(), abs=1e-12)


def test_a_score_nobody_scored_is_named_not_a_refusal(tmp_path, capsys):
    """lengths on a file without contexts: context_length is never scored; the slices still compare the rest."""
    from textgen_core.cli.main import main

    data = tmp_path / "n.csv"
    data.write_text("id,model,prediction,reference,grp\n1,a,x y,x,g1\n1,b,x,x,g1\n2,a,z,z,g2\n2,b,q,z,g2\n")
    db = str(tmp_path / "n.duckdb")
    assert main(["--db", db, "run", str(data), "--metrics", "exact_match,lengths"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "compare", "1", "--baseline", "a", "--by", "grp"]) == 0
    out = capsys.readouterr().out
    assert "not compared by slice, no cell scored: context_length" in out and "exact_match" in out
    assert main(["--db", db, "compare", "1", "--baseline", "a", "--by", "grp", "--fail-if", "inconclusive"]) == 3
