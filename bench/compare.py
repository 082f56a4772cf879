"""Time of a comparison and of a run summary, at the sizes a user meets.

    python bench/compare.py [--seed 0]

On seeded synthetic scores stored in a temporary DuckDB file, prints the CPU
seconds (``time.process_time``: the machine may be shared) of ``compare_models``
and ``run_summary`` for: 12 candidates x 9 scores over 30 datums (Monte Carlo
sign flips sized for a family of 108), the same over 1,000 datums (normal
approximation), and 1 candidate x 2 scores over 100,000 datums; with the test
each row used and how many 'better' verdicts a true difference of 0.03 (0.21
standard deviations of the paired differences) earned.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textgen_core.compare import compare_models  # noqa: E402
from textgen_core.model import Dataset, Datum  # noqa: E402
from textgen_core.store import Store  # noqa: E402
from textgen_core.summary import run_summary  # noqa: E402

CASES = ((30, 12, 9), (1_000, 12, 9), (100_000, 1, 2))


def build(path: Path, n: int, candidates: int, scores: int, rng: np.random.Generator) -> tuple[Store, int]:
    models = ["base", *(f"c{c:02d}" for c in range(candidates))]
    store = Store(path)
    rows = [Datum(f"d{i}", m, prediction="x") for i in range(n) for m in models]
    run_id = store.create_run(store.save_dataset(Dataset("bench", rows)), ["m"], {}, {}, models)
    cells = []
    for j in range(scores):
        base = rng.uniform(0.2, 0.6, n)
        for m in models:
            shift = 0.0 if m == "base" else 0.03
            values = np.clip(base + shift + rng.normal(0, 0.1, n), 0, 1)
            cells += [(f"d{i}", m, "m", f"s{j}", float(v), None, None) for i, v in enumerate(values)]
    store.write_cells(run_id, cells)
    return store, run_id


def timed(call):  # type: ignore[no-untyped-def]
    start = time.process_time()
    result = call()
    return result, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        for n, candidates, scores in CASES:
            store, run_id = build(Path(folder) / f"bench{n}.duckdb", n, candidates, scores, rng)
            directions = {f"s{j}": "higher" for j in range(scores)}
            frame, compare_s = timed(lambda: compare_models(store, run_id, "base", directions=directions))
            _, summary_s = timed(lambda: run_summary(store, run_id))
            tests = ", ".join(sorted(set(frame["test"])))
            better = int((frame["verdict"] == "better").sum())
            print(f"{n:>7,} datums, {len(frame):>3} comparisons: compare_models {compare_s:6.2f} s "
                  f"({compare_s / len(frame) * 1000:6.1f} ms each), run_summary {summary_s:5.2f} s; "
                  f"{better}/{len(frame)} better; {tests}")


if __name__ == "__main__":
    main()
