"""Explore page through AppTest: search, filters, deep links and the datum drill-down."""

from __future__ import annotations

import pytest
from app_helpers import all_text, app_page, frame_with, no_exception, page, store

from textgen_core.judge.storage import CellWrite
from textgen_dashboard import data
from textgen_dashboard.state import (ANY_SCORE, EXPLORE_DATUM, EXPLORE_META, EXPLORE_META_VALUE, EXPLORE_MODELS,
                                     EXPLORE_RUN, EXPLORE_SCORE, EXPLORE_TEXT, EXPLORE_UNSCORED, explore_range)

PROMPT = "Judge this: <script>alert('x')</script> **not bold**"
REPLY = '{"verdicts": [{"statement": "Au", "verdict": "yes"}]}'


def explore_page(at=None):
    return at.switch_page("views/explore.py").run() if at else app_page("explore")


def deep_link(run_id: int, datum_id: str):
    """Explore opened from a link that carries ?run=...&datum=... (the app reads them on its first run)."""
    at = page("app.py").run()
    at.query_params["run"] = str(run_id)
    at.query_params["datum"] = datum_id
    return explore_page(at)


def param(at, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def headers(at) -> list[str]:
    return [h.value.replace("\\", "") for h in at.header]


@pytest.fixture
def judged_run(sample_run) -> tuple[int, str]:
    """A judge run on the sample: q01 has verdicts and exchanges (model-b timed out); q02 model-a is unscored."""
    dataset_id, _ = sample_run
    db = store()
    run_id = db.create_run(dataset_id, ["faithfulness"], {}, {}, ["model-a", "model-b"])
    exchange = {"metric": "faithfulness", "step": "verdicts", "call_index": 0}
    ok = exchange | {"datum_id": "q01", "model": "model-a", "status": "ok", "reason": None, "cache_key": "k1",
                     "reply": REPLY, "prompt_tokens": 10, "completion_tokens": 5, "attempts": 1, "latency_s": 0.1,
                     "messages": [{"role": "system", "content": "You are a careful judge."},
                                  {"role": "user", "content": PROMPT}]}
    timed_out = exchange | {"datum_id": "q01", "model": "model-b", "status": "unscored",
                            "reason": "the judge timed out", "cache_key": None, "reply": None, "prompt_tokens": 0,
                            "completion_tokens": 0, "attempts": 3, "latency_s": 30.0,
                            "messages": [{"role": "user", "content": "Judge q01 for model-b"}]}
    writer = db.judge_writer  # the judge's own write path: each cell with its verdicts and exchanges
    writer.put_cell(CellWrite(run_id, ("q01", "model-a", "faithfulness", "faithfulness", 0.5, {"supported": 1}, None), [
        ("q01", "model-a", "faithfulness", "verdicts", 0, "Gold is Au.", "yes", "context says Au", "k1"),
        ("q01", "model-a", "faithfulness", "verdicts", 1, "It comes from Latin.", "no", "not stated", "k1"),
    ], [ok], False))
    writer.put_cell(CellWrite(run_id, ("q01", "model-b", "faithfulness", "faithfulness", None, None,
                                       "the judge timed out"), [], [timed_out], False))
    writer.put_cell(CellWrite(run_id, ("q02", "model-a", "faithfulness", "faithfulness", None, None,
                                       "the judge reply was not valid JSON"), [], [], False))
    writer.flush()
    db.set_run_status(run_id, "finished")
    data.refresh()
    return run_id, "q01"


def test_first_datum_in_full(sample_run):
    dataset_id, run_id = sample_run
    at = explore_page()
    no_exception(at)
    assert at.selectbox(key=EXPLORE_RUN).value == run_id
    first = store().datum(dataset_id, "q01")
    assert at.selectbox(key=EXPLORE_DATUM).value == "q01"
    assert headers(at) == ["Datum q01"]
    shown = [t.value for t in at.text]
    assert shown[0] == first[0].query
    assert [r.prediction for r in first] == shown[1:1 + len(first)]  # side by side, in model order
    assert list(first[0].references) + list(first[0].contexts) == shown[1 + len(first):]
    subheaders = [s.value.replace("\\", "") for s in at.subheader]
    assert subheaders[:3] == ["Predictions", "References", "Contexts, in order"]
    assert {f"Metric: {m}" for m in store().get_run(run_id)["metrics"]} <= set(subheaders)
    assert param(at, "run") == str(run_id) and param(at, "datum") == "q01"


def test_text_search_narrows_the_matches(sample_run):
    at = explore_page()
    at.text_input(key=EXPLORE_TEXT).input("chemical symbol for gold").run()
    no_exception(at)
    matches = frame_with(at, "datum_id")
    assert set(matches["datum_id"]) == {"q01"} and len(matches) == 2
    at.text_input(key=EXPLORE_TEXT).input("no such text anywhere").run()
    no_exception(at)
    assert frame_with(at, "datum_id").empty
    assert at.selectbox(key=EXPLORE_DATUM).options == ["q01 (outside the filters)"]  # the datum stays shown


def test_model_and_score_filters(sample_run):
    _, run_id = sample_run
    at = explore_page()
    at.multiselect(key=EXPLORE_MODELS).set_value(["model-b"]).run()
    assert set(frame_with(at, "datum_id")["model"]) == {"model-b"}
    at.selectbox(key=EXPLORE_SCORE).set_value("rouge1").run()
    low, high = at.slider(key=explore_range("rouge1")).value
    at.slider(key=explore_range("rouge1")).set_value((low, (low + high) / 2)).run()
    no_exception(at)
    matches = frame_with(at, "value")
    values = store().scores(run_id, models=["model-b"], scores=["rouge1"])["value"]
    assert len(matches) == int((values <= (low + high) / 2).sum()) > 0
    assert matches["value"].max() <= (low + high) / 2


def test_metadata_filter_keeps_one_value_and_lives_in_the_address(sample_run):
    dataset_id, _ = sample_run
    labels = {r.datum_id + "/" + r.model: r.metadata.get("human_label") for r in store().load_dataset(dataset_id).rows}
    wanted = {key for key, label in labels.items() if label == "incorrect"}
    at = explore_page()
    at.selectbox(key=EXPLORE_META).set_value("human_label").run()
    at.selectbox(key=EXPLORE_META_VALUE).set_value("incorrect").run()
    no_exception(at)
    matches = frame_with(at, "datum_id")
    assert {f"{d}/{m}" for d, m in zip(matches["datum_id"], matches["model"])} == wanted and 0 < len(wanted) < 92
    assert param(at, "meta") == "human_label" and param(at, "is") == "incorrect"
    assert f"{len(wanted)} matching rows" in all_text(at)
    at.selectbox(key=EXPLORE_META).set_value("(no metadata filter)").run()
    assert len(frame_with(at, "datum_id")) == 92


def test_metadata_filter_on_any_column_name(app_db):
    """A column named like a JSON path ('a.b', '$x', 'say "hi"') is one key, never a path; no match is empty."""
    from textgen_core.datasets import load_dataset
    from textgen_core.evaluate import evaluate

    payload = 'id,model,question,answer,a.b,$x,"say ""hi"""\nq1,m,Q?,A,1,x,yes\nq2,m,R?,B,2,y,no\n'.encode()
    db = store()
    run_id = evaluate(db, db.save_dataset(load_dataset(payload, file_name="odd.csv", name="odd")), ["lengths"],
                      workers=1)
    for column, value, expected in [("a.b", "2", ["q2"]), ("$x", "x", ["q1"]), ('say "hi"', "no", ["q2"]),
                                    ("a.b", "3", [])]:
        found = db.find_rows(run_id, metadata=(column, value))
        assert list(found["datum_id"]) == expected, (column, value)
        assert (found["n_matches"] == len(expected)).all()


def test_unscored_filter_and_reasons(judged_run):
    run_id, _ = judged_run
    at = explore_page()
    at.selectbox(key=EXPLORE_RUN).set_value(run_id).run()
    at.selectbox(key=EXPLORE_SCORE).set_value("faithfulness").run()
    at.checkbox(key=EXPLORE_UNSCORED).check().run()
    no_exception(at)
    matches = frame_with(at, "reason")  # rows without any stored cell are not "unscored"
    assert matches[["datum_id", "model", "reason"]].values.tolist() == [
        ["q01", "model-b", "the judge timed out"], ["q02", "model-a", "the judge reply was not valid JSON"]]
    at.selectbox(key=EXPLORE_DATUM).set_value("q02").run()
    scores = frame_with(at, "unscored reason")
    assert scores[["model", "unscored reason"]].values.tolist() == [["model-a", "the judge reply was not valid JSON"]]


def test_verdicts_and_the_raw_exchange(judged_run):
    run_id, datum_id = judged_run
    at = deep_link(run_id, datum_id)
    no_exception(at)
    assert at.selectbox(key=EXPLORE_RUN).value == run_id and headers(at) == [f"Datum {datum_id}"]
    verdicts = frame_with(at, "verdict")
    assert verdicts[["item", "text", "verdict", "reason"]].values.tolist() == [  # items numbered from 1
        [1, "Gold is Au.", "yes", "context says Au"], [2, "It comes from Latin.", "no", "not stated"]]
    assert "." not in "".join(verdicts["step"])  # step names in words, not dotted identifiers
    answered, timed_out = [e for e in at.expander if "judge was asked" in e.label]  # one per model tab, collapsed
    assert "call 1" in answered.label and "unscored" in timed_out.label
    assert [c.value for c in answered.code] == ["You are a careful judge.", PROMPT, REPLY]
    assert [t.value for t in answered.text] == []  # no reason shown for a scored exchange
    assert [t.value for t in timed_out.text] == ["the judge timed out"]
    assert [c.value for c in timed_out.code] == ["Judge q01 for model-b", "(no reply)"]
    scores = frame_with(at, "unscored reason")
    assert scores[["model", "value", "unscored reason"]].values.tolist() == [  # no 'None' cell: '' and the reason
        ["model-a", "0.5000", ""], ["model-b", "", "the judge timed out"]]
    details = frame_with(at, "detail")  # the details as a table, not raw JSON
    assert details[["model", "detail", "value"]].values.tolist() == [["model-a", "Supported", "1"]]
    every = frame_with(at, "run")  # the datum's scores in every run of its dataset: the lexical run's too
    assert f"run {run_id} (this one)" in set(every["run"]) and "rouge1" in every.columns
    assert {"faithfulness", "rouge1"} <= set(every.columns)
    assert not any(m.proto.allow_html for m in at.markdown)  # dataset text and replies never reach HTML


def test_deep_link_to_a_datum_outside_the_filters(sample_run):
    _, run_id = sample_run
    at = deep_link(run_id, "q05")
    at.text_input(key=EXPLORE_TEXT).input("chemical symbol for gold").run()
    no_exception(at)
    assert at.selectbox(key=EXPLORE_DATUM).value == "q05"
    assert headers(at) == ["Datum q05"]
    at.selectbox(key=EXPLORE_DATUM).set_value("q01").run()
    assert headers(at) == ["Datum q01"] and param(at, "datum") == "q01"


def test_unknown_datum_and_any_score(sample_run):
    _, run_id = sample_run
    at = deep_link(run_id, "nope")
    no_exception(at)
    assert "no datum with that id" in all_text(at)
    assert at.selectbox(key=EXPLORE_SCORE).value == ANY_SCORE
