"""Results page through AppTest: empty database, the sample run, and the widgets that drive the store."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from app_helpers import all_text, app_page, frame_with, no_exception, store

from textgen_core.summary import run_summary
from textgen_dashboard import data
from textgen_dashboard.state import EXPLORE_DATUM, EXPLORE_RUN
from textgen_dashboard.state import RESULTS_CHART, RESULTS_MODELS, RESULTS_OPEN, RESULTS_RUN, RESULTS_SCORE, results_range


def results_page():
    return app_page("results")


def figures(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def numbers(field) -> list[float]:
    """A plotly JSON array: a plain list, or {'dtype', 'bdata'} (base64 of a numpy buffer)."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"]).tolist()
    return list(field)


def rows_caption(at) -> str:
    return next(c.value for c in at.caption if "Select a row" in c.value)


def test_summary_matches_the_core(sample_run):
    _, run_id = sample_run
    at = results_page()
    no_exception(at)
    assert at.selectbox(key=RESULTS_RUN).value == run_id
    shown = frame_with(at, "ci_low")
    expected = run_summary(store(), run_id)
    assert len(shown) == len(expected) > 0
    merged = shown.merge(expected, on=["model", "score"], suffixes=("", "_core"))
    for column in ("mean", "median", "std", "ci_low", "ci_high", "n_scored", "n_unscored"):
        assert merged[column].tolist() == pytest.approx(merged[f"{column}_core"].tolist(), nan_ok=True)
    assert set(shown["better"]) <= {"↑ higher", "↓ lower", ""}


def test_charts_are_drawn_from_sql_bins(sample_run):
    _, run_id = sample_run
    at = results_page()
    score = at.selectbox(key=RESULTS_SCORE).value
    histogram, length, means = figures(at)
    assert {t["type"] for t in histogram["data"]} == {"bar"}
    n_scored = run_summary(store(), run_id).query("score == @score")["n_scored"].sum()
    assert sum(sum(numbers(t["y"])) for t in histogram["data"]) == n_scored
    assert {t["type"] for t in length["data"]} == {"scatter"}
    assert means["data"][0]["type"] == "scatter"
    for kind, trace in (("Box", "box"), ("Violin", "violin")):
        at.radio(key=RESULTS_CHART).set_value(kind).run()
        no_exception(at)
        assert {t["type"] for t in figures(at)[0]["data"]} == {trace}


def test_model_filter_narrows_every_section(sample_run):
    at = results_page()
    models = at.multiselect(key=RESULTS_MODELS).value
    assert len(models) == 2
    at.multiselect(key=RESULTS_MODELS).set_value(models[:1]).run()
    no_exception(at)
    assert set(frame_with(at, "ci_low")["model"]) == {models[0]}
    assert set(frame_with(at, "datum_id")["model"]) == {models[0]}
    assert all(len(f["data"]) == 1 for f in figures(at)[:2])
    at.multiselect(key=RESULTS_MODELS).set_value([]).run()
    assert "Pick at least one model" in all_text(at)


def test_score_range_filters_rows_in_sql(sample_run):
    _, run_id = sample_run
    at = results_page()
    score = "rouge1"
    at.selectbox(key=RESULTS_SCORE).set_value(score).run()
    slider = at.slider(key=results_range(score))
    low, high = slider.value
    middle = (low + high) / 2
    slider.set_value((middle, high)).run()
    no_exception(at)
    rows = frame_with(at, "datum_id")
    values = store().scores(run_id, scores=[score])["value"]
    assert len(rows) == int((values >= middle).sum())
    assert rows["value"].min() >= middle
    assert rows["value"].is_monotonic_increasing  # worst first for a higher-is-better score
    assert rows_caption(at).startswith(f"{len(rows)} rows")


def test_only_unscored_lists_reasons(sample_run):
    _, run_id = sample_run
    db = store()
    cell = db.scores(run_id, scores=["rouge1"]).iloc[0]
    db.write_cells(run_id, [(cell.datum_id, cell.model, cell.metric, "rouge1", None, None, "empty prediction")])
    data.refresh()
    at = results_page()
    at.selectbox(key=RESULTS_SCORE).set_value("rouge1").run()
    at.checkbox(key="results.unscored").check().run()
    no_exception(at)
    rows = frame_with(at, "reason")
    assert rows[["datum_id", "model", "reason"]].values.tolist() == [[cell.datum_id, cell.model, "empty prediction"]]


def test_picking_another_run(sample_run):
    dataset_id, first = sample_run
    db = store()
    second = db.create_run(dataset_id, ["bleu"], {}, {}, ["model-a"])
    db.write_cells(second, [("q01", "model-a", "bleu", "bleu", 0.5, None, None),
                            ("q02", "model-a", "bleu", "bleu", 0.25, None, None)])
    db.set_run_status(second, "finished")
    data.refresh()
    at = results_page()
    assert at.selectbox(key=RESULTS_RUN).value == second  # newest first
    assert frame_with(at, "ci_low")[["model", "score", "mean"]].values.tolist() == [["model-a", "bleu", 0.375]]
    at.selectbox(key=RESULTS_RUN).set_value(first).run()
    no_exception(at)
    assert len(frame_with(at, "ci_low")) == len(run_summary(db, first))


