"""The Ray engine on a local 2-CPU cluster: the local engine's numbers to the bit, and resumable runs."""

from __future__ import annotations

import csv
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable

from dataclasses import replace

import pandas as pd
import pytest
from judge_server import JudgeServer, prompt_text
from scripted_judge import ScriptedJudge, step_of

from textgen_core.catalog import save_or_reuse
from textgen_core.datasets import load_dataset
from textgen_core.errors import InputError, ParameterError
from textgen_core.evaluate import evaluate, resume
from textgen_core.judge.settings import JudgeSettings
from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.progress import Progress
from textgen_core.store import Store

ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra textgen-eval[ray]")
from textgen_core.engines.ray_engine import run_ray  # noqa: E402
from textgen_core.engines.ray_judge import LIMITERS, NAMESPACE, SharedLimiter, limiter_key  # noqa: E402

METRICS = ["rouge", "bleu", "wer", "exact_match"]
ROWS = 300


pytestmark = pytest.mark.usefixtures("ray_cluster")  # a local 2-CPU cluster per module (conftest)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ray") / "outputs.csv"
    pairs = synthetic_pairs(ROWS, seed=5, min_words=3, max_words=30)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "prediction", "reference", "note"])
        for i, (reference, prediction) in enumerate(pairs):
            # ids like 007 stay text; a row without reference is unscored; quoted cells span lines
            writer.writerow([f"{i // 2:03d}", f"m{i % 2}", prediction, reference if i % 23 else "", f"n,{i}\n"])
    return path


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory, data: Path) -> tuple[Store, int]:
    store = Store(tmp_path_factory.mktemp("local") / "local.duckdb")
    dataset_id, _, _ = save_or_reuse(store, load_dataset(data), "outputs")
    return store, evaluate(store, dataset_id, METRICS, workers=1)


def _same_as_local(store: Store, run_id: int, local: tuple[Store, int]) -> None:
    other, other_run = local
    pd.testing.assert_frame_equal(store.wide_scores(run_id), other.wide_scores(other_run))
    pd.testing.assert_frame_equal(store.aggregates(run_id), other.aggregates(other_run))
    assert store.get_run(run_id)["signatures"] == other.get_run(other_run)["signatures"]
    assert store.get_run(run_id)["status"] == "finished"


def test_a_csv_on_ray_gives_the_local_engines_cells_bit_for_bit(empty_db: Path, data: Path, local: tuple[Store, int]) -> None:
    store = Store(empty_db)
    run_id = run_ray(store, str(data), METRICS, block_rows=64)
    _same_as_local(store, run_id, local)
    dataset_id = store.get_run(run_id)["dataset_id"]
    assert store.load_dataset(dataset_id).rows == local[0].load_dataset(1).rows
    assert store.get_run(run_id)["models"] == ["m0", "m1"]
    again = run_ray(store, str(data), ["rouge"], block_rows=64)  # same rows: the stored dataset is reused
    assert store.get_run(again)["dataset_id"] == dataset_id and len(store.list_datasets()) == 1


def test_a_folder_of_parquet_files_and_jsonl_read_the_same(tmp_path: Path, empty_db: Path, data: Path,
                                                           local: tuple[Store, int]) -> None:
    frame = pd.read_csv(data, dtype=str, keep_default_na=False)
    folder = tmp_path / "parts"
    folder.mkdir()
    frame.iloc[:140].to_parquet(folder / "part-0.parquet")
    frame.iloc[140:].to_parquet(folder / "part-1.parquet")
    store = Store(empty_db)
    run_id = run_ray(store, str(folder), METRICS, block_rows=50)
    _same_as_local(store, run_id, local)
    assert len(store.finished_blocks(run_id)) == 6  # Parquet is cut in blocks of about 50 rows, as CSV is
    jsonl = tmp_path / "outputs.jsonl"
    frame.to_json(jsonl, orient="records", lines=True, force_ascii=False)
    _same_as_local(store, run_ray(store, str(jsonl), METRICS, block_rows=50), local)


def test_evaluate_with_engine_ray_scores_a_stored_dataset(empty_db: Path, data: Path, local: tuple[Store, int]) -> None:
    store = Store(empty_db)
    dataset_id, _, _ = save_or_reuse(store, load_dataset(data), "outputs")
    _same_as_local(store, evaluate(store, dataset_id, METRICS, engine="ray"), local)


