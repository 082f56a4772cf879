"""Classification on a million labelled rows: seconds and peak memory.

    python bench/classification.py [--rows 1000000] [--keep DIR]

1. In memory, one process: the metric's per-row scorer over the rows, the corpus
   averages, and the full report (per-label scores, confusion matrix, ROC and PR
   curves over 19 thresholds, detailed curves with examples), for bare labels and
   for JSON objects of scores over 5 labels (ROC AUC then exists). Peak RSS is
   this process's (ru_maxrss), measured in a fresh child per case.
2. As a user runs it: ``textgen-eval run FILE --metrics classification`` on a
   seeded CSV of the bare labels (streamed in chunks, stored in DuckDB, report
   printed): wall time and the peak RSS of its largest process (ru_maxrss of its children; the CLI, or a
   pool worker).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LABELS = ("billing", "shipping", "returns", "account", "other")


def rows(n: int, scores: bool) -> list:
    from textgen_core.model import Datum

    rng = np.random.default_rng(0)
    gold = rng.integers(len(LABELS), size=n)
    out = []
    if scores:
        logits = rng.normal(size=(n, len(LABELS)))
        logits[np.arange(n), gold] += 1.0
        probs = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 4)
        for i in range(n):
            out.append(Datum(f"d{i}", "m", prediction=json.dumps(dict(zip(LABELS, probs[i].tolist()))),
                             references=(LABELS[gold[i]],)))
        return out
    wrong = rng.random(n) < 0.3
    other = rng.integers(len(LABELS), size=n)
    for i in range(n):
        out.append(Datum(f"d{i}", "m", prediction=LABELS[other[i] if wrong[i] else gold[i]],
                         references=(LABELS[gold[i]],)))
    return out


def in_memory(n: int, scores: bool) -> None:
    """Runs in a child: prints one JSON line of timings."""
    from textgen_core.metrics.classification.report import report
    from textgen_core.metrics.classification.spec import SPEC, corpus, scored_outputs

    data = rows(n, scores)
    params = SPEC.resolve()
    start = time.perf_counter()
    cells = SPEC.score(data, params)
    scored = time.perf_counter()
    corpus(data, cells, params)
    averaged = time.perf_counter()
    outputs = scored_outputs(cells)
    rep = report([r.datum_id for r in data], outputs, params)
    done = time.perf_counter()
    print(json.dumps({"rows": n, "scores": scores, "score_s": scored - start, "corpus_s": averaged - scored,
                      "report_s": done - averaged, "total_s": done - start, "labels": len(rep["labels"]),
                      "roc_auc_mean": rep["averages"].get("roc_auc_mean"),
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def cli_run(n: int, folder: Path) -> dict:
    path = folder / "labels.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "prediction", "reference"])
        for row in rows(n, False):
            writer.writerow([row.datum_id, row.model, row.prediction, row.references[0]])
    db = folder / "bench.duckdb"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "textgen_core", "--db", str(db), "run", str(path), "--metrics",
                           "classification"], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"rows": n, "cli_wall_s": wall, "peak_rss_mb_largest_process": peak,
            "printed_confusion": "gold \\ predicted" in done.stdout}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, default=None, help="keep the CSV and database in this folder")
    parser.add_argument("--child", choices=["labels", "scores", "cli"], default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI run")
    args = parser.parse_args()
    if args.child == "cli":  # its own process: RUSAGE_CHILDREN then covers the CLI run (and its workers) only
        folder = args.keep or Path(tempfile.mkdtemp(prefix="bench_classification_"))
        folder.mkdir(parents=True, exist_ok=True)
        print(json.dumps(cli_run(args.rows, folder)))
        return
    if args.child:
        in_memory(args.rows, args.child == "scores")
        return
    for kind in ("labels", "scores"):
        out = subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--child", kind],
                             capture_output=True, text=True, check=True)
        print(out.stdout.strip())
    if not args.no_cli:
        extra = ["--keep", str(args.keep)] if args.keep else []
        out = subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--child", "cli", *extra],
                             capture_output=True, text=True, check=True)
        print(out.stdout.strip())


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
