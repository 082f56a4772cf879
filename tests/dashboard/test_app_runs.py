"""Runs page through AppTest: history, resume of an interrupted run, delete, formula-safe export."""

from __future__ import annotations

import io

import pandas as pd
from app_helpers import all_text, frame_with, no_exception, page, store, wait_for_jobs

from textgen_core.datasets import load_dataset
from textgen_core.evaluate import evaluate
from textgen_core.formatting import duration_text
from textgen_dashboard import data, state
from textgen_dashboard.home import sample_metrics
from textgen_dashboard.runs import INTERRUPTED

FORMULAS = b"id,prediction,reference\n=1+1,=HYPERLINK(\"http://x\"),a\n@cmd,b,b\n"


def test_history_shows_each_run(sample_run):
    _, run_id = sample_run
    at = page("views/runs.py").run()
    no_exception(at)
    table = frame_with(at, "run_id")
    row = table.iloc[0]
    assert int(row["run_id"]) == run_id
    assert row["dataset"] == "sample-qa"
    assert row["metrics"] == ", ".join(sample_metrics())
    assert row["status"] == "finished"
    assert row["duration"] == duration_text(store().get_run(run_id)["duration_s"]) and row["tokens"] == 0
    assert row["judge_model"] == "" and row["cost"] == ""  # not None / NaN
    assert len(row["created_at"]) == 19  # YYYY-MM-DD HH:MM:SS
    for column in ("params", "signatures", "judge_model", "cost", "judge_calls"):
        assert column in table.columns
    assert at.selectbox(key=state.RUNS_SELECTED).value == run_id
    assert "Resume" not in [b.label for b in at.button]  # a finished run has nothing to resume
    assert at.download_button[0].label == "Download CSV"


def test_resume_an_interrupted_run(sample_run):
    dataset_id, _ = sample_run
    db = store()
    # A run whose process died: registered as running, no thread works on it, no cells yet.
    run_id = db.create_run(dataset_id, ["rouge"], {"rouge": {}}, {"rouge": "rouge"}, ["model-a"])
    data.refresh()
    at = page("views/runs.py").run()
    no_exception(at)
    assert frame_with(at, "run_id").set_index("run_id").loc[run_id, "status"] == INTERRUPTED
    at.selectbox(key=state.RUNS_SELECTED).set_value(run_id).run()
    at.button(key="runs.resume").click().run()
    no_exception(at)
    wait_for_jobs()
    at.run()
    no_exception(at)
    assert db.get_run(run_id)["status"] == "finished"
    scores = db.scores(run_id)
    assert set(scores["model"]) == {"model-a"} and scores["value"].notna().all() and len(scores) > 0
    assert frame_with(at, "run_id").set_index("run_id").loc[run_id, "status"] == "finished"


def test_delete_a_run(sample_run):
    _, run_id = sample_run
    at = page("views/runs.py").run()
    at.checkbox(key=state.RUNS_CONFIRM_DELETE).check().run()
    at.button(key="runs.delete").click().run()
    no_exception(at)
    assert store().list_runs().empty
    assert store().scores(run_id).empty
    assert "No runs yet." in all_text(at)


def test_export_is_formula_safe_csv_and_parquet(app_db):
    db = store()
    dataset_id = db.save_dataset(load_dataset(FORMULAS, file_name="f.csv", name="formulas"))
    run_id = evaluate(db, dataset_id, ["bleu"], workers=1)
    data.refresh()
    at = page("views/runs.py").run()
    no_exception(at)
    at.radio(key=state.RUNS_EXPORT_FORMAT).set_value("parquet").run()
    assert at.download_button[0].label == "Download PARQUET"
    wide = pd.read_csv(io.BytesIO(data.export_bytes(run_id, "scores_wide", "csv")))
    assert list(wide["datum_id"]) == ["'=1+1", "'@cmd"]  # one key name in every export, as in the long scores
    assert list(wide["prediction"]) == ["'=HYPERLINK(\"http://x\")", "b"]  # what was scored, formula-safe too
    long = pd.read_csv(io.BytesIO(data.export_bytes(run_id, "scores_long", "csv")))
    assert set(long["datum_id"]) == {"'=1+1", "'@cmd"}
    parquet = pd.read_parquet(io.BytesIO(data.export_bytes(run_id, "scores_wide", "parquet")))
    assert list(parquet["datum_id"]) == ["=1+1", "@cmd"]  # Parquet keeps the values as they are
    assert parquet.columns.tolist()[:5] == ["datum_id", "model", "query", "prediction", "references"]
    assert [list(r) for r in parquet["references"]] == [["a"], ["b"]] and "bleu" in parquet.columns
    verdicts = pd.read_csv(io.BytesIO(data.export_bytes(run_id, "verdicts", "csv")))
    assert verdicts.empty and "verdict" in verdicts.columns