def test_a_cancelled_ray_run_refuses_changed_data_then_resumes_and_skips_the_finished_blocks(
        tmp_path: Path, empty_db: Path, data: Path, local: tuple[Store, int]) -> None:
    """One cancelled run for two promises (they were two tests, each cancelling a run of its own): a resume
    refuses a file whose content changed even when its size and time were put back, and once the file is as it
    was, the resume skips the stored blocks and gives the local engine's cells."""
    path = tmp_path / "outputs.csv"  # a copy: the module's file stays as the other tests read it
    path.write_bytes(data.read_bytes())
    store = Store(empty_db)
    cancel = threading.Event()

    def stop_after_two_blocks(p: Progress) -> None:
        if p.done >= 100:
            cancel.set()

    run_id = run_ray(store, str(path), METRICS, block_rows=50, progress=stop_after_two_blocks, cancel=cancel)
    assert store.get_run(run_id)["status"] == "cancelled"
    assert len(store.finished_blocks(run_id)) >= 2
    scored_before = len(store.wide_scores(run_id))
    assert 100 <= scored_before < ROWS

    stat, original = path.stat(), path.read_bytes()
    last = original.rindex(b"149,m1,")  # the last row (ids are text: 149 -> 14x), in a block not stored yet
    edited = original[:last] + b"14x" + original[last + 3:]
    assert len(edited) == len(original) and edited != original
    path.write_bytes(edited)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    cells = store.scores(run_id)
    with pytest.raises(InputError, match=r"content differs.*nothing was resumed"):
        resume(store, run_id)
    assert store.get_run(run_id)["status"] == "cancelled" and len(store.scores(run_id)) == len(cells)

    path.write_bytes(original)  # put back as it was: the resume goes on
    seen: list[Progress] = []
    assert resume(store, run_id, progress=seen.append) == run_id
    assert seen[-1].phase == "done" and seen[-1].cached == scored_before  # those rows were not scored again
    _same_as_local(store, run_id, local)
    assert store.load_dataset(store.get_run(run_id)["dataset_id"]).rows == local[0].load_dataset(1).rows


def test_bad_rows_and_judge_settings_ray_cannot_share_are_refused_with_a_reason(tmp_path: Path, empty_db: Path,
                                                                               data: Path) -> None:
    store = Store(empty_db)
    with pytest.raises(ParameterError, match="judge metrics need a judge endpoint"):
        run_ray(store, str(data), ["rouge", "faithfulness"])
    settings = JudgeSettings(base_url="http://127.0.0.1:9/v1", model="judge")
    with pytest.raises(ParameterError, match="batch mode"):
        run_ray(store, str(data), ["faithfulness"], judge=replace(settings, batch=True))
    with pytest.raises(ParameterError, match="spending cap"):
        run_ray(store, str(data), ["faithfulness"], judge=replace(settings, max_calls=10))
    bad = tmp_path / "bad.csv"
    bad.write_text("id,model,prediction,reference\n1,a,x,y\n1,a,x,z\n", encoding="utf-8")
    with pytest.raises(InputError, match="each \\(datum id, model\\) pair must be unique") as error:
        run_ray(store, str(bad), ["rouge"])
    assert str(bad) in str(error.value)
    assert store.list_datasets().empty and store.list_runs().empty


# -- judge metrics on Ray -------------------------------------------------------------
JUDGED = ["rouge", "answer_correctness", "faithfulness", "qa_grade", "pairwise_preference"]
JUDGE_KEY = "sk-ray-secret-0123456789"


@pytest.fixture(scope="module")
def judged_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("judged") / "rag.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "query", "prediction", "reference", "contexts"])
        for i in range(24):
            fact = f"Station {i} opened in {1900 + i}. It serves line {i % 5}."
            for model, answer in (("base", f"Station {i} opened in {1900 + i}."),
                                  ("cand", f"Station {i} opened in {1950 + i}. It has {i} platforms.")):
                writer.writerow([f"q{i:02d}", model, f"When did station {i} open?", answer, fact, fact])
    return path


def _responder() -> Callable[[dict], Any]:
    """Our metrics' rules; a pairwise comparison prefers the answer whose year matches the reference."""
    scripted = ScriptedJudge()

    def reply(request: dict) -> Any:
        if step_of(request) != "pairwise_preference":
            return scripted(request)
        text = prompt_text(request)
        year = text.split("opened in ", 1)[1][:4]
        first = text.split("Answer A", 1)[1].split("Answer B", 1)[0]
        return {"reason": "The year decides.", "preferred": "A" if year in first else "B"}
    return reply


def _judge_settings(server: JudgeServer, **changes: object) -> JudgeSettings:
    return JudgeSettings(base_url=server.url, model="judge", api_key=JUDGE_KEY, concurrency=3, timeout=10.0,
                         **changes)


def _judge_tables(store: Store, run_id: int) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    cells = store.wide_scores(run_id)
    ids = sorted(set(cells["datum_id"]))
    return cells, [store.verdicts(run_id, datum_id).drop(columns=["cache_key"], errors="ignore") for datum_id in ids]


