"""Throughput of the lexical engine (ROUGE 1/2/L/Lsum + BLEU-4) against rouge-score + nltk.

    python bench/lexical.py [--pairs 20000] [--ref-pairs 2000] [--workers N] [--seed 1]

Prints pairs/second for our ``score_lexical`` on one core, for rouge-score's
``RougeScorer.score`` plus nltk's ``sentence_bleu`` called directly (on a
subset: it is slow), their ratio, the largest absolute difference between the
two sets of values, and our throughput with a process pool over all cores.

The machine may be shared: single-core figures are CPU seconds of this process
(``time.process_time``), and ours and the reference are timed in alternating
rounds so that both see the same load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textgen_core.metrics.lexical import score_lexical  # noqa: E402
from textgen_core.metrics.lexical.synthetic import synthetic_pairs  # noqa: E402
from textgen_core.model import Datum  # noqa: E402

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
SELECTED = {"rouge": {"rouge_types": ROUGE_TYPES}, "bleu": {}}
ROUNDS = 10


def _rows(pairs: list[tuple[str, str]]) -> list[Datum]:
    return [Datum(str(i), "bench", prediction=p, references=(r,)) for i, (r, p) in enumerate(pairs)]


def _ours(rows: list[Datum]) -> list[dict[str, float]]:
    out = score_lexical(rows, SELECTED)
    return [
        {**{t: cells[t].value for t in ROUGE_TYPES}, "bleu": b["bleu"].value}
        for cells, b in zip(out["rouge"], out["bleu"])
    ]


def _reference(pairs: list[tuple[str, str]]) -> list[dict[str, float]]:
    """rouge-score and nltk called directly, BLEU on nltk RegexpTokenizer tokens as valor-lite does."""
    from nltk.tokenize import RegexpTokenizer
    from nltk.translate.bleu_score import sentence_bleu
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(ROUGE_TYPES))  # no tokenizer work: cheap to build per round
    words = RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+").tokenize
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns on every sentence without 4-gram matches
        for reference, prediction in pairs:
            scores = scorer.score(reference, prediction)
            row = {t: scores[t].fmeasure for t in ROUGE_TYPES}
            row["bleu"] = float(sentence_bleu([words(reference)], words(prediction)))
            values.append(row)
    return values


def _timed(rows: list[Datum]) -> tuple[dict, float]:
    """A pool worker's cells for one chunk (sent back, as the runner's are) and the CPU seconds they took."""
    start = time.process_time()
    cells = score_lexical(rows, SELECTED)
    return cells, time.process_time() - start


def _split(items: list, parts: int) -> list[list]:
    size = -(-len(items) // parts)
    return [items[i : i + size] for i in range(0, len(items), size)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20000, help="synthetic pairs scored by our engine")
    parser.add_argument("--ref-pairs", type=int, default=2000, help="pairs scored by rouge-score + nltk")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes for the pool run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    pairs = synthetic_pairs(args.pairs, seed=args.seed)
    ref_pairs = pairs[: min(args.ref_pairs, len(pairs))]
    rows = _rows(pairs)
    multi = sum(1 for r, p in pairs if "\n" in r and "\n" in p)
    words = sum(len(r.split()) + len(p.split()) for r, p in pairs) / (2 * len(pairs))
    print(f"corpus: {len(pairs)} pairs, {words:.1f} words per text on average, {multi} with several lines on both sides")

    _ours(rows[:50])  # imports and first-call costs stay out of the timings, on both sides
    _reference(ref_pairs[:50])
    ours_cpu = ref_cpu = ours_wall = ref_wall = 0.0
    ours_values: list[dict[str, float]] = []
    ref_values: list[dict[str, float]] = []
    for our_part, ref_part in zip(_split(rows, ROUNDS), _split(ref_pairs, ROUNDS)):
        c, w = time.process_time(), time.perf_counter()
        ours_values.extend(_ours(our_part))
        ours_cpu += time.process_time() - c
        ours_wall += time.perf_counter() - w
        c, w = time.process_time(), time.perf_counter()
        ref_values.extend(_reference(ref_part))
        ref_cpu += time.process_time() - c
        ref_wall += time.perf_counter() - w

    ours_rate = len(rows) / ours_cpu
    ref_rate = len(ref_pairs) / ref_cpu
    print(f"ours, one core:          {ours_rate:10.0f} pairs/s  ({len(rows)} pairs, {ours_cpu:.2f} CPU s, {ours_wall:.2f} wall s)")
    print(f"rouge-score + nltk:      {ref_rate:10.0f} pairs/s  ({len(ref_pairs)} pairs, {ref_cpu:.2f} CPU s, {ref_wall:.2f} wall s)")
    print(f"speed-up per core:       {ours_rate / ref_rate:10.1f} x")

    diff = 0.0
    worst = ""
    for ours_row, ref_row in zip(ours_values, ref_values):
        for key, value in ref_row.items():
            d = abs((ours_row[key] or 0.0) - value)
            if d > diff:
                diff, worst = d, key
    equal = sum(1 for o, r in zip(ours_values, ref_values) for k in r if o[k] == r[k])
    total = len(ref_values) * (len(ROUGE_TYPES) + 1)
    print(f"max |ours - reference|:  {diff:10.3g}  over {total} values ({equal} bit-identical{', worst ' + worst if worst else ''})")

    if args.workers > 1:
        chunks = _split(rows, args.workers * 8)
        start = time.perf_counter()
        for chunk in chunks:
            score_lexical(chunk, SELECTED)
        single_wall = time.perf_counter() - start
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            list(pool.map(_timed, chunks[: args.workers]))  # warm up the workers (imports)
            start = time.perf_counter()
            worker_cpu = sum(cpu for _cells, cpu in pool.map(_timed, chunks))
            pool_wall = time.perf_counter() - start
        single_rate, pool_rate = len(rows) / single_wall, len(rows) / pool_wall
        print(f"ours, 1 process (wall):  {single_rate:10.0f} pairs/s  (same chunks, run just before the pool)")
        print(f"ours, {args.workers} processes (wall): {pool_rate:9.0f} pairs/s  ({pool_rate / single_rate:.2f}x; "
              f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        print(f"pool workers' CPU:       {len(rows) / worker_cpu:10.0f} pairs per CPU second "
              f"(vs {ours_rate:.0f} in one process: the per-pair work does not grow in workers)")


if __name__ == "__main__":
    main()
