"""Throughput of the lexical engine (ROUGE 1/2/L/Lsum + BLEU-4) against rouge-score + nltk.

    python bench/lexical.py [--pairs 20000] [--ref-pairs 2000] [--workers N] [--seed 1]
                            [--rouge-backend rouge-score-rs|python]

On a seeded synthetic corpus, prints pairs/second for our ``score_lexical``
and for rouge-score's ``RougeScorer.score`` plus nltk's ``sentence_bleu``
called directly (on a subset: they are slow), their ratio and the largest
absolute difference between the two sets of values: for ROUGE+BLEU together
(the target), then ROUGE alone and BLEU alone. Then our throughput with a
process pool of 1 and N workers, and the scaling factor.

The machine may be shared: one-core figures are CPU seconds of this process
(``time.process_time``, which counts every thread), ours and the reference
are timed in alternating rounds so that both see the same load, and imports,
scorer construction and first calls (loading the compiled BLEU kernel) stay
out of the timings on both sides. Each round's values are kept, not its cells,
as a streamed run keeps none: the garbage collector walks the same heap for both.
Each round scores 2,000 rows in one call, so BLEU takes its compiled path
(``bleu.COMPILED_MIN_ROWS``), as the runner's chunks do.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textgen_core.metrics.lexical import bleu, rouge, rouge_native, score_lexical  # noqa: E402
from textgen_core.metrics.lexical.synthetic import synthetic_pairs  # noqa: E402
from textgen_core.model import Datum  # noqa: E402

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
CONFIGS = {
    "ROUGE(4)+BLEU": {"rouge": {"rouge_types": ROUGE_TYPES}, "bleu": {}},
    "ROUGE(4) only": {"rouge": {"rouge_types": ROUGE_TYPES}},
    "BLEU only": {"bleu": {}},
}
ROUNDS = 10

Pair = tuple[str, str]  # (reference, prediction)


def _rows(pairs: list[Pair]) -> list[Datum]:
    return [Datum(str(i), "bench", prediction=p, references=(r,)) for i, (r, p) in enumerate(pairs)]


def _ours(rows: list[Datum], selected: dict) -> list[dict[str, list]]:
    """Our cells for the rows (one list of {score name: Cell} per metric)."""
    return [score_lexical(rows, selected)]


def _our_values(runs: list[dict[str, list]]) -> list[dict[str, float | None]]:
    values: list[dict[str, float | None]] = []
    for run in runs:
        part: list[dict[str, float | None]] = []
        for cells in run.values():
            part += [{} for _ in range(len(cells) - len(part))]
            for row_values, row_cells in zip(part, cells):
                row_values.update((name, cell.value) for name, cell in row_cells.items())
        values += part
    return values


class Reference:
    """rouge-score and nltk called directly; BLEU on nltk RegexpTokenizer tokens, as valor-lite does."""

    def __init__(self) -> None:
        from nltk.tokenize import RegexpTokenizer
        from nltk.translate.bleu_score import sentence_bleu
        from rouge_score import rouge_scorer

        self.rouge = rouge_scorer.RougeScorer(list(ROUGE_TYPES)).score
        self.words = RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+").tokenize
        self.sentence_bleu = sentence_bleu

    def scores(self, pairs: list[Pair], selected: dict) -> list[tuple]:
        """(rouge-score's Score dict or None, nltk's BLEU or None) per pair."""
        with_rouge, with_bleu = "rouge" in selected, "bleu" in selected
        words, sentence_bleu, score = self.words, self.sentence_bleu, self.rouge
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nltk warns on every sentence without 4-gram matches
            for reference, prediction in pairs:
                rouge_scores = score(reference, prediction) if with_rouge else None
                bleu = sentence_bleu([words(reference)], words(prediction)) if with_bleu else None
                out.append((rouge_scores, bleu))
        return out

    @staticmethod
    def values(scores: list[tuple]) -> list[dict[str, float]]:
        out = []
        for rouge_scores, bleu in scores:
            row = {t: rouge_scores[t].fmeasure for t in ROUGE_TYPES} if rouge_scores is not None else {}
            if bleu is not None:
                row["bleu"] = float(bleu)
            out.append(row)
        return out


def _split(items: list, parts: int) -> list[list]:
    size = -(-len(items) // parts)
    return [items[i : i + size] for i in range(0, len(items), size)]


def _timed(fn: Callable[[], list], into: list, values: Callable[[list], list]) -> float:
    """CPU seconds of ``fn()``; its values (not its cells) go into ``into`` afterwards, untimed.

    Keeping the values only is what a stored run holds in memory (cells stream to the store), and
    it keeps the garbage collector from walking every earlier round's cells on both sides.
    """
    start = time.process_time()
    result = fn()
    elapsed = time.process_time() - start
    into.extend(values(result))
    return elapsed


def compare(label: str, selected: dict, rows: list[Datum], ref_pairs: list[Pair], reference: Reference) -> float:
    """Prints one line (ours, reference, ratio, max difference) and returns our pairs per CPU second.

    Only the scoring calls are timed; values are read from the results afterwards, on both sides.
    """
    ours_values: list[dict] = []
    ref_values: list[dict] = []
    ours_cpu = ref_cpu = 0.0
    for our_part, ref_part in zip(_split(rows, ROUNDS), _split(ref_pairs, ROUNDS)):
        ours_cpu += _timed(lambda: _ours(our_part, selected), ours_values, _our_values)
        ref_cpu += _timed(lambda: reference.scores(ref_part, selected), ref_values, reference.values)
    ours_rate, ref_rate = len(rows) / ours_cpu, len(ref_pairs) / ref_cpu
    diff, equal, total = 0.0, 0, 0
    for ours_row, ref_row in zip(ours_values, ref_values):
        for key, value in ref_row.items():
            total += 1
            equal += ours_row[key] == value
            diff = max(diff, abs((ours_row[key] or 0.0) - value))
    print(f"{label:<15} {ours_rate:11.0f} {ref_rate:11.0f} {ours_rate / ref_rate:7.1f}x {diff:11.3g}   "
          f"{equal}/{total}")
    return ours_rate


def _chunk_cpu(rows: list[Datum]) -> tuple[dict, float]:
    """A pool worker's cells for one chunk (sent back, as the runner's are) and the CPU seconds they took."""
    start = time.process_time()
    cells = score_lexical(rows, CONFIGS["ROUGE(4)+BLEU"])
    return cells, time.process_time() - start


def pool_rate(rows: list[Datum], workers: int) -> tuple[float, float, float]:
    """(pairs per wall second, pairs per worker CPU second, parent CPU seconds) with ``workers`` processes.

    The parent's CPU time is what receiving the cells costs (unpickling), outside the workers.
    """
    chunks = _split(rows, max(workers, 2) * 8)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(_chunk_cpu, chunks[:workers]))  # warm up the workers (imports, first calls)
        start, parent = time.perf_counter(), time.process_time()
        worker_cpu = sum(cpu for _cells, cpu in pool.map(_chunk_cpu, chunks))
        wall, parent = time.perf_counter() - start, time.process_time() - parent
    return len(rows) / wall, len(rows) / worker_cpu, parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20000, help="synthetic pairs scored by our engine")
    parser.add_argument("--ref-pairs", type=int, default=2000, help="pairs scored by rouge-score + nltk")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes for the pool run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rouge-backend", choices=(rouge.NATIVE, rouge.PYTHON), default=rouge.BACKEND,
                        help="ROUGE backend to measure (default: rouge-score-rs when installed)")
    args = parser.parse_args(argv)
    rouge.BACKEND = args.rouge_backend  # pool workers are forked, so they inherit it

    pairs = synthetic_pairs(args.pairs, seed=args.seed)
    ref_pairs = pairs[: min(args.ref_pairs, len(pairs))]
    rows = _rows(pairs)
    multi = sum(1 for r, p in pairs if "\n" in r and "\n" in p)
    words = sum(len(r.split()) + len(p.split()) for r, p in pairs) / (2 * len(pairs))
    print(f"corpus: {len(pairs)} pairs, {words:.1f} words per text on average, {multi} with several lines on both sides")
    backend = rouge.backend()
    version = rouge_native.version() if backend == rouge.NATIVE else None
    print(f"ROUGE backend: {backend}{' ' + version if version else ''}")

    print(f"BLEU statistics: compiled (numba) for chunks of {bleu.COMPILED_MIN_ROWS}+ rows; "
          f"{-(-len(rows) // ROUNDS)} rows per call here")

    reference = Reference()
    for selected in CONFIGS.values():  # first calls (imports, the numba cache) stay out of the timings, on both sides
        _ours(rows[: max(50, bleu.COMPILED_MIN_ROWS)], selected)
        reference.scores(ref_pairs[:50], selected)
    print(f"\none core, CPU time  {'ours/s':>11} {'reference/s':>11} {'ratio':>8} {'max |diff|':>11}   identical values")
    ours_rate = 0.0
    for label, selected in CONFIGS.items():
        rate = compare(label, selected, rows, ref_pairs, reference)
        ours_rate = ours_rate or rate
    print(f"(ours on {len(rows)} pairs, reference on {len(ref_pairs)}, in {ROUNDS} alternating rounds)")

    if args.workers > 1:
        one, one_cpu, one_parent = pool_rate(rows, 1)
        many, many_cpu, many_parent = pool_rate(rows, args.workers)
        print(f"\nprocess pool, ROUGE(4)+BLEU, wall time (load average now {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores)")
        print(f"1 worker:    {one:10.0f} pairs/s  ({one_cpu:.0f} pairs per worker CPU second; "
              f"parent {one_parent:.2f} CPU s receiving cells)")
        print(f"{args.workers} workers: {many:11.0f} pairs/s  ({many_cpu:.0f} pairs per worker CPU second; "
              f"parent {many_parent:.2f} CPU s receiving cells)")
        print(f"scaling:     {many / one:10.2f}x with {args.workers} workers "
              f"(per-pair CPU cost in workers: {one_cpu / many_cpu:.2f}x that of one worker)")


if __name__ == "__main__":
    main()
