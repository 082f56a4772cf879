"""Evaluate page through AppTest: metric picker from MetricSpecs, parameters, judge settings, run."""

from __future__ import annotations

import pytest
from app_helpers import all_text, no_exception, page, store, wait_for_jobs

from textgen_core.datasets import load_dataset
from textgen_core.registry import all_metrics
from textgen_dashboard import state
from textgen_dashboard.words import name_words

NO_CONTEXTS = b"id,model,question,prediction,reference\nq1,a,Q?,yes,yes\nq2,a,R?,no,yes\n"


def _run_button(at):
    return at.button(key="evaluate.run")


def test_empty_database_points_to_upload(app_db):
    at = page("views/evaluate.py").run()
    no_exception(at)
    assert "No datasets yet" in all_text(at)


def test_every_declared_metric_is_offered_in_its_group(sample_run):
    at = page("views/evaluate.py").run()
    no_exception(at)
    labels = [c.label for c in at.checkbox]
    for name, spec in all_metrics().items():
        assert f"{spec.label} (`{name}`)" in labels
    headers = [h.value for h in at.subheader]
    assert headers[0].startswith("Lexical") and any(h.startswith("Judge") for h in headers)
    assert at.multiselect(key=state.EVAL_MODELS).value == ["model-a", "model-b"]


def test_unavailable_metrics_are_disabled_with_the_reason(app_db):
    store().save_dataset(load_dataset(NO_CONTEXTS, file_name="nc.csv", name="no contexts"))
    at = page("views/evaluate.py").run()
    no_exception(at)
    for name, spec in all_metrics().items():
        box = at.checkbox(key=state.eval_metric(name))
        assert box.disabled == ("contexts" in spec.needs), name
    assert "Unavailable: needs a contexts column" in all_text(at)


def test_parameter_inputs_come_from_the_declarations(sample_run):
    at = page("views/evaluate.py").run()
    lexical = [s for s in all_metrics().values() if s.group == "lexical"]
    for spec in lexical:
        at.checkbox(key=state.eval_metric(spec.name)).check()
    at.run()
    no_exception(at)
    for spec in lexical:
        for param in spec.params:
            widget = at.get_by_key(state.eval_param(spec.name, param.name))
            assert widget is not None, (spec.name, param.name)
            assert widget.label == name_words(param.name)  # words, not the identifier
            assert "_" not in widget.label, widget.label


def test_run_lexical_metrics_with_changed_parameters(sample_run):
    _, first_run = sample_run
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("rouge")).check().run()
    at.multiselect(key=state.eval_param("rouge", "rouge_types")).set_value(["rouge1"])
    at.checkbox(key=state.eval_param("rouge", "use_stemmer")).check()
    at.multiselect(key=state.EVAL_MODELS).set_value(["model-b"])
    at.run()
    assert not _run_button(at).disabled
    _run_button(at).click().run()
    no_exception(at)
    wait_for_jobs()
    at.run()
    no_exception(at)
    run_id = max(int(i) for i in store().list_runs()["run_id"])
    assert run_id != first_run
    run = store().get_run(run_id)
    assert run["status"] == "finished"
    assert run["params"] == {"rouge": {"rouge_types": ["rouge1"], "use_stemmer": True}}
    assert "use_stemmer:True" in run["signatures"]["rouge"]
    scores = store().scores(run_id)
    assert set(scores["score"]) == {"rouge1"} and set(scores["model"]) == {"model-b"}
    assert len(scores) == 46 and scores["value"].notna().all()
    assert any(f"Run {run_id} finished" in s.value for s in at.success)


def test_invalid_parameter_blocks_the_run(sample_run):
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("bleu")).check().run()
    at.text_input(key=state.eval_param("bleu", "weights")).set_value("0.5, abc").run()
    no_exception(at)
    assert "parameter bleu.weights: could not convert string to float: 'abc'" in all_text(at)
    assert _run_button(at).disabled


def test_judge_metric_needs_judge_settings(sample_run, monkeypatch):
    for name in ("TEXTGEN_EVAL_JUDGE_MODEL", "TEXTGEN_EVAL_JUDGE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("faithfulness")).check().run()
    no_exception(at)
    assert at.text_input(key=state.judge_key("evaluate", "api_key")).proto.type == 1  # password
    assert "set the judge model" in all_text(at)
    assert _run_button(at).disabled


def test_pass_at_k_without_its_columns_is_refused_before_the_run(sample_run):
    """The sample has no n/c columns: the column inputs fall back to (none), and the run is refused with the reason."""
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("pass_at_k")).check().run()
    no_exception(at)
    assert at.selectbox(key=state.eval_param("pass_at_k", "n_column")).value == ""  # shown as (none)
    text = all_text(at)
    assert "pass_at_k: parameter n_column names no column" in text
    assert "pass_at_k: parameter c_column names no column" in text
    assert _run_button(at).disabled


