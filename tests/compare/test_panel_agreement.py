"""Panel agreement (compare/jury.py): alpha against the krippendorff package, edge cases, split cells, interval."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest

from textgen_core.compare import jury
from textgen_core.errors import ParameterError


def votes_from(matrix: np.ndarray, score: str = "coherence", samples: int = 1) -> pd.DataFrame:
    """Votes of a (members x cells) matrix, NaN = an unscored vote (value NULL, with a reason); each sample equal."""
    rows = []
    for j, member in enumerate(matrix):
        for u, value in enumerate(member):
            for s in range(samples):
                unscored = math.isnan(value)
                rows.append({"datum_id": f"d{u:03d}", "model": "m", "metric": score, "score": score,
                             "judge": f"judge-{j}", "sample": s, "value": None if unscored else float(value),
                             "reason": "no verdict" if unscored else "ok"})
    return pd.DataFrame(rows, columns=jury.VOTE_COLUMNS)


def ratings(seed: int, members: int = 3, cells: int = 40, low: int = 1, high: int = 5,
            missing: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(low, high + 1, cells)
    data = np.clip(truth[None, :] + rng.integers(-1, 2, (members, cells)), low, high).astype(float)
    data[rng.random((members, cells)) < missing] = np.nan
    return data


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_equals_the_krippendorff_package(level, seed) -> None:
    data = ratings(seed)
    report = jury.agreement_of(votes_from(data), "coherence", level=level, resamples=50)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert report.alpha == pytest.approx(expected, abs=1e-9)
    assert report.n_units == int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
    assert report.n_cells == data.shape[1] and report.members == ["judge-0", "judge-1", "judge-2"]
    assert report.low <= report.alpha <= report.high


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_continuous_shares_equal_the_package(level) -> None:
    """Shares with fractions (faithfulness-like), many distinct values: the interval level's moment form."""
    rng = np.random.default_rng(5)
    truth = rng.random(150)
    data = np.clip(truth[None, :] + rng.normal(0, 0.15, (2, 150)), 0, 1)
    data[rng.random((2, 150)) < 0.1] = np.nan
    report = jury.agreement_of(votes_from(data, "faithfulness"), "faithfulness", level=level, resamples=50)
    assert report.level == level
    assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level),
                                         abs=1e-9)


def test_the_level_follows_the_scale() -> None:
    """qa_grade votes of 0/1 are nominal, coherence 1-5 ordinal, faithfulness with fractions interval."""
    yes_no = np.array([[1, 0, 1, 1, 0], [1, 0, 0, 1, 0]], dtype=float)
    assert jury.agreement_of(votes_from(yes_no, "qa_grade"), "qa_grade").level == "nominal"
    assert jury.agreement_of(votes_from(ratings(0), "coherence"), "coherence").level == "ordinal"
    shares = np.array([[0.5, 0.25, 1.0], [0.75, 0.25, 0.0]])
    assert jury.agreement_of(votes_from(shares, "faithfulness"), "faithfulness").level == "interval"
    report = jury.agreement_of(votes_from(yes_no, "qa_grade"), "qa_grade")
    assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=yes_no, level_of_measurement="nominal"),
                                         abs=1e-9)


def test_members_who_always_agree_have_alpha_one() -> None:
    data = np.array([[1, 2, 3, 4, 5, 3], [1, 2, 3, 4, 5, 3], [1, np.nan, 3, 4, 5, np.nan]])
    for level in jury.LEVELS:
        report = jury.agreement_of(votes_from(data), "coherence", level=level, resamples=50)
        assert report.alpha == pytest.approx(1.0, abs=1e-12)
        assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
        assert report.n_split == 0 and report.reason == ""


def test_a_cell_with_one_member_is_left_out() -> None:
    data = ratings(3, members=2, missing=0.0)
    lonely = np.column_stack([data, [[5.0], [np.nan]]])  # a 41st cell only judge-0 scored
    for level in ("ordinal", "interval"):
        with_lonely = jury.agreement_of(votes_from(lonely), "coherence", level=level, resamples=50)
        without = jury.agreement_of(votes_from(data), "coherence", level=level, resamples=50)
        assert with_lonely.alpha == pytest.approx(without.alpha, abs=1e-12)
        assert (with_lonely.n_cells, with_lonely.n_units) == (41, 40)
        assert with_lonely.alpha == pytest.approx(
            krippendorff.alpha(reliability_data=lonely, level_of_measurement=level), abs=1e-9)