def test_cancel_on_evaluate_then_resume_on_runs(app_db, judge_server):
    """A judge run cancelled mid-way keeps its cells and is finished from the Runs page."""
    rows = "".join(f'q{i},a,Question {i}?,Answer {i}.,"[""Context {i}.""]"\n' for i in range(6))
    payload = ("id,model,question,answer,contexts\n" + rows).encode()
    store().save_dataset(load_dataset(payload, file_name="ctx.csv", name="six"))
    judge_server.latency = 0.25
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("faithfulness")).check().run()
    at.text_input(key=state.judge_key("evaluate", "base_url")).set_value(judge_server.url)
    at.text_input(key=state.judge_key("evaluate", "model")).set_value("judge-test")
    at.number_input(key=state.judge_key("evaluate", "concurrency")).set_value(1)
    at.run()
    at.button(key="evaluate.run").click().run()
    job = data.jobs().get(at.session_state[state.EVAL_JOB])
    assert job.live
    at.button(key=f"job.cancel.{job.job_id}").click().run()
    wait_for_jobs()
    run_id = job.run_id
    assert job.status == "cancelled" and store().get_run(run_id)["status"] == "cancelled"
    assert len(store().finished_cells(run_id)) < 6
    at.run()
    assert any("cancelled" in w.value for w in at.warning)

    runs = page("views/runs.py").run()
    no_exception(runs)
    assert frame_with(runs, "run_id").set_index("run_id").loc[run_id, "status"] == "cancelled"
    assert runs.text_input(key=state.judge_key("runs", "base_url")).value == judge_server.url
    assert runs.text_input(key=state.judge_key("runs", "model")).value == "judge-test"
    runs.number_input(key=state.judge_key("runs", "concurrency")).set_value(8).run()
    runs.button(key="runs.resume").click().run()
    wait_for_jobs()
    runs.run()
    no_exception(runs)
    assert store().get_run(run_id)["status"] == "finished"
    scores = store().scores(run_id)
    assert len(scores) == 6 and scores["value"].notna().all()


def test_the_wide_export_carries_texts_and_metadata_without_clobbering_a_score(app_db):
    """A metadata column named like a score keeps both: the score, and metadata.<name>."""
    from textgen_core.summary import scores_with_texts

    db = store()
    payload = b"id,model,question,answer,reference,bleu,topic\nq1,a,Q?,x y,x y,high,t1\nq1,b,Q?,z,x y,low,t1\n"
    run_id = evaluate(db, db.save_dataset(load_dataset(payload, file_name="m.csv", name="meta")), ["bleu"], workers=1)
    frame = scores_with_texts(db, run_id)
    assert frame.columns.tolist()[:7] == ["datum_id", "model", "query", "prediction", "references", "metadata.bleu",
                                          "topic"]
    assert frame["metadata.bleu"].tolist() == ["high", "low"] and frame["bleu"].dtype.kind == "f"
    assert frame["query"].tolist() == ["Q?", "Q?"] and frame["prediction"].tolist() == ["x y", "z"]


def test_name_tags_and_note_through_the_store_method_the_cli_uses(sample_run):
    from textgen_dashboard.pickers import run_label
    from textgen_dashboard.run_labels import NAME, NEW_TAGS, NOTE, TAGS, key

    _, run_id = sample_run
    at = page("views/runs.py").run()
    at.text_input(key=key(NAME, run_id)).set_value("week-48 candidate")
    at.text_input(key=key(NEW_TAGS, run_id)).set_value("prod, nightly prod")
    at.text_area(key=key(NOTE, run_id)).set_value("the judge was swapped this week")
    at.button(key="FormSubmitter:" + key(NAME, run_id) + ".form-Save name, tags and note").click().run()
    no_exception(at)
    labels = store().run_names.run_labels().set_index("run_id").loc[run_id]
    assert labels["name"] == "week-48 candidate" and list(labels["tags"]) == ["prod", "nightly"]
    assert labels["note"] == "the judge was swapped this week"
    assert any(f"Run {run_id}: named 'week-48 candidate'; tagged prod, nightly; note saved"
               in s.value.replace("\\", "") for s in at.success)  # markdown escapes
    row = frame_with(at, "run_id").iloc[0]
    assert (row["name"], row["tags"], row["note"]) == ("week-48 candidate", "prod, nightly",
                                                        "the judge was swapped this week")
    picker = at.selectbox(key=state.RUNS_SELECTED)
    assert picker.value == run_id  # the address still carries the id
    assert picker.format_func(run_id).startswith(f"#{run_id} · week-48 candidate · [prod, nightly] · sample-qa")
    assert run_label({"run_id": 2, "name": None, "tags": [], "dataset": "d", "status": "finished",
                      "metrics": ["bleu"]}) == "#2 · d · finished · bleu"
    # untick a tag, clear the name and the note: the same method removes them (the form's second revision)
    at.multiselect(key=key(TAGS, run_id, 1)).set_value(["nightly"])
    at.text_input(key=key(NAME, run_id, 1)).set_value("")
    at.text_area(key=key(NOTE, run_id, 1)).set_value("")
    at.button(key="FormSubmitter:" + key(NAME, run_id, 1) + ".form-Save name, tags and note").click().run()
    labels = store().run_names.run_labels().set_index("run_id").loc[run_id]
    assert pd.isna(labels["name"]) and list(labels["tags"]) == ["nightly"] and pd.isna(labels["note"])


def test_a_name_the_cli_refuses_is_refused_in_its_words(sample_run):
    from textgen_dashboard.run_labels import NAME, NEW_TAGS, key

    _, run_id = sample_run
    at = page("views/runs.py").run()
    submit = "FormSubmitter:" + key(NAME, run_id) + ".form-Save name, tags and note"
    for field, bad, words in ((NAME, "7", "cannot be a bare number"), (NAME, "a:b", "cannot hold ':'"),
                              (NEW_TAGS, "pro<d>", "use letters, digits")):
        at.text_input(key=key(NAME, run_id)).set_value("")
        at.text_input(key=key(field, run_id)).set_value(bad)
        at.button(key=submit).click().run()
        no_exception(at)
        assert any(words in e.value.replace("\\", "") for e in at.error), (bad, [e.value for e in at.error])
    labels = store().run_names.run_labels().set_index("run_id").loc[run_id]
    assert pd.isna(labels["name"]) and list(labels["tags"]) == []  # nothing half-stored
