"""The Ray engine under hostile files: a duplicate (id, model) in a late block is a named error that stores
nothing. (A resume that refuses a file whose content changed even when its size and time were put back is held
in tests/engines/test_ray_engine.py, on the cancelled run that test makes anyway.)"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from textgen_core.errors import InputError
from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.store import Store

ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra textgen-eval[ray]")
from textgen_core.engines.ray_engine import run_ray  # noqa: E402

ROWS = 400


pytestmark = pytest.mark.usefixtures("ray_cluster")  # a local 2-CPU cluster per module (conftest)


def _write(path: Path, duplicate_at: int | None = None) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "prediction", "reference"])
        for i, (reference, prediction) in enumerate(synthetic_pairs(ROWS, seed=8, min_words=3, max_words=20), 1):
            datum = f"d{(3 - 1) // 2}" if i == duplicate_at else f"d{(i - 1) // 2}"
            writer.writerow([datum, f"m{(i - 1) % 2}", prediction, reference])
    return path


def test_a_duplicate_in_a_late_block_names_file_rows_and_column_and_stores_nothing(tmp_path: Path,
                                                                                  empty_db: Path) -> None:
    path = _write(tmp_path / "late.csv", duplicate_at=391)  # the same (d1, m0) as row 3, eight blocks later
    store = Store(empty_db)
    with pytest.raises(InputError) as refused:
        run_ray(store, str(path), ["rouge", "bleu"], block_rows=50)
    message = str(refused.value)
    assert "late.csv" in message and "column 'id'" in message and "'d1'" in message, message
    assert "rows 3 and 391" in message, message
    assert store.list_datasets().empty and store.list_runs().empty and store.scores(1).empty
