"""The runner: chunking, resuming, cancelling and failure handling on a real store."""

from __future__ import annotations

import importlib
import threading

import pytest

from textgen_core.errors import ParameterError
from textgen_core.evaluate import evaluate, resume
from textgen_core.model import Dataset, Datum
from textgen_core.progress import Progress
from textgen_core.store import Store

# The module, not the function textgen_core exports under the same name.
runner = importlib.import_module("textgen_core.runs.loop")


def _code_samples() -> Dataset:
    """Three problems, four samples each, for two models; model b passes fewer samples."""
    rows = []
    passed = {"a": {"p1": 4, "p2": 1, "p3": 0}, "b": {"p1": 1, "p2": 0, "p3": 0}}
    for model, by_problem in passed.items():
        for problem, n_pass in by_problem.items():
            for sample in range(4):
                rows.append(Datum(f"{problem}-{sample}", model, prediction=f"code {sample}",
                                  metadata={"problem": problem, "passed": str(sample < n_pass).lower()}))
    return Dataset("code", rows, metadata_columns=("problem", "passed"))


def test_grouped_pass_at_k_is_never_split_across_chunks(db_path, monkeypatch):
    monkeypatch.setattr(runner, "CHUNK_SIZE", 3)  # smaller than a problem's four samples
    store = Store(db_path)
    dataset_id = store.save_dataset(_code_samples())
    run_id = evaluate(store, dataset_id, ["pass_at_k"], {"pass_at_k": {"group_column": "problem", "k": "1,2"}},
                      workers=1)
    scores = store.scores(run_id, scores=["pass@1"])
    by_row = {(r.datum_id, r.model): r.value for r in scores.itertuples()}
    expected = {"p1": 1.0, "p2": 0.25, "p3": 0.0}
    for (datum_id, model), value in by_row.items():
        if model == "a":
            assert value == pytest.approx(expected[datum_id.split("-")[0]], abs=1e-12)
    corpus = store.aggregates(run_id).set_index(["model", "score"])["value"]
    assert corpus[("a", "pass@1")] == pytest.approx((1.0 + 0.25 + 0.0) / 3, abs=1e-12)
    assert corpus[("b", "pass@2")] == pytest.approx((1 - 3 / 6) / 3, abs=1e-12)  # p1: 1 - C(3,2)/C(4,2)


def _qa(n: int) -> Dataset:
    return Dataset("qa", [Datum(str(i), "m", f"q{i}", f"the answer is {i}", (f"answer {i}",)) for i in range(n)])


def test_progress_reports_every_chunk_and_cells_are_complete(db_path, monkeypatch):
    monkeypatch.setattr(runner, "CHUNK_SIZE", 10)
    store = Store(db_path)
    dataset_id = store.save_dataset(_qa(35))
    seen: list[Progress] = []
    run_id = evaluate(store, dataset_id, ["token_f1", "exact_match"], progress=seen.append, workers=1)
    lexical = [p for p in seen if p.phase == "lexical"]
    assert [p.done for p in lexical] == [10, 20, 30, 35] and lexical[-1].total == 35
    assert seen[-1].phase == "done"
    assert len(store.scores(run_id)) == 70
    assert store.get_run(run_id)["status"] == "finished"


def test_cancel_then_resume_fills_every_cell(db_path, monkeypatch):
    monkeypatch.setattr(runner, "CHUNK_SIZE", 10)
    store = Store(db_path)
    dataset_id = store.save_dataset(_qa(35))
    cancel = threading.Event()

    def stop_after_first(progress: Progress) -> None:
        if progress.phase == "lexical":
            cancel.set()

    run_id = evaluate(store, dataset_id, ["token_f1"], progress=stop_after_first, cancel=cancel, workers=1)
    assert store.get_run(run_id)["status"] == "cancelled"
    assert len(store.scores(run_id)) == 10
    resume(store, run_id, workers=1)
    assert store.get_run(run_id)["status"] == "finished"
    scores = store.scores(run_id)
    assert len(scores) == 35 and scores["value"].notna().all()


