"""GLEU (Wu et al. 2016) with values equal to nltk's sentence_gleu / corpus_gleu.

Per reference, the matches are the n-gram overlap over orders min_len..max_len
and the total is the larger of the hypothesis and reference n-gram counts;
the reference with the best ratio (the first on ties) is kept. The corpus
score divides the summed matches by the summed totals, as nltk does.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import ParameterError
from ...model import Cell, Datum
from ..spec import Param
from ..corpus import CorpusSum, SummedCorpus
from .base import LexicalSpec, RowFn, Scorer, row_inputs, tokenizer_label, tokenizer_param
from .ngrams import pair_overlaps, word_text
from .tokenize import TextCache


def _grams(length: int, low: int, high: int) -> int:
    """How many n-grams of orders low..high a sequence of ``length`` tokens has."""
    return sum(max(0, length - n + 1) for n in range(low, high + 1))


def row_stats(cache: TextCache, tokenizer: str, prediction: str, references: Sequence[str], low: int, high: int) -> dict[str, int]:
    hyp = word_text(cache, tokenizer, prediction)
    hyp_total = _grams(len(hyp.tokens), low, high)
    best: tuple[int, int] | None = None
    chosen = -1
    for k, reference in enumerate(references):
        ref = word_text(cache, tokenizer, reference)
        n_all = max(hyp_total, _grams(len(ref.tokens), low, high))
        if n_all == 0:
            continue
        hits = sum(pair_overlaps(cache, hyp, ref, high)[low - 1:])
        if best is None or hits / n_all > best[0] / best[1]:
            best = (hits, n_all)
            chosen = k
    if best is None:
        return {"matches": 0, "total": 0}
    stats = {"matches": best[0], "total": best[1]}
    if len(references) > 1:
        stats["reference"] = chosen
    return stats


def row_scorer(params: Mapping[str, Any]) -> RowFn:
    low, high, tokenizer = params["min_len"], params["max_len"], params["tokenizer"]

    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        reason = row_inputs(row)
        if reason:
            return {"gleu": Cell.unscored(reason)}
        stats = row_stats(cache, tokenizer, row.prediction, row.references, low, high)  # type: ignore[arg-type]
        return {"gleu": Cell(stats["matches"] / stats["total"] if stats["total"] else 0.0, stats)}

    return score_row


def corpus_stats(cells: Mapping[str, Cell], params: Mapping[str, Any]) -> tuple[int, int] | None:
    """(matches, total) of a row with statistics; None for a row without (no references)."""
    cell = cells.get("gleu")
    if cell is None or not cell.details or "total" not in cell.details:
        return None
    return cell.details["matches"], cell.details["total"]


def corpus_value(total: CorpusSum, params: Mapping[str, Any]) -> dict[str, float]:
    """nltk corpus_gleu: summed matches over summed totals of the scored rows."""
    matches, count = total.total
    return {"gleu": matches / count if count else 0.0}


corpus = SummedCorpus(corpus_stats, corpus_value)


def _check(params: Mapping[str, Any]) -> None:
    if params["max_len"] < params["min_len"]:
        raise ParameterError(
            f"parameter gleu.max_len: {params['max_len']} is below gleu.min_len {params['min_len']}"
        )


SPEC = LexicalSpec(
    name="gleu",
    label="GLEU",
    group="lexical",
    description="Google-BLEU: the minimum of n-gram precision and recall, as nltk computes it; the "
    "model-level aggregate is corpus GLEU.",
    needs=("prediction", "references"),
    outputs=lambda _p: ("gleu",),
    params=(
        Param("min_len", "int", 1, "Shortest n-gram order counted.", minimum=1, maximum=20),
        Param("max_len", "int", 4, "Longest n-gram order counted.", minimum=1, maximum=20),
        tokenizer_param(),
    ),
    libraries=("nltk", "regex"),  # regex: the engine (and Unicode tables) behind the word tokens
    tokenizer=tokenizer_label,
    score=Scorer(per_row=row_scorer),
    corpus=corpus,
    check=_check,
    notes="Equal to nltk.translate.gleu_score.sentence_gleu(references, prediction, min_len, max_len) on the "
    "chosen tokens. Several references: the one with the best matches/total ratio (first on ties, its index "
    "in details.reference). When neither side has an n-gram of the counted orders (e.g. empty prediction and "
    "references) the score is 0, as in nltk. The corpus value is nltk corpus_gleu over the scored rows.",
)
