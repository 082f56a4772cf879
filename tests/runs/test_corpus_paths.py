"""One corpus contract on every path: corpus BLEU (smoothing method7 reads the last row's statistics too), GLEU
and WER are sums of per-row statistics, and the whole-file run, a streamed run stopped half way and resumed (its
first chunks' statistics read back from the store) and the Ray engine give the same values to the bit; WER
equals jiwer's corpus WER on the scored rows."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import jiwer
import pandas as pd
import pytest

from textgen_core.catalog import save_or_reuse
from textgen_core.datasets import load_dataset
from textgen_core.evaluate import evaluate, resume
from textgen_core.metrics.corpus import CorpusSum, summed
from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.registry import get_metric
from textgen_core.progress import Progress
from textgen_core.store import Store
from textgen_core.streaming import stream_file

METRICS = ["bleu", "gleu", "wer"]
PARAMS = {"bleu": {"smoothing": "method7"}}
ROWS = 300


def _write(path: Path) -> tuple[Path, dict[str, list[tuple[str, str]]]]:
    pairs: dict[str, list[tuple[str, str]]] = {"m0": [], "m1": []}
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "prediction", "reference"])
        for i, (reference, prediction) in enumerate(synthetic_pairs(ROWS, seed=21, min_words=2, max_words=18)):
            model, kept = f"m{i % 2}", i % 13 != 0  # every 13th row has no reference: it adds nothing
            writer.writerow([f"d{i // 2}", model, prediction, reference if kept else ""])
            if kept:
                pairs[model].append((reference, prediction))
    return path, pairs


def _aggregates(store: Store, run_id: int) -> pd.DataFrame:
    return store.aggregates(run_id).drop(columns="details").sort_values(["score", "model"]).reset_index(drop=True)


def test_the_sum_contract_is_declared_and_adds_up_in_any_grouping() -> None:
    for name in METRICS:
        assert summed(get_metric(name)) is not None, name
    whole, first, second = CorpusSum(), CorpusSum(), CorpusSum()
    for i, stats in enumerate([(1, 4), None, (2, 5), (0, 3)]):
        whole.add(stats)
        (first if i < 2 else second).add(stats)
    first.extend(second)
    assert (first.total, first.rows, first.last) == (whole.total, whole.rows, whole.last) == ([3.0, 12.0], 3, (0.0, 3.0))


@pytest.mark.timeout(300)
def test_corpus_values_are_the_same_sum_on_the_whole_file_streamed_and_ray_paths(
        tmp_path: Path, empty_db: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    path, pairs = _write(tmp_path / "outputs.csv")
    local = Store(shutil.copyfile(empty_db, tmp_path / "local.duckdb"))
    dataset_id, _, _ = save_or_reuse(local, load_dataset(path), "outputs")
    expected = _aggregates(local, evaluate(local, dataset_id, METRICS, PARAMS, workers=1))
    assert set(expected["score"]) == set(METRICS) and len(expected) == 6
    for model, kept in pairs.items():  # the reference implementation, on the rows with a reference
        want = jiwer.wer([r for r, _ in kept], [p for _, p in kept])
        got = expected.loc[(expected["model"] == model) & (expected["score"] == "wer"), "value"].item()
        assert got == pytest.approx(want, abs=1e-12, rel=0)

    streamed = Store(shutil.copyfile(empty_db, tmp_path / "streamed.duckdb"))
    monkeypatch.setattr("textgen_core.streaming.run.ROWS_PER_WRITE", 80)

    def stop(progress: Progress) -> None:
        if progress.done >= 120:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stream_file(streamed, path, METRICS, PARAMS, chunk_rows=40, workers=2, progress=stop)
    # the stopped run's chunks were scored in a pool of 2 processes; the resume scores the rest in this one (a
    # second pool would only start 2 more interpreters): the stored chunks' statistics come back from their cells
    assert resume(streamed, 1, workers=1) == 1
    pd.testing.assert_frame_equal(_aggregates(streamed, 1), expected, check_exact=True)

    request.getfixturevalue("ray_cluster")  # here, so that the paths above run where Ray is not installed
    from textgen_core.engines.ray_engine import run_ray

    on_ray = Store(empty_db)
    run_id = run_ray(on_ray, str(path), METRICS, PARAMS, block_rows=50)
    pd.testing.assert_frame_equal(_aggregates(on_ray, run_id), expected, check_exact=True)
