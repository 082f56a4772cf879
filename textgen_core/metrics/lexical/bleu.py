"""BLEU with values equal to nltk's sentence_bleu / corpus_bleu, from per-row n-gram statistics.

Each row keeps nltk's per-sentence numbers (clipped matches and hypothesis
n-gram counts per order, hypothesis length, closest reference length) in its
details; the corpus score re-adds them, as sacrebleu does, instead of
re-tokenizing. The arithmetic follows nltk's step by step (floats where nltk
converts to float, exact fractions where it keeps fractions), so values are
equal, not merely close.
"""

from __future__ import annotations

import math
import operator
import sys
from fractions import Fraction
from typing import Any, Mapping, Sequence

from ...errors import ParameterError
from ...model import Cell, Datum
from ..spec import Param
from ..corpus import CorpusSum, SummedCorpus
from .base import LexicalSpec, NGramWeights, RowFn, Scorer, row_inputs, scored, tokenizer_label, tokenizer_param
from .ngrams import clipped_multi, overlaps, pair_overlaps, word_text
from .tokenize import TextCache

SMOOTHING = ("none",) + tuple(f"method{i}" for i in range(1, 8))
_EPSILON, _ALPHA, _K = 0.1, 5, 5  # nltk SmoothingFunction() defaults
_TINY = sys.float_info.min  # what nltk's method0 puts in place of a zero precision
_LOG_TINY = math.log(_TINY)


def row_stats(cache: TextCache, tokenizer: str, prediction: str, references: Sequence[str], orders: int) -> dict[str, Any]:
    """nltk's per-sentence statistics: matches and counts per n-gram order, and both lengths."""
    hyp = word_text(cache, tokenizer, prediction)
    hyp_len = len(hyp.tokens)
    if len(references) == 1:
        ref = word_text(cache, tokenizer, references[0])
        matches = pair_overlaps(cache, hyp, ref, orders)
        ref_len = len(ref.tokens)
    else:
        refs = [word_text(cache, tokenizer, r) for r in references]
        matches = [0] * orders
        for n in range(1, min(orders, hyp_len) + 1):
            found = clipped_multi(hyp, refs, n)
            if not found:
                break  # no n-gram match means no longer match either
            matches[n - 1] = found
        ref_len = min((len(r.tokens) for r in refs), key=lambda length: (abs(length - hyp_len), length))
    return {"matches": matches, "totals": _totals(hyp_len, orders), "hyp_len": hyp_len, "ref_len": ref_len}


def _totals(hyp_len: int, orders: int) -> list[int]:
    """nltk's precision denominators: max(1, number of n-grams) for n = 1..orders."""
    if hyp_len > orders:
        return list(range(hyp_len, hyp_len - orders, -1))
    return [hyp_len - n + 1 if hyp_len > n else 1 for n in range(1, orders + 1)]


def order_stats(cache: TextCache, tokenizer: str, prediction: str, references: Sequence[str], n: int) -> list[int]:
    """[clipped matches, max(1, count)] of one n-gram order: nltk's modified_precision as a pair."""
    hyp = word_text(cache, tokenizer, prediction)
    refs = [word_text(cache, tokenizer, r) for r in references]
    found = 0
    if hyp.total(n):
        found = overlaps(hyp, refs[0], n)[n - 1] if len(refs) == 1 else clipped_multi(hyp, refs, n)
    return [found, max(1, hyp.total(n))]


def brevity_penalty(ref_len: int, hyp_len: int) -> float:
    if hyp_len > ref_len:
        return 1.0
    if hyp_len == 0:
        return 0.0
    return math.exp(1 - ref_len / hyp_len)


def bleu_value(
    matches: Sequence[int],
    totals: Sequence[int],
    hyp_len: int,
    ref_len: int,
    weights: Sequence[float],
    smoothing: str = "none",
    last_hyp_len: int = 0,
    last_p5: tuple[int, int] = (0, 1),
) -> float:
    """BLEU from summed statistics, as nltk's corpus_bleu computes it.

    ``last_hyp_len`` and ``last_p5`` (the 5-gram precision) describe the last
    sentence of the corpus: nltk's smoothing methods 5, 6 and 7 read them.
    Raises ValueError where nltk raises (method6 without trigram matches).
    """
    if matches[0] == 0:
        return 0.0
    if smoothing == "none":
        # nltk: log of each precision as a float, nltk's float minimum in place of a zero count.
        if all(matches):
            log_sum = math.fsum(map(operator.mul, weights, map(math.log, map(operator.truediv, matches, totals))))
        else:
            log_sum = math.fsum([w * (math.log(m / t) if m else _LOG_TINY) for w, m, t in zip(weights, matches, totals)])
    else:
        precisions = _smoothed(list(matches), list(totals), hyp_len, smoothing, last_hyp_len, last_p5)
        log_sum = math.fsum(w * math.log(p) for w, p in zip(weights, precisions) if p > 0)
    return brevity_penalty(ref_len, hyp_len) * math.exp(log_sum)


