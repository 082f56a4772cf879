"""Comparing a model of one run with a model of another: the numbers equal the in-run comparison exactly when both
models sit in one run; across versions, datums pair by id and content (changed ones left out and counted); scores
made under different settings are refused with the difference named, or compared with it printed beside the row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from textgen_core.catalog import store_version
from textgen_core.cli.main import main
from textgen_core.compare import compare_models
from textgen_core.compare.across_runs import Side, compare_across, parse_side, signature_difference
from textgen_core.errors import ParameterError, StoreError
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

NUMBERS = ["n", "baseline_mean", "candidate_mean", "delta", "ci_low", "ci_high", "p_value", "p_adjusted", "mde",
           "spread", "wins", "ties", "losses", "scored_baseline", "unscored_baseline", "empty_baseline",
           "missing_baseline", "scored_candidate", "unscored_candidate", "empty_candidate", "missing_candidate",
           "missingness_p", "worst", "sensitivity_delta", "sensitivity_ci_low", "sensitivity_ci_high",
           "sensitivity_p"]


def answers(n: int, rng: np.random.Generator, models: dict[str, float], edited: int = 0, gaps: int = 0) -> Dataset:
    rows = []
    for i in range(n):
        for model, chance in models.items():
            words = "the cat sat on the mat" if rng.random() < chance else "a dog ran in the park"
            refs = () if (model == "b" and i < gaps) else ("the cat sat on the mat",)
            rows.append(Datum(f"d{i}", model, f"q{i}{'?' if i < edited else ''}", words, refs))
    return Dataset("answers", rows)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("x") / "x.duckdb")
    rng = np.random.default_rng(8)
    first = store_version(store, answers(120, rng, {"a": 0.6, "b": 0.75, "c": 0.5}, gaps=7), "answers")
    evaluate(store, first.dataset_id, ["exact_match", "rouge", "bleu"], workers=1)  # run 1: a, b, c
    second = store_version(store, answers(120, rng, {"a": 0.6, "d": 0.8}, edited=9), "answers")
    evaluate(store, second.dataset_id, ["exact_match", "rouge"], workers=1)  # run 2, version 2
    evaluate(store, first.dataset_id, ["rouge"], params={"rouge": {"use_stemmer": True}}, workers=1)  # run 3
    store.run_names.label_run(2, name="candidate")
    return store


def test_two_models_of_one_run_give_exactly_the_in_run_numbers(store: Store) -> None:
    scores = ["bleu", "exact_match", "rouge1", "rougeL"]
    inside = compare_models(store, 1, "a", "b", scores=scores, seed=3, resamples=500)
    across = compare_across(store, Side(1, "a"), Side(1, "b"), scores=scores, seed=3, resamples=500)
    assert inside["score"].tolist() == across["score"].tolist()
    assert (across["unscored_candidate"] > 0).all() and (across["missing_candidate"] == 0).all()  # b's 7 gaps
    pd.testing.assert_frame_equal(inside[NUMBERS].reset_index(drop=True), across[NUMBERS].reset_index(drop=True),
                                  check_exact=True)
    assert inside["verdict"].tolist() == across["verdict"].tolist() and inside["why"].tolist() == across["why"].tolist()
    assert (across["left_out"] == 0).all() and (across["difference"] == "").all()


def test_across_versions_changed_datums_are_left_out_and_counted(store: Store) -> None:
    frame = compare_across(store, parse_side(store, "1:a"), parse_side(store, "candidate:d"), scores=["exact_match"])
    row = frame.iloc[0]
    first = store.scores(1).query("model == 'a' and score == 'exact_match'").set_index("datum_id")["value"]
    second = store.scores(2).query("model == 'd' and score == 'exact_match'").set_index("datum_id")["value"]
    kept = [f"d{i}" for i in range(9, 120)]
    assert frame.attrs["left_out"] == row["left_out"] == 9 and row["n"] == len(kept)
    assert row["delta"] == pytest.approx((second[kept] - first[kept]).mean(), abs=1e-12)
    assert row["baseline"] == "1:a" and row["candidate"] == "2:d"


def test_different_settings_are_refused_with_the_difference_named_unless_allowed(store: Store, capsys) -> None:
    with pytest.raises(ParameterError, match="use_stemmer: False -> True"):
        compare_across(store, Side(1, "a"), Side(3, "a"), scores=["rouge1"])
    frame = compare_across(store, Side(1, "a"), Side(3, "a"), scores=["rouge1"], allow_different=True)
    assert "use_stemmer: False -> True" in frame.loc[0, "difference"]
    assert main(["--db", store.path, "compare", "--baseline", "1:a", "--candidate", "3:a", "--scores", "rouge1"]) == 2
    assert "use_stemmer: False -> True" in capsys.readouterr().err
    assert main(["--db", store.path, "compare", "--baseline", "1:a", "--candidate", "3:a", "--scores", "rouge1",
                 "--allow-different-judges"]) == 0
    out = capsys.readouterr().out
    assert "use_stemmer: False -> True" in out.splitlines()[2] and "compared despite different settings" in out


def test_signature_difference_names_each_field() -> None:
    assert signature_difference("f|judge:x|temperature:0", "f|judge:y|temperature:0") == "judge: x -> y"
    assert signature_difference("f|seed:1", "f") == "seed: 1 -> (none)"
    assert signature_difference("same", "same") == ""


def test_cli_cross_run_form(store: Store, capsys, tmp_path: Path) -> None:
    out = tmp_path / "c.csv"
    assert main(["--db", store.path, "compare", "--baseline", "1:a", "--candidate", "candidate:d",
                 "--scores", "exact_match,rouge1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "baseline 1:a (run 1) against candidate 2:d (run 2): 2 score(s)" in text
    assert "9 datum(s) left out" in text and len(pd.read_csv(out)) == 2


@pytest.mark.parametrize("args, message", [
    (["--baseline", "1a", "--candidate", "2:d"], "expected RUN:MODEL"),
    (["--baseline", "1:a"], "one --candidate RUN:MODEL"),
    (["--baseline", "1:zz", "--candidate", "2:d"], "model 'zz' is not in run 1"),
    (["--baseline", "ghost:a", "--candidate", "2:d"], "no run named 'ghost'"),
    (["--baseline", "1:a", "--candidate", "1:a"], "both 1:a"),
    (["--baseline", "1:a", "--candidate", "2:d", "--scores", "bleu"], "2:d has no scored values of 'bleu'"),
])
def test_bad_sides_are_one_clear_line(store: Store, capsys, args, message) -> None:
    assert main(["--db", store.path, "compare", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_run_id_that_does_not_exist(store: Store) -> None:
    with pytest.raises(StoreError, match="no run with id 99"):
        parse_side(store, "99:a")
