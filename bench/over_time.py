"""History of 200 runs x 20 scores and a leaderboard of 500 models, each on a database of a million cells.

    python bench/over_time.py [--keep DIR] [--repeat 3]

Builds two seeded DuckDB files through the store's own write paths (a dataset saved as a version, runs created,
cells written, runs finished), then times, best of ``--repeat``:

1. ``textgen-eval history bench`` as the command runs it (in this process, output discarded): every finished run
   (200) x every score (20) of one model on 250 datums, with the change detector over all 3,980 tests;
2. ``textgen-eval leaderboard bench --score s`` over 500 models (5 runs of 100) x 2,000 datums, with 1,000
   bootstrap resamples for the rank intervals;
3. for each, a bare SQL read of the same cells (every value with its run, score or model and datum id) with
   DuckDB directly: the floor any reader pays. The ratio says what the statistics cost above it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textgen_core.catalog import store_version  # noqa: E402
from textgen_core.cli.main import main  # noqa: E402
from textgen_core.model import Dataset, Datum  # noqa: E402
from textgen_core.store import Store  # noqa: E402


def build(path: Path, runs: int, models_per_run: int, scores: int, datums: int, seed: int) -> int:
    """A dataset 'bench' and ``runs`` finished runs of ``models_per_run`` models each; returns the cells written."""
    rng = np.random.default_rng(seed)
    store = Store(path)
    model_names = [f"m{r:03d}_{k:03d}" if models_per_run > 1 else "prod" for r in range(runs)
                   for k in range(models_per_run)]
    rows = [Datum(f"d{i:05d}", "prod", f"question {i}", "answer", ("answer",)) for i in range(datums)]
    dataset_id = store_version(store, Dataset("bench", rows), "bench").dataset_id
    score_names = [f"s{k:02d}" for k in range(scores)] if scores > 1 else ["s"]
    difficulty = rng.beta(2, 2, size=datums)
    written = 0
    for r in range(runs):
        models = model_names[r * models_per_run:(r + 1) * models_per_run] if models_per_run > 1 else ["prod"]
        run_id = store.create_run(dataset_id, ["bench"], {"bench": {}}, {"bench": "bench|v1"}, models)
        cells = []
        for model in models:
            skill = rng.normal(0, 0.05)
            for score in score_names:
                values = np.clip(difficulty + skill + rng.normal(0, 0.12, datums), 0, 1)
                cells += [(f"d{i:05d}", model, "bench", score, float(v), None, None) for i, v in enumerate(values)]
        written += store.write_cells(run_id, cells)
        store.set_run_status(run_id, "finished")
    store.close()
    return written


def best(repeat: int, action) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def quiet_cli(*args: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(list(args)) == 0


def bare_read(path: Path, group: str) -> None:
    import duckdb

    with duckdb.connect(str(path), read_only=True) as con:
        con.execute(f"SELECT run_id, {group}, datum_id, value FROM scores WHERE value IS NOT NULL").fetchnumpy()


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="build the files in this folder and keep them")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reuse", action="store_true", help="with --keep: time the files built by an earlier run")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="over_time_bench_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        history_db, board_db = folder / "history.duckdb", folder / "leaderboard.duckdb"
        if not (args.reuse and history_db.is_file() and board_db.is_file()):
            for path in (history_db, board_db):
                path.unlink(missing_ok=True)
            start = time.perf_counter()
            cells = build(history_db, runs=200, models_per_run=1, scores=20, datums=250, seed=1)
            print(f"history file: {cells:,} cells in 200 runs x 20 scores, built in {time.perf_counter() - start:.0f} s")
            start = time.perf_counter()
            cells = build(board_db, runs=5, models_per_run=100, scores=1, datums=2000, seed=2)
            print(f"leaderboard file: {cells:,} cells of 500 models, built in {time.perf_counter() - start:.0f} s")
        for label, path, group, command in (
                ("history of 200 runs x 20 scores", history_db, "score", ["history", "bench"]),
                ("leaderboard of 500 models", board_db, "model", ["leaderboard", "bench", "--score", "s"])):
            shown = best(args.repeat, lambda: quiet_cli("--db", str(path), *command))
            floor = best(args.repeat, lambda: bare_read(path, group))
            print(f"{label}: {shown:.2f} s (textgen-eval {' '.join(command)}, in process); bare SQL read of the "
                  f"same cells {floor:.2f} s; ratio {shown / floor:.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main_bench()
