"""Dashboard speed: a synthetic 100,000-row run, then each page's first render through AppTest.

    python bench/dashboard.py [--rows 100000] [--models 2] [--db PATH] [--target 2.0]

The run holds lexical scores (rouge1, rougeL, bleu), an LLM-judge score (faithfulness,
about 3% unscored with a reason), three verdicts and one judge exchange per row, all
written through the store's own writers. Every page is then rendered from cold reader
caches (the store connection stays open, as in a running server) and timed; a warm
re-render and the heavier Results/Explore/Compare interactions are timed too. Exit status 1
when a first render misses the target or a page raises.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textgen_core.judge.storage import CellWrite  # noqa: E402
from textgen_core.model import Dataset, Datum  # noqa: E402
from textgen_dashboard import app_path  # noqa: E402

logging.getLogger("streamlit").setLevel(logging.ERROR)  # AppTest outside a server warns on every run
from textgen_core.store import Store  # noqa: E402

WORDS = np.array("the a of to in gold capital river year war city metal light energy water planet king law "
                 "language music paper system cell number people country market story science art".split())
#: Scripts inside the textgen_dashboard package (app.py declares the navigation).
APP = app_path()
PAGES = ("app.py", "views/upload.py", "views/evaluate.py", "views/results.py", "views/explore.py",
         "views/compare.py", "views/runs.py")


def _texts(rng: np.random.Generator, count: int, low: int, high: int) -> list[str]:
    lengths = rng.integers(low, high, size=count)
    picks = rng.integers(0, len(WORDS), size=int(lengths.sum()))
    out, start = [], 0
    for length in lengths:
        out.append(" ".join(WORDS[picks[start:start + length]]))
        start += length
    return out


def build(path: str, rows: int, n_models: int, seed: int = 7) -> int:
    """Store the synthetic dataset and its run; returns the run id."""
    rng = np.random.default_rng(seed)
    models = [f"model-{chr(97 + i)}" for i in range(n_models)]
    n_datums = rows // n_models
    queries = _texts(rng, n_datums, 5, 15)
    refs = _texts(rng, n_datums, 3, 20)
    contexts = _texts(rng, n_datums * 3, 20, 60)
    predictions = _texts(rng, n_datums * n_models, 2, 80)
    data = [Datum(f"d{d:06d}", model, queries[d], predictions[d * n_models + m], (refs[d],),
                  tuple(contexts[d * 3:d * 3 + 3]))
            for d in range(n_datums) for m, model in enumerate(models)]
    store = Store(path)
    dataset_id = store.save_dataset(Dataset("bench-100k", data, source="synthetic"))
    run_id = store.create_run(dataset_id, ["rouge", "bleu", "faithfulness"], {}, {}, models)
    cells, judged = [], []
    for row, (r1, rl, bleu, faith) in zip(data, rng.beta(2, 3, size=(len(data), 4))):
        cells += [(row.datum_id, row.model, "rouge", "rouge1", float(r1), None, None),
                  (row.datum_id, row.model, "rouge", "rougeL", float(min(r1, rl)), None, None),
                  (row.datum_id, row.model, "bleu", "bleu", float(bleu) ** 3, None, None)]
        if faith < 0.03:
            cell = (row.datum_id, row.model, "faithfulness", "faithfulness", None, None,
                    "the judge reply was not valid JSON")
        else:
            cell = (row.datum_id, row.model, "faithfulness", "faithfulness", round(float(faith), 2),
                    {"supported": 2, "statements": 3}, None)
        key = f"key-{row.datum_id}-{row.model}"
        verdicts = [(row.datum_id, row.model, "faithfulness", "verdicts", i, f"statement {i} of {row.datum_id}",
                     "no" if i == 2 else "yes", "the context says so", key) for i in range(3)]
        exchange = {"datum_id": row.datum_id, "model": row.model, "metric": "faithfulness", "step": "verdicts",
                    "call_index": 0, "status": "ok", "reason": None, "cache_key": key,
                    "messages": [{"role": "system", "content": "Judge each statement."},
                                 {"role": "user", "content": f"Context: {row.contexts[0]}\nAnswer: {row.prediction}"}],
                    "reply": '{"verdicts": ["yes", "yes", "no"]}', "prompt_tokens": 120, "completion_tokens": 20,
                    "attempts": 1, "latency_s": 0.4}
        judged.append(CellWrite(run_id, cell, verdicts, [exchange], False))
    store.write_cells(run_id, cells)
    store.write_judge_batch([], judged)  # the statement the judge's write queue commits with, in one transaction
    store.set_run_status(run_id, "finished", duration_s=0.0)
    store.close()
    return run_id


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(errors: list[str]) -> dict[str, float]:
    """First (cold reader caches) and warm render time of each page, plus Results/Explore interactions.

    Pages whose script raised are appended to ``errors``.
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    figures: dict[str, float] = {}
    warmup = AppTest.from_file(str(APP), default_timeout=120)
    figures["imports + first app.py run"] = _timed(warmup.run)
    for name in PAGES:
        if not (APP.parent / name).is_file():
            continue
        at = AppTest.from_file(str(APP), default_timeout=120).run()
        st.cache_data.clear()
        if name != "app.py":
            at.switch_page(name)
        figures[f"{name} first"] = _timed(at.run)
        if at.exception:
            print(f"{name} raised: {at.exception[0].value}", file=sys.stderr)
            errors.append(name)
            continue
        figures[f"{name} warm"] = _timed(at.run)
        if name == "views/results.py":
            figures["results: box chart"] = _timed(lambda: at.radio(key="results.chart").set_value("Box").run())
            figures["results: violin chart"] = _timed(lambda: at.radio(key="results.chart").set_value("Violin").run())
            figures["results: next score"] = _timed(lambda: at.selectbox(key="results.score").set_value("bleu").run())
        if name == "views/explore.py":
            figures["explore: text search"] = _timed(lambda: at.text_input(key="explore.text").input("gold river").run())
            figures["explore: unscored filter"] = _timed(
                lambda: at.selectbox(key="explore.score").set_value("faithfulness").run())
        if name == "views/compare.py":  # new settings on the same finished run: its cells are read once
            figures["compare: next seed"] = _timed(lambda: at.number_input(key="compare.seed").set_value(1).run())
            figures["compare: next pair score"] = _timed(
                lambda: at.selectbox(key="compare.pair_score").set_value("bleu").run())
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--db", help="database file (default: a temporary one)")
    parser.add_argument("--target", type=float, default=2.0, help="seconds a page's first render may take")
    parser.add_argument("--reuse", action="store_true", help="time the pages of an existing --db (no new run)")
    args = parser.parse_args(argv)
    folder = tempfile.TemporaryDirectory(prefix="textgen-bench-")
    path = args.db or str(Path(folder.name) / "bench.duckdb")
    if args.reuse and Path(path).is_file():
        print(f"timing the pages of {path}")
    else:
        started = time.perf_counter()
        run_id = build(path, args.rows, args.models)
        print(f"stored run {run_id}: {args.rows:,} rows x 4 scores, {3 * args.rows:,} verdicts, "
              f"{args.rows:,} exchanges in {time.perf_counter() - started:.1f} s ({path})")
    os.environ["TEXTGEN_EVAL_DB"] = path
    errors: list[str] = []
    figures = measure(errors)
    width = max(map(len, figures))
    slow = []
    for name, seconds in figures.items():
        first = name.endswith(" first")
        flag = " SLOW" if first and seconds > args.target else ""
        if flag:
            slow.append(name)
        print(f"{name:<{width}}  {seconds:6.3f} s{flag}")
    print(f"target: first render under {args.target:.1f} s per page -> "
          + ("met" if not slow else f"missed by {', '.join(slow)}"))
    if errors:
        print(f"pages that raised (not a timing): {', '.join(errors)}")
    folder.cleanup()
    return 1 if slow or errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
