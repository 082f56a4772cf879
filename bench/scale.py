"""A million rows, CSV to stored run: memory and speed of the local engine, then of Ray.

    python bench/scale.py [--rows 1000000] [--workers N] [--no-ray] [--keep DIR]

Writes a seeded synthetic CSV (id, model, prediction, reference; two models)
into a temporary folder, then, each in its own process as a user runs it:

1. ``textgen-eval run FILE --metrics rouge,bleu`` (the local engine, streaming):
   wall time, rows/s, and the peak resident memory of the whole process tree
   (the CLI and its pool workers), sampled every 0.1 s from /proc. Its rows/s is
   compared with the in-memory scoring rate measured in this run (``score_lexical``
   on rows already in memory, one core) times the cores: the share of the ideal.
2. ``textgen-eval run FILE --engine ray`` on a local Ray cluster (every core):
   the same figures, plus how fast the driver stores a scored block in DuckDB,
   and on paper what N nodes would give and where the bottleneck moves.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textgen_core.metrics.lexical import score_lexical  # noqa: E402
from textgen_core.metrics.lexical.synthetic import synthetic_pairs  # noqa: E402
from textgen_core.model import Datum  # noqa: E402

METRICS = {"rouge": {}, "bleu": {}}
WORDS = (5, 25)  # words per text: a million rows make a ~180 MB CSV, like the 172 MB file of issue 12
PAGE = os.sysconf("SC_PAGE_SIZE")


def write_csv(path: Path, rows: int, seed: int = 1, piece: int = 20_000) -> None:
    """``rows`` synthetic rows (two models per datum), written piece by piece (bounded memory)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "prediction", "reference"])
        for start in range(0, rows, piece):
            pairs = synthetic_pairs(min(piece, rows - start), seed=seed + start, min_words=WORDS[0], max_words=WORDS[1])
            writer.writerows([f"d{(start + i) // 2:07d}", f"model-{'ab'[(start + i) % 2]}", prediction, reference]
                             for i, (reference, prediction) in enumerate(pairs))