def test_an_unscored_vote_is_missing_not_zero() -> None:
    """A NULL vote read as 0 would change alpha; read as missing it equals the package's NaN."""
    data = np.array([[1, 0, 1, 1, 0, 1, 0, 1], [1, 0, np.nan, 1, 0, 0, 0, np.nan]])
    report = jury.agreement_of(votes_from(data, "qa_grade"), "qa_grade", resamples=50)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    as_zero = krippendorff.alpha(reliability_data=np.nan_to_num(data), level_of_measurement="nominal")
    assert report.alpha == pytest.approx(expected, abs=1e-9) and abs(expected - as_zero) > 0.05
    assert report.n_units == 6


def test_undefined_alpha_carries_a_reason_not_a_number() -> None:
    nothing_pairs = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, np.nan]])
    report = jury.agreement_of(votes_from(nothing_pairs), "coherence")
    assert math.isnan(report.alpha) and math.isnan(report.low) and "nothing to pair" in report.reason
    same = np.array([[4.0, 4.0, 4.0], [4.0, 4.0, np.nan]])
    report = jury.agreement_of(votes_from(same), "coherence")
    assert math.isnan(report.alpha) and "same value (4)" in report.reason
    alone = jury.agreement_of(votes_from(np.array([[1.0, 2.0, 3.0]])), "coherence")
    assert math.isnan(alone.alpha) and "panel of two" in alone.reason
    with pytest.raises(ParameterError, match="level must be one of"):
        jury.agreement_of(votes_from(same), "coherence", level="cardinal")


def test_samples_become_one_value_per_member() -> None:
    """Numbers: a member's value is the mean of its scored samples; yes/no: the majority, a tie no value."""
    votes = votes_from(np.array([[3.0, 4.0, 1.0, 2.0], [5.0, 4.0, 2.0, 2.0]]), samples=2)
    first = (votes["judge"] == "judge-0") & (votes["datum_id"] == "d000") & (votes["sample"] == 1)
    votes.loc[first, "value"] = 4.0  # judge-0's samples on d000: 3 and 4
    votes.loc[(votes["judge"] == "judge-1") & (votes["datum_id"] == "d001") & (votes["sample"] == 0),
              ["value", "reason"]] = [None, "reply cut off"]  # an unscored sample is not averaged as 0
    report = jury.agreement_of(votes, "coherence", level="interval", resamples=50)
    averaged = np.array([[3.5, 4.0, 1.0, 2.0], [5.0, 4.0, 2.0, 2.0]])
    assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=averaged,
                                                            level_of_measurement="interval"), abs=1e-9)
    yes_no = votes_from(np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]]), "qa_grade", samples=2)
    tie = (yes_no["judge"] == "judge-1") & (yes_no["datum_id"] == "d003") & (yes_no["sample"] == 1)
    yes_no.loc[tie, "value"] = 1.0  # judge-1 on d003: one yes, one no
    grid = jury.member_values(yes_no, "nominal")
    assert math.isnan(grid.loc[("d003", "m"), "judge-1"]) and grid.loc[("d001", "m"), "judge-1"] == 1.0
    report = jury.agreement_of(yes_no, "qa_grade", resamples=50)
    assert report.n_units == 3 and list(report.split["datum_id"]) == ["d001", "d002"]


