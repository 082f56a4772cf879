"""compare_models and paired_differences on real DuckDB stores, with known answers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rouge_score import rouge_scorer

from textgen_core.compare import ComparisonRow, compare_models, paired_differences
from textgen_core.errors import ParameterError, StoreError
from textgen_core.model import Dataset, Datum
from textgen_core.store import CellRecord, Store

ROUGE = ("rouge1", "rouge2", "rougeL")
SUBJECTS = ["the river", "a young fox", "the old mill", "our neighbour", "the committee", "a tired pilot"]
VERBS = ["crossed", "painted", "counted", "repaired", "described", "followed"]
OBJECTS = ["the narrow bridge", "seven wooden boats", "every window", "the northern road", "a small garden"]
UNRELATED = ["quarterly revenue projections exceeded analyst consensus",
             "install dependencies before compiling kernel modules",
             "photosynthesis converts sunlight into chemical energy",
             "medieval castles featured moats and drawbridges"]


def references(n: int) -> list[str]:
    return [f"{SUBJECTS[i % 6]} {VERBS[(i // 6) % 6]} {OBJECTS[(i * 7) % 5]} at dawn on day {i}" for i in range(n)]


def rouge_store(path: Path, predictions: dict[str, list[str]], refs: list[str]) -> tuple[Store, int]:
    """A store with one run whose ROUGE cells are computed with rouge_score directly."""
    rows = [Datum(f"q{i}", model, f"question {i}?", text, (refs[i],))
            for model, texts in predictions.items() for i, text in enumerate(texts)]
    store = Store(path)
    run_id = store.create_run(store.save_dataset(Dataset("qa", rows)), ["rouge"], {}, {}, list(predictions))
    scorer = rouge_scorer.RougeScorer(list(ROUGE))
    cells: list[CellRecord] = []
    for row in rows:
        result = scorer.score(row.references[0], row.prediction or "")
        cells += [(row.datum_id, row.model, "rouge", name, result[name].fmeasure, None, None) for name in ROUGE]
    store.write_cells(run_id, cells)
    return store, run_id


def value_store(path: Path, values: dict[tuple[str, str], list[float | None]], n: int,
                rows_missing: dict[str, set[int]] | None = None) -> tuple[Store, int]:
    """A store whose cells are given directly: values[(model, score)][i] for datum d{i}; None is unscored."""
    rows_missing = rows_missing or {}
    models = list(dict.fromkeys(m for m, _ in values))
    rows = [Datum(f"d{i}", m, prediction="x") for i in range(n) for m in models if i not in rows_missing.get(m, set())]
    store = Store(path)
    run_id = store.create_run(store.save_dataset(Dataset("values", rows)), ["m"], {}, {}, models)
    cells: list[CellRecord] = []
    for (model, score), column in values.items():
        for i, value in enumerate(column):
            if i in rows_missing.get(model, set()):
                continue
            cells.append((f"d{i}", model, "m", score, value, None, None if value is not None else "no answer"))
    store.write_cells(run_id, cells)
    return store, run_id


def test_identical_predictions_give_zero_delta_all_ties_and_p_one(db_path: Path) -> None:
    texts = [f"answer number {i} is {UNRELATED[i % 4]}" for i in range(25)]
    store, run_id = rouge_store(db_path, {"a": texts, "b": list(texts)}, references(25))
    frame = compare_models(store, run_id, "a", "b", resamples=200)
    assert frame["score"].tolist() == list(ROUGE)
    for row in frame.itertuples():
        # 25 equal pairs: no zero-width interval; it allows for an unseen share of pairs at either end
        share = 1 - 0.025 ** (1 / 25)
        assert (row.n, row.delta, row.p_value) == (25, 0.0, 1.0)
        assert (row.ci_low, row.ci_high) == pytest.approx((-share, share), abs=1e-12)
        assert row.verdict == "not significant" and f"[{-share:+.4f}, {share:+.4f}]" in row.why
        assert (row.wins, row.ties, row.losses) == (0, 25, 0)
        assert row.baseline_mean == row.candidate_mean


def test_candidate_equal_to_references_wins_everything_on_rouge(db_path: Path) -> None:
    refs = references(30)
    unrelated = [UNRELATED[i % 4] for i in range(30)]
    store, run_id = rouge_store(db_path, {"unrelated": unrelated, "copy": refs}, refs)
    frame = compare_models(store, run_id, "unrelated", "copy", resamples=2000, seed=1)
    assert len(frame) == 3
    for row in frame.itertuples():
        assert row.candidate_mean == pytest.approx(1.0)
        assert row.delta > 0.8 and row.ci_low > 0.7 and row.ci_high <= 1.0 + 1e-12
        assert row.p_value < 0.01 and row.p_adjusted < 0.01
        assert (row.wins, row.ties, row.losses) == (30, 0, 0)
        assert row.test == "paired permutation (Monte Carlo, 2000 draws)"


def test_pairs_by_datum_id_and_reports_what_is_missing(db_path: Path) -> None:
    store, run_id = value_store(db_path, {
        ("a", "s"): [0.1, 0.2, 0.3, 0.4, 0.5, None],
        ("b", "s"): [0.2, 0.2, 0.5, None, 0.9, 0.1],
    }, 6, rows_missing={"b": {0}})
    row = compare_models(store, run_id, "a", "b", resamples=100).iloc[0]
    # Pairs: d1 (0.2, 0.2), d2 (0.3, 0.5), d4 (0.5, 0.9); a lacks d5 (unscored); b lacks d0 (no row), d3 (unscored).
    assert row["n"] == 3
    assert [row[f"{k}_baseline"] for k in ("scored", "unscored", "empty", "missing")] == [5, 1, 0, 0]
    assert [row[f"{k}_candidate"] for k in ("scored", "unscored", "empty", "missing")] == [4, 1, 0, 1]
    assert row["delta"] == pytest.approx((0.0 + 0.2 + 0.4) / 3)
    assert row["baseline_mean"] == pytest.approx(1.0 / 3) and row["candidate_mean"] == pytest.approx(1.6 / 3)
    assert (row["wins"], row["ties"], row["losses"]) == (2, 1, 0)
    assert row["p_value"] == pytest.approx(2 / 4)  # exact: of the 4 flips of (0.2, 0.4), only ++ and -- reach 0.6
    diffs = paired_differences(store, run_id, "a", "b", "s")
    assert diffs["datum_id"].tolist() == ["d1", "d2", "d4"]
    assert diffs["diff"].to_numpy() == pytest.approx([0.0, 0.2, 0.4])
    assert diffs.attrs["missing_baseline"] == 1 and diffs.attrs["missing_candidate"] == 2  # without a score


def test_lower_is_better_counts_wins_in_its_direction(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, run_id = value_store(db_path, {("a", "wer"): [0.5, 0.4, 0.3], ("b", "wer"): [0.1, 0.4, 0.6]}, 3)
    frame = compare_models(store, run_id, "a", "b", resamples=100, directions={"wer": "lower"})
    row = frame.iloc[0]
    assert row["direction"] == "lower" and row["delta"] == pytest.approx(-0.1 / 3)
    assert frame.attrs["undeclared"] == []
    assert (row["wins"], row["ties"], row["losses"]) == (1, 1, 1)
    import textgen_core.registry as registry

    monkeypatch.setattr(registry, "direction_of", lambda score: "lower")
    assert compare_models(store, run_id, "a", "b", resamples=100).iloc[0]["direction"] == "lower"

    def broken(score: str) -> str:
        raise RuntimeError("registry half built")

    monkeypatch.setattr(registry, "direction_of", broken)
    monkeypatch.setattr(registry, "get_metric", broken)
    frame = compare_models(store, run_id, "a", "b", resamples=100)
    assert frame.iloc[0]["direction"] == "higher" and frame.attrs["undeclared"] == ["wer"]


def several_models(db_path: Path) -> tuple[Store, int]:
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, 40)
    values = {}
    for model, shift in (("base", 0.0), ("small", 0.02), ("big", 0.3)):
        for score in ("s1", "s2"):
            values[(model, score)] = list(np.clip(base + shift + rng.normal(0, 0.1, 40), 0, 2))
    return value_store(db_path, values, 40)


def test_every_model_against_the_baseline_with_holm(db_path: Path) -> None:
    store, run_id = several_models(db_path)
    frame = compare_models(store, run_id, "base", resamples=2000)
    assert list(frame.columns) == ["baseline", "candidate", *ComparisonRow.__dataclass_fields__]
    assert list(zip(frame["candidate"], frame["score"])) == [("small", "s1"), ("small", "s2"), ("big", "s1"),
                                                             ("big", "s2")]
    assert (frame["p_adjusted"] >= frame["p_value"]).all()
    assert frame.attrs["note"].startswith("4 comparisons") and "Holm" in frame.attrs["note"]
    big = frame[frame["candidate"] == "big"]
    assert (big["p_adjusted"] < 0.01).all() and (big["ci_low"] > 0.15).all()
    # 2000 draws resolve both a family of 4 and a single test, so the unadjusted p are the same.
    plain = compare_models(store, run_id, "base", resamples=2000, holm=False)
    assert plain["p_adjusted"].isna().all() and "not adjusted" in plain.attrs["note"]
    pd.testing.assert_series_equal(plain["p_value"], frame["p_value"])


def test_same_inputs_and_seed_give_the_same_numbers(db_path: Path) -> None:
    store, run_id = several_models(db_path)
    first = compare_models(store, run_id, "base", ["big", "small"], resamples=300, seed=7)
    again = compare_models(store, run_id, "base", ["big", "small"], resamples=300, seed=7)
    pd.testing.assert_frame_equal(first, again)
    # Each (candidate, score) has its own stream: a subset reproduces the same rows.
    alone = compare_models(store, run_id, "base", "small", scores=["s2"], resamples=300, seed=7, holm=False)
    row = first[(first["candidate"] == "small") & (first["score"] == "s2")].iloc[0]
    assert (alone.iloc[0]["ci_low"], alone.iloc[0]["ci_high"]) == (row["ci_low"], row["ci_high"])
    other = compare_models(store, run_id, "base", ["big", "small"], resamples=300, seed=8)
    assert not np.array_equal(other["ci_low"].to_numpy(), first["ci_low"].to_numpy())


def test_empty_pairs_give_a_row_without_statistics(db_path: Path) -> None:
    store, run_id = value_store(db_path, {("a", "s"): [0.1, None], ("b", "s"): [None, 0.4]}, 2)
    row = compare_models(store, run_id, "a", "b", resamples=100).iloc[0]
    assert row["n"] == 0 and math.isnan(row["delta"]) and math.isnan(row["p_value"])
    assert (row["unscored_baseline"], row["unscored_candidate"]) == (1, 1)
    assert row["verdict"] == "inconclusive" and "too few pairs" in row["why"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"baseline": "nobody"}, "model 'nobody' is not in run"),
    ({"candidate": "a"}, "is the baseline"),
    ({"candidate": ["b", "zed"]}, "model 'zed'"),
    ({"scores": ["bleu"]}, "no scored values for 'bleu'"),
    ({"resamples": 0}, "resamples"),
    ({"seed": -3}, "seed"),
    ({"confidence": 95}, "confidence"),
    ({"tie_tolerance": -1.0}, "tie tolerance"),
    ({"directions": {"s": "up"}}, "direction of 's'"),
])
def test_bad_requests_name_the_problem(db_path: Path, kwargs: dict, message: str) -> None:
    store, run_id = value_store(db_path, {("a", "s"): [0.1, 0.2], ("b", "s"): [0.3, 0.4]}, 2)
    arguments = {"baseline": "a", **kwargs}
    with pytest.raises(ParameterError, match=message):
        compare_models(store, run_id, **arguments)


def test_unknown_run_is_a_store_error(db_path: Path) -> None:
    with pytest.raises(StoreError):
        compare_models(Store(db_path), 99, "a")


def test_rouge_through_the_real_runner(db_path: Path) -> None:
    """The same known answer with ROUGE computed by the project's own runner, once it exists."""
    pytest.importorskip("textgen_core.metrics.lexical.engine", exc_type=ImportError)
    from textgen_core.evaluate import evaluate

    refs = references(30)
    rows = [Datum(f"q{i}", model, f"question {i}?", text, (refs[i],))
            for model, texts in (("unrelated", [UNRELATED[i % 4] for i in range(30)]), ("copy", refs))
            for i, text in enumerate(texts)]
    store = Store(db_path)
    run_id = evaluate(store, store.save_dataset(Dataset("qa", rows)), ["rouge"], workers=1)
    frame = compare_models(store, run_id, "unrelated", "copy", resamples=2000, seed=1)
    assert len(frame) >= 3 and frame.attrs["undeclared"] == []
    for row in frame.itertuples():
        assert row.direction == "higher" and row.delta > 0.8 and row.p_value < 0.01
        assert (row.wins, row.ties, row.losses) == (30, 0, 0)