def test_pass_at_k_runs_once_its_columns_are_chosen(app_db):
    rows = b"id,model,prediction,tries,ok\nq1,a,x,5,2\nq2,a,y,4,0\n"
    store().save_dataset(load_dataset(rows, file_name="p.csv", name="samples"))
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("pass_at_k")).check().run()
    at.selectbox(key=state.eval_param("pass_at_k", "n_column")).set_value("tries")
    at.selectbox(key=state.eval_param("pass_at_k", "c_column")).set_value("ok").run()
    no_exception(at)
    assert not _run_button(at).disabled
    _run_button(at).click().run()
    wait_for_jobs()
    scores = store().scores(int(store().list_runs()["run_id"].max()))
    assert sorted(scores["value"]) == pytest.approx([0.0, 0.4], abs=1e-12)  # pass@1 = c / n


def test_unavailable_captions_sit_under_their_own_checkbox(app_db):
    """Each grid row is its own st.columns: one checkbox per cell, its caption right below it."""
    store().save_dataset(load_dataset(NO_CONTEXTS, file_name="nc.csv", name="no contexts"))
    at = page("views/evaluate.py").run()
    no_exception(at)
    cells = [c for c in at.columns if c.checkbox]
    assert cells
    for cell in cells:
        boxes = list(cell.checkbox)
        assert len(boxes) == 1
        captions = [c.value for c in cell.caption if c.value.startswith("Unavailable")]
        assert bool(captions) == boxes[0].disabled, boxes[0].label


def test_nothing_chosen_disables_run(sample_run):
    at = page("views/evaluate.py").run()
    assert _run_button(at).disabled
    assert "Choose at least one metric." in all_text(at)


@pytest.mark.parametrize("preselect", ["sample-qa"])
def test_upload_preselects_the_saved_dataset(sample_run, preselect):
    store().save_dataset(load_dataset(NO_CONTEXTS, file_name="nc.csv", name="other"))
    at = page("views/evaluate.py")
    at.session_state[state.EVAL_PRESELECT] = preselect
    at.run()
    assert at.selectbox(key=state.EVAL_DATASET).value == sample_run[0]


# -- an LLM metric through the loopback judge server ------------------------------
CONTEXTS = (b"id,model,question,answer,contexts\n"
            b"q1,a,Capital of France?,Paris is the capital.,\"[\"\"Paris is the capital of France.\"\"]\"\n"
            b"q2,a,Largest planet?,Jupiter.,\"[\"\"Jupiter is the largest planet.\"\"]\"\n")


def _leaks(at, secret: bytes) -> list[str]:
    """Elements (other than the password input) whose protobuf, as sent to the browser, holds ``secret``."""
    found = []
    stack = [at._tree]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        proto = getattr(node, "proto", None)
        if proto is not None and secret in proto.SerializeToString():
            found.append(f"{node.type}: {getattr(node, 'label', '')}")
    return found


