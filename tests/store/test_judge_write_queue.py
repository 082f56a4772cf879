"""The judge's write queue belongs to the store (``Store.judge_writer``), and the judge asks a store only the
operations of its narrow interface (``judge/storage.py``), which the store and the Ray worker's store both serve."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from textgen_core.engines.ray_judge import _Collected
from textgen_core.judge.cache import CacheEntry
from textgen_core.judge.storage import JudgeStore, JudgeWrites
from textgen_core.store import Store

PACKAGE = Path(__file__).resolve().parents[2] / "textgen_core"


def _operations(protocol: type) -> set[str]:
    return {n for n, _ in inspect.getmembers(protocol) if not n.startswith("_")}


def test_store_and_ray_worker_serve_every_operation_of_the_interface(tmp_path: Path) -> None:
    store = Store(tmp_path / "q.duckdb")
    for served in (store, _Collected({})):
        assert all(hasattr(served, name) for name in _operations(JudgeStore)), type(served)
        assert all(callable(getattr(served.judge_writer, name)) for name in _operations(JudgeWrites))
    assert len(_operations(JudgeStore)) <= 10
    store.close()


def test_the_judge_asks_nothing_outside_the_interface() -> None:
    allowed = _operations(JudgeStore) | {"judge_batches", "judge_batch_add", "judge_batch_status"}  # batch log
    used = set()
    for path in (PACKAGE / "judge").rglob("*.py"):
        used |= set(re.findall(r"\bstore\.(\w+)", path.read_text(encoding="utf-8")))
    called = {name for name in used if name.startswith(("judge_", "write_", "add_run", "get_run", "session"))}
    assert called <= allowed, called - allowed


def test_one_queue_per_store_and_usage_lands_in_the_run(tmp_path: Path) -> None:
    from textgen_core.datasets import load_dataset

    store = Store(tmp_path / "q.duckdb")
    assert store.judge_writer is store.judge_writer
    dataset = store.save_dataset(load_dataset(b"id,model,prediction\nd1,a,x\n", file_name="t.csv", name="t"))
    run_id = store.create_run(dataset, ["coherence"], {}, {}, ["a"])
    store.judge_writer.put_usage(run_id, 3, 100, 20, 0.5)
    store.judge_writer.put_usage(run_id, 1, 10, 2, None)
    store.judge_writer.flush()
    run = Store(tmp_path / "q.duckdb", read_only=True).get_run(run_id)
    assert (run["judge_calls"], run["prompt_tokens"], run["completion_tokens"], run["cost"]) == (4, 110, 22, 0.5)
    store.close()


def test_a_ray_worker_reads_back_a_reply_it_put() -> None:
    worker = _Collected({})
    entry = CacheEntry("k1", "http://h/v1", "m", "p/1", {"messages": []}, '{"a": 1}', {"a": 1}, 3, 4)
    assert worker.judge_cache_surely_missing("k1")
    worker.judge_writer.put_cache(entry)
    assert CacheEntry(**worker.judge_cache_entries(["k1", "k2"])["k1"]) == entry
    assert worker.judge_cache_values(["k1"]) == {"k1": {"a": 1}} and worker.entries == [entry]
