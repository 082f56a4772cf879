"""Classification on the Ray engine (2-CPU local cluster): the local engine's cells, aggregates and report."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from textgen_core.catalog import save_or_reuse
from textgen_core.compare.classification import classification_reports
from textgen_core.datasets import load_dataset
from textgen_core.evaluate import evaluate
from textgen_core.store import Store

ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra textgen-eval[ray]")
from textgen_core.engines.ray_engine import run_ray  # noqa: E402


pytestmark = pytest.mark.usefixtures("ray_cluster")  # a local 2-CPU cluster per module (conftest)


@pytest.mark.timeout(600)
def test_classification_on_ray_equals_the_local_engine(tmp_path, empty_db):
    rng = np.random.default_rng(9)
    labels = ["x", "y", "z"]
    rows = []
    for i in range(200):
        gold = labels[rng.integers(3)]
        for model in ("m0", "m1"):
            rows.append({"id": f"q{i}", "model": model, "reference": gold,
                         "prediction": gold if rng.random() < 0.6 else labels[rng.integers(3)]})
    path = tmp_path / "labels.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    local = Store(shutil.copyfile(empty_db, tmp_path / "local.duckdb"))
    dataset_id, _, _ = save_or_reuse(local, load_dataset(path), "labels")
    local_run = evaluate(local, dataset_id, ["classification"], workers=1)
    store = Store(empty_db)
    run_id = run_ray(store, str(path), ["classification"], block_rows=64)
    pd.testing.assert_frame_equal(store.wide_scores(run_id), local.wide_scores(local_run))
    pd.testing.assert_frame_equal(store.aggregates(run_id), local.aggregates(local_run))
    assert classification_reports(store, run_id) == classification_reports(local, local_run)
