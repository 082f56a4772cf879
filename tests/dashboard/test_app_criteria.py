"""Judge criteria page through AppTest: write, see the prompt, try on five rows (nothing stored), save, pick in
Evaluate, run, and edit into a new version."""

from __future__ import annotations

import json

from app_helpers import all_text, no_exception, page, store, wait_for_jobs
from judge_criteria_scripting import CriteriaJudge

from textgen_core.datasets import load_dataset
from textgen_dashboard import state

TICKETS = (b"id,model,question,answer\n"
           + b"".join(f"t{i},m,Where is my order?,{'Thanks. It is resolved. ' * (i % 3 + 1)}\n".encode()
                      for i in range(7)))
RUBRIC = '''name = "page_tone"
title = "Page tone"
criteria = "Is the reply warm?"
inputs = ["prediction"]
[output]
type = "rating"
min = 1
max = 5
levels = ["cold", "curt", "neutral", "friendly", "warm"]
'''


def _judge(at, url: str) -> None:
    at.text_input(key=state.judge_key("criteria", "base_url")).set_value(url)
    at.text_input(key=state.judge_key("criteria", "model")).set_value("judge-test")
    at.text_input(key=state.judge_key("criteria", "api_key")).set_value("sk-page")


def test_write_try_save_pick_and_edit(app_db, judge_server) -> None:
    judge_server.responder = CriteriaJudge(impolite=True)
    store().save_dataset(load_dataset(TICKETS, file_name="tickets.csv", name="tickets"))
    at = page("views/criteria.py").run()
    no_exception(at)
    at.text_area(key=state.CRITERIA_TEXT).set_value(RUBRIC).run()
    no_exception(at)
    shown = all_text(at) + "\n".join(t.value for t in at.text)
    assert "Is the reply warm?" in shown and "5: warm" in shown and "custom.page_tone/" in shown
    assert "~~~" in shown  # the sample row's data is fenced

    _judge(at, judge_server.url)
    at.run()
    at.button(key=state.CRITERIA_TRY).click().run()
    no_exception(at)
    _, table = at.session_state[state.CRITERIA_RESULT]
    assert len(table) == 5 and judge_server.count(None) >= 5
    # the rating is the number of sentences: "Thanks. It is resolved." repeated (i % 3 + 1) times
    assert list(table["value"]) == [min(5.0, 2.0 * (i % 3 + 1)) for i in range(5)]
    assert table["reason"].str.len().gt(0).all() and table["reply"].notna().all()
    assert store().list_runs().empty and store().criteria().empty  # the trial stored nothing
    assert judge_server.count(None) > 0

    at.button(key=state.CRITERIA_SAVE).click().run()
    no_exception(at)
    saved = store().criteria()
    assert list(saved["name"]) == ["page_tone"] and list(saved["version"]) == [1]
    assert "version 1" in all_text(at)

    evaluate = page("views/evaluate.py").run()
    no_exception(evaluate)
    evaluate.checkbox(key=state.eval_metric("page_tone")).check().run()
    for name, value in (("base_url", judge_server.url), ("model", "judge-test"), ("api_key", "sk-page")):
        evaluate.text_input(key=state.judge_key("evaluate", name)).set_value(value)
    evaluate.run()
    evaluate.button(key="evaluate.run").click().run()
    wait_for_jobs()
    runs = store().list_runs()
    run = store().get_run(int(runs["run_id"].max()))
    assert run["status"] == "finished", run["error"]
    scores = store().scores(int(run["run_id"]))
    assert len(scores) == 7 and scores["value"].notna().all()
    assert json.dumps(run["judge"]["fingerprint"]["criteria"]["page_tone"]).count("Is the reply warm?") == 1
    from textgen_dashboard.labeling import rubric_levels  # the Label page's buttons say each level in words

    assert rubric_levels(run, "page_tone") == {1.0: "cold", 2.0: "curt", 3.0: "neutral", 4.0: "friendly", 5.0: "warm"}
    assert rubric_levels(run, "other_score") == {} and rubric_levels({"judge": None}, "page_tone") == {}
    label = page("views/label.py")
    label.query_params["run"], label.query_params["annotator"] = str(run["run_id"]), "ana"
    label.run()
    no_exception(label)
    assert {"1 · cold", "5 · warm"} <= {b.label for b in label.button}

    at.text_area(key=state.CRITERIA_TEXT).set_value(RUBRIC.replace("Is the reply warm?", "Is it warm and brief?"))
    at.run()
    at.button(key=state.CRITERIA_SAVE).click().run()
    assert store().load_criterion("page_tone")[0] == 2
    assert store().load_criterion("page_tone", 1)[1]["criteria"] == "Is the reply warm?"  # the run's version stays


def test_a_malformed_definition_is_one_clear_message(app_db) -> None:
    at = page("views/criteria.py").run()
    at.text_area(key=state.CRITERIA_TEXT).set_value('name = "x"\n[output]\ntype = "yes_no"\n').run()
    no_exception(at)
    shown = [e.value.replace("\\", "") for e in at.error]  # shown literally: markdown characters escaped
    assert shown == ["judge metric definition in the editor: key 'criteria' is missing"]
    at.text_area(key=state.CRITERIA_TEXT).set_value('name = "x"\n[output').run()
    assert at.error[0].value.startswith("Not valid TOML")
