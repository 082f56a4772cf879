"""A judge panel run started from Evaluate (samples and members inputs) through the real engine and the loopback
judge, then read on Results (each member, alpha, split datums) and Explore (every vote and its reason)."""

from __future__ import annotations

from dataclasses import replace

import krippendorff
import numpy as np
import pytest
from app_helpers import all_text, frame_with, no_exception, page, store, wait_for_jobs

from judge_scripting import last_user_text
from textgen_core.datasets import load_dataset
from textgen_core.evaluate import evaluate
from textgen_core.runs.panel import Jury
from textgen_dashboard import data
from textgen_dashboard import state

#: judge-a grades "right" answers CORRECT; judge-b agrees except on answers marked "disputed", which it fails.
ANSWERS = {"q1": "right", "q2": "wrong", "q3": "right, disputed", "q4": "right", "q5": "wrong",
           "q6": "right, disputed", "q7": "wrong", "q8": "right"}
DATA = ("id,model,question,prediction,reference\n" + "".join(
    f'{d},a,Question {d}?,"{text}",right\n' for d, text in ANSWERS.items())).encode()


def grade(model: str, answer: str) -> str:
    correct = "right" in answer and not (model == "judge-b" and "disputed" in answer)
    return "CORRECT" if correct else "INCORRECT"


def responder(request: dict) -> dict:
    answer = last_user_text(request).rsplit("Answer", 1)[-1]
    return {"reason": f"{request['model']} read it", "grade": grade(request["model"], answer)}


@pytest.fixture()
def panel_from_evaluate(app_db, judge_server) -> int:
    judge_server.responder = responder
    store().save_dataset(load_dataset(DATA, file_name="panel.csv", name="panel"))
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("qa_grade")).check().run()
    at.text_input(key=state.judge_key("evaluate", "base_url")).set_value(judge_server.url)
    at.text_input(key=state.judge_key("evaluate", "model")).set_value("judge-a")
    at.text_input(key=state.judge_key("evaluate", "api_key")).set_value("sk-panel-test")
    at.text_input(key=state.EVAL_PANEL).set_value("judge-b")
    at.run()
    no_exception(at)
    estimate = {m.label: m.value for m in at.metric}
    assert estimate["Judge calls (estimate)"] == "16" and judge_server.count() == 0  # 8 rows x 2 members, nothing sent
    at.number_input(key=state.EVAL_SAMPLES).set_value(2).run()
    assert {m.label: m.value for m in at.metric}["Judge calls (estimate)"] == "32"  # x 2 samples
    assert "temperature 0" in all_text(at)  # every sample would be the same reply
    at.number_input(key=state.EVAL_SAMPLES).set_value(1).run()
    at.button(key="evaluate.run").click().run()
    wait_for_jobs()
    run_id = max(int(i) for i in store().list_runs()["run_id"])
    run = store().get_run(run_id)
    assert run["status"] == "finished", run["error"]
    assert judge_server.count() == 16
    return run_id


def test_a_panel_started_from_evaluate_shows_on_results_and_explore(panel_from_evaluate) -> None:
    run_id = panel_from_evaluate
    votes = store().votes_for_run(run_id)
    assert sorted(set(votes["judge"])) == ["judge-a", "judge-b"] and len(votes) == 16
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    no_exception(at)
    matrix = np.array([[1.0 if grade(m, text) == "CORRECT" else 0.0 for text in ANSWERS.values()]
                       for m in ("judge-a", "judge-b")])
    row = frame_with(at, "alpha").iloc[0]
    assert row["score"] == "qa_grade" and row["level"] == "nominal" and row["members"] == "judge-a, judge-b"
    assert row["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"),
                                         abs=1e-9)
    assert (row["paired"], row["split"]) == (8, 2)
    means = frame_with(at, "judge-b").set_index("model")
    assert means.loc["a", "judge-a"] == pytest.approx(5 / 8) and means.loc["a", "judge-b"] == pytest.approx(3 / 8)
    assert means.loc["a", "panel"] == pytest.approx(4 / 8)  # each cell the mean of its two votes
    split = frame_with(at, "spread")
    assert list(split["datum_id"]) == ["q3", "q6"] and list(split["judge-b"]) == ["0", "0"]
    unstable = frame_with(at, "unstable").iloc[0]
    assert (unstable["model"], unstable["unstable"], unstable["scored"]) == ("a", 2, 8)

    at.session_state[state.EXPLORE_RUN] = run_id
    at.session_state[state.EXPLORE_DATUM] = "q3"
    at = at.switch_page("views/explore.py").run()
    no_exception(at)
    shown = frame_with(at, "member")
    assert list(zip(shown["member"], shown["value"], shown["judge's reason"])) == [
        ("judge-a", "1", "judge-a read it"), ("judge-b", "0", "judge-b read it")]
    verdicts = frame_with(at, "verdict")
    assert {s.split(" | ")[-1] for s in verdicts["step"]} == {"judge judge-a, sample 0", "judge judge-b, sample 0"}


def test_a_repeated_run_shows_its_unstable_cells_and_every_sample(app_db, judge_server, judge_settings) -> None:
    """One judge asked 3 times: answers marked "shaky" are graded CORRECT, CORRECT, INCORRECT (by how often the
    same prompt was asked), the rest the same every time."""
    asked: dict[str, int] = {}

    def shaky(request: dict) -> dict:
        user = last_user_text(request)
        answer = user.rsplit("Answer", 1)[-1]
        k = asked[user] = asked.get(user, -1) + 1  # the samples of one datum are asked in turn
        correct = "right" in answer and not ("shaky" in answer and k % 3 == 2)
        return {"reason": f"try {k}", "grade": "CORRECT" if correct else "INCORRECT"}

    judge_server.responder = shaky
    text = ("id,model,question,prediction,reference\n" + "".join(
        f"{d},a,Question {d}?,{'right shaky' if d in ('q2', 'q5') else 'right'},right\n" for d in ANSWERS))
    db = store()
    dataset_id = db.save_dataset(load_dataset(text.encode(), file_name="shaky.csv", name="shaky"))
    judge = replace(judge_settings, temperature=0.7)
    run_id = evaluate(db, dataset_id, ["qa_grade"], judge=judge, jury=Jury.of(judge, samples=3), workers=1)
    assert judge_server.count() == 24
    data.refresh()
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    no_exception(at)
    assert "Repeated judging" in all_text(at) and not [e for e in at.dataframe if "alpha" in e.value.columns]
    unstable = frame_with(at, "unstable").iloc[0]
    assert (unstable["unstable"], unstable["scored"]) == (2, 8) and unstable["share"] == pytest.approx(0.25)
    summary = frame_with(at, "why").set_index("model")
    assert summary.loc["a", "mean"] == pytest.approx((6 + 2 * 2 / 3) / 8)  # q2, q5: 2 of 3 samples CORRECT
    at.session_state[state.EXPLORE_RUN] = run_id
    at.session_state[state.EXPLORE_DATUM] = "q2"
    at = at.switch_page("views/explore.py").run()
    votes = frame_with(at, "member")
    assert list(votes["sample"]) == [0, 1, 2] and list(votes["value"]) == ["1", "1", "0"]
    assert "Votes: 1 member x 3 samples" in all_text(at)
