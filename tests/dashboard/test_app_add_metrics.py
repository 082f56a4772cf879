"""Runs page, "Add metrics" (textgen_dashboard/add_metrics.py) through AppTest: a lexical metric and a judge metric
added to finished runs in the background, the estimate before, the cache that makes a repeated ask free, and the
refusals that leave a run as it was (another judge, a metric the dataset cannot feed, a run still running)."""

from __future__ import annotations

from app_helpers import all_text, no_exception, page, store, wait_for_jobs

from textgen_core.datasets import load_dataset
from textgen_core.evaluate import evaluate
from textgen_core.judge.settings import JudgeSettings
from textgen_dashboard import data, state

CONTEXTS = (b'id,model,question,answer,reference,contexts\n'
            b'q1,a,Where is Paris?,Paris is in France.,France,"[""Paris is the capital of France.""]"\n'
            b'q2,a,Where is Rome?,Rome is in Spain.,Italy,"[""Rome is the capital of Italy.""]"\n')
NO_CONTEXTS = b"id,model,question,answer,reference\nq1,a,Q?,yes,yes\nq2,a,R?,no,yes\n"


def _of(scores, metric: str):
    return scores[scores["metric"] == metric].sort_values(["datum_id", "model"])


def _runs_page(run_id: int):
    at = page("views/runs.py").run()
    at.selectbox(key=state.RUNS_SELECTED).set_value(run_id).run()
    no_exception(at)
    return at


def _judge(at, url: str, model: str = "judge-test") -> None:
    at.text_input(key=state.judge_key("runs-add", "base_url")).set_value(url)
    at.text_input(key=state.judge_key("runs-add", "model")).set_value(model)
    at.run()


def _add(at) -> None:
    at.button(key=state.RUNS_ADD_GO).click().run()
    wait_for_jobs()
    at.run()
    no_exception(at)


def test_add_a_lexical_metric_to_a_finished_run(sample_run):
    dataset_id, run_id = sample_run
    before = store().scores(run_id)
    at = _runs_page(run_id)
    assert "rouge" not in at.multiselect(key=state.RUNS_ADD_METRICS).options[0]  # the run's own are not offered
    at.multiselect(key=state.RUNS_ADD_METRICS).set_value(["wer"]).run()
    assert not at.button(key=state.RUNS_ADD_GO).disabled
    _add(at)
    run = store().get_run(run_id)
    assert run["status"] == "finished" and run["metrics"][-1] == "wer"
    after = store().scores(run_id)
    added = after[after["metric"] == "wer"]
    assert len(added) == len(store().load_dataset(dataset_id).rows) == 92 and added["value"].notna().all()
    kept = after[after["metric"] != "wer"].sort_values(["datum_id", "model", "score"]).reset_index(drop=True)
    assert kept.equals(before.sort_values(["datum_id", "model", "score"]).reset_index(drop=True))
    assert any(f"Run {run_id} finished" in s.value for s in at.success)
    assert f"See the results of run {run_id}" in all_text(at)  # the link (a caption outside the app's navigation)


def test_add_a_judge_metric_estimated_first_then_free_from_the_cache(app_db, judge_server):
    db = store()
    dataset_id = db.save_dataset(load_dataset(CONTEXTS, file_name="ctx.csv", name="ctx"))
    first, second = (evaluate(db, dataset_id, ["bleu"], workers=1) for _ in range(2))
    data.refresh()
    at = _runs_page(first)
    at.multiselect(key=state.RUNS_ADD_METRICS).set_value(["qa_grade"]).run()
    assert at.button(key=state.RUNS_ADD_GO).disabled  # a judge metric waits for the judge
    _judge(at, judge_server.url)
    estimate = {m.label: m.value for m in at.metric}
    assert estimate["Judge calls (estimate)"] == "2" and estimate["From cache"] == "0"
    assert judge_server.count() == 0  # the estimate sends nothing
    _add(at)
    assert db.get_run(first)["metrics"] == ["bleu", "qa_grade"] and db.get_run(first)["status"] == "finished"
    assert judge_server.count() == 2 and _of(db.scores(first), "qa_grade")["value"].notna().all()
    made = [m.value for m in at.success if f"Run {first} finished" in m.value]
    assert made and "Judge calls made: 2" in made[0], made
    assert db.get_run(first)["judge"]["model"] == "judge-test"

    # the same question on another run of the same rows: estimated as cached, and not sent again
    again = _runs_page(second)
    again.multiselect(key=state.RUNS_ADD_METRICS).set_value(["qa_grade"]).run()
    _judge(again, judge_server.url)
    estimate = {m.label: m.value for m in again.metric}
    assert estimate["Judge calls (estimate)"] == "0" and estimate["From cache"] == "2"
    _add(again)
    assert judge_server.count() == 2
    made = [m.value for m in again.success if f"Run {second} finished" in m.value]
    assert made and "Judge calls made: 0" in made[0], made  # every answer came from the cache
    assert _of(db.scores(second), "qa_grade")["value"].tolist() == _of(db.scores(first), "qa_grade")["value"].tolist()


def test_another_judge_is_refused_and_the_run_is_as_it_was(app_db, judge_server):
    db = store()
    dataset_id = db.save_dataset(load_dataset(CONTEXTS, file_name="ctx.csv", name="ctx"))
    judge = JudgeSettings(base_url=judge_server.url, model="judge-a")
    run_id = evaluate(db, dataset_id, ["qa_grade"], judge=judge, workers=1)
    before, calls = db.get_run(run_id), judge_server.count()
    data.refresh()
    at = _runs_page(run_id)
    at.multiselect(key=state.RUNS_ADD_METRICS).set_value(["faithfulness"]).run()
    assert at.text_input(key=state.judge_key("runs-add", "model")).value == "judge-a"  # the run's judge, filled in
    _judge(at, judge_server.url, model="judge-b")
    _add(at)
    refused = [e.value for e in at.error if e.value.startswith("Not started")]
    assert refused and "another judge" in refused[0] and "judge-b" in refused[0].replace("\\", ""), refused
    assert not any("failed" in e.value for e in at.error)
    after = db.get_run(run_id)
    assert after["metrics"] == before["metrics"] and after["status"] == "finished"
    assert judge_server.count() == calls and _of(db.scores(run_id), "faithfulness").empty


def test_a_metric_the_dataset_cannot_feed_says_why_and_cannot_start(app_db):
    db = store()
    run_id = evaluate(db, db.save_dataset(load_dataset(NO_CONTEXTS, file_name="n.csv", name="n")), ["bleu"],
                      workers=1)
    data.refresh()
    at = _runs_page(run_id)
    at.multiselect(key=state.RUNS_ADD_METRICS).set_value(["faithfulness"]).run()
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("cannot run on this dataset" in e and "contexts" in e for e in errors), errors
    assert at.button(key=state.RUNS_ADD_GO).disabled
    assert store().get_run(run_id)["metrics"] == ["bleu"]


def test_a_run_that_is_not_finished_offers_resume_not_add(sample_run):
    dataset_id, _ = sample_run
    run_id = store().create_run(dataset_id, ["rouge"], {"rouge": {}}, {"rouge": "rouge"}, ["model-a"])
    data.refresh()
    at = _runs_page(run_id)
    assert "runs.resume" in [b.key for b in at.button]
    assert state.RUNS_ADD_GO not in [b.key for b in at.button]
    assert not [m for m in at.multiselect if m.key == state.RUNS_ADD_METRICS]
