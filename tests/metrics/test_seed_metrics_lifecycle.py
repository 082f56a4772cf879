"""The new local metrics in the run lifecycle: classification streams in chunks with the whole-file numbers;
LSA (fitted on the run's texts) and IDF BERTScore need every row, so they are not streamed and Ray refuses them;
a resumed LSA run fits on all rows again and gives the uninterrupted values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from textgen_core.catalog import save_or_reuse
from textgen_core.datasets import load_dataset
from textgen_core.engines.ray_engine import check_ray_metrics
from textgen_core.errors import ParameterError
from textgen_core.evaluate import evaluate, resume
from textgen_core.registry import get_metric, resolve_params
from textgen_core.run_rules import signature
from textgen_core.store import Store
from textgen_core.streaming import NotStreamable, stream_file


def _labels_csv(path, n=150):
    rng = np.random.default_rng(5)
    labels = ["a", "b", "c"]
    rows = []
    for i in range(n):
        gold = labels[rng.integers(3)]
        for model in ("m0", "m1"):
            pred = gold if rng.random() < 0.7 else labels[rng.integers(3)]
            rows.append({"id": f"q{i}", "model": model, "prediction": pred, "reference": gold})
    rows[3]["prediction"] = ""  # unscored, counted
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_classification_streams_with_the_whole_file_numbers(tmp_path):
    path = _labels_csv(tmp_path / "labels.csv")
    whole = Store(tmp_path / "whole.duckdb")
    dataset_id, _, _ = save_or_reuse(whole, load_dataset(path), "labels")
    whole_run = evaluate(whole, dataset_id, ["classification"], workers=1)
    store = Store(tmp_path / "streamed.duckdb")
    streamed = stream_file(store, path, ["classification"], chunk_rows=37, workers=1)
    pd.testing.assert_frame_equal(store.wide_scores(streamed.run_id), whole.wide_scores(whole_run))
    pd.testing.assert_frame_equal(store.aggregates(streamed.run_id), whole.aggregates(whole_run))
    assert not store.aggregates(streamed.run_id).empty


def test_metrics_that_fit_on_every_row_are_not_streamed_and_ray_refuses_them(tmp_path):
    path = _labels_csv(tmp_path / "labels.csv", 10)
    with pytest.raises(NotStreamable):
        stream_file(Store(tmp_path / "s.duckdb"), path, ["lsa"], chunk_rows=5, workers=1)
    with pytest.raises(ParameterError, match="lsa"):
        check_ray_metrics(["lsa"])
    check_ray_metrics(["classification"])  # chunk by chunk: fine on Ray


def test_a_resumed_lsa_run_equals_an_uninterrupted_one(tmp_path):
    words = "sun moon star rain wind snow river stone tree leaf bird fish cloud road city".split()
    rng = np.random.default_rng(1)
    rows = [{"id": f"d{i}", "model": "m", "prediction": " ".join(rng.choice(words, 5)),
             "reference": " ".join(rng.choice(words, 6))} for i in range(30)]
    path = tmp_path / "texts.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    store = Store(tmp_path / "r.duckdb")
    dataset_id, _, _ = save_or_reuse(store, load_dataset(path), "texts")
    params = {"lsa": {"n_components": 4}}
    full = evaluate(store, dataset_id, ["lsa"], params, workers=1)
    resolved = resolve_params(["lsa"], params)
    again = store.create_run(dataset_id, ["lsa"], resolved, {"lsa": signature(get_metric("lsa"), resolved["lsa"], None)},
                             ["m"], None)  # stopped before any cell was written
    store.set_run_status(again, "interrupted")
    assert store.wide_scores(again).empty
    resume(store, again, workers=1)
    a, b = store.wide_scores(full), store.wide_scores(again)
    assert a["lsa_similarity"].tolist() == b["lsa_similarity"].tolist()