def test_split_cells_are_listed_widest_first() -> None:
    """coherence 1-5, threshold 0.25 x 4 = 1 point: cells two or more points apart are split."""
    data = np.array([[1, 2, 3, 5, 4, 2, np.nan], [1, 3, 5, 1, 4, 4, 1], [2, 3, 4, 2, np.nan, 2, np.nan]])
    report = jury.agreement_of(votes_from(data), "coherence", resamples=50)
    assert report.threshold == 1.0
    assert list(report.split["datum_id"]) == ["d003", "d002", "d005"]
    assert list(report.split["spread"]) == [4.0, 2.0, 2.0]
    assert report.split.loc[0, ["judge-0", "judge-1", "judge-2"]].tolist() == [5.0, 1.0, 2.0]
    loose = jury.agreement_of(votes_from(data), "coherence", threshold=0.6, resamples=50)
    assert list(loose.split["datum_id"]) == ["d003"]
    strict = jury.agreement_of(votes_from(data), "coherence", threshold=0.0, resamples=50)
    assert strict.n_split == 5  # every cell not unanimous; d006 has one member and cannot split
    with pytest.raises(ParameterError, match="threshold"):
        jury.agreement_of(votes_from(data), "coherence", threshold=-1)


def test_units_are_cells_not_datums() -> None:
    """Two models on the same datums: each (datum, model) is its own unit."""
    a, b = votes_from(ratings(7, members=2, missing=0.0)), votes_from(ratings(8, members=2, missing=0.0))
    b["model"] = "other"
    report = jury.agreement_of(pd.concat([a, b]), "coherence", level="interval", resamples=50)
    both = np.column_stack([ratings(7, members=2, missing=0.0), ratings(8, members=2, missing=0.0)])
    assert report.n_units == 80
    assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=both, level_of_measurement="interval"),
                                         abs=1e-9)


def test_the_interval_is_seeded() -> None:
    votes = votes_from(ratings(4))
    first = jury.agreement_of(votes, "coherence", level="interval", resamples=200, seed=1)
    again = jury.agreement_of(votes, "coherence", level="interval", resamples=200, seed=1)
    other = jury.agreement_of(votes, "coherence", level="interval", resamples=200, seed=2)
    assert (first.low, first.high) == (again.low, again.high) != (other.low, other.high)
    few = jury.agreement_of(votes_from(np.array([[1.0, 2.0], [1.0, 3.0]])), "coherence", level="interval")
    assert not math.isnan(few.alpha) and math.isnan(few.low)  # under 3 pairable cells: no interval


def test_interval_level_interval_covers_at_its_nominal_rate() -> None:
    """Two members score a true share plus noise (sd 0.2); population alpha from 200,000 cells;
    200 runs of 120 cells each get a bootstrap interval, which should hold it about 95% of the time."""
    rng = np.random.default_rng(21)

    def sample(cells: int) -> np.ndarray:
        truth = rng.random(cells)
        return truth[None, :] + rng.normal(0, 0.2, (2, cells))

    population = jury.alpha(sample(200_000).T, "interval")
    covered, sims = 0, 200
    for _ in range(sims):
        low, high = jury.interval(sample(120).T, "interval", confidence=0.95, resamples=300, rng=rng)
        covered += low <= population <= high
    assert 0.90 * sims <= covered <= 0.99 * sims, covered


def test_a_label_metric_agrees_on_its_labels_not_on_pass() -> None:
    """'escalated' and 'off-topic' both fail; members who swap them disagree, though their pass values agree."""
    given = [("resolved", "resolved"), ("escalated", "off-topic"), ("off-topic", "off-topic"),
             ("escalated", "escalated"), ("resolved", "escalated"), (None, "resolved")]
    rows = []
    for u, pair in enumerate(given):
        for j, label in enumerate(pair):
            rows.append({"datum_id": f"d{u}", "model": "m", "metric": "outcome", "score": "outcome",
                         "judge": f"judge-{j}", "sample": 0, "value": None if label is None else
                         float(label == "resolved"), "reason": "ok", "label": label})
    votes = pd.DataFrame(rows, columns=jury.VOTE_COLUMNS)
    report = jury.agreement_of(votes, "outcome", resamples=50)
    codes = {"escalated": 0.0, "off-topic": 1.0, "resolved": 2.0}
    matrix = np.array([[codes.get(p[j], np.nan) for p in given] for j in (0, 1)])
    assert report.level == "nominal"
    assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"),
                                         abs=1e-9)
    assert list(report.split["datum_id"]) == ["d1", "d4"]
    assert report.split.loc[0, ["judge-0", "judge-1"]].tolist() == ["escalated", "off-topic"]
    with pytest.raises(ParameterError, match="nominal"):
        jury.agreement_of(votes, "outcome", level="interval")
    same = votes.assign(label="resolved", value=1.0)
    assert "the label 'resolved'" in jury.agreement_of(same, "outcome").reason


