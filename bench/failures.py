"""Failure modes at scale: 100,000 failing verdicts grouped, stored, and read back as the page reads them.

    python bench/failures.py [--failing 100000] [--sample 4000] [--db /tmp/failures_bench.duckdb]

A qa_grade run of ``failing / 2`` datums x two models is written through the store (every cell INCORRECT, its
reason one of the five planted failure types of tests/planted_failures.py, each made distinct by the order
number it names, so no two of the 100,000 texts are equal). Then, timed:

- grouping: ``find_modes`` (read the failing verdicts, embed a seeded sample of ``--sample`` distinct reasons with
  the packaged all-MiniLM-L6-v2, PCA + HDBSCAN, every other reason handed to the nearest mode by its words,
  c-TF-IDF names, one write of modes and members), wall and CPU time; the targets are under 3 minutes on
  2 cores and under 2 GB of memory (peak resident size of this process, the model included);
- the page: what the "Failure modes" section computes from the store (``stored_modes``, each model's rates, the
  paired comparison with its Holm family, one mode's examples); the target is under 2 s.

The adjusted Rand index of the modes against the planted types is printed (scikit-learn).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def write_failing_run(store, failing: int, rng: np.random.Generator) -> tuple[int, dict[tuple[str, str], str]]:
    from planted_failures import TYPES, phrasings
    from textgen_core.judge.storage import CellWrite
    from textgen_core.model import Dataset, Datum

    n = failing // 2
    models = ("base", "cand")
    kinds = list(TYPES)
    rows = [Datum(f"d{i:06d}", m, query=f"q{i}", prediction=f"a{i}", references=("r",)) for i in range(n)
            for m in models]
    run_id = store.create_run(store.save_dataset(Dataset("bench-failures", rows)), ["qa_grade"], {}, {},
                              list(models))
    pools = {k: phrasings(k) for k in kinds}
    truth, cells = {}, []
    for i in range(n):
        for m in models:
            kind = kinds[int(rng.integers(len(kinds)))]
            pool = pools[kind]
            reason = f"{pool[int(rng.integers(len(pool)))]} (order {i}{m[0]})"
            truth[(f"d{i:06d}", m)] = kind
            cells.append(CellWrite(run_id, (f"d{i:06d}", m, "qa_grade", "qa_grade", 0.0, {"grade": "INCORRECT"}, None),
                                   [(f"d{i:06d}", m, "qa_grade", "qa_grade", 0, "answer", "INCORRECT", reason, None)],
                                   [], False))
        if len(cells) >= 20_000:
            store.judge.write_judge_batch([], cells)
            cells = []
    store.judge.write_judge_batch([], cells)
    store.set_run_status(run_id, "finished")
    return run_id, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--failing", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=None, help="distinct reasons embedded (default: the library's)")
    parser.add_argument("--db", default="/tmp/failures_bench.duckdb")
    args = parser.parse_args()

    from sklearn.metrics import adjusted_rand_score

    from textgen_core.failures import find_modes, stored_modes
    from textgen_core.failures.grouping import SAMPLE
    from textgen_core.store import Store

    for leftover in (Path(args.db), Path(args.db + ".wal")):
        leftover.unlink(missing_ok=True)
    store = Store(args.db)
    started = time.perf_counter()
    run_id, truth = write_failing_run(store, args.failing, np.random.default_rng(0))
    print(f"wrote {len(truth):,} failing verdicts in {time.perf_counter() - started:.1f} s (not counted)")

    wall, cpu = time.perf_counter(), time.process_time()
    modes = find_modes(store, run_id, seed=0, sample=args.sample or SAMPLE)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    members = modes.members
    ari = adjusted_rand_score([truth[(d, m)] for d, m in zip(members["datum_id"], members["model"])],
                              members["mode"])
    p = modes.params
    print(f"grouped {p['failing']:,} failing verdicts: {wall:.1f} s wall, {cpu:.1f} s CPU (all threads), peak "
          f"memory {peak_mb:,.0f} MB; {p['embedded']:,} distinct reasons embedded and clustered, {p['handed_off']:,} "
          f"handed to a mode by their words; {int((modes.modes['mode'] >= 0).sum())} modes, "
          f"{int(modes.modes.loc[modes.modes['mode'] < 0, 'size'].sum()):,} unsorted; ARI against the planted "
          f"types {ari:.3f}")
    for row in modes.modes.itertuples():
        print(f"  mode {row.mode}: {row.name} ({row.size:,})")

    reader = Store(args.db, read_only=True)
    best, best_cpu = float("inf"), float("inf")
    for _ in range(3):
        started, cpu_started = time.perf_counter(), time.process_time()
        again = stored_modes(reader, run_id)
        again.rates()
        again.compare("base", ["cand"])
        again.examples(0, 5)
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - cpu_started)
    print(f"page data (stored modes, rates, comparison, examples) read in {best:.2f} s wall, {best_cpu:.2f} s CPU "
          "(best of 3)")
    print(f"targets: grouping < 180 s wall {'met' if wall < 180 else 'MISSED'}; memory < 2048 MB "
          f"{'met' if peak_mb < 2048 else 'MISSED'}; page < 2 s {'met' if best < 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
