"""Files and runs the streaming, resume and store tests share: synthetic CSV and JSON Lines files, and a
streamed run stopped part-way."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.progress import Progress
from textgen_core.store import Store
from textgen_core.streaming import stream_file

#: The metrics of a stopped-then-resumed streamed run.
RESUMED_METRICS = ["rouge", "bleu", "wer"]


def write_csv(path: Path, rows: int, *, bad_row: int | None = None, duplicate_of: tuple[int, int] | None = None) -> Path:
    """A CSV of synthetic pairs, two models per datum; every 17th reference empty. ``bad_row`` loses its last
    column; ``duplicate_of`` = (row, later row) gives the later row the datum id of the first."""
    pairs = synthetic_pairs(rows, seed=3, min_words=3, max_words=25)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "prediction", "reference", "topic"])
        for i, (reference, prediction) in enumerate(pairs, 1):
            datum = f"d{(i - 1) // 2}"
            if duplicate_of and i == duplicate_of[1]:
                datum = f"d{(duplicate_of[0] - 1) // 2}"
            row = [datum, f"m{(i - 1) % 2}", prediction, reference if i % 17 else "", f"t{i % 3}"]
            writer.writerow(row[:-1] if i == bad_row else row)
    return path


def write_jsonl(path: Path, rows: int, *, bad_line: tuple[int, bytes] | None = None) -> Path:
    """A JSON Lines file as editors and exporters leave them: a byte-order mark, CRLF line ends, blank lines,
    ``{}`` lines, nested values, a key that first appears late, missing keys, NaN, U+2028 inside a string.
    ``bad_line``: (line number, bytes) put in place of that line."""
    lines: list[bytes] = []
    for i, (reference, prediction) in enumerate(synthetic_pairs(rows, seed=11, min_words=2, max_words=20)):
        row: dict = {"id": f"d{i // 2}", "model": f"m{i % 2}", "prediction": prediction,
                     "references": [reference, reference.upper()] if i % 5 else [reference]}
        if i % 4 == 0:
            row["info"] = {"tags": ["a", {"deep": [1, 2.5, None]}], "n": i}
        if i >= rows // 2:
            row["late"] = i % 3 == 0
        if i % 9 == 0:
            row["prediction"] += "\u2028second line"
        text = json.dumps(row, ensure_ascii=i % 2 == 0)
        if i % 13 == 0:
            text = text[:-1] + ', "score": NaN}'
        lines.append(text.encode("utf-8"))
        if i % 7 == 0:
            lines.append(b"   ")
        if i % 11 == 0:
            lines.append(b"{}")
    if bad_line is not None:
        lines[bad_line[0] - 1] = bad_line[1]
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n")
    return path


def same_run(store: Store, run_id: int, other: Store, other_run: int) -> None:
    """Every cell (value, details, reason) and corpus aggregate equal, to the bit."""
    pd.testing.assert_frame_equal(store.scores(run_id), other.scores(other_run), check_exact=True)
    pd.testing.assert_frame_equal(store.aggregates(run_id), other.aggregates(other_run), check_exact=True)
    first, second = store.get_run(run_id), other.get_run(other_run)
    assert (first["status"], first["models"]) == (second["status"], second["models"]) == ("finished", ["m0", "m1"])


def stopped_run(store: Store, path: Path, monkeypatch: pytest.MonkeyPatch, after_rows: int) -> int:
    """Stream ``path`` in chunks of 40 rows, each write holding two chunks; a stop arrives after ``after_rows``."""
    monkeypatch.setattr("textgen_core.streaming.run.ROWS_PER_WRITE", 80)

    def stop(progress: Progress) -> None:
        if progress.done >= after_rows:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stream_file(store, path, RESUMED_METRICS, chunk_rows=40, workers=1, progress=stop)
    (run_id,) = store.list_runs()["run_id"]
    assert store.get_run(run_id)["status"] == "interrupted"
    return int(run_id)
