"""Time and memory of a judge panel's agreement (compare/jury.py) against the krippendorff package.

    python bench/panel_agreement.py [--cells 100000] [--members 3] [--resamples 1000] [--seed 1]

A seeded panel scores ``--cells`` cells, 10% of votes unscored: a 1-5 rating
(ordinal), a share in tenths (interval, 11 values), and a share with every
value distinct (interval). For each it prints our alpha's seconds and the
package's (same data, one run, their ratio) and the largest difference of the
two values; the package is not run on distinct shares, as it builds a cells x
values x values array (tens of TiB here). Then the seconds of our bootstrap
interval with ``--resamples`` resamples and its peak Python allocation
(tracemalloc): the interval level needs memory for one resample of cells, not
cells x resamples. Timings are CPU seconds of this process (the machine may be
shared).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import krippendorff  # noqa: E402

from textgen_core.compare import jury  # noqa: E402


def panel(cells: int, members: int, level: str, rng: np.random.Generator) -> np.ndarray:
    """(cells x members) values, NaN where a vote is unscored."""
    if level == "ordinal":
        truth = rng.integers(1, 6, cells)
        values = np.clip(truth[:, None] + rng.integers(-1, 2, (cells, members)), 1, 5).astype(float)
    else:
        values = np.clip(rng.random(cells)[:, None] + rng.normal(0, 0.15, (cells, members)), 0, 1)
        if level == "tenths":
            values = np.round(values, 1)
    values[rng.random(values.shape) < 0.1] = np.nan
    return values


def seconds(call) -> tuple[float, object]:  # noqa: ANN001
    start = time.process_time()
    result = call()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    for data in ("ordinal", "tenths", "distinct"):
        matrix = panel(args.cells, args.members, data, rng)
        level = "ordinal" if data == "ordinal" else "interval"
        ours_s, ours = seconds(lambda: jury.alpha(matrix, level))
        if data == "distinct":
            ref_s, ref = float("nan"), float("nan")
        else:
            ref_s, ref = seconds(lambda: krippendorff.alpha(reliability_data=matrix.T, level_of_measurement=level))
        tracemalloc.start()
        interval_s, (low, high) = seconds(lambda: jury.interval(matrix, level, confidence=0.95,
                                                                  resamples=args.resamples, rng=rng))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{data} ({level}): {args.cells:,} cells x {args.members} members: alpha {ours:.6f} in {ours_s:.3f} s, "
              f"krippendorff {ref:.6f} in {ref_s:.3f} s ({ref_s / max(ours_s, 1e-9):.1f}x), difference "
              f"{abs(ours - ref):.1e}; interval [{low:.4f}, {high:.4f}] from {args.resamples} resamples in "
              f"{interval_s:.2f} s, peak {peak / 2 ** 20:.0f} MiB")


if __name__ == "__main__":
    main()
