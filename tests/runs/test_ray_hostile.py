"""The Ray engine under hostile files: a duplicate (id, model) in a late block is a named error that stores
nothing, and a resume refuses a file whose content changed even when its size and time were put back."""

from __future__ import annotations

import csv
import os
import threading
from pathlib import Path

import pytest

from textgen_core.errors import InputError
from textgen_core.evaluate import resume
from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.progress import Progress
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


def test_a_ray_resume_refuses_an_edit_whose_size_and_time_were_put_back(tmp_path: Path, empty_db: Path) -> None:
    path = _write(tmp_path / "outputs.csv")
    store = Store(empty_db)
    cancel = threading.Event()

    def stop_early(p: Progress) -> None:
        if p.done >= 100:
            cancel.set()

    run_id = run_ray(store, str(path), ["rouge"], block_rows=50, progress=stop_early,
                     cancel=cancel)
    assert store.get_run(run_id)["status"] == "cancelled"
    stat = path.stat()
    data = path.read_bytes()
    last = data.rindex(b"\n", 0, len(data) - 1) + 1  # the last row: in a block not stored yet
    edited = data[:last] + data[last:].replace(b"d199", b"d19x", 1)
    assert len(edited) == len(data) and edited != data
    path.write_bytes(edited)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    cells = store.scores(run_id)
    with pytest.raises(InputError, match=r"content differs.*nothing was resumed"):
        resume(store, run_id)
    assert store.get_run(run_id)["status"] == "cancelled" and len(store.scores(run_id)) == len(cells)
    path.write_bytes(data)  # put back as it was: the resume goes on
    assert resume(store, run_id) == run_id and store.get_run(run_id)["status"] == "finished"
    assert len(store.scores(run_id)) == ROWS * 4  # rouge1, rouge2, rougeL, rougeLsum