def test_unavailable_metric_is_refused_before_a_run_exists(db_path):
    store = Store(db_path)
    dataset_id = store.save_dataset(_qa(3))
    with pytest.raises(ParameterError, match="needs a contexts column"):
        evaluate(store, dataset_id, ["mrr"])
    with pytest.raises(ParameterError, match="needs a judge endpoint"):
        evaluate(store, dataset_id, ["answer_correctness"])
    assert store.list_runs().empty


def test_process_pool_matches_in_process(db_path, monkeypatch):
    monkeypatch.setattr(runner, "POOL_THRESHOLD", 10)
    monkeypatch.setattr(runner, "CHUNK_SIZE", 25)
    store = Store(db_path)
    dataset_id = store.save_dataset(_qa(60))
    pooled = evaluate(store, dataset_id, ["rouge", "bleu"], workers=2)
    inline = evaluate(store, dataset_id, ["rouge", "bleu"], workers=1)
    a = store.scores(pooled)[["datum_id", "score", "value"]].reset_index(drop=True)
    b = store.scores(inline)[["datum_id", "score", "value"]].reset_index(drop=True)
    assert a.equals(b)
    assert store.aggregates(pooled)["value"].tolist() == store.aggregates(inline)["value"].tolist()


def test_a_refused_key_fails_the_run_clearly_and_resume_with_the_right_key_fills_it(db_path):
    from judge_server import CHAT, JudgeServer
    from scripted_judge import ScriptedJudge, suite_rows

    from textgen_core.errors import TextgenError
    from textgen_core.judge.settings import JudgeSettings

    store = Store(db_path)
    dataset_id = store.save_dataset(Dataset("rag", suite_rows(4)))
    metrics = ["faithfulness", "coherence"]
    with JudgeServer(responder=ScriptedJudge(), api_key="sk-right") as server:
        wrong = JudgeSettings(base_url=server.url, model="judge", api_key="sk-wrong", timeout=5.0)
        with pytest.raises(TextgenError, match="refused") as failure:
            evaluate(store, dataset_id, metrics, judge=wrong)
        assert "sk-wrong" not in str(failure.value)
        run = store.list_runs().iloc[0]
        assert run["status"] == "failed" and "resume" in run["error"]
        unscored = store.scores(int(run["run_id"]))
        assert len(unscored) == 8 and unscored["value"].isna().all() and unscored["reason"].notna().all()
        refused_calls = server.count(CHAT)
        right = JudgeSettings(base_url=server.url, model="judge", api_key="sk-right", timeout=5.0)
        resume(store, int(run["run_id"]), judge=right)
        scores = store.scores(int(run["run_id"]))
        assert len(scores) == 8 and scores["value"].notna().all()
        assert store.get_run(int(run["run_id"]))["status"] == "finished"
        assert server.count(CHAT) > refused_calls


def test_a_script_without_a_main_guard_still_finishes_in_process(tmp_path):
    """Spawned pool workers re-run such a script and die; the runner scores the rest itself."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(
        "import importlib\n"
        "loop = importlib.import_module('textgen_core.runs.loop')\n"
        "from textgen_core import evaluate\n"
        "from textgen_core.model import Dataset, Datum\n"
        "from textgen_core.store import Store\n"
        "loop.POOL_THRESHOLD, loop.CHUNK_SIZE = 10, 10\n"
        f"store = Store({str(tmp_path / 'u.duckdb')!r})\n"
        "rows = [Datum(str(i), 'm', prediction=f'answer {i}', references=(f'answer {i}',)) for i in range(40)]\n"
        "run_id = evaluate(store, store.save_dataset(Dataset('u', rows)), ['exact_match'], workers=2)\n"
        "scores = store.scores(run_id)\n"
        "print('CELLS', len(scores), int(scores['value'].sum()), store.get_run(run_id)['status'])\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "CELLS 40 40 finished" in done.stdout
    assert "working on the remaining chunks in this process" in done.stderr