def test_a_picked_row_opens_explore(sample_run):
    _, run_id = sample_run
    at = results_page()
    datum_id = frame_with(at, "datum_id")["datum_id"].iloc[0]
    at.session_state[RESULTS_OPEN] = datum_id  # what the rows table's selection callback stores
    at.run()
    no_exception(at)
    assert [t.value for t in at.title] == ["Explore"]
    assert at.query_params["datum"] in (datum_id, [datum_id])
    assert at.session_state[EXPLORE_RUN] == run_id and at.session_state[EXPLORE_DATUM] == datum_id
    assert f"Datum {datum_id}" in [h.value.replace("\\", "") for h in at.header]


def test_chart_aggregates_equal_pandas_over_every_row(sample_run):
    _, run_id = sample_run
    db = store()
    values = db.score_values(run_id, scores=["rouge1"])
    histogram = db.score_histogram(run_id, "rouge1", bins=7)
    assert histogram.groupby("model")["count"].sum().to_dict() == values.groupby("model").size().to_dict()
    assert histogram["lo"].min() == pytest.approx(values["value"].min())
    assert histogram["hi"].max() == pytest.approx(values["value"].max())
    box = db.score_box(run_id, "rouge1").set_index("model")
    for model, part in values.groupby("model"):
        q1, median, q3 = np.percentile(part["value"], [25, 50, 75])
        assert box.loc[model, ["q1", "median", "q3"]].tolist() == pytest.approx([q1, median, q3])
        inside = part["value"][part["value"].between(q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1))]
        assert box.loc[model, ["lowerfence", "upperfence"]].tolist() == pytest.approx([inside.min(), inside.max()])
    sample = db.score_sample(run_id, "rouge1", per_model=10)
    assert sample.groupby("model").size().tolist() == [10, 10]
    assert sample.equals(db.score_sample(run_id, "rouge1", per_model=10))  # stable between reruns
    by_length = db.score_by_length(run_id, "rouge1", bins=4)
    assert by_length.groupby("model")["n"].sum().to_dict() == values.groupby("model").size().to_dict()


def test_figures_escape_names_and_survive_empty_frames():
    import pandas as pd

    from textgen_dashboard import charts

    bins = pd.DataFrame({"model": ["<b>m</b>"], "bin": [0], "lo": [0.0], "hi": [1.0], "count": [3]})
    figure = charts.histogram_figure(bins, "<i>score</i>")
    assert figure.data[0].name == "&lt;b&gt;m&lt;/b&gt;"
    assert "<i>" not in figure.layout.title.text
    empty = pd.DataFrame(columns=["model", "bin", "lo", "hi", "count"])
    for builder in (charts.histogram_figure, charts.box_figure, charts.violin_figure, charts.length_figure):
        assert builder(empty, "rouge1").layout.annotations[0].text == "no scored values"
    assert charts.model_colors(["a", "b"])["a"] != charts.model_colors(["a", "b"])["b"]


def test_choices_survive_a_visit_to_explore(sample_run):
    at = results_page()
    at.selectbox(key=RESULTS_SCORE).set_value("bleu").run()
    at.radio(key=RESULTS_CHART).set_value("Box").run()
    at.session_state[RESULTS_OPEN] = "q03"
    at.run()
    assert [t.value for t in at.title] == ["Explore"]
    at.switch_page("views/results.py").run()
    no_exception(at)
    assert at.selectbox(key=RESULTS_SCORE).value == "bleu" and at.radio(key=RESULTS_CHART).value == "Box"
    at.switch_page("views/explore.py").run()
    assert at.selectbox(key=EXPLORE_DATUM).value == "q03"


def test_a_constant_score_draws_one_visible_bar_and_says_why_there_is_no_spread():
    import pandas as pd

    from textgen_dashboard import charts

    bins = pd.DataFrame({"model": ["a", "b"], "bin": [0, 0], "lo": [0.8, 0.8], "hi": [0.8, 0.8], "count": [9, 9]})
    figure = charts.histogram_figure(bins, "qa_grade")
    assert all(min(trace.width) > 0 for trace in figure.data)  # a bar of zero width would not show
    assert "every scored value is 0.8" in figure.layout.annotations[0].text
    assert figure.layout.xaxis.tickformat == ".4~f" and figure.layout.yaxis.tickformat == ".4~f"
    summary = pd.DataFrame({"model": ["a"], "score": ["bleu"], "n_scored": [3], "n_unscored": [0],
                            "mean": [8.68e-234], "ci_low": [float("nan")], "ci_high": [float("nan")]})
    means = charts.means_figure(summary, "bleu")
    assert means.layout.height >= 200 and means.layout.xaxis.tickformat == ".4~f"