def _smoothed(matches, totals, hyp_len, method, last_hyp_len, last_p5) -> list:
    if method == "method1":
        return [m / t if m else (m + _EPSILON) / t for m, t in zip(matches, totals)]
    if method == "method2":
        return [m / t if i == 0 else (m + 1) / (t + 1) for i, (m, t) in enumerate(zip(matches, totals))]
    if method == "method3":
        out, k = [], 1
        for m, t in zip(matches, totals):
            if m:
                out.append(m / t)
            else:
                out.append(1 / (2**k * t))
                k += 1
        return out
    exact: list = [Fraction(m, t) for m, t in zip(matches, totals)]
    if method in ("method4", "method7"):
        exact = _method4(exact, totals, matches, hyp_len)
        if method == "method4":
            return exact
    if method in ("method5", "method7"):
        return _method5(exact, Fraction(*last_p5))
    if method == "method6":
        return _method6(exact, matches, last_hyp_len)
    raise ParameterError(f"parameter bleu.smoothing: unknown method {method!r}")


def _method4(values: list, totals, matches, hyp_len: int) -> list:
    # Chen & Cherry method 4: a zero count becomes 1/(2^k * K / ln(length)), over the n-gram count.
    k = 1
    for i, m in enumerate(matches):
        if m == 0 and hyp_len > 1:
            values[i] = (1 / (2**k * _K / math.log(hyp_len))) / totals[i]
            k += 1
    return values


def _method5(values: list, p5: Fraction) -> list:
    # Each precision becomes the mean of its (smoothed) lower neighbour, itself and its upper neighbour.
    upper = values + [p5]
    previous = values[0] + 1
    for i in range(len(values)):
        values[i] = (previous + values[i] + upper[i + 1]) / 3
        previous = values[i]
    return values


def _method6(values: list, matches, last_hyp_len: int) -> list:
    # Gao & He: interpolate each precision from order 3 on with a prior extrapolated from the two below.
    if len(values) < 3 or not values[2]:
        raise ValueError("smoothing method6 needs trigram matches (nltk raises an AssertionError)")
    for i in range(2, len(values)):
        prior = 0 if values[i - 2] == 0 else values[i - 1] ** 2 / values[i - 2]
        grams = max(0, last_hyp_len - i)
        values[i] = (matches[i] + _ALPHA * prior) / (grams + _ALPHA)
    return values


def row_scorer(params: Mapping[str, Any], rows: Sequence[Datum] = ()) -> RowFn:
    """Scores one row; statistics of the chunk's ``rows`` come from the compiled kernel when it pays."""
    weights = tuple(params["weights"])
    smoothing = params["smoothing"]
    tokenizer = params["tokenizer"]
    needs_p5 = smoothing in ("method5", "method7")
    orders = len(weights)
    compiled = compiled_stats(rows, params)

    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        stats = compiled.get(id(row))  # only rows that passed row_inputs are there
        if stats is None:
            reason = row_inputs(row)
            if reason:
                return {"bleu": Cell.unscored(reason)}
            stats = row_stats(cache, tokenizer, row.prediction, row.references, orders)  # type: ignore[arg-type]
            if needs_p5:
                stats["p5"] = order_stats(cache, tokenizer, row.prediction, row.references, 5)  # type: ignore[arg-type]
        return _cell(stats, weights, smoothing)

    return score_row


def _cell(stats: dict[str, Any], weights: tuple[float, ...], smoothing: str) -> dict[str, Cell]:
    """The row's BLEU cell from its statistics (``p5`` present for smoothing methods 5 and 7)."""
    hyp_len = stats["hyp_len"]
    p5 = tuple(stats["p5"]) if "p5" in stats else (0, 1)
    try:
        value = bleu_value(stats["matches"], stats["totals"], hyp_len, stats["ref_len"], weights, smoothing,
                           hyp_len, p5)  # type: ignore[arg-type]
    except ValueError as exc:
        return {"bleu": Cell.unscored(str(exc), stats)}
    return {"bleu": scored(value, stats)}


#: Chunks with at least this many scorable rows take the compiled kernel (``bleu_kernel``); smaller
#: ones stay in Python, where loading numba (about half a second, once per process) costs more.
COMPILED_MIN_ROWS = 500
#: Tokenizers the kernel implements, and whether each lowercases first.
_KERNEL_LOWERS = {"regex": False, "regex-lower": True}


