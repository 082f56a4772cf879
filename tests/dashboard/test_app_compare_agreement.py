"""Compare page through AppTest: agreement with people's labels is scipy's and scikit-learn's, and only
columns that hold people's judgements are offered (split from test_app_compare.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from app_helpers import all_text, app_page, frame_with, no_exception, store, summary_scores
from scipy import stats

from textgen_core.datasets import load_dataset
from textgen_dashboard import state


def compare_page():
    return app_page("compare")


# -- agreement -------------------------------------------------------------------
def human_pairs(run_id: int, model: str, score: str, column: str) -> pd.DataFrame:
    """(value, human) of one model and score, paired by datum id, straight from the store."""
    db = store()
    values = db.score_values(run_id, models=[model], scores=[score])
    rows = db.load_dataset(db.get_run(run_id)["dataset_id"]).rows
    human = pd.DataFrame([(r.datum_id, r.metadata[column]) for r in rows if r.model == model],
                         columns=["datum_id", "human"])
    return values.merge(human, on="datum_id")


def test_agreement_with_the_sample_human_score(sample_run):
    _, run_id = sample_run
    at = compare_page()
    no_exception(at)
    assert at.selectbox(key=state.COMPARE_HUMAN_COLUMN).value == "human_score"
    assert at.radio(key=state.compare_human("human_score", "kind")).value == "score"
    shown = frame_with(at, "spearman").set_index(["model", "score"])
    assert len(shown) == 2 * len(summary_scores(run_id))
    for model in ("model-a", "model-b"):
        pairs = human_pairs(run_id, model, "rouge1", "human_score")
        rho = stats.spearmanr(pairs["value"], pairs["human"].astype(float)).statistic
        assert shown.loc[(model, "rouge1"), "spearman"] == pytest.approx(rho)
        assert shown.loc[(model, "rouge1"), "n"] == len(pairs) == 46


def test_agreement_as_labels(sample_run):
    from sklearn.metrics import cohen_kappa_score

    _, run_id = sample_run
    at = compare_page()
    at.selectbox(key=state.COMPARE_HUMAN_COLUMN).set_value("human_label").run()
    no_exception(at)
    assert at.radio(key=state.compare_human("human_label", "kind")).options == ["label: Cohen's kappa"]
    assert at.selectbox(key=state.compare_human("human_label", "positive")).value == "correct"
    at.number_input(key=state.compare_human("human_label", "threshold")).set_value(0.2).run()
    shown = frame_with(at, "kappa").set_index(["model", "score"])
    pairs = human_pairs(run_id, "model-b", "rouge1", "human_label")
    kappa = cohen_kappa_score(pairs["value"] >= 0.2, pairs["human"] == "correct")
    assert shown.loc[("model-b", "rouge1"), "kappa"] == pytest.approx(kappa)
    assert "rouge1 0.2" in all_text(at) and "at or above its threshold" in all_text(at)


def test_no_metadata_columns_no_agreement(app_db):
    db = store()
    dataset_id = db.save_dataset(load_dataset(b"id,model,answer,reference\nq1,a,x,x\nq1,b,y,x\n",
                                              file_name="plain.csv", name="plain"))
    run_id = db.create_run(dataset_id, ["rouge"], {}, {}, ["a", "b"])
    db.write_cells(run_id, [("q1", "a", "rouge", "rouge1", 1.0, None, None),
                            ("q1", "b", "rouge", "rouge1", 0.0, None, None)])
    at = compare_page()
    no_exception(at)
    assert "No human labels to compare with" in all_text(at)
    assert len(frame_with(at, "verdict")) == 1


def test_a_column_that_is_no_human_judgement_is_never_taken_for_one(app_db):
    """A category or a free-text answer is not a person's label: no kappa is printed against it."""
    db = store()
    dataset_id = db.save_dataset(load_dataset(
        b"id,model,answer,reference,category,question\nq1,a,x,x,account,Q1\nq1,b,y,x,account,Q1\n"
        b"q2,a,x,x,billing,Q2\nq2,b,x,x,billing,Q2\n", file_name="plain.csv", name="plain"))
    run_id = db.create_run(dataset_id, ["rouge"], {}, {}, ["a", "b"])
    db.write_cells(run_id, [(d, m, "rouge", "rouge1", v, None, None)
                            for d, m, v in (("q1", "a", 1.0), ("q1", "b", 0.0), ("q2", "a", 1.0), ("q2", "b", 1.0))])
    at = compare_page()
    no_exception(at)
    text = all_text(at)
    assert "No human labels to compare with" in text and "category" in text
    assert not [s for s in at.selectbox if s.key == state.COMPARE_HUMAN_COLUMN]
    assert "Cohen" not in text and not [f for f in at.dataframe if "kappa" in f.value.columns]
    links = [(link.proto.label, link.proto.query_string) for link in at.get("page_link")]
    assert ("Label cells of this run", f"run={run_id}") in links
