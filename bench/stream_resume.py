"""Streamed runs of JSON Lines, and a stopped streamed run resumed: time and memory.

    python bench/stream_resume.py [--rows 200000] [--keep DIR]

Writes the seeded synthetic rows of bench/scale.py as CSV and as JSON Lines, then,
each in its own process as a user runs it (``--metrics rouge,bleu``):

1. the CSV streamed, and the JSON Lines file streamed: wall time, rows/s and peak
   resident memory of the process tree; beside them, the peak memory of only
   reading the JSON Lines file whole (what the CLI did before it streamed), and
   the time of the first pass that learns the JSON Lines columns;
2. the CSV run stopped with SIGTERM half way, then ``textgen-eval resume``: the
   cells kept, the resume's wall time, the total against the uninterrupted run,
   and whether the cells and corpus aggregates equal the uninterrupted run's.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scale import measure, write_csv  # noqa: E402

from textgen_core.store import Store  # noqa: E402
from textgen_core.streaming.read_jsonl import JsonLines  # noqa: E402

CLI = [sys.executable, "-m", "textgen_core.cli.main"]


def write_jsonl(source: Path, path: Path) -> None:
    """The CSV's rows as JSON Lines (references as a list), line by line."""
    with open(source, newline="", encoding="utf-8") as rows, open(path, "w", encoding="utf-8") as out:
        for row in csv.DictReader(rows):
            out.write(json.dumps({"id": row["id"], "model": row["model"], "prediction": row["prediction"],
                                  "references": [row["reference"]]}, ensure_ascii=False) + "\n")


def run(db: Path, data: Path) -> list[str]:
    return [*CLI, "--db", str(db), "run", str(data), "--metrics", "rouge,bleu"]


def stopped_then_resumed(folder: Path, data: Path, after: float) -> tuple[float, int, float]:
    """(seconds until SIGTERM, cells kept, resume seconds) of a run stopped ``after`` seconds in."""
    db = folder / "stopped.duckdb"
    process = subprocess.Popen(run(db, data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    time.sleep(after)
    os.killpg(process.pid, signal.SIGTERM)
    process.wait()
    kept = len(Store(db, read_only=True).scores(1))
    resumed, _, _ = measure([*CLI, "--db", str(db), "resume", "1"])
    return after, kept, resumed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--keep", help="write the files and databases here instead of a temporary folder")
    args = parser.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="textgen-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        source, lines = folder / "outputs.csv", folder / "outputs.jsonl"
        write_csv(source, args.rows)
        write_jsonl(source, lines)
        mb = lines.stat().st_size / 2**20
        print(f"{args.rows:,} rows; CSV {source.stat().st_size / 2**20:.0f} MB, JSON Lines {mb:.0f} MB")
        csv_s, csv_rss, _ = measure(run(folder / "csv.duckdb", source))
        jsonl_s, jsonl_rss, _ = measure(run(folder / "jsonl.duckdb", lines))
        whole_s, whole_rss, _ = measure([sys.executable, "-c", "import sys\nfrom textgen_core.datasets import "
                                         "load_dataset\nload_dataset(sys.argv[1])", str(lines)])
        started = time.monotonic()
        JsonLines(lines, lines.name)
        first_pass = time.monotonic() - started
        for label, seconds, rss in (("CSV streamed", csv_s, csv_rss), ("JSON Lines streamed", jsonl_s, jsonl_rss)):
            print(f"{label:<22} {seconds:6.1f} s  {args.rows / seconds:8,.0f} rows/s  peak RSS {rss / 2**30:.2f} GB")
        print(f"{'JSON Lines read whole':<22} {whole_s:6.1f} s  (read only, no scoring)  peak RSS "
              f"{whole_rss / 2**30:.2f} GB")
        print(f"JSON Lines first pass (columns): {first_pass:.1f} s = {first_pass / jsonl_s:.0%} of its run")
        after, kept, resumed = stopped_then_resumed(folder, source, csv_s / 2)
        total = len(Store(folder / "csv.duckdb", read_only=True).scores(1))
        print(f"stopped at {after:.1f} s with {kept:,} of {total:,} cells stored; resume {resumed:.1f} s; "
              f"stopped + resumed = {(after + resumed) / csv_s:.2f} x the uninterrupted run")
        same = Store(folder / "stopped.duckdb", read_only=True)
        full = Store(folder / "csv.duckdb", read_only=True)
        cells = same.scores(1).equals(full.scores(1))
        aggregates = same.aggregates(1).equals(full.aggregates(1))
        print(f"resumed run equals the uninterrupted one: cells {cells}, corpus aggregates {aggregates}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
