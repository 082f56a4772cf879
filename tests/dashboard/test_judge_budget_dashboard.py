"""Spending cap and batch mode in the dashboard (AppTest): the settings reach the run, spend shows live."""

from __future__ import annotations

import time

import pytest

from app_helpers import all_text, no_exception, page, store, wait_for_jobs
from judge_server import CHAT, JudgeServer
from scripted_judge import ScriptedJudge
from textgen_core.datasets import load_dataset
from textgen_dashboard import data, state

ROWS = b"id,model,question,answer,contexts\n" + b"".join(
    f"q{i},a,Question {i}?,Topic {i} has {i} parts. I think it is great.,\"[\"\"Topic {i} has {i} parts.\"\"]\"\n"
    .encode() for i in range(6))


def fill_judge(at, server: JudgeServer, **scale: object):
    key = lambda name: state.judge_key("evaluate", name)  # noqa: E731
    at.checkbox(key=state.eval_metric("faithfulness")).check()
    at.checkbox(key=state.eval_metric("coherence")).check().run()
    at.text_input(key=key("base_url")).set_value(server.url)
    at.text_input(key=key("model")).set_value("judge")
    at.number_input(key=key("concurrency")).set_value(2)
    at.number_input(key=key("price_prompt_per_million")).set_value(2.0)
    at.number_input(key=key("price_completion_per_million")).set_value(8.0)
    for name, value in scale.items():
        widget = at.get_by_key(key(name))
        widget.check() if value is True else widget.set_value(value)
    return at.run()


def test_cap_from_the_form_stops_the_run_and_the_page_says_so(app_db) -> None:
    with JudgeServer(responder=ScriptedJudge(), latency=0.02) as server:
        store().save_dataset(load_dataset(ROWS, file_name="t.csv", name="topics"))
        at = fill_judge(page("views/evaluate.py").run(), server, max_calls=5)
        no_exception(at)
        at.button(key="evaluate.run").click().run()
        wait_for_jobs()
        at.run()
        no_exception(at)
        run_id = max(int(i) for i in store().list_runs()["run_id"])
        run = store().get_run(run_id)
        assert run["status"] == "interrupted" and "budget reached: 5 judge calls" in run["error"]
        assert server.count(CHAT) <= 5 and run["judge"]["max_calls"] == 5
        text = all_text(at)
        assert "stopped: budget reached" in text and "resume it from the Runs page" in text


def test_spend_shows_live_against_the_cap(app_db) -> None:
    with JudgeServer(responder=ScriptedJudge(), latency=0.3) as server:
        store().save_dataset(load_dataset(ROWS, file_name="t.csv", name="topics"))
        at = fill_judge(page("views/evaluate.py").run(), server, max_cost=1.0)
        at.button(key="evaluate.run").click().run()
        seen = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job = data.jobs().jobs()[-1]
            if not job.live:
                break
            at.run()
            text = "\n".join(bar.proto.text for bar in at.get("progress"))
            if "of the $1 cap" in text and "Spend $0.0000" not in text:
                seen = text
                break
            time.sleep(0.2)
        assert seen, "no live spend shown against the cap"
        server.latency = 0.0  # seen mid-run: the rest of the run need not be slow
        wait_for_jobs()
        spent = store().get_run(max(int(i) for i in store().list_runs()["run_id"]))["cost"]
        shown = float(seen.split("Spend $")[1].split(" ")[0])
        assert 0 < shown <= spent + 1e-9  # the spend shown was the run's, on its way to the total


def test_batch_checkbox_sends_everything_through_batches(app_db) -> None:
    with JudgeServer(responder=ScriptedJudge()) as server:
        # done at the first status check: the form sets no --batch-poll, so a batch still running then would
        # be checked again only after the default 5 s
        server.batches.delay = 0.0
        store().save_dataset(load_dataset(ROWS, file_name="t.csv", name="topics"))
        at = fill_judge(page("views/evaluate.py").run(), server, batch=True)
        at.button(key="evaluate.run").click().run()
        wait_for_jobs()
        run_id = max(int(i) for i in store().list_runs()["run_id"])
        run = store().get_run(run_id)
        assert run["status"] == "finished" and run["judge"]["batch"] is True
        assert server.count(CHAT) == 0 and len(server.batches.created) >= 1
        assert store().scores(run_id)["value"].notna().all()


def test_estimate_shows_direct_and_batch_cost(app_db) -> None:
    with JudgeServer(responder=ScriptedJudge()) as server:
        store().save_dataset(load_dataset(ROWS, file_name="t.csv", name="topics"))
        at = fill_judge(page("views/evaluate.py").run(), server)
        no_exception(at)
        shown = {m.label: m.value for m in at.metric}["Cost (est.)"]
        direct, batch = (float(x) for x in shown.split(" / "))
        assert direct > 0 and batch == pytest.approx(direct / 2, abs=1e-4)
        assert server.count(None) == 0


def test_response_mode_from_the_form(app_db) -> None:
    with JudgeServer(responder=ScriptedJudge()) as server:
        store().save_dataset(load_dataset(ROWS, file_name="t.csv", name="topics"))
        at = fill_judge(page("views/evaluate.py").run(), server, response_mode="text")
        at.button(key="evaluate.run").click().run()
        wait_for_jobs()
        run = store().get_run(max(int(i) for i in store().list_runs()["run_id"]))
        assert run["status"] == "finished" and run["judge"]["response_mode"] == "text"
        assert {r.response_format for r in server.recorded(CHAT)} == {None}  # plain text: no response_format