def test_llm_metric_through_the_loopback_judge(app_db, judge_server):
    from judge_fixtures import TEST_API_KEY

    judge_server.api_key = TEST_API_KEY  # the server refuses requests without the typed key
    store().save_dataset(load_dataset(CONTEXTS, file_name="ctx.csv", name="with contexts"))
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("faithfulness")).check().run()
    at.text_input(key=state.judge_key("evaluate", "base_url")).set_value(judge_server.url)
    at.text_input(key=state.judge_key("evaluate", "model")).set_value("judge-test")
    at.text_input(key=state.judge_key("evaluate", "api_key")).set_value(TEST_API_KEY)
    at.number_input(key=state.judge_key("evaluate", "concurrency")).set_value(4)
    at.run()
    no_exception(at)
    estimate = {m.label: m.value for m in at.metric}
    low, _, high = estimate["Judge calls (estimate)"].partition("–")  # "2–4": claims extracted, then verdicts on them
    assert 0 < int(low) <= int(high or low) and estimate["From cache"] == "0"
    assert judge_server.count() == 0  # the estimate sends nothing
    _run_button(at).click().run()
    wait_for_jobs()
    at.run()
    no_exception(at)
    run_id = max(int(i) for i in store().list_runs()["run_id"])
    run = store().get_run(run_id)
    assert run["status"] == "finished", run["error"]
    assert run["judge"]["model"] == "judge-test" and "api_key" not in run["judge"]
    assert run["judge_calls"] == judge_server.count() > 0
    assert int(low) <= judge_server.count() <= int(high or low)
    # the three counts in words: the estimate's range (above), the cells the progress counts, the calls made
    finished = [m.value for m in at.success if "finished" in m.value]
    assert finished and f"Judge calls made: {judge_server.count()}" in finished[0], finished
    scores = store().scores(run_id)
    assert len(scores) == 2 and set(scores["metric"]) == {"faithfulness"}
    assert scores["value"].notna().all(), list(scores["reason"])
    assert not _leaks(at, TEST_API_KEY.encode())
    wal = app_db.with_name(app_db.name + ".wal")
    for path in (app_db, wal):
        if path.exists():
            assert TEST_API_KEY.encode() not in path.read_bytes()


def test_judge_key_from_the_environment_is_used_but_never_shown(app_db, judge_server, monkeypatch):
    secret = "sk-env-only-4242"
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", secret)
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_BASE_URL", judge_server.url)
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_MODEL", "judge-env")
    judge_server.api_key = secret
    store().save_dataset(load_dataset(CONTEXTS, file_name="ctx.csv", name="with contexts"))
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("hallucination")).check().run()
    no_exception(at)
    assert at.text_input(key=state.judge_key("evaluate", "model")).value == "judge-env"
    assert at.text_input(key=state.judge_key("evaluate", "api_key")).value == ""
    assert "Key: from the environment (TEXTGEN_EVAL_JUDGE_API_KEY)." in all_text(at)
    _run_button(at).click().run()
    wait_for_jobs()
    at.run()
    run_id = max(int(i) for i in store().list_runs()["run_id"])
    assert store().get_run(run_id)["status"] == "finished"
    assert judge_server.count() > 0 and store().scores(run_id)["value"].notna().all()
    assert not _leaks(at, secret.encode())


def test_judge_settings_from_streamlit_secrets(sample_run, monkeypatch):
    for name in ("TEXTGEN_EVAL_JUDGE_MODEL", "TEXTGEN_EVAL_JUDGE_BASE_URL", "TEXTGEN_EVAL_JUDGE_API_KEY",
                 "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    at = page("views/evaluate.py")
    at.secrets["TEXTGEN_EVAL_JUDGE_BASE_URL"] = "http://127.0.0.1:9/v1"
    at.secrets["TEXTGEN_EVAL_JUDGE_MODEL"] = "judge-from-secrets"
    at.secrets["TEXTGEN_EVAL_JUDGE_API_KEY"] = "sk-secret-777"
    at.run()
    at.checkbox(key=state.eval_metric("coherence")).check().run()
    no_exception(at)
    assert at.text_input(key=state.judge_key("evaluate", "base_url")).value == "http://127.0.0.1:9/v1"
    assert at.text_input(key=state.judge_key("evaluate", "model")).value == "judge-from-secrets"
    assert at.text_input(key=state.judge_key("evaluate", "api_key")).value == ""
    assert "Key: from secrets (TEXTGEN_EVAL_JUDGE_API_KEY)." in all_text(at)
    assert "sk-secret-777" not in all_text(at)


@pytest.mark.parametrize("metric", ["hallucination", "faithfulness", "answer_correctness"])
def test_every_judge_metric_gets_an_estimate(sample_run, judge_server, metric):
    """The estimate is cached by Streamlit (pickled): a metric whose first request holds a local function
    (hallucination's check) once showed 'No estimate' instead of its numbers."""
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric(metric)).check().run()
    at.text_input(key=state.judge_key("evaluate", "base_url")).set_value(judge_server.url)
    at.text_input(key=state.judge_key("evaluate", "model")).set_value("judge-test")
    at.run()
    no_exception(at)
    assert not [w.value for w in at.warning if "No estimate" in w.value]
    estimate = {m.label: m.value for m in at.metric}
    assert int(estimate["Judge calls (estimate)"].split("–")[-1].replace(",", "")) > 0
    assert judge_server.count() == 0
