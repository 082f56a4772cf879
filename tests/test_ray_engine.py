"""The Ray engine on a local 2-CPU cluster: the local engine's numbers to the bit, and resumable runs."""

from __future__ import annotations

import csv
import threading
from pathlib import Path

import pandas as pd
import pytest

from textgen_core.catalog import save_or_reuse
from textgen_core.datasets import load_dataset
from textgen_core.errors import InputError, ParameterError
from textgen_core.evaluate import evaluate, resume
from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.progress import Progress
from textgen_core.store import Store

ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra textgen-eval[ray]")
from textgen_core.engines.ray_engine import run_ray  # noqa: E402

METRICS = ["rouge", "bleu", "wer", "exact_match"]
ROWS = 300


@pytest.fixture(scope="module", autouse=True)
def cluster() -> object:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


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


def test_a_csv_on_ray_gives_the_local_engines_cells_bit_for_bit(tmp_path: Path, data: Path, local: tuple[Store, int]) -> None:
    store = Store(tmp_path / "ray.duckdb")
    run_id = run_ray(store, str(data), METRICS, block_rows=64)
    _same_as_local(store, run_id, local)
    dataset_id = store.get_run(run_id)["dataset_id"]
    assert store.load_dataset(dataset_id).rows == local[0].load_dataset(1).rows
    assert store.get_run(run_id)["models"] == ["m0", "m1"]
    again = run_ray(store, str(data), ["rouge"], block_rows=64)  # same rows: the stored dataset is reused
    assert store.get_run(again)["dataset_id"] == dataset_id and len(store.list_datasets()) == 1


def test_a_folder_of_parquet_files_and_jsonl_read_the_same(tmp_path: Path, data: Path, local: tuple[Store, int]) -> None:
    frame = pd.read_csv(data, dtype=str, keep_default_na=False)
    folder = tmp_path / "parts"
    folder.mkdir()
    frame.iloc[:140].to_parquet(folder / "part-0.parquet")
    frame.iloc[140:].to_parquet(folder / "part-1.parquet")
    store = Store(tmp_path / "ray.duckdb")
    _same_as_local(store, run_ray(store, str(folder), METRICS, block_rows=50), local)
    jsonl = tmp_path / "outputs.jsonl"
    frame.to_json(jsonl, orient="records", lines=True, force_ascii=False)
    _same_as_local(store, run_ray(store, str(jsonl), METRICS, block_rows=50), local)


def test_evaluate_with_engine_ray_scores_a_stored_dataset(tmp_path: Path, data: Path, local: tuple[Store, int]) -> None:
    store = Store(tmp_path / "ray.duckdb")
    dataset_id, _, _ = save_or_reuse(store, load_dataset(data), "outputs")
    _same_as_local(store, evaluate(store, dataset_id, METRICS, engine="ray"), local)


def test_a_cancelled_ray_run_resumes_and_skips_the_finished_blocks(tmp_path: Path, data: Path,
                                                                   local: tuple[Store, int]) -> None:
    store = Store(tmp_path / "ray.duckdb")
    cancel = threading.Event()

    def stop_after_two_blocks(p: Progress) -> None:
        if p.done >= 100:
            cancel.set()

    run_id = run_ray(store, str(data), METRICS, block_rows=50, progress=stop_after_two_blocks, cancel=cancel)
    assert store.get_run(run_id)["status"] == "cancelled"
    assert len(store.finished_blocks(run_id)) >= 2
    scored_before = len(store.wide_scores(run_id))
    assert 100 <= scored_before < ROWS
    seen: list[Progress] = []
    assert resume(store, run_id, progress=seen.append) == run_id
    assert seen[-1].phase == "done" and seen[-1].cached == scored_before  # those rows were not scored again
    _same_as_local(store, run_id, local)
    assert store.load_dataset(store.get_run(run_id)["dataset_id"]).rows == local[0].load_dataset(1).rows


def test_judge_metrics_and_bad_rows_are_refused_with_a_reason(tmp_path: Path, data: Path) -> None:
    store = Store(tmp_path / "ray.duckdb")
    with pytest.raises(ParameterError, match="lexical metrics only; faithfulness"):
        run_ray(store, str(data), ["rouge", "faithfulness"])
    bad = tmp_path / "bad.csv"
    bad.write_text("id,model,prediction,reference\n1,a,x,y\n1,a,x,z\n", encoding="utf-8")
    with pytest.raises(InputError, match="each \\(datum id, model\\) pair must be unique") as error:
        run_ray(store, str(bad), ["rouge"])
    assert str(bad) in str(error.value)
    assert store.list_datasets().empty and store.list_runs().empty
