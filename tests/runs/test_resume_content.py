"""A streamed run's resume trusts the file's content, not its size and time: an edit whose modification time was
put back is refused, a touched or identically rewritten file resumes. A file that grows while it is read (a
half-written last CSV line, a JSON Lines key the first pass never saw) is a named error that stores nothing."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

from textgen_core.errors import InputError
from textgen_core.evaluate import resume
from textgen_core.progress import Progress
from textgen_core.store import Store
from textgen_core.streaming import stream_file
from streamed_files import RESUMED_METRICS as METRICS, same_run, stopped_run, write_csv, write_jsonl


def _edit_middle_keeping_time(path: Path) -> None:
    """Swap two letters of a row in the middle of the file, size and modification time as they were."""
    stat = path.stat()
    data = bytearray(path.read_bytes())
    middle = data.index(b"\n", len(data) // 2) + 1
    row_end = data.index(b"\n", middle)
    line = data[middle:row_end]
    start = line.index(b",", line.index(b",") + 1) + 1  # the prediction
    line[start:start + 2] = bytes(reversed(line[start:start + 2])) if line[start] != line[start + 1] else b"zz"
    data[middle:row_end] = line
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)


def test_an_edit_with_its_time_put_back_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_csv(tmp_path / "outputs.csv", 3000)
    assert path.stat().st_size > 3 * 65536  # the edit is in neither the first nor the last 64 KiB
    store = Store(tmp_path / "s.duckdb")
    run_id = stopped_run(store, path, monkeypatch, after_rows=100)
    cells = store.scores(run_id)
    _edit_middle_keeping_time(path)
    with pytest.raises(InputError, match=r"content differ.*nothing was resumed"):
        resume(store, run_id, workers=1)
    assert store.get_run(run_id)["status"] == "interrupted"
    pd.testing.assert_frame_equal(store.scores(run_id), cells)


@pytest.mark.parametrize("change", ["touch", "identical-rewrite"])
def test_the_same_content_resumes_whatever_its_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    change: str) -> None:
    path = write_csv(tmp_path / "outputs.csv", 200)
    store = Store(tmp_path / "s.duckdb")
    run_id = stopped_run(store, path, monkeypatch, after_rows=100)
    if change == "touch":
        os.utime(path, ns=(time.time_ns(), path.stat().st_mtime_ns + 10**9))
    else:
        data = path.read_bytes()
        path.unlink()
        path.write_bytes(data)
    assert resume(store, run_id, workers=1) == run_id
    whole = Store(tmp_path / "whole.duckdb")
    same_run(store, run_id, whole, stream_file(whole, path, METRICS, workers=1).run_id)


def _grow_after_first_chunk(path: Path, extra: bytes):
    grown: list[bool] = []

    def progress(seen: Progress) -> None:
        if seen.done and not grown:
            with open(path, "ab") as handle:
                handle.write(extra)
            grown.append(True)
    return progress


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_a_file_growing_while_read_is_a_named_error_and_stores_nothing(tmp_path: Path, kind: str) -> None:
    if kind == "csv":
        path = write_csv(tmp_path / "outputs.csv", 3000)
        extra = b"d9999,m0,the prediction,the reference,to"  # a writer half way through its last field
    else:
        path = write_jsonl(tmp_path / "outputs.jsonl", 3000)
        extra = b'{"id": "d9999", "model": "m0", "prediction": "p", "references": ["r"], "late_key": 1}\n'
    store = Store(tmp_path / "s.duckdb")
    with pytest.raises(InputError) as refused:
        stream_file(store, path, METRICS, chunk_rows=40, workers=1, progress=_grow_after_first_chunk(path, extra))
    assert path.name in str(refused.value) and "changed while it was read" in str(refused.value)
    assert store.list_datasets().empty and store.list_runs().empty
