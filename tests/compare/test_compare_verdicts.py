"""Verdicts that cannot be fooled: missingness, big families, tiny samples, ranges, and the CI gates."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_compare_models import value_store

from textgen_core.cli.compare import GATE_FAILED
from textgen_core.cli.main import main
from textgen_core.compare import compare_models
from textgen_core.compare.verdicts import VERDICTS
from textgen_core.store import Store

INTERVAL = re.compile(r"\[([-+]?\d+\.\d+), ([-+]?\d+\.\d+)\]")


def skipping_candidate(db_path: Path) -> tuple[object, int]:
    """The candidate has no score on the hard half and is slightly better on the rest."""
    rng = np.random.default_rng(5)
    hard, easy = rng.uniform(0.0, 0.3, 30), rng.uniform(0.6, 0.9, 30)
    baseline = [*hard, *easy]
    candidate = [None] * 30 + list(np.minimum(easy + 0.03, 1.0))
    return value_store(db_path, {("base", "faithfulness"): baseline, ("skip", "faithfulness"): candidate}, 60)


def test_a_candidate_that_skips_the_hard_half_is_inconclusive(db_path: Path) -> None:
    store, run_id = skipping_candidate(db_path)
    row = compare_models(store, run_id, "base", "skip").iloc[0]
    assert row["p_value"] < 1e-3 and row["delta"] > 0  # what used to be called 'better'
    assert row["verdict"] == "inconclusive" and "different datums" in row["why"]
    assert row["missingness_p"] == pytest.approx(2 / 2 ** 30)
    assert (row["scored_candidate"], row["unscored_candidate"], row["scored_baseline"]) == (30, 30, 60)
    # Sensitivity: the 30 skipped datums count as 0, the worst faithfulness; the candidate is then far worse.
    assert row["worst"] == 0.0 and row["sensitivity_delta"] < -0.05
    assert row["sensitivity_ci_high"] < 0 and row["sensitivity_p"] < 0.01


def test_the_same_missing_datums_on_both_sides_do_not_stop_a_verdict(db_path: Path) -> None:
    values = np.linspace(0.1, 0.6, 40)
    store, run_id = value_store(db_path, {
        ("a", "faithfulness"): [None if i < 5 else v for i, v in enumerate(values)],
        ("b", "faithfulness"): [None if i < 5 else v + 0.2 for i, v in enumerate(values)]}, 40)
    row = compare_models(store, run_id, "a", "b").iloc[0]
    assert row["missingness_p"] == 1.0 and row["verdict"] == "better"


def test_108_comparisons_with_a_large_effect_are_all_significant(db_path: Path) -> None:
    rng = np.random.default_rng(8)
    n, scores = 30, [f"s{j}" for j in range(9)]
    values: dict[tuple[str, str], list[float]] = {}
    for score in scores:
        base = rng.uniform(0.2, 0.5, n)
        values["base", score] = list(base)
        for c in range(12):
            values[f"c{c:02d}", score] = list(base + 0.3 + rng.normal(0, 0.05, n))
        values["base", "answer_length"] = list(rng.uniform(5, 50, n))
    for c in range(12):
        values[f"c{c:02d}", "answer_length"] = list(rng.uniform(5, 50, n))
    store, run_id = value_store(db_path, values, n)
    frame = compare_models(store, run_id, "base", directions={s: "higher" for s in scores})
    family = frame[frame["family"] == "holm"]
    assert len(family) == 108 and frame.attrs["family"] == 108
    assert (family["p_adjusted"] < 0.05).all() and (family["verdict"] == "better").all()
    apart = frame[frame["family"] == "apart"]
    assert set(apart["score"]) == {"answer_length"} and apart["p_adjusted"].isna().all()
    assert frame.index[frame["family"] == "apart"].min() > family.index.max()  # listed after the family
    assert set(frame["verdict"]) <= set(VERDICTS) and not frame.attrs["warnings"]


def test_a_family_too_large_for_the_sample_is_warned_about(db_path: Path) -> None:
    values = {("base", f"s{j}"): [0.1, 0.2, 0.3, 0.4] for j in range(5)}
    values.update({("cand", f"s{j}"): [0.5, 0.6, 0.7, 0.8] for j in range(5)})
    store, run_id = value_store(db_path, values, 4)
    frame = compare_models(store, run_id, "base")
    assert (frame["verdict"] == "not significant").all()  # 4 datums: the exact p cannot go below 1/8
    assert len(frame.attrs["warnings"]) == 5 and "cannot reach p < 0.05" in frame.attrs["warnings"][0]


def test_one_datum_gives_no_interval(db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id = value_store(db_path, {("a", "faithfulness"): [0.2, None], ("b", "faithfulness"): [0.9, None]}, 2)
    row = compare_models(store, run_id, "a", "b").iloc[0]
    assert row["n"] == 1 and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"]) and math.isnan(row["mde"])
    assert row["verdict"] == "inconclusive" and "too few pairs" in row["why"]
    store.close()
    out = tmp_path / "one.csv"
    assert main(["--db", str(db_path), "compare", str(run_id), "--baseline", "a", "--out", str(out)]) == 0
    assert "too few" in capsys.readouterr().out
    table = pd.read_csv(out)
    assert table["ci_low"].isna().all() and table["verdict"].tolist() == ["inconclusive"]


def run_cli(tmp_path: Path, rows: list[str], metrics: str, *extra: str) -> tuple[int, str]:
    data = tmp_path / "answers.csv"
    data.write_text("id,model,question,answer,reference\n" + "\n".join(rows) + "\n", encoding="utf-8")
    code = main(["--db", str(tmp_path / "cli.duckdb"), "run", str(data), "--metrics", metrics, "--workers", "1",
                 *extra])
    return code, str(data)


def test_every_printed_run_interval_stays_in_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ["1,a,q1,yes,yes", "2,a,q2,no,yes", "3,a,q3,yes,yes", "1,b,q1,the cat sat,the cat sat on the mat",
            "2,b,q2,a dog,the cat sat on the mat", "3,b,q3,on the mat,the cat sat on the mat", "4,a,q4,yes,yes"]
    code, _ = run_cli(tmp_path, rows, "exact_match,bleu,rouge")
    out = capsys.readouterr().out
    assert code == 0
    lines = [line for line in out.splitlines() if INTERVAL.search(line) and not line.startswith("Each cell")]
    assert any(line.startswith("exact_match") for line in lines)
    for line in lines:
        for low, high in INTERVAL.findall(line):
            assert 0.0 <= float(low) <= float(high) <= 1.0, line
    exact = next(line for line in lines if line.startswith("exact_match"))
    assert "0.7500 [0.1941, 0.9937] 4/0/0/0" in exact  # Clopper-Pearson for 3 of 4; not the t interval's [-0.0, 1.5]
    assert "too few" not in exact and "/0/0/1" in exact  # model b lacks datum 4: counted as missing


def test_compare_intervals_of_a_bounded_score_stay_inside_its_delta_range(db_path: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    store, run_id = value_store(db_path, {("a", "faithfulness"): list(rng.choice([0.0, 1.0], 12)),
                                          ("b", "faithfulness"): list(rng.choice([0.0, 1.0], 12))}, 12)
    frame = compare_models(store, run_id, "a", "b")
    assert (frame["ci_low"] >= -1).all() and (frame["ci_high"] <= 1).all()


@pytest.fixture(scope="module")
def _gate_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The gate tests' run, stored once per module; each test gets its own copy of the file (:func:`gate_run`)."""
    path = tmp_path_factory.mktemp("gate") / "gate.duckdb"
    return path, _store_gate_run(path)


