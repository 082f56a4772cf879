"""Results and Explore of a judge panel's run: each member's score beside the panel's, alpha, split cells, votes."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from app_helpers import all_text, frame_with, no_exception, no_raw_html, page, store

from textgen_core.model import Dataset, Datum
from textgen_dashboard import data
from textgen_dashboard.state import EXPLORE_DATUM, EXPLORE_RUN

#: coherence 1-5 by two members on model a and b; None = an unscored vote. Split (2+ apart): d1/a, d4/b.
VOTES = {("d0", "a"): (4, 4), ("d1", "a"): (1, 5), ("d2", "a"): (3, 2), ("d3", "a"): (2, None),
         ("d0", "b"): (5, 5), ("d1", "b"): (2, 3), ("d2", "b"): (4, 4), ("d3", "b"): (3, 3), ("d4", "b"): (1, 4)}
MEMBERS = ("judge-x", "judge-y")


@pytest.fixture()
def panel_run(app_db) -> int:
    db = store()
    rows = [Datum(d, m, f"question {d}", f"answer {d} {m}", ("r",)) for d, m in VOTES]
    jury = {"samples": 1, "aggregate": None, "panel": [{"name": m, "model": m} for m in MEMBERS]}
    run_id = db.create_run(db.save_dataset(Dataset("panel", rows)), ["coherence"], {}, {}, ["a", "b"],
                           judge={"model": MEMBERS[0], "jury": jury})  # as a panel run stores its panel
    votes, cells = [], []
    for (d, m), pair in VOTES.items():
        scored = [v for v in pair if v is not None]
        cells.append((d, m, "coherence", "coherence", float(np.mean(scored)), None, None))
        votes += [(d, m, "coherence", "coherence", member, 0, None if v is None else float(v),
                   "reply cut off" if v is None else None) for member, v in zip(MEMBERS, pair)]
    db.write_cells(run_id, cells)
    db.write_votes(run_id, votes)
    data.refresh()
    return run_id


def test_results_show_each_member_beside_the_panel_and_alpha(panel_run) -> None:
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    no_exception(at)
    no_raw_html(at)
    agreement = frame_with(at, "alpha")
    matrix = np.array([[np.nan if v is None else v for v in pair] for pair in VOTES.values()], dtype=float).T
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    row = agreement.iloc[0]
    assert row["score"] == "coherence" and row["level"] == "ordinal" and row["members"] == "judge-x, judge-y"
    assert row["alpha"] == pytest.approx(expected, abs=1e-9) and row["ci_low"] <= row["alpha"] <= row["ci_high"]
    assert (row["paired"], row["cells"], row["split"]) == (8, 9, 2)
    means = frame_with(at, "judge-x").set_index("model")
    assert means.loc["a", "judge-x"] == pytest.approx(2.5) and means.loc["a", "judge-y"] == pytest.approx(11 / 3)
    assert means.loc["b", "judge-y"] == pytest.approx(3.8)
    assert means.loc["a", "panel"] == pytest.approx(np.mean([4, 3, 2.5, 2]))  # the stored cells' mean
    split = frame_with(at, "spread")
    assert list(zip(split["datum_id"], split["model"])) == [("d1", "a"), ("d4", "b")]
    assert list(split["judge-x"]) == ["1", "1"] and list(split["judge-y"]) == ["5", "4"]
    assert "2 split cells; showing 2" in all_text(at)


def test_explore_shows_every_members_vote_and_reason(panel_run) -> None:
    at = page("app.py").run()
    at.session_state[EXPLORE_RUN] = panel_run
    at.session_state[EXPLORE_DATUM] = "d3"
    at = at.switch_page("views/explore.py").run()
    no_exception(at)
    votes = frame_with(at, "member")
    assert list(zip(votes["model"], votes["member"], votes["value"])) == [
        ("a", "judge-x", "2"), ("a", "judge-y", ""), ("b", "judge-x", "3"), ("b", "judge-y", "3")]
    assert list(votes["unscored reason"])[:2] == ["", "reply cut off"]
    assert "Votes: 2 members x 1 sample" in all_text(at)


def test_a_run_without_a_panel_shows_no_panel_section(sample_run) -> None:
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    no_exception(at)
    assert "Judge panel" not in all_text(at)
    assert not [e for e in at.dataframe if "alpha" in e.value.columns]


def test_members_named_like_the_tables_columns_get_their_own() -> None:
    """Judge models called "panel" and "model": the Results tables keep the panel's mean and the model apart."""
    import pandas as pd

    from textgen_core.compare import jury
    from textgen_dashboard.panel import members_table, split_table

    votes = pd.DataFrame([{"datum_id": d, "model": "a", "metric": "coherence", "score": "coherence", "judge": j,
                           "sample": 0, "value": v, "reason": None, "label": None}
                          for d, pair in (("d0", (1.0, 5.0)), ("d1", (2.0, 2.0)), ("d2", (4.0, 3.0)))
                          for j, v in zip(("panel", "model"), pair)])
    report = jury.agreement_of(votes, "coherence", resamples=20)
    summary = pd.DataFrame({"model": ["a"], "score": ["coherence"], "mean": [2.8333]})
    means = members_table([report], summary, ["a"]).iloc[0]
    assert (means["model"], means["panel"]) == ("a", 2.8333)
    assert (means["panel (member)"], means["model (member)"]) == (pytest.approx(7 / 3), pytest.approx(10 / 3))
    split = split_table([report], ["a"]).iloc[0]
    assert (split["datum_id"], split["model"], split["panel (member)"], split["model (member)"]) == ("d0", "a", "1",
                                                                                                      "5")