def in_memory_rate(sample: int = 20_000, repeats: int = 3) -> tuple[float, float]:
    """Rows per CPU second and per wall second of ``score_lexical`` on rows already in memory (one core), the
    best of ``repeats`` timings each.

    On a shared machine the wall rate is what the end-to-end runs (timed by the wall clock) are held to. One
    timing varied from 30,000 to 53,000 rows per CPU second between runs at load 6-13 (a busy sibling
    hyperthread slows the CPU second too); the best of three is the stable, strict reference.
    """
    pairs = synthetic_pairs(sample, seed=99, min_words=WORDS[0], max_words=WORDS[1])
    rows = [Datum(str(i), "m", prediction=p, references=(r,)) for i, (r, p) in enumerate(pairs)]
    score_lexical(rows, METRICS)  # imports, compiled kernels' first calls and caches out of the timing
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        score_lexical(rows, METRICS)
        best_cpu, best_wall = min(best_cpu, time.process_time() - cpu), min(best_wall, time.perf_counter() - wall)
    return sample / best_cpu, sample / best_wall


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every process below it (from /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21]) * PAGE
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str, float]:
    """(wall seconds, peak resident bytes of the process tree, the last lines of output, CPU seconds of the
    whole tree: the command and its pool workers) of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, **(env or {})}, start_new_session=True)
    peak = [0]

    def sample() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], _tree_rss(process.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = process.communicate()[0]
    elapsed = time.monotonic() - started
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{output[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, peak[0], "\n".join(output.strip().splitlines()[-4:]), cpu


def driver_store_rate(path: Path, rows: int = 20_000) -> float:
    """Rows per second the Ray driver stores (data rows + cells of a scored block) in DuckDB."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from textgen_core.engines.ray_engine import score_batch
    from textgen_core.store import Store
    from textgen_core.store.score_writes import block_scores
    from textgen_core.store.stream_sql import NewRows

    table = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(newlines_in_values=True), convert_options=pcsv.ConvertOptions(
        column_types={c: pa.string() for c in ("id", "model", "prediction", "reference")})).slice(0, rows)
    mapping = {"id": "id", "model": "model", "prediction": "prediction", "references": ["reference"]}
    blocks = [score_batch(table.slice(s, 5000), mapping=mapping, label="bench", metrics=METRICS, finished=frozenset())
              for s in range(0, rows, 5000)]
    path.with_suffix(".driver.duckdb").unlink(missing_ok=True)
    store = Store(path.with_suffix(".driver.duckdb"))
    with store.session():
        dataset_id = store.streams.start_dataset("driver", "bench", mapping)
        run_id = store.runs.create_run(dataset_id, ["rouge", "bleu"], METRICS, {}, [])
        started = time.monotonic()
        for i, block in enumerate(blocks):
            store.cells.write_cells(run_id, block_scores(run_id, block), rows=NewRows(dataset_id, i * 5000, block),
                                    finished=[str(i)], fresh=True)
        return rows / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray part")
    parser.add_argument("--keep", help="write the CSV and databases here instead of a temporary folder")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="textgen-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "outputs.csv"
    cli = [sys.executable, "-m", "textgen_core"]
    try:
        if not data.exists():
            started = time.monotonic()
            write_csv(data, args.rows)
            print(f"wrote {args.rows:,} rows ({data.stat().st_size / 1e6:.0f} MB) in {time.monotonic() - started:.0f} s")
        cpu_rate, rate = in_memory_rate()
        ideal = rate * args.workers
        print(f"in-memory scoring (rouge + bleu, one core): {cpu_rate:,.0f} rows per CPU second, {rate:,.0f} rows per "
              f"wall second now (load {os.getloadavg()[0]:.1f}); x {args.workers} cores = {ideal:,.0f} rows/s")

        db = folder / "local.duckdb"
        db.unlink(missing_ok=True)
        wall, peak, tail, cpu = measure(cli + ["--db", str(db), "run", str(data), "--metrics", "rouge,bleu",
                                               "--workers", str(args.workers)])
        local_rate = args.rows / wall
        print(f"\nlocal engine, CSV to stored run: {wall:.1f} s, {local_rate:,.0f} rows/s = "
              f"{local_rate / ideal:.2f} of in-memory rate x cores (target >= 0.5; load {os.getloadavg()[0]:.1f}); "
              f"peak RSS of the process tree {peak / 2**30:.2f} GB (target < 1.5)\n{tail}")
        # On a shared machine the wall clock also counts other programs' time; CPU seconds do not: this share is
        # what the wall ratio would be on idle cores (all of them busy), whatever the load.
        print(f"CPU of the whole tree (CLI and workers): {cpu:.1f} s, {args.rows / cpu:,.0f} rows per CPU second = "
              f"{args.rows / cpu / cpu_rate:.2f} of the in-memory rows per CPU second (the ratio on idle cores)")
        store_rate = driver_store_rate(data)
        print(f"storing alone (data row + 5 cells per row, one DuckDB writer): {store_rate:,.0f} rows/s, "
              f"{store_rate / ideal:.2f} of in-memory rate x cores: the ceiling of any engine that stores every cell")
        if args.no_ray:
            return
        db = folder / "ray.duckdb"
        db.unlink(missing_ok=True)
        wall, peak, tail, _ = measure(cli + ["--db", str(db), "run", str(data), "--metrics", "rouge,bleu",
                                             "--engine", "ray"])
        ray_rate = args.rows / wall
        print(f"\nray engine, local cluster ({args.workers} CPUs), same file: {wall:.1f} s, {ray_rate:,.0f} rows/s "
              f"= {ray_rate / ideal:.2f} of in-memory rate x cores; peak RSS of the tree {peak / 2**30:.2f} GB\n{tail}")
        print("\non paper, N nodes of this machine (scoring is embarrassingly parallel; one driver stores):")
        for nodes in (1, 2, 4, 8, 16):
            scoring = cpu_rate * args.workers * nodes
            bound = "scoring" if scoring < store_rate else "the driver's DuckDB writes"
            print(f"  {nodes:>2} nodes: scoring {scoring:>10,.0f} rows/s, stored {min(scoring, store_rate):>8,.0f} rows/s "
                  f"(bound by {bound})")
        print(f"scoring alone would need {store_rate / (cpu_rate * args.workers):.2f} nodes to fill the single DuckDB "
              "writer: the bottleneck is the store from one node on. Past it: workers write cells as Parquet shards "
              "that DuckDB imports in one statement at the end, or a store without a per-cell primary-key index.")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
