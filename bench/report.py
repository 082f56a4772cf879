"""Size and speed of a report for a large run: 100,000 rows (50,000 datums x 2 models) and 3 judge metrics.

    python bench/report.py [--datums 50000] [--keep DIR]

Builds the run in a temporary DuckDB file through the store's own writers: the
dataset, then every judge cell with its verdicts (the judge's batch writer, as a
judged run stores them), 2% of the cells unscored with a reason. Nothing is
judged: the bench measures the report, which never judges. Then it prints:

- generation: wall and CPU seconds of ``write_report`` with ``--compare base`` (reading
  the store, the summary, the comparison, the rows; drawing and writing the HTML), and
  the same for the JSON twin, after the library's imports (timed apart: a command pays
  them once; the machine's load average is printed, since wall time on a shared
  machine is mostly waiting);
- the HTML file's size (the issue's bound: under 25 MB);
- Chromium: wall seconds from ``goto`` of the file (every request other than the
  file aborted and counted) to the load event and a finished layout of the whole page
  (bound: under 3 s), and how many requests were attempted (must be 0).

Figures of the run on the development machine (2 shared cores, load average 17): docs/report.md, 'Size and
speed' (HTML 0.96 MB; generated in 12.7 s wall, 2.7 s CPU; Chromium 3.44 s; 0 requests).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from textgen_core.judge.storage import CellWrite  # noqa: E402
from textgen_core.model import Dataset, Datum  # noqa: E402
from textgen_core.report import ReportOptions, write_report  # noqa: E402
from textgen_core.store import Store  # noqa: E402

METRICS = ("faithfulness", "answer_relevance", "coherence")
MODELS = ("base", "cand")
BATCH = 20_000


def build(path: Path, datums: int, rng: np.random.Generator) -> tuple[Store, int]:
    store = Store(path)
    rows = [Datum(f"d{i:06d}", m, query=f"What is known about topic {i}?",
                  prediction=f"Topic {i} has {i % 7} parts. It is described by {m} in a few plain sentences.",
                  references=(f"Topic {i} has {i % 7} parts.",), contexts=(f"Topic {i} has {i % 7} parts.",),
                  metadata={"domain": ("news", "science", "law")[i % 3]})
            for i in range(datums) for m in MODELS]
    dataset = store.save_dataset(Dataset("bench-report", rows))
    run_id = store.create_run(dataset, list(METRICS), {m: {} for m in METRICS}, {m: f"{m}|bench" for m in METRICS},
                              list(MODELS), judge={"model": "bench-judge", "base_url": "http://127.0.0.1:1/v1"},
                              kind="stored")
    pending: list[Cell] = []
    for metric in METRICS:
        for m, shift in zip(MODELS, (0.0, 0.02)):
            if metric == "coherence":
                values = np.clip(np.round(rng.normal(3.2 + 10 * shift, 1.0, datums)), 1, 5)
            else:
                values = np.clip(rng.beta(4, 2, datums) + shift, 0, 1)
            unscored = rng.random(datums) < 0.02
            for i in range(datums):
                datum = f"d{i:06d}"
                if unscored[i]:
                    cell = (datum, m, metric, metric, None, None, "the judge's reply was not valid JSON after 2 asks")
                    verdicts: list[Any] = []
                else:
                    cell = (datum, m, metric, metric, float(values[i]), None, None)
                    verdicts = [(datum, m, metric, metric, k, f"Claim {k} of topic {i}.", "yes" if k else "no",
                                 f"the passage states it (claim {k})", None) for k in range(2)]
                pending.append(CellWrite(run_id, cell, verdicts, [], False, (1, 120, 20, None)))
                if len(pending) >= BATCH:
                    store.write_judge_batch([], pending)
                    pending = []
    if pending:
        store.write_judge_batch([], pending)
    store.set_run_status(run_id, "finished")
    return store, run_id


def browser_open(path: Path) -> tuple[float, int]:
    """Seconds from goto to a laid-out page, and the requests attempted besides the file."""
    from browser_session import browser_context

    asked: list[str] = []
    with browser_context() as context:
        def block(route: Any) -> None:
            if route.request.url == path.as_uri():
                route.continue_()
            else:
                asked.append(route.request.url)
                route.abort()

        context.route("**/*", block)
        page = context.new_page()
        started = time.perf_counter()
        page.goto(path.as_uri(), wait_until="load", timeout=120_000)
        page.evaluate("document.body.getBoundingClientRect().height")
        seconds = time.perf_counter() - started
    return seconds, len(asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datums", type=int, default=50_000)
    parser.add_argument("--keep", type=Path, help="write the database and reports here instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        store, run_id = build(folder / "bench.duckdb", args.datums, np.random.default_rng(0))
        print(f"built {args.datums * len(MODELS):,} rows x {len(METRICS)} judge metrics in "
              f"{time.perf_counter() - started:.1f} s")
        options = ReportOptions(baseline="base")
        started, cpu = time.perf_counter(), time.process_time()
        import textgen_core.compare  # noqa: F401  (what the command imports before it reads anything)
        import textgen_core.summary  # noqa: F401
        print(f"imports: {time.perf_counter() - started:.2f} s wall, {time.process_time() - cpu:.2f} s CPU")
        for fmt in ("html", "json"):
            out = folder / f"report.{fmt}"
            started, cpu = time.perf_counter(), time.process_time()
            write_report(store, run_id, out, options, fmt)
            print(f"{fmt}: generated in {time.perf_counter() - started:.2f} s wall, {time.process_time() - cpu:.2f} s "
                  f"CPU; {out.stat().st_size / 1e6:.2f} MB")
        print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        seconds, asked = browser_open(folder / "report.html")
        print(f"chromium: opened and laid out in {seconds:.2f} s; requests attempted besides the file: {asked}")


if __name__ == "__main__":
    main()
