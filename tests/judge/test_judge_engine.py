"""The judge engine end to end: calls per datum, estimates, faults, cancel and resume, re-runs."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from judge_server import CHAT, Fault, JudgeServer, default_embed
from scripted_judge import ScriptedJudge, suite_rows
from textgen_core.judge.client import JudgeClient
from textgen_core.judge.engine import estimate, run_judge_metrics
from textgen_core.judge.metrics import SPECS
from textgen_core.llm.retry import FAST_POLICY
from textgen_core.metrics.endpoint.semantic_similarity import cosine
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.progress import Progress
from textgen_core.store import Store

LLM_SUITE = {s.name: {} for s in SPECS if s.group == "llm" and not s.plan.peers}  # pairwise: own tests
#: Chat calls per datum of LLM_SUITE on suite_rows (one reference, one opinion): the statements of the
#: prediction and of the reference, its claims and its opinions, then one verdict or rating per metric.
PER_DATUM = 4 + len(LLM_SUITE)


def new_run(store: Store, rows: list[Datum], metrics: dict) -> int:
    dataset_id = store.save_dataset(Dataset(f"ds{len(store.list_datasets())}", rows))
    return store.create_run(dataset_id, list(metrics), {}, {}, sorted({r.model for r in rows}))


def settings_for(server: JudgeServer, **overrides: Any) -> JudgeSettings:
    values = {"concurrency": 16, "timeout": 5.0, "retries": 4, **overrides}
    return JudgeSettings(base_url=server.url, model="judge", api_key="sk-test", **values)


def cells(store: Store, run_id: int) -> dict[tuple[str, str, str], tuple[float | None, str | None]]:
    frame = store.scores(run_id)
    return {(r.datum_id, r.model, r.metric): (None if r.value != r.value else r.value,
                                              r.reason if isinstance(r.reason, str) else None)
            for r in frame.itertuples()}


@pytest.fixture
def store(empty_db: Path) -> Iterator[Store]:
    db = Store(empty_db)
    yield db
    db.close()


def sent_twice(server: JudgeServer) -> list[str]:
    """Chat requests whose exact body (messages, response format) the server saw more than once."""
    seen = Counter(json.dumps([r.body.get("messages"), r.body.get("response_format")], sort_keys=True)
                   for r in server.recorded(CHAT))
    return [body[:120] for body, n in seen.items() if n > 1]


def test_no_identical_request_is_sent_twice_and_the_estimate_is_exact(store: Store) -> None:
    rows = suite_rows(12, models=("a", "b"))  # two models share each datum's reference and contexts
    with JudgeServer(responder=ScriptedJudge()) as server:
        settings = settings_for(server)
        before = estimate(rows, LLM_SUITE, settings, store)
        run_id = new_run(store, rows, LLM_SUITE)
        run_judge_metrics(store, run_id, rows, LLM_SUITE, settings)
        made = server.count(CHAT)
        assert sent_twice(server) == []  # calls per datum are measured by bench/judge.py
        # the two models' claims and opinions coincide, so their verdicts are asked once: the estimate,
        # which cannot know extractions in advance, brackets the calls
        assert before.calls - before.dependent <= made < before.calls and before.cached == 0
        assert before.prompt_tokens > 0 and before.completion_tokens > 0 and before.cost is None
        after = estimate(rows, LLM_SUITE, settings, store)
        assert (after.calls, after.cached) == (0, made)
        got = cells(store, run_id)
        assert len(got) == len(rows) * len(LLM_SUITE)
        assert all(value is not None for value, _ in got.values())
        run = store.get_run(run_id)
        assert run["judge_calls"] == made and run["prompt_tokens"] > 0


def test_estimate_prices_tokens_and_counts_shared_steps_once(store: Store) -> None:
    rows = suite_rows(3, models=("a", "b"))  # two models share each datum's reference and contexts
    with JudgeServer(responder=ScriptedJudge()) as server:
        settings = settings_for(server, price_prompt_per_million=1.0, price_completion_per_million=2.0)
        plan = estimate(rows, {"context_relevance": {}, "context_recall": {}, "answer_relevance": {}}, settings, None)
        # per datum: context_relevance 1 + reference statements 1 + context_recall 1 (shared by both models)
        # per row: prediction statements 1 + answer_relevance 1
        assert plan.calls == 3 * 3 + 6 * 2
        assert plan.cost == pytest.approx((plan.prompt_tokens * 1.0 + plan.completion_tokens * 2.0) / 1e6)
        run_id = new_run(store, rows, {"context_relevance": {}, "context_recall": {}, "answer_relevance": {}})
        run_judge_metrics(store, run_id, rows, {"context_relevance": {}, "context_recall": {}, "answer_relevance": {}},
                          settings)
        assert server.count(CHAT) == plan.calls


def test_estimate_after_a_partial_run_counts_only_what_is_left(store: Store) -> None:
    rows = suite_rows(10)
    with JudgeServer(responder=ScriptedJudge()) as server:
        settings = settings_for(server)
        first = {"answer_relevance": {}}  # extracts the prediction's statements
        run_judge_metrics(store, new_run(store, rows, first), rows, first, settings)
        spent = server.count(CHAT)
        plan = estimate(rows, LLM_SUITE, settings, store)
        assert plan.cached == spent
        run_judge_metrics(store, new_run(store, rows, LLM_SUITE), rows, LLM_SUITE, settings)
        assert server.count(CHAT) - spent == plan.calls == PER_DATUM * 10 - spent


FAULTS = (
    Fault.rate_limit(retry_after="0.01"), Fault.http(500), Fault.hang(1.0), Fault.malformed(),
    Fault.length(), Fault.reject_json_schema(),
)
#: Seven requests per datum: statements, relevance, faithfulness, grade, context relevance,
#: hallucination and one embeddings request.
DRILL = {m: {} for m in ("answer_relevance", "faithfulness", "qa_grade", "context_relevance", "hallucination",
                         "semantic_similarity")}


def test_fault_drill_every_cell_is_written_and_no_failure_becomes_a_number(store: Store) -> None:
    rows = suite_rows(60)  # ~600 requests at a 20% fault rate: each fault kind occurs ~20 times (200 rows once, then 100)
    with JudgeServer(responder=ScriptedJudge()) as clean:  # fault-free values; all datums share one shape
        clean_store = Store(":memory:")
        sample = rows[:2]
        run_judge_metrics(clean_store, new_run(clean_store, sample, DRILL), sample, DRILL, settings_for(clean))
        per_metric = {metric: value for (_, _, metric), (value, _) in cells(clean_store, 1).items()}
        clean_store.close()
    expected = {(r.datum_id, r.model, m): per_metric[m] for r in rows for m in DRILL}
    for r in rows:  # the similarity depends on the server's hash embeddings, not on the shape
        expected[r.datum_id, r.model, "semantic_similarity"] = cosine(default_embed(r.prediction),
                                                                      default_embed(r.references[0]))
    assert None not in expected.values()

    with JudgeServer(responder=ScriptedJudge(), fault_rate=0.2, fault_kinds=FAULTS, seed=7) as server:
        settings = settings_for(server, timeout=0.2, concurrency=16)
        client = JudgeClient(settings, None, retry_policy=FAST_POLICY)  # replies cached in memory: faster
        run_id = new_run(store, rows, DRILL)
        run_judge_metrics(store, run_id, rows, DRILL, settings, client=client)
        faults = Counter(r.fault for r in server.recorded(None) if r.fault)
    got = cells(store, run_id)
    assert set(got) == set(expected)  # no (datum, metric) cell is missing
    unscored = {k: reason for k, (value, reason) in got.items() if value is None}
    for key, (value, reason) in got.items():
        if value is None:
            assert reason, key
        else:
            assert value == pytest.approx(expected[key]), key  # a failure never becomes a number
    assert {"429", "500", "hang", "malformed", "length", "400"} <= set(faults)
    assert unscored, "a reply cut off at max_tokens is final, so some cells must be unscored"
    assert any("cut off" in reason for reason in unscored.values())
    assert len(unscored) < 0.25 * len(got)
    key = next(iter(unscored))  # an unscored cell can show what was sent
    failed = store.exchanges(run_id, key[0], key[1], key[2])
    assert not failed.empty and set(failed["status"]) == {"unscored"}


def test_cancel_then_resume_fills_every_cell_without_repeating_a_finished_exchange(store: Store) -> None:
    rows = suite_rows(30)
    cancel = threading.Event()
    judge = ScriptedJudge()

    def responder(request: dict) -> Any:
        if len(server.recorded(CHAT)) >= 120:
            cancel.set()
        return judge(request)

    with JudgeServer(responder=responder, latency=0.005) as server:
        settings = settings_for(server, concurrency=8)
        run_id = new_run(store, rows, LLM_SUITE)
        run_judge_metrics(store, run_id, rows, LLM_SUITE, settings, cancel=cancel)
        first = cells(store, run_id)
        total = len(rows) * len(LLM_SUITE)
        assert 0 < len(first) < total
        _assert_whole_cells(store, run_id, first)

        run_judge_metrics(store, run_id, rows, LLM_SUITE, settings, skip=store.finished_cells(run_id))
        final = cells(store, run_id)
        assert len(final) == total and all(value is not None for value, _ in final.values())
        answered = Counter(json.dumps(r.messages) for r in server.recorded(CHAT) if r.status == 200)
        assert max(answered.values()) == 1  # no exchange was paid for twice
        assert server.count(CHAT) == PER_DATUM * len(rows)

        # a finished run: resuming it, or running it again, makes no call at all
        run_judge_metrics(store, run_id, rows, LLM_SUITE, settings, skip=store.finished_cells(run_id))
        again = new_run(store, rows, LLM_SUITE)
        run_judge_metrics(store, again, rows, LLM_SUITE, settings)
        assert server.count(None) == PER_DATUM * len(rows)
        assert cells(store, again) == final


def _assert_whole_cells(store: Store, run_id: int, written: dict) -> None:
    """A written answer_relevance cell has all its verdicts: nothing is half-written."""
    for (datum_id, model, metric), (value, _) in written.items():
        if metric != "answer_relevance" or value is None:
            continue
        verdicts = store.verdicts(run_id, datum_id, model)
        judged = verdicts[(verdicts.metric == metric) & (verdicts.step == "answer_relevance")]
        extracted = verdicts[(verdicts.metric == metric) & (verdicts.step == "statements.prediction")]
        assert len(judged) == len(extracted) > 0


def test_progress_usage_and_bounded_concurrency(store: Store) -> None:
    rows = suite_rows(12)
    seen: list[Progress] = []
    with JudgeServer(responder=ScriptedJudge(), latency=0.02) as server:
        settings = settings_for(server, concurrency=3, price_prompt_per_million=2.0)
        run_id = new_run(store, rows, LLM_SUITE)
        run_judge_metrics(store, run_id, rows, LLM_SUITE, settings, progress=seen.append)
        assert server.peak <= 3
    assert seen[0].phase == "judge" and seen[0].done == 0
    last = seen[-1]
    assert (last.total, last.done, last.failed, last.in_flight) == (12 * len(LLM_SUITE), 12 * len(LLM_SUITE), 0, 0)
    assert last.prompt_tokens > 0
    run = store.get_run(run_id)
    assert run["judge_calls"] == PER_DATUM * 12 and run["cost"] == pytest.approx(run["prompt_tokens"] * 2.0 / 1e6)


def test_runs_from_inside_an_event_loop_and_skips_finished_cells(store: Store) -> None:
    rows = suite_rows(2)
    metrics = {"coherence": {}, "qa_grade": {}}
    with JudgeServer(responder=ScriptedJudge()) as server:
        settings = settings_for(server)
        run_id = new_run(store, rows, metrics)
        skip = {("d000", "m", "coherence")}

        async def host() -> None:  # e.g. a notebook or an async web server
            run_judge_metrics(store, run_id, rows, metrics, settings, skip=skip)

        asyncio.run(host())
        assert set(cells(store, run_id)) == {("d000", "m", "qa_grade"), ("d001", "m", "qa_grade"),
                                             ("d001", "m", "coherence")}
        assert server.count(CHAT) == 3


def test_a_bad_key_unscores_cells_with_the_reason_and_the_run_completes(store: Store) -> None:
    rows = suite_rows(5)
    with JudgeServer(responder=ScriptedJudge(), api_key="sk-right") as server:
        settings = settings_for(server)  # sends sk-test
        run_id = new_run(store, rows, LLM_SUITE)
        run_judge_metrics(store, run_id, rows, LLM_SUITE, settings)
        got = cells(store, run_id)
    assert len(got) == 5 * len(LLM_SUITE) and all(value is None for value, _ in got.values())
    assert all("sk-test" not in reason for _, reason in got.values())
    assert server.count(CHAT) <= PER_DATUM + 1  # known-fatal: later requests are not sent


def test_resume_replaces_the_failed_exchange_of_a_cell_it_scores_again(store: Store) -> None:
    rows = suite_rows(3)
    metrics = {"answer_relevance": {}, "coherence": {}}
    judge = ScriptedJudge(fail=[(lambda step, text: step == "answer_relevance", Fault.length())])
    with JudgeServer(responder=judge) as server:
        settings = settings_for(server)
        run_id = new_run(store, rows, metrics)
        run_judge_metrics(store, run_id, rows, metrics, settings)
        first = cells(store, run_id)
        assert all(value is None and "cut off" in reason
                   for (_, _, metric), (value, reason) in first.items() if metric == "answer_relevance")
        assert len(store.exchanges(run_id)) == 3
        judge.fail = []
        run_judge_metrics(store, run_id, rows, metrics, settings, skip=store.finished_cells(run_id))
        assert all(value is not None for value, _ in cells(store, run_id).values())
        assert store.exchanges(run_id).empty  # the failure is gone with the cell it explained
        verdicts = store.verdicts(run_id, "d000")
        assert set(verdicts[verdicts.metric == "answer_relevance"].step) == {"statements.prediction", "answer_relevance"}
        assert judge.steps["coherence"] == 3 and judge.steps["statements"] == 3  # nothing asked twice


def test_estimate_asks_the_database_only_about_keys_that_may_be_cached(store: Store) -> None:
    rows = suite_rows(20)
    with JudgeServer(responder=ScriptedJudge()) as server:
        settings = settings_for(server)
        done = rows[:4]
        run_judge_metrics(store, new_run(store, done, LLM_SUITE), done, LLM_SUITE, settings)
        queries: list[int] = []
        values = store.judge_cache_values
        store.judge_cache_values = lambda keys: queries.append(len(keys)) or values(keys)
        fresh = estimate(rows[4:], LLM_SUITE, settings, store)
        assert (fresh.calls, fresh.cached, queries) == (PER_DATUM * 16, 0, [])  # the key index proves every miss
        mixed = estimate(rows, LLM_SUITE, settings, store)
        assert (mixed.calls, mixed.cached) == (PER_DATUM * 16, PER_DATUM * 4)
        assert sum(queries) == PER_DATUM * 4 and len(queries) <= PER_DATUM  # cached keys only; a round per step, not per request


def test_estimate_brackets_the_calls_when_extractions_find_nothing(store: Store) -> None:
    rows = [replace_prediction(r, f"Topic{i} has {i} parts.") if i % 2 else r for i, r in enumerate(suite_rows(8))]
    metrics = {"bias": {}, "toxicity": {}, "faithfulness": {}}
    with JudgeServer(responder=ScriptedJudge()) as server:
        settings = settings_for(server)
        before = estimate(rows, metrics, settings, store)
        run_judge_metrics(store, new_run(store, rows, metrics), rows, metrics, settings)
        made = server.count(CHAT)
    assert before.dependent > 0
    assert before.calls - before.dependent <= made < before.calls  # rows without opinions skip their verdicts
    assert made == before.calls - 8  # the 4 rows without opinions skip their bias and toxicity verdicts


def replace_prediction(row: Datum, prediction: str) -> Datum:
    from dataclasses import replace

    return replace(row, prediction=prediction)
