"""The three judge call figures (issue 28, #33.4): the estimate, the progress total and the calls made agree
with what the loopback judge counted, and each says what it counts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judge_server import CHAT, Fault
from textgen_core.cli.main import main
from textgen_core.evaluate import evaluate
from textgen_core.judge import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.progress import Progress
from textgen_core.runs.calls import JudgeCalls, planned_calls
from textgen_core.store import Store

METRICS = {"faithfulness": {}, "qa_grade": {}}  # faithfulness: verdicts on extracted statements (a range)


def rows(n: int = 5) -> list[Datum]:
    return [Datum(f"q{i}", model, query=f"question {i} for {model}?", prediction=f"answer {i} by {model}.",
                  references=(f"reference {i}",), contexts=(f"context {i} says answer {i}.",))
            for i in range(n) for model in ("a", "b")]


def judged_progress(store: Store, dataset_id: int, settings: JudgeSettings) -> tuple[int, list[Progress]]:
    seen: list[Progress] = []
    run_id = evaluate(store, dataset_id, list(METRICS), judge=settings, progress=seen.append, workers=1)
    return run_id, [p for p in seen if p.phase == "judge"]


def test_made_equals_the_servers_count_and_progress_counts_the_planned_cells(tmp_path: Path, judge_server) -> None:
    settings = JudgeSettings(base_url=judge_server.url, model="judge-test", api_key="sk-test", timeout=5.0,
                             retries=3)
    store = Store(tmp_path / "c.duckdb")
    dataset_id = store.save_dataset(Dataset("calls", rows()))
    plan = planned_calls(rows(), METRICS, settings, store)
    assert plan.cells == 20 and plan.cached == 0 and plan.dependent > 0 and plan.low < plan.high
    judge_server.script(Fault.http(500), Fault.http(503))  # two attempts that fail and are sent again
    run_id, seen = judged_progress(store, dataset_id, settings)
    last = seen[-1]
    assert {p.total for p in seen} == {plan.cells}  # progress counts what the run planned
    assert last.done == plan.cells
    counted = judge_server.count(CHAT)
    assert last.calls == counted == store.get_run(run_id)["judge_calls"]  # made == what the endpoint saw
    assert last.retries == 2 and last.unanswered == 2 and last.cached == 0
    assert plan.low <= last.calls - last.retries <= plan.high  # first attempts fall inside the estimate's range
    made = plan.after(last)
    assert (made.made, made.retries, made.served) == (counted, 2, 0)
    assert made.lines()[-1] == f"judge calls made: {counted} (2 of them retries or re-asks)"

    # the same cells again in a new run: the cache answers every ask, nothing is a call
    again = planned_calls(rows(), METRICS, settings, store)
    assert (again.cells, again.known, again.dependent) == (20, 0, 0) and again.cached > 0
    run_id, seen = judged_progress(store, dataset_id, settings)
    assert judge_server.count(CHAT) == counted and seen[-1].calls == 0 == store.get_run(run_id)["judge_calls"]
    assert seen[-1].cached == again.cached and seen[-1].total == 20
    assert plan.after(seen[-1]).lines()[-1] == f"judge calls made: 0 ({again.cached} asks answered from the " \
                                               "cache, not calls)"


def test_the_command_line_prints_the_same_figures(tmp_path: Path, judge_server, capsys) -> None:
    source = tmp_path / "answers.csv"
    pd.DataFrame([{"id": r.datum_id, "model": r.model, "question": r.query, "answer": r.prediction,
                   "reference": r.references[0], "contexts": r.contexts[0]} for r in rows(3)]).to_csv(source,
                                                                                                    index=False)
    db = tmp_path / "cli.duckdb"
    flags = ["--metrics", "faithfulness,qa_grade", "--judge-base-url", judge_server.url, "--judge-model", "judge-test"]
    assert main(["--db", str(db), "run", str(source), *flags, "--dry-run", "--no-probe"]) == 0
    out = capsys.readouterr().out
    assert "judge cells: 12 to score (the progress counts cells" in out
    low, high = (int(x) for x in out.split("judge calls: ")[1].split(" to make")[0].split(" to "))
    judge_server.script(Fault.http(500))
    assert main(["--db", str(db), "run", str(source), *flags]) == 0
    captured = capsys.readouterr()
    counted = judge_server.count(CHAT)
    assert f"judge: {counted} calls, " in captured.out
    assert f"judge calls made: {counted} (1 of them retries or re-asks) for 12 judge cells" in captured.out
    assert "judge: 0/12 cells" in captured.err  # the progress line's total: the planned cells
    assert low <= counted - 1 <= high


def test_a_jury_adds_up_its_passes(tmp_path: Path, judge_server) -> None:
    from textgen_core.runs.panel import Jury

    settings = JudgeSettings(base_url=judge_server.url, model="judge-test", api_key="sk-test", timeout=5.0,
                             temperature=0.7)
    jury = Jury.of(settings, samples=3)
    store = Store(tmp_path / "j.duckdb")
    data = rows(2)
    dataset_id = store.save_dataset(Dataset("jury", data))
    plan = planned_calls(data, {"qa_grade": {}}, settings, store, jury=jury)
    assert plan.cells == 12 and plan.known == 12 and plan.dependent == 0
    seen: list[Progress] = []
    evaluate(store, dataset_id, ["qa_grade"], judge=settings, jury=jury, progress=seen.append, workers=1)
    last = [p for p in seen if p.phase == "judge"][-1]
    assert (last.total, last.done, last.calls) == (12, 12, judge_server.count(CHAT)) == (12, 12, plan.known)


@pytest.mark.parametrize("figures", [JudgeCalls(3, 3), JudgeCalls(10, 4, 6, 2)])
def test_the_lines_say_what_each_figure_counts(figures: JudgeCalls) -> None:
    lines = figures.lines()
    assert lines[0].startswith(f"judge cells: {figures.cells} to score")
    assert ("skipped when an extraction finds none" in lines[1]) == bool(figures.dependent)
    assert f"{figures.low} to {figures.high} to make" in lines[1] if figures.dependent else \
        f"judge calls: {figures.known} to make" in lines[1]