@pytest.fixture
def gate_run(db_path: Path, _gate_file: tuple[Path, int]) -> int:
    """The gate run's id, in a copy of its file at ``db_path`` (the tests may write to it: compare caches)."""
    source, run_id = _gate_file
    shutil.copyfile(source, db_path)
    return run_id


def _store_gate_run(db_path: Path) -> int:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.3, 0.6, 40)
    store, run_id = value_store(db_path, {
        ("base", "faithfulness"): list(base), ("worse", "faithfulness"): list(base - 0.2 + rng.normal(0, 0.02, 40)),
        ("better", "faithfulness"): list(base + 0.2 + rng.normal(0, 0.02, 40)),
        ("skips", "faithfulness"): [None if i < 20 else v + 0.01 for i, v in enumerate(base)],
        ("base", "answer_length"): list(rng.uniform(1, 9, 40)), ("better", "answer_length"): list(rng.uniform(20, 30, 40)),
    }, 40)
    store.close()
    return run_id


@pytest.mark.parametrize(("candidate", "gate", "code"), [
    ("worse", "worse", GATE_FAILED), ("better", "worse", 0), ("skips", "worse", 0),
    ("skips", "inconclusive", GATE_FAILED), ("better", "inconclusive", 0), ("worse", "inconclusive", GATE_FAILED),
])
def test_fail_if_gates_exit_codes(db_path: Path, gate_run: int, capsys: pytest.CaptureFixture[str], candidate: str,
                                  gate: str, code: int) -> None:
    run_id = gate_run
    argv = ["--db", str(db_path), "compare", str(run_id), "--baseline", "base", "--candidate", candidate,
            "--fail-if", gate]
    assert main(argv) == code
    out = capsys.readouterr().out
    assert f"gate --fail-if {gate}: {'FAILED' if code else 'passed'}" in out
    if candidate == "better":  # the length differs a lot, but a score without a direction never fails a gate
        assert "listed apart" in out