def test_judge_metrics_on_ray_equal_the_local_engine_under_one_shared_limit(tmp_path: Path, empty_db: Path,
                                                                            judged_data: Path) -> None:
    on_ray = threading.Event()  # the latency makes the Ray workers' requests overlap (the shared limit is checked
    # there); the local reference run only counts calls and keeps cells and verdicts, so it gets its replies at once
    with JudgeServer(responder=_responder(), latency=lambda _body: 0.03 if on_ray.is_set() else 0.0,
                     api_key=JUDGE_KEY, echo_key_in_errors=True) as server:
        local = Store(shutil.copyfile(empty_db, tmp_path / "local.duckdb"))
        dataset_id, _, _ = save_or_reuse(local, load_dataset(judged_data), "rag")
        local_run = evaluate(local, dataset_id, JUDGED, judge=_judge_settings(server), workers=1)
        local_calls = server.count(None)
        server.peak = 0
        on_ray.set()
        store = Store(empty_db)
        seen: list[Progress] = []
        run_id = run_ray(store, str(judged_data), JUDGED, judge=_judge_settings(server), block_rows=8,
                         progress=seen.append)
        ray_calls = server.count(None) - local_calls
        peak = server.peak
    run = store.get_run(run_id)
    assert run["status"] == "finished"
    assert ray_calls == local_calls and run["judge_calls"] == local.get_run(local_run)["judge_calls"]
    judging = [p for p in seen if p.phase == "judge"]  # the progress line counts the calls Ray's workers made
    assert [p.calls for p in judging] == sorted(p.calls for p in judging) and judging[-1].done == judging[-1].total
    assert (judging[-1].calls, judging[-1].prompt_tokens, judging[-1].completion_tokens) == (
        ray_calls, run["prompt_tokens"], run["completion_tokens"])
    assert peak <= 3  # every worker took its requests from the one limiter of this endpoint
    assert run["signatures"] == local.get_run(local_run)["signatures"]
    assert run["judge"]["fingerprint"] == local.get_run(local_run)["judge"]["fingerprint"]
    cells, verdicts = _judge_tables(store, run_id)
    local_cells, local_verdicts = _judge_tables(local, local_run)
    pd.testing.assert_frame_equal(cells, local_cells)
    assert cells["pairwise_preference"].notna().sum() == 24  # each candidate against the baseline, whole groups
    for mine, theirs in zip(verdicts, local_verdicts):
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), theirs.reset_index(drop=True))
    store.close()
    assert JUDGE_KEY.encode() not in empty_db.read_bytes()


def test_a_cancelled_judge_run_on_ray_resumes_without_asking_finished_cells_again(empty_db: Path,
                                                                                  judged_data: Path) -> None:
    with JudgeServer(responder=_responder(), latency=0.02, api_key=JUDGE_KEY) as server:
        store = Store(empty_db)
        cancel = threading.Event()

        def stop_after_a_block(p: Progress) -> None:
            if p.phase == "judge" and p.done > 0:
                cancel.set()

        metrics = ["faithfulness", "qa_grade"]
        run_id = run_ray(store, str(judged_data), metrics, judge=_judge_settings(server), block_rows=16,
                         progress=stop_after_a_block, cancel=cancel)
        assert store.get_run(run_id)["status"] == "cancelled"
        settings = _judge_settings(server)
        actor = ray.get_actor(LIMITERS, namespace=NAMESPACE)
        # the stopped tasks' permits went back to the limiter
        assert ray.get(actor.stats.remote(limiter_key(settings)))["out"] == 0
        kept = store.scores(run_id)
        finished = {d for d, cells in kept.groupby("datum_id") if len(cells) == 4 and cells["value"].notna().all()}
        assert 0 < len(finished) < 24  # a block is whole datums: all their cells, both models
        with pytest.raises(ParameterError, match="another judge"):
            resume(store, run_id, judge=replace(_judge_settings(server), model="other-judge"))
        asked = len(server.recorded(None))
        resume(store, run_id, judge=_judge_settings(server))
        again = [prompt_text(r.body) for r in server.recorded(None)[asked:]]
    assert store.get_run(run_id)["status"] == "finished"
    done = store.scores(run_id)
    assert len(done) == 96 and done["value"].notna().all()
    assert again and not [t for t in again for d in finished if f"Station {int(d[1:])} opened" in t]


def test_a_lease_nobody_hands_back_expires() -> None:
    """A worker that dies mid-request never releases its permit: the shared limiter takes it back."""
    actor = ray.remote(SharedLimiter).options(max_concurrency=100).remote(1, None, None, 0.5)
    ray.get(actor.acquire.remote(0, "dead-worker"))  # never released
    started = time.monotonic()
    lease = ray.get(actor.acquire.remote(0, "next-run"), timeout=10)  # waits for the expiry, not forever
    assert 0.4 < time.monotonic() - started < 5
    ray.get(actor.release.remote(lease.lease, 200, None, None))
    ray.get(actor.release.remote(lease.lease, 200, None, None))  # twice: the second is ignored
    assert ray.get(actor.stats.remote())["out"] == 0
