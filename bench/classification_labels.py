"""Classification with many labels: seconds, peak memory and printed bytes (issue 34, point 14).

    python bench/classification_labels.py [--labels 10000] [--rows 20000]

Seeded bare labels with a long tail (Zipf gold labels, 40% wrong predictions drawn uniformly), each case in a
fresh child process so its peak RSS (ru_maxrss) is its own:

1. ``report``: our full classification report (per-label scores of every label, averages, the bounded confusion
   with every non-zero cell, curves of the labels with the most support) from the label outputs;
2. ``sklearn``: scikit-learn's ``classification_report(y_true, y_pred, output_dict=True, zero_division=0)`` on
   the same labels (per-label precision, recall, F1, support and the averages: the part that compares);
3. ``cli``: ``textgen-eval run FILE --metrics classification`` on a CSV of the rows (stored in DuckDB, report
   printed): wall time, peak RSS of its largest process and the bytes it prints.

Before the bound, 2,500 labels over 5,000 rows printed 75 MB and used 1.5 GB (a dense labels x labels matrix).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def labels(n_rows: int, n_labels: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(0)
    gold = rng.zipf(1.3, size=n_rows) % n_labels
    gold[:n_labels] = np.arange(min(n_labels, n_rows))  # every label occurs at least once
    wrong = rng.random(n_rows) < 0.4
    predicted = np.where(wrong, rng.integers(n_labels, size=n_rows), gold)
    return [f"L{g}" for g in gold], [f"L{p}" for p in predicted]


def child(case: str, n_rows: int, n_labels: int) -> None:
    """Runs in a fresh process: prints one JSON line."""
    y_true, y_pred = labels(n_rows, n_labels)
    start = time.perf_counter()
    if case == "report":
        from textgen_core.metrics.classification import report
        from textgen_core.metrics.classification.labels import LabelOutput
        from textgen_core.metrics.classification.spec import SPEC

        outputs = [LabelOutput(g, p, None, None) for g, p in zip(y_true, y_pred)]
        start = time.perf_counter()
        rep = report([f"d{i}" for i in range(n_rows)], outputs, SPEC.resolve())
        size = len(json.dumps(rep))
        f1_macro = rep["averages"]["f1_macro"]
    else:
        from sklearn.metrics import classification_report

        start = time.perf_counter()
        rep = classification_report(y_true, y_pred, output_dict=True, zero_division=0)
        size = len(json.dumps(rep))
        f1_macro = rep["macro avg"]["f1-score"]
    seconds = time.perf_counter() - start
    print(json.dumps({"case": case, "seconds": seconds, "json_bytes": size, "f1_macro": f1_macro,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def cli(n_rows: int, n_labels: int, folder: Path) -> dict:
    import pandas as pd

    y_true, y_pred = labels(n_rows, n_labels)
    data = folder / "labels.csv"
    pd.DataFrame({"id": [f"d{i}" for i in range(n_rows)], "model": "m", "prediction": y_pred,
                  "reference": y_true}).to_csv(data, index=False)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "textgen_core", "--db", str(folder / "c.duckdb"), "run", str(data),
                           "--metrics", "classification"], capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return {"case": "cli", "seconds": seconds, "printed_bytes": len(done.stdout.encode()),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--child", choices=("report", "sklearn"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.labels)
        return
    results = []
    for case in ("report", "sklearn"):
        done = subprocess.run([sys.executable, __file__, "--child", case, "--rows", str(args.rows), "--labels",
                               str(args.labels)], capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    with tempfile.TemporaryDirectory() as folder:
        results.append(cli(args.rows, args.labels, Path(folder)))
    for r in results:
        print(json.dumps(r))
    ours, theirs = results[0], results[1]
    print(f"{args.labels:,} labels, {args.rows:,} rows: report {ours['seconds']:.2f} s, peak RSS "
          f"{ours['peak_rss_mb']:.0f} MB; scikit-learn classification_report {theirs['seconds']:.2f} s, "
          f"{theirs['peak_rss_mb']:.0f} MB (ratio {ours['seconds'] / theirs['seconds']:.2f}; macro-F1 "
          f"{ours['f1_macro']:.6f} vs {theirs['f1_macro']:.6f}); CLI run {results[2]['seconds']:.1f} s, "
          f"{results[2]['peak_rss_mb']:.0f} MB, {results[2]['printed_bytes']:,} bytes printed")


if __name__ == "__main__":
    main()
