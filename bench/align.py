"""The calibrated (PPI++) mean with the aligned judge: a narrower interval from the same labels.

    python bench/align.py [--rows 400] [--labels 100] [--seed 0]

A judge with a planted blind spot (tests/align/refund_judge.py: refund-only replies rated 5 unless its prompt
speaks of refunds; people rate them 1) scores ``--rows`` support replies (run A). People label a uniform random
``--labels`` of them. ``textgen_core.align.align`` proposes candidates from the training part of the labels,
judges them on the held-out part and saves the best that passes. The same dataset is scored again with the
accepted version (run B), and both runs are calibrated against the same labels (the same cells, copied to run
B). Prints the held-out kappas, both calibrated means with their 95% intervals and the two widths.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tests", ROOT / "tests" / "align"):
    sys.path.insert(0, str(extra))

from judge_server import JudgeServer  # noqa: E402
from refund_judge import CRITERION, RefundJudge, people, rows  # noqa: E402

from textgen_core.align import align  # noqa: E402
from textgen_core.compare.human_report import calibrated_means  # noqa: E402
from textgen_core.evaluate import evaluate  # noqa: E402
from textgen_core.judge import JudgeSettings  # noqa: E402
from textgen_core.judge.metrics.criteria import criterion, define  # noqa: E402
from textgen_core.model import Dataset  # noqa: E402
from textgen_core.store import Store  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, JudgeServer(responder=RefundJudge()) as server:
        store = Store(Path(tmp) / "bench.duckdb")
        settings = JudgeSettings(base_url=server.url, model="refund-judge", api_key="sk-bench", timeout=10.0)
        define(criterion(CRITERION))
        made = rows(args.rows, seed=args.seed + 7)
        dataset = store.save_dataset(Dataset("support", made), "support")
        blind = evaluate(store, dataset, ["helpfulness"], judge=settings, workers=1)
        picked = random.Random(args.seed).sample(made, args.labels)
        share = args.labels / args.rows
        labels = [(r.datum_id, r.model, "helpfulness", "ana", float(people(r)), None, "random", share) for r in picked]
        store.write_labels(blind, labels)
        result = align(store, blind, "helpfulness", settings, seed=args.seed)
        if result.saved_version is None:
            print("no candidate accepted:", [j.why for j in result.judged])
            return
        version, text = store.load_criterion("helpfulness")
        define(criterion(text, f"saved version {version}"))
        aligned = evaluate(store, dataset, ["helpfulness"], judge=settings, workers=1)
        store.write_labels(aligned, labels)
        widths = {}
        for name, run in (("blind judge", blind), (f"aligned judge (version {version})", aligned)):
            m = calibrated_means(store, run, ["helpfulness"]).iloc[0]
            widths[name] = m["ci_high"] - m["ci_low"]
            print(f"{name:<28} judge-only mean {m['judge_mean']:.3f}; calibrated {m['calibrated']:.3f} "
                  f"[{m['ci_low']:.3f}, {m['ci_high']:.3f}], width {widths[name]:.3f} ({int(m['n_labels'])} labels)")
        print(f"held-out weighted kappa: current {result.current.value:.3f}, accepted "
              f"{result.chosen.candidate.kind} {result.chosen.agreement.value:.3f} ({result.current.n} cells); "
              f"judge calls of the alignment {result.calls}")
        blind_w, aligned_w = widths.values()
        print(f"calibrated interval width: {blind_w:.3f} -> {aligned_w:.3f} ({aligned_w / blind_w:.0%} of it); "
              f"{args.rows} rows, {args.labels} labels, {time.perf_counter() - started:.0f} s, load average "
              f"{os.getloadavg()[0]:.1f}")
        store.close()


if __name__ == "__main__":
    main()
