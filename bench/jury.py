"""Writing a panel's cells: textgen's vote aggregation against a pandas groupby of the same votes.

    python bench/jury.py [--cells 100000] [--members 2] [--samples 3] [--repeats 3]

Seeded votes (ratings 1-5, one vote in 20 unscored) of ``--cells`` cells by ``--members`` x ``--samples``
are stored in an in-memory DuckDB run; then, alternated, best of ``--repeats``:

- ours: :func:`textgen_core.runs.jury.write_aggregates` (the votes read back, grouped, each cell combined
  with its spread, by-member means and unstable flag, and the cells written to ``scores``);
- the reference: the same votes read back, and pandas ``groupby(...).agg`` of mean, min, max and the
  population sd (no per-member means, no reasons, nothing written).

Prints both times, the ratio, and the largest difference between our cell means and sds and pandas'.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from textgen_core.runs.panel import Jury
    from textgen_core.judge.settings import JudgeSettings
    from textgen_core.model import Dataset, Datum
    from textgen_core.runs.jury import write_aggregates
    from textgen_core.store import Store

    store = Store(":memory:")
    rows = [Datum(str(i), "m", "q", "p", ("r",)) for i in range(args.cells)]
    dataset_id = store.save_dataset(Dataset("bench", rows))
    run_id = store.create_run(dataset_id, ["tone"], {"tone": {}}, {}, ["m"])
    names = [f"judge{j}" for j in range(args.members)]
    rng = np.random.default_rng(0)
    values = rng.integers(1, 6, size=(args.cells, args.members, args.samples)).astype(float)
    missing = rng.random(values.shape) < 0.05
    votes = [(str(i), "m", "tone", "tone", names[j], s, None if missing[i, j, s] else values[i, j, s],
              "no verdict" if missing[i, j, s] else None)
             for i in range(args.cells) for j in range(args.members) for s in range(args.samples)]
    store.write_votes(run_id, votes)
    lead = JudgeSettings(base_url="http://127.0.0.1:9/v1", model=names[0])
    jury = Jury.of(lead, samples=args.samples, models=names[1:])

    def ours() -> None:
        write_aggregates(store, run_id, rows, {"tone": {}}, jury)

    def reference() -> object:
        frame = store.votes_for_run(run_id)
        return frame.groupby(["datum_id", "model", "score"])["value"].agg(
            ["mean", "min", "max", lambda v: v.std(ddof=0)])

    best = {"ours": float("inf"), "pandas": float("inf")}
    for _ in range(args.repeats):
        for name, work in (("ours", ours), ("pandas", reference)):
            started = time.perf_counter()
            work()
            best[name] = min(best[name], time.perf_counter() - started)
    table = reference()
    cells = store.scores(run_id).set_index("datum_id")
    means = cells["value"].reindex(table.index.get_level_values(0)).to_numpy()
    sds = np.array([json.loads(d).get("sd", np.nan) if isinstance(d, str) else np.nan
                    for d in cells["details"].reindex(table.index.get_level_values(0))])
    print(f"{args.cells} cells x {args.members} members x {args.samples} samples = {len(votes)} votes")
    print(f"ours {best['ours']:.2f} s, pandas groupby {best['pandas']:.2f} s, ratio {best['ours'] / best['pandas']:.2f}")
    print(f"largest difference: mean {np.nanmax(np.abs(means - table['mean'].to_numpy())):.2e}, "
          f"sd {np.nanmax(np.abs(sds - table.iloc[:, 3].to_numpy())):.2e}")


if __name__ == "__main__":
    main()