def test_each_member_has_its_own_mean_per_model() -> None:
    """judge-0 on m: samples (3, 4) and 2 -> cells 3.5, 2 -> mean 2.75; an unscored cell is counted, never 0."""
    votes = votes_from(np.array([[3.0, 2.0], [5.0, np.nan]]), samples=2)
    votes.loc[(votes["judge"] == "judge-0") & (votes["datum_id"] == "d000") & (votes["sample"] == 1), "value"] = 4.0
    other = votes_from(np.array([[1.0, 1.0], [5.0, 3.0]])).assign(model="n")
    report = jury.agreement_of(pd.concat([votes, other]), "coherence", resamples=20)
    means = report.by_member.set_index(["model", "judge"])
    assert means.loc[("m", "judge-0"), "mean"] == 2.75 and means.loc[("m", "judge-1"), "mean"] == 5.0
    assert means.loc[("m", "judge-1"), ["n_scored", "n_unscored"]].tolist() == [1, 1]
    assert means.loc[("n", "judge-1"), "mean"] == 4.0 and means.loc[("n", "judge-0"), "n_unscored"] == 0


@pytest.mark.parametrize("level", ["nominal", "ordinal", "ratio"])
def test_the_weighted_bootstrap_equals_resampling_units(level) -> None:
    """Our interval weights each cell's coincidences by how often a resample drew it: the same draws as
    agreement_stats' resampling of units (the same generator), so the same interval to 1e-9."""
    from textgen_core.compare import agreement_stats as ag

    data = ratings(6, cells=60)
    ours = jury.interval(data.T, level, confidence=0.9, resamples=200, rng=np.random.default_rng(8))
    units = ag.krippendorff_interval(data, level, confidence=0.9, resamples=200, rng=np.random.default_rng(8))
    assert ours == pytest.approx(units, abs=1e-9)


def test_members_named_like_key_columns_keep_their_own_columns() -> None:
    """A judge model called "model" or "spread" does not overwrite the split table's keys."""
    votes = votes_from(np.array([[1.0, 5.0, 3.0], [1.0, 1.0, 3.0]]))
    votes["judge"] = votes["judge"].map({"judge-0": "model", "judge-1": "spread"})
    report = jury.agreement_of(votes, "coherence", resamples=20)
    assert report.members == ["model", "spread"]
    row = report.split.iloc[0]
    assert (row["datum_id"], row["model"], row["spread"]) == ("d001", "m", 4.0)
    assert (row["model (member)"], row["spread (member)"]) == (5.0, 1.0)
    assert jury.panel_lines([report])[0].endswith("1 split (members more than 1 apart): d001 (m)")


def test_panel_report_from_python_reads_a_stored_panel(tmp_path) -> None:
    """textgen_core.panel_report on a stored run: one report per score judged by two members, none otherwise."""
    import textgen_core
    from textgen_core.model import Dataset, Datum

    store = textgen_core.Store(tmp_path / "panel.duckdb")
    data = ratings(9, members=2, cells=12, missing=0.0)
    rows = [Datum(f"d{u:03d}", "m", "q", "p", ("r",)) for u in range(12)]
    run_id = store.create_run(store.save_dataset(Dataset("p", rows)), ["coherence"], {}, {}, ["m"])
    assert textgen_core.panel_report(store, run_id) == []  # no votes: no panel
    store.write_votes(run_id, votes_from(data)[jury.VOTE_COLUMNS[:-1]].itertuples(index=False))
    (report,) = textgen_core.panel_report(store, run_id, resamples=50)
    assert report.score == "coherence" and report.members == ["judge-0", "judge-1"] and report.n_units == 12
    assert report.alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"),
                                         abs=1e-9)
