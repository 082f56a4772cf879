"""How fast the command line starts: `textgen-eval --help` against `python -c "import duckdb"`.

    python bench/cli_start.py [--runs 20]

Both are started as separate processes, alternately (A B A B ...), so a machine
whose speed drifts affects both alike; the ratio is taken pair by pair and its
median printed with the medians of each (wall seconds, from start to exit). The
target of issue 33 is a ratio of at most 1.5: the CLI's start is about the cost of
the one database library every command needs, not of the judge client, scipy and
pandas it used to import for `--help` (2,161 modules before, about 100 now).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli = [sys.executable, "-m", "textgen_core", "--help"]
    yardstick = [sys.executable, "-c", "import duckdb"]
    timed(cli, env), timed(yardstick, env)  # warm the file cache
    pairs = [(timed(cli, env), timed(yardstick, env)) for _ in range(args.runs)]
    help_s = statistics.median(a for a, _ in pairs)
    duckdb_s = statistics.median(b for _, b in pairs)
    ratio = statistics.median(a / b for a, b in pairs)
    print(f"load {os.getloadavg()[0]:.2f}; {args.runs} pairs")
    print(f"textgen-eval --help:      median {help_s:.3f} s")
    print(f'python -c "import duckdb": median {duckdb_s:.3f} s')
    print(f"ratio (pair by pair):     median {ratio:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
