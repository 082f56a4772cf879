"""History page through AppTest: the dataset's runs per score with intervals, the flagged change, the leaderboard,
and the page as an address (?dataset=&score=&model=); the figure's data checked, not its pixels."""

from __future__ import annotations

import numpy as np
from app_helpers import all_text, no_exception, page, store

from textgen_core.catalog import store_version
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_dashboard import data
from textgen_dashboard.history import DATASET, MODELS, SCORE, history_figure
from textgen_core.over_time.history import history


def fill(weeks=(0.9, 0.9, 0.2)) -> None:
    rng = np.random.default_rng(2)
    db = store()
    for week, chance in enumerate(weeks, start=1):
        rows = [Datum(f"d{i}", model, f"q{i}", "yes" if rng.random() < p else "no", ("yes",))
                for i in range(60) for model, p in (("prod", chance), ("small", 0.5))]
        run_id = evaluate(db, store_version(db, Dataset("qa", rows), "qa").dataset_id, ["exact_match"], workers=1)
        db.run_names.label_run(run_id, name=f"week {week}")
    data.refresh()


def test_history_page_shows_runs_flags_and_leaderboard(app_db) -> None:
    fill()
    at = page("views/history.py").run()
    no_exception(at)
    assert at.selectbox(key=DATASET).value == "qa" and at.selectbox(key=SCORE).value == "exact_match"
    text = all_text(at)
    assert "Changes flagged: 1" in text and "Leaderboard" in text
    flags = at.dataframe[0].value
    assert flags[["run", "model", "flag"]].values.tolist() == [["week 3", "prod", "worse"]]
    board = at.dataframe[1].value
    assert board["model"].tolist()[0] == "small" and set(board["run"]) == {"week 3"}
    assert dict(at.query_params) == {"dataset": "qa", "score": "exact_match", "model": ["prod", "small"]}


def test_the_page_is_an_address(app_db) -> None:
    fill()
    at = page("views/history.py")
    at.query_params["dataset"] = "qa"
    at.query_params["model"] = "small"
    at.run()
    no_exception(at)
    assert at.multiselect(key=MODELS).value == ["small"]
    assert "Changes flagged: 0" in all_text(at)


def test_figure_points_bars_and_hover(app_db) -> None:
    fill()
    frame = history(store(), "qa", scores=["exact_match"])
    figure = history_figure(frame, "exact_match")
    points = [t for t in figure.data if t.showlegend is not False]
    rings = [t for t in figure.data if t.showlegend is False]
    assert [t.name for t in points] == ["prod", "small"] and len(rings) == 1
    prod = frame[frame["model"] == "prod"]
    assert list(points[0].y) == prod["mean"].tolist() and list(points[0].x) == ["week 1", "week 2", "week 3"]
    assert list(points[0].error_y.array) == (prod["ci_high"] - prod["mean"]).tolist()
    assert "week 3 (run 3), version 3" in points[0].hovertext[2] and "judge: none" in points[0].hovertext[2]
    assert "<b>worse</b> than run 2" in points[0].hovertext[2]


def test_empty_database_and_a_dataset_without_runs(app_db) -> None:
    at = page("views/history.py").run()
    no_exception(at)
    assert "No datasets yet" in all_text(at)
    store_version(store(), Dataset("e", [Datum("a", "m", "q", "x", ("x",))]), "e")
    data.refresh()
    at = page("views/history.py").run()
    no_exception(at)
    assert "'e' has no finished run yet" in all_text(at)


def test_a_run_of_three_datums_shows_the_small_sample_rule(app_db) -> None:
    rows = [Datum(f"d{i}", "a", f"q{i}", "yes", ("yes",)) for i in range(3)]
    db = store()
    evaluate(db, store_version(db, Dataset("tiny", rows), "tiny").dataset_id, ["exact_match", "lengths"], workers=1)
    data.refresh()
    at = page("views/history.py")
    at.query_params["dataset"] = "tiny"
    at.query_params["score"] = "answer_length"
    at.run()
    no_exception(at)
    text = all_text(at).replace("\\", "")
    assert "Intervals follow one small-sample rule" in text
    assert "No interval (too few): run 1, a: too few (3 values; a score without a bounded range needs at least 5)" \
        in text
    at.selectbox(key=SCORE).set_value("exact_match").run()
    assert "No interval" not in all_text(at)  # 3 of 3 right: the exact bound, drawn as a bar
    board = at.dataframe[-1].value
    assert board["interval"].tolist() == ["[0.2924, 1.0000]"]
