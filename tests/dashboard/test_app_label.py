"""Label page through AppTest: 40 cells labelled by buttons land in DuckDB, survive a reload and export."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from app_helpers import all_text, app_page, no_exception, page, store

from textgen_core.model import Dataset, Datum
from textgen_dashboard import data
from textgen_dashboard.state import (LABEL_ANNOTATOR, LABEL_COUNT, LABEL_RUN, LABEL_SCORE, LABEL_STRATEGY,
                                     LABEL_TAB, label_button)

N = 30


@pytest.fixture
def graded(app_db) -> int:
    """30 datums x 2 models with a qa_grade (0/1) and a coherence (1-5) judge score."""
    rng = np.random.default_rng(8)
    db = store()
    rows = [Datum(f"d{i}", m, f"question {i}?", f"answer {i} of {m}", (f"ref {i}",), (f"context {i}",))
            for i in range(N) for m in ("small", "large")]
    run_id = db.create_run(db.save_dataset(Dataset("graded", rows)), ["qa_grade", "coherence"], {}, {},
                           ["small", "large"])
    cells = [(f"d{i}", m, "qa_grade", "qa_grade", float(rng.integers(0, 2)), None, None)
             for i in range(N) for m in ("small", "large")]
    cells += [(f"d{i}", m, "coherence", "coherence", float(rng.integers(1, 6)), None, None)
              for i in range(N) for m in ("small", "large")]
    db.write_cells(run_id, cells)
    data.refresh()
    return run_id


def label_page(run_id: int, annotator: str, score: str = "qa_grade"):
    at = app_page("label")
    no_exception(at)
    at.selectbox(key=LABEL_RUN).set_value(run_id).run()
    at.selectbox(key=LABEL_SCORE).set_value(score).run()
    at.radio(key=LABEL_STRATEGY).set_value("stratified").run()
    at.number_input(key=LABEL_COUNT).set_value(40).run()
    at.text_input(key=LABEL_ANNOTATOR).input(annotator).run()
    no_exception(at)
    return at


def progress_text(at) -> str:
    return at.get("progress")[0].proto.text


def test_forty_labels_through_the_page_are_stored_survive_a_reload_and_export(graded) -> None:
    run_id = graded
    at = label_page(run_id, "ana")
    assert progress_text(at).startswith("0 of 40 cells labelled by ana")
    given = []
    for i in range(40):
        value = float(i % 2)
        caption = next(c.value for c in at.caption if c.value.startswith("Cell "))
        given.append(caption)
        at.button(key=label_button(value)).click().run()
        no_exception(at)
    assert progress_text(at).startswith("40 of 40 cells labelled by ana")
    stored = store().labels(run_id, score="qa_grade", annotator="ana")
    assert len(stored) == 40 and len(set(zip(stored["datum_id"], stored["model"]))) == 40
    assert sorted(stored["value"].tolist()) == [0.0] * 20 + [1.0] * 20
    assert set(stored["sampling"]) == {"stratified"} and stored["probability"].between(0, 1).all()

    assert at.query_params["annotator"] in ("ana", ["ana"])  # in the tab's address: a reload keeps the name
    reloaded = page("app.py")
    reloaded.query_params["annotator"] = "ana"
    reloaded = reloaded.run().switch_page("views/label.py").run()  # a new session: labels read back from DuckDB
    reloaded.selectbox(key=LABEL_RUN).set_value(run_id).run()
    reloaded.selectbox(key=LABEL_SCORE).set_value("qa_grade").run()
    reloaded.radio(key=LABEL_STRATEGY).set_value("stratified").run()
    reloaded.number_input(key=LABEL_COUNT).set_value(40).run()
    assert reloaded.text_input(key=LABEL_ANNOTATOR).value == "ana"
    assert progress_text(reloaded).startswith("40 of 40 cells labelled by ana")
    second = label_page(run_id, "ben")  # another annotator on the same cells starts from zero
    assert progress_text(second).startswith("0 of 40 cells labelled by ben")
    second.button(key=label_button(1.0)).click().run()
    assert len(store().labels(run_id, score="qa_grade")) == 41

    exported = pd.read_csv(io.BytesIO(data.export_bytes(run_id, "labels", "csv")))
    assert len(exported) == 41 and set(exported["annotator"]) == {"ana", "ben"}
    assert {"datum_id", "model", "score", "value", "annotator", "note", "labelled_at"} <= set(exported.columns)


def test_the_report_tab_shows_agreement_and_calibrated_means(graded) -> None:
    run_id = graded
    at = label_page(run_id, "ana", score="coherence")
    for value in (1, 2, 3, 4, 5, 3, 3, 2, 4, 5):
        at.button(key=label_button(value)).click().run()
    no_exception(at)
    assert "judge against" not in all_text(at)  # only the open tab runs: labelling never pays for the report
    at.session_state[LABEL_TAB] = "agreement"  # what clicking the tab leaves (see labeling._switch_tab)
    at.run()
    no_exception(at)
    text = all_text(at)
    assert "coherence: judge against 1 annotator(s) (ordinal)" in text
    tables = [e.value for e in at.dataframe]
    stats = next(t for t in tables if "weighted κ (quadratic)" in t.columns)
    assert stats["n"].tolist()[-1] == 10
    calibrated = next(t for t in tables if "calibrated" in t.columns)
    assert set(calibrated["model"]) == {"small", "large"}
    assert "Bias-corrected means" in text and "How many labels" in text


def test_results_and_compare_show_calibrated_beside_judge_only(graded) -> None:
    run_id = graded
    db = store()
    judged = db.score_values(run_id, scores=["qa_grade"])
    # people agree with the judge except on 'large', where they say 0 for a third of its 1s: a lenient judge there
    labels = []
    for i, (d, m, v) in enumerate(zip(judged["datum_id"], judged["model"], judged["value"])):
        human = 0.0 if (m == "large" and v == 1.0 and i % 3 == 0) else v
        labels.append((d, m, "qa_grade", "ana", human, None, "random", None))
    db.write_labels(run_id, labels)
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    no_exception(at)
    means = next(e.value for e in at.dataframe if "calibrated" in e.value.columns).set_index("model")
    assert set(means.index) == {"small", "large"}
    assert means.loc["small", "judge only"].split()[0] == means.loc["small", "calibrated"].split()[0]
    assert float(means.loc["large", "calibrated"].split()[0]) < float(means.loc["large", "judge only"].split()[0])
    assert at.toggle(key="results.calibrate").value is True

    at = page("app.py").run()
    at = at.switch_page("views/compare.py").run()
    no_exception(at)
    if any(b.key == "compare.go" for b in at.button):  # large comparisons wait for a click; this one does not
        at.button(key="compare.go").click().run()
    deltas = next(e.value for e in at.dataframe if "calibrated delta" in e.value.columns)
    assert deltas["score"].tolist() == ["qa_grade"] and deltas["labelled pairs"].tolist() == [N]
    assert "Bias-corrected differences" in " ".join(t.label for t in at.toggle)


def test_a_disagreement_opens_in_explore(graded) -> None:
    from textgen_dashboard.state import EXPLORE_DATUM, LABEL_OPEN

    run_id = graded
    at = label_page(run_id, "ana")
    at.button(key=label_button(0.0)).click().run()
    at.session_state[LABEL_OPEN] = "d3"  # what selecting a row of the disagreements table leaves behind
    at.run()
    no_exception(at)
    assert at.session_state[EXPLORE_DATUM] == "d3"
    assert any("Datum d3" in h.value for h in at.header)


def test_rating_buttons_show_the_rubric_levels(app_db, judge_server):
    """A custom rating metric whose definition names its levels: each button says its value and its words."""
    import tomllib

    from textgen_core.datasets import load_dataset
    from textgen_core.evaluate import evaluate
    from textgen_core.judge.metrics.criteria import define
    from textgen_core.judge.settings import JudgeSettings
    from textgen_dashboard.criteria import EXAMPLE

    spec = define(tomllib.loads(EXAMPLE), "the test")
    payload = b"id,model,question,answer\nq1,a,Where is my order?,It shipped.\nq1,b,Where is my order?,Not our problem.\n"
    db = store()
    run_id = evaluate(db, db.save_dataset(load_dataset(payload, file_name="tone.csv", name="tone")), [spec.name],
                      judge=JudgeSettings(base_url=judge_server.url, model="judge-test"), workers=1)
    data.refresh()
    at = app_page("label")
    at.selectbox(key=LABEL_RUN).set_value(run_id).run()
    at.selectbox(key=LABEL_SCORE).set_value(spec.name).run()
    at.text_input(key=LABEL_ANNOTATOR).input("ana").run()
    no_exception(at)
    labels = [at.button(key=label_button(v)).label for v in (1.0, 2.0, 3.0, 4.0, 5.0)]
    assert labels == ["1 · cold or blaming", "2 · curt", "3 · neutral", "4 · friendly", "5 · warm, plain and blame-free"]