def test_fail_if_is_documented_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert f"exit {GATE_FAILED}" in capsys.readouterr().out.replace("\n", " ").replace("  ", " ")


def test_the_planner_column_and_the_sensitivity_line(db_path: Path, gate_run: int,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    run_id = gate_run
    assert main(["--db", str(db_path), "compare", str(run_id), "--baseline", "base", "--candidate", "skips",
                 "--plan", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "n needed" in out and "sensitivity skips / faithfulness: counting missing and unscored cells as 0.0000" in out
    frame = compare_models(Store(db_path), run_id, "base", ["skips", "worse"], scores=["faithfulness"],
                           plan=0.05).set_index("candidate")
    # 'skips' differs by exactly +0.01 on every pair: a zero spread says nothing about new datums.
    assert math.isnan(frame.loc["skips", "n_needed"]) and math.isnan(frame.loc["skips", "mde"])
    assert frame.loc["worse", "n_needed"] >= 2 and frame.loc["worse", "mde"] > 0


def test_run_fails_when_too_much_is_unscored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ["1,a,q1,yes,yes", "2,a,q2,no,yes", "3,a,q3,yes,yes", "1,b,q1,yes,yes"]
    code, _ = run_cli(tmp_path, rows, "exact_match", "--fail-if-unscored-above", "0.5")
    assert code == GATE_FAILED
    assert "FAILED, 1 score(s) over the limit: b / exact_match: 66.7% (0 unscored, 2 missing)" in capsys.readouterr().out
    code, _ = run_cli(tmp_path, rows, "exact_match", "--fail-if-unscored-above", "0.7")
    assert code == 0 and "gate --fail-if-unscored-above 0.7: passed" in capsys.readouterr().out


def test_scores_without_a_direction_are_never_better_or_worse_even_in_the_family(db_path: Path, gate_run: int,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run_id = gate_run
    store = Store(db_path)
    frame = compare_models(store, run_id, "base", "better", holm_undirected=True)
    length = frame.set_index("score").loc["answer_length"]
    assert length["family"] == "holm" and length["p_adjusted"] < 0.05
    assert length["verdict"] == "inconclusive" and "no better direction" in length["why"]
    assert frame.attrs["family"] == 2
    store.close()
    assert main(["--db", str(db_path), "compare", str(run_id), "--baseline", "base", "--candidate", "better",
                 "--holm-undirected", "--fail-if", "inconclusive"]) == 0
