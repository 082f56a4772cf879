"""The history of a dataset over its versions and the leaderboard, against numbers computed here from the stored
cells: means equal the cells' means, intervals follow the one small-sample rule (statsmodels' Wilson from 30 yes/no
values, scipy's exact bound below; the summary's interval of the same run), each run's test equals
scipy's paired t test on the datums paired by id *and* content (changed ones left out and counted), unscored cells
are counted and never averaged in, and small samples say "too few"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from textgen_core.catalog import store_version
from textgen_core.errors import ParameterError
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.compare.small_sample import mean_interval, size_rng
from textgen_core.over_time.history import history, value_range
from textgen_core.over_time.leaderboard import leaderboard, rank_intervals
from textgen_core.store import Store


def dataset(correct: dict[str, np.ndarray], edited: int = 0, blank: int = 0, n: int | None = None) -> Dataset:
    """Datums d0.. with each model right where ``correct`` is True; the first ``edited`` questions reworded, the
    last ``blank`` predictions of each model empty (exact_match scores an empty prediction 0)."""
    rows = []
    n = n or len(next(iter(correct.values())))
    for i in range(n):
        for model, right in correct.items():
            prediction = "" if i >= n - blank else ("yes" if right[i] else "no")
            rows.append(Datum(f"d{i}", model, f"question {i}{' (edited)' if i < edited else ''}", prediction,
                              ("yes",)))
    return Dataset("qa", rows)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    rng = np.random.default_rng(11)
    store = Store(tmp_path_factory.mktemp("h") / "h.duckdb")
    plans = [({"a": rng.random(80) < 0.8, "b": rng.random(80) < 0.5}, 0),
             ({"a": rng.random(80) < 0.8, "b": rng.random(80) < 0.5}, 0),
             ({"a": rng.random(80) < 0.3, "b": rng.random(80) < 0.5, "c": rng.random(80) < 0.95}, 6)]
    for week, (correct, edited) in enumerate(plans, start=1):
        stored = store_version(store, dataset(correct, edited), "qa")
        run_id = evaluate(store, stored.dataset_id, ["exact_match", "rouge"], workers=1)
        store.run_names.label_run(run_id, name=f"week {week}")
    return store


def cells(store: Store, run_id: int, model: str, score: str) -> pd.Series:
    frame = store.scores(run_id)
    frame = frame[(frame["model"] == model) & (frame["score"] == score)]
    return frame.set_index("datum_id")["value"]


def test_points_are_the_stored_cells_means_with_reference_intervals(store: Store) -> None:
    frame = history(store, "qa", scores=["exact_match", "rouge1"])
    assert frame["run"].unique().tolist() == ["week 1", "week 2", "week 3"]
    assert frame["version"].unique().tolist() == [1, 2, 3]
    for row in frame.itertuples():
        values = cells(store, row.run_id, row.model, row.score).dropna()
        assert row.n == len(values) and row.mean == pytest.approx(values.mean(), abs=1e-12)
        if row.score == "exact_match":
            low, high = proportion_confint(int(values.sum()), len(values), alpha=0.05, method="wilson")
            assert (row.ci_low, row.ci_high, row.interval) == (pytest.approx(low, abs=1e-9),
                                                                pytest.approx(high, abs=1e-9), "Wilson")


def test_each_run_is_tested_against_the_previous_on_datums_paired_by_id_and_content(store: Store) -> None:
    frame = history(store, "qa", scores=["exact_match"])
    row = frame[(frame["run"] == "week 3") & (frame["model"] == "a")].iloc[0]
    before = cells(store, 2, "a", "exact_match").drop([f"d{i}" for i in range(6)])  # reworded in version 3
    after = cells(store, 3, "a", "exact_match").drop([f"d{i}" for i in range(6)])
    reference = stats.ttest_rel(after.loc[before.index], before)
    assert (row.previous_run, row.n_paired, row.left_out) == (2, 74, 6)
    assert row.delta == pytest.approx((after.loc[before.index] - before).mean(), abs=1e-12)
    assert row.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    assert row.flag == "worse"  # a fell from 0.8 to 0.3
    tested = frame[frame["p_value"].notna()]
    assert len(tested) == 4 and frame.attrs["tests"] == {"a": 2, "b": 2, "c": 0}
    for model, part in tested.groupby("model"):  # Holm within each model's history
        order = part["p_value"].sort_values()
        assert part.loc[order.index[0], "p_adjusted"] == pytest.approx(min(1, 2 * order.iloc[0]), rel=1e-12)
    first = frame[frame["run"] == "week 1"]
    assert first["previous_run"].isna().all() and (first["flag"] == "").all()
    assert any("12 datum pair(s) left out" in note for note in frame.attrs["notes"])  # 6 of a and 6 of b
    c = frame[frame["model"] == "c"].iloc[0]
    assert np.isnan(c.previous_run) and c.flag == ""  # a model's first run has nothing to differ from


def test_unscored_cells_are_counted_not_averaged_and_small_samples_say_too_few(tmp_path: Path) -> None:
    store = Store(tmp_path / "few.duckdb")
    right = {"a": np.array([True] * 8)}
    for _ in range(2):
        evaluate(store, store_version(store, dataset(right, blank=0), "few").dataset_id, ["exact_match", "bleu"],
                 workers=1)
        right = {"a": np.array([True] * 7 + [False])}
    frame = history(store, "few", scores=["exact_match", "bleu"])
    em = frame[frame["score"] == "exact_match"]
    exact = [stats.binomtest(k, 8).proportion_ci(0.95, "exact") for k in (8, 7)]  # below 30 values: exact
    assert em["ci_low"].tolist() == pytest.approx([e.low for e in exact], abs=1e-9)
    assert em["ci_high"].tolist() == pytest.approx([e.high for e in exact], abs=1e-9)
    assert (em["ci_high"] - em["ci_low"] > 0.1).all()  # 8 of 8 right is not certainty
    assert em.iloc[1]["n_paired"] == 8 and np.isnan(em.iloc[1]["p_value"])  # under 10 pairs: no test
    assert any("too few: under 10 datums" in note for note in frame.attrs["notes"])


def tiny(store: Store, name: str = "tiny") -> int:
    """A run of three datums: model a answers all three right (no spread anywhere), model b one of three."""
    rows = [Datum(f"d{i}", model, f"question {i}", answer, ("yes",))
            for i, answers in enumerate([("yes", "yes it is"), ("yes", "no"), ("yes", "yes")])
            for model, answer in zip("ab", answers)]
    return evaluate(store, store_version(store, Dataset(name, rows), name).dataset_id,
                    ["exact_match", "token_f1", "lengths"], workers=1)


def test_three_datums_or_equal_values_get_the_small_sample_rule(tmp_path: Path) -> None:
    from textgen_core.summary import run_summary

    store = Store(tmp_path / "tiny.duckdb")
    run_id = tiny(store)
    frame = history(store, "tiny", scores=["exact_match", "f1", "answer_length"])
    summary = run_summary(store, run_id).set_index(["model", "score"])
    for row in frame.itertuples():  # every point is the rule's interval of the run's values
        values = cells(store, run_id, row.model, row.score).dropna().to_numpy()
        expected = mean_interval(values, bounds=value_range(row.score), confidence=0.95, rng=size_rng(0, len(values)))
        assert (row.ci_low, row.ci_high) == pytest.approx((expected.low, expected.high), abs=1e-12, nan_ok=True)
        if not row.interval.startswith("bootstrap"):  # no random draws: exactly what `summary RUN` prints
            reference = summary.loc[(row.model, row.score)]
            assert (row.ci_low, row.ci_high) == pytest.approx((reference["ci_low"], reference["ci_high"]), abs=0,
                                                              nan_ok=True)
    points = frame.set_index(["model", "score"])
    three_right = stats.binomtest(3, 3).proportion_ci(0.95, "exact")  # all equal: the exact bound, not [1, 1]
    assert points.loc[("a", "exact_match"), ["ci_low", "ci_high"]].tolist() == pytest.approx(
        [three_right.low, 1.0], abs=1e-9)
    for key in [("a", "f1"), ("b", "f1"), ("b", "exact_match")]:
        assert points.loc[key, "ci_high"] - points.loc[key, "ci_low"] > 0.5, key  # three values: wide
    for model in "ab":  # a score without a bounded range from three values: no interval, and why
        row = points.loc[(model, "answer_length")]
        assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
        assert row["interval"] == ("too few (3 values; a score without a bounded range needs at least 5)")
    board = leaderboard(store, "tiny", "f1").set_index("model")
    assert board.loc["a", "ci_low"] == points.loc[("a", "f1"), "ci_low"]
    assert board.loc["a", "ci_high"] == points.loc[("a", "f1"), "ci_high"]
    lengths = leaderboard(store, "tiny", "answer_length")
    assert lengths["ci_low"].isna().all() and lengths["interval"].str.startswith("too few (3 values").all()


def test_unscored_cells_in_the_history(tmp_path: Path) -> None:
    store = Store(tmp_path / "u.duckdb")
    rows = [Datum(f"d{i}", "a", f"q{i}", "yes", ("yes",) if i % 4 else ()) for i in range(20)]
    evaluate(store, store_version(store, Dataset("u", rows), "u").dataset_id, ["exact_match"], workers=1)
    row = history(store, "u").iloc[0]
    stored = cells(store, 1, "a", "exact_match")
    assert row["unscored"] == stored.isna().sum() == 5 and row["n"] == 15 and row["mean"] == stored.dropna().mean()


def test_bad_requests_name_what_exists(store: Store, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="no finished run of 'qa' has 'nope'; scores: exact_match, rouge1"):
        history(store, "qa", scores=["nope"])
    with pytest.raises(ParameterError, match="has 'z'; .*models: a, b, c"):
        history(store, "qa", models=["z"])
    with pytest.raises(Exception, match="no dataset named 'missing'"):
        history(store, "missing")
    with pytest.raises(ParameterError, match="between 0 and 1"):
        history(store, "qa", alpha=1.5)
    empty = Store(tmp_path / "e.duckdb")
    store_version(empty, dataset({"a": np.ones(3, bool)}), "e")
    with pytest.raises(ParameterError, match="'e' has no finished run yet"):
        history(empty, "e")


def test_leaderboard_takes_each_models_latest_run_and_says_first_only_when_the_data_do(store: Store) -> None:
    board = leaderboard(store, "qa", "exact_match", seed=1)
    assert board["model"].tolist() == ["c", "b", "a"] and board["run"].tolist() == ["week 3"] * 3
    assert board.loc[0, "standing"] == "first" and (board.loc[0, "rank_low"], board.loc[0, "rank_high"]) == (1, 1)
    for row in board.itertuples():
        assert row.mean == pytest.approx(cells(store, row.run_id, row.model, "exact_match").mean(), abs=1e-12)
    early = leaderboard(store, "qa", "exact_match", runs=[1])
    assert early["model"].tolist() == ["a", "b"] and early["version"].tolist() == [1, 1]
    with pytest.raises(ParameterError, match="run\\(s\\) 99 are not finished runs of 'qa'"):
        leaderboard(store, "qa", "exact_match", runs=[99])
    with pytest.raises(ParameterError, match="no finished run of 'qa' has scored values of 'nope'"):
        leaderboard(store, "qa", "nope")


def test_rank_intervals_span_models_the_datums_cannot_tell_apart() -> None:
    rng = np.random.default_rng(5)
    base = rng.random(200)
    values = np.vstack([base + 0.3, base + 0.001 * rng.standard_normal(200), base + 0.002 * rng.standard_normal(200),
                        base - 0.3])
    rank, low, high = rank_intervals(values, "higher", confidence=0.95, resamples=400, rng=rng)
    assert rank[0] == 1 and (low[0], high[0]) == (1, 1) and (low[3], high[3]) == (4, 4)
    assert low[1] == 2 and high[1] == 3 and low[2] == 2 and high[2] == 3  # the middle two overlap
    lower_better = rank_intervals(values, "lower", confidence=0.95, resamples=50, rng=rng)[0]
    assert lower_better.tolist() == [4, 5 - rank[1], 5 - rank[2], 1]
    with_gaps = values.copy()
    with_gaps[0, :150] = np.nan  # a model scored on fewer datums is ranked over its own
    assert rank_intervals(with_gaps, "higher", confidence=0.95, resamples=50, rng=rng)[0][0] == 1
    assert np.isnan(rank_intervals(values, "none", confidence=0.95, resamples=5, rng=rng)[0]).all()