def compiled_stats(rows: Sequence[Datum], params: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """{id(row): the row's statistics} from the compiled kernel, or {} when the chunk stays in Python."""
    lower = _KERNEL_LOWERS.get(params["tokenizer"])
    scorable = [row for row in rows if row_inputs(row) is None] if lower is not None else []
    if len(scorable) < COMPILED_MIN_ROWS:
        return {}
    from .bleu_kernel import bleu_stats  # numba: loaded only by chunks large enough to repay it

    orders = len(params["weights"])
    needs_p5 = params["smoothing"] in ("method5", "method7")
    matches, hyp_lens, ref_lens = bleu_stats(
        [row.prediction for row in scorable], [row.references for row in scorable],  # type: ignore[misc]
        max(orders, 5) if needs_p5 else orders, lower)
    out: dict[int, dict[str, Any]] = {}
    for row, found, hyp_len, ref_len in zip(scorable, matches, hyp_lens, ref_lens):
        stats: dict[str, Any] = {"matches": found[:orders] if needs_p5 else found,
                                 "totals": _totals(hyp_len, orders), "hyp_len": hyp_len, "ref_len": ref_len}
        if needs_p5:
            stats["p5"] = [found[4], max(1, hyp_len - 4)]
        out[id(row)] = stats
    return out


def corpus_stats(cells: Mapping[str, Cell], params: Mapping[str, Any]) -> list[int] | None:
    """Matches and totals per n-gram order, hypothesis and reference lengths, and the 5-gram precision (read
    from the last row only, by smoothing methods 5 and 7); None for a row without statistics."""
    cell = cells.get("bleu")
    details = cell.details if cell is not None else None
    if not details or "matches" not in details:
        return None
    n = len(params["weights"])
    return [*details["matches"][:n], *details["totals"][:n], details["hyp_len"], details["ref_len"],
            *details.get("p5", (0, 1))]


def corpus_value(total: CorpusSum, params: Mapping[str, Any]) -> dict[str, float]:
    """nltk corpus_bleu over the rows that have statistics (rows without references have none)."""
    weights = tuple(params["weights"])
    n = len(weights)
    counts = [int(v) for v in total.total]
    last = [int(v) for v in total.last]
    try:
        value = bleu_value(counts[:n], counts[n:2 * n], counts[2 * n], counts[2 * n + 1], weights,
                           params["smoothing"], last[2 * n], (last[2 * n + 2], last[2 * n + 3]))
    except ValueError:
        return {}
    return {"bleu": value}


corpus = SummedCorpus(corpus_stats, corpus_value)


def _check(params: Mapping[str, Any]) -> None:
    if params.get("smoothing") == "method6" and len(params.get("weights") or ()) < 3:
        raise ParameterError("parameter bleu.smoothing: method6 needs at least 3 weights (n-gram orders)")


SPEC = LexicalSpec(
    name="bleu",
    label="BLEU",
    group="lexical",
    description="Sentence BLEU (clipped n-gram precision with a brevity penalty) as nltk computes it; "
    "the model-level aggregate is corpus BLEU, not the mean of sentence scores.",
    needs=("prediction", "references"),
    outputs=lambda _p: ("bleu",),
    params=(
        NGramWeights(
            "weights", "floats", (0.25, 0.25, 0.25, 0.25),
            "Weight of each n-gram order, from unigrams up; (0.25,0.25,0.25,0.25) is BLEU-4.",
            minimum=0.0,
        ),
        Param(
            "smoothing", "choice", "none",
            "nltk SmoothingFunction method (Chen & Cherry 2014) for zero n-gram matches; none is method0.",
            choices=SMOOTHING,
        ),
        tokenizer_param(),
    ),
    libraries=("nltk", "regex"),  # regex: the engine (and Unicode tables) behind the word tokens
    tokenizer=tokenizer_label,
    score=Scorer(per_row=row_scorer, sees_chunk=True),
    corpus=corpus,
    check=_check,
    notes="Equal to nltk.translate.bleu_score.sentence_bleu(references, prediction, weights, smoothing) on the "
    "chosen tokens; several references clip counts by the largest count in any reference and use the closest "
    "reference length, as nltk does. Without smoothing a missing higher-order match gives a near-zero score "
    "(nltk's float minimum), and no unigram match gives 0 (so does an empty prediction). details hold the "
    "per-row statistics; the corpus value is nltk corpus_bleu over the scored rows (smoothing methods 5-7 read "
    "the last row, as nltk does). method6 leaves rows without trigram matches unscored (nltk raises). "
    "Methods 5 and 7 average each precision with its neighbours starting from p1 + 1, so their BLEU can "
    "exceed 1, exactly as in nltk.",
)
