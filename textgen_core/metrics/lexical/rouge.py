"""ROUGE-N, ROUGE-L and ROUGE-Lsum with values equal to rouge-score's RougeScorer.

Differences from rouge-score are only in speed: tokens and n-gram counts are
computed once per text, ROUGE-L uses a bit-parallel LCS, and ROUGE-Lsum
equals ROUGE-L (and reuses it) unless both texts hold a line break that
leaves tokens on two lines or more.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..spec import Param
from .base import LexicalSpec, RowScorer, fmeasure, row_inputs, unscored
from .lcs import lcs_length, match_masks, summary_hits
from .ngrams import count_ngrams, overlap
from .tokenize import TextCache, rouge_tokens

ROUGE_TYPES = tuple(f"rouge{n}" for n in range(1, 10)) + ("rougeL", "rougeLsum")
DEFAULT_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


class _Text:
    """A text as ROUGE sees it: tokens, n-gram counts, and its lines when it has several."""

    __slots__ = ("tokens", "counts", "lines", "masks")

    def __init__(self, text: str, stem: bool) -> None:
        self.tokens = rouge_tokens(text, stem)
        self.counts: dict[int, Counter] = {}
        self.masks: dict[str, int] | None = None
        self.lines: list[list[str]] | None = None
        if "\n" in text:
            lines = [rouge_tokens(line, stem) for line in text.split("\n") if line]
            if sum(1 for line in lines if line) > 1:
                self.lines = lines

    def ngrams(self, n: int) -> Counter:
        counts = self.counts.get(n)
        if counts is None:
            counts = self.counts[n] = count_ngrams(self.tokens, n)
        return counts

    def line_list(self) -> list[list[str]]:
        return self.lines if self.lines is not None else [self.tokens]


def _prepared(cache: TextCache, text: str, stem: bool) -> _Text:
    table = cache.table(("rouge", stem))
    item = table.get(text)
    if item is None:
        item = table[text] = _Text(text, stem)
    return item  # type: ignore[return-value]


def _ngram_score(target: _Text, prediction: _Text, n: int) -> tuple[float, float, float]:
    t_counts = target.ngrams(n)
    p_counts = prediction.ngrams(n)
    hits = overlap(t_counts, p_counts)
    t_total = max(len(target.tokens) - n + 1, 0)
    p_total = max(len(prediction.tokens) - n + 1, 0)
    precision = hits / max(p_total, 1)
    recall = hits / max(t_total, 1)
    return precision, recall, fmeasure(precision, recall)


def _lcs_score(target: _Text, prediction: _Text) -> tuple[float, float, float]:
    t, p = target.tokens, prediction.tokens
    if not t or not p:
        return 0.0, 0.0, 0.0
    # Loop over the shorter sequence; the longer one becomes the bit columns.
    if len(t) <= len(p):
        if prediction.masks is None:
            prediction.masks = match_masks(p)
        lcs = lcs_length(t, p, prediction.masks)
    else:
        if target.masks is None:
            target.masks = match_masks(t)
        lcs = lcs_length(p, t, target.masks)
    precision = lcs / len(p)
    recall = lcs / len(t)
    return precision, recall, fmeasure(precision, recall)


def _lsum_score(target: _Text, prediction: _Text) -> tuple[float, float, float]:
    m = len(target.tokens)
    n = len(prediction.tokens)
    if not m or not n:
        return 0.0, 0.0, 0.0
    hits = summary_hits(target.line_list(), prediction.line_list(), target.ngrams(1), prediction.ngrams(1))
    recall = hits / m
    precision = hits / n
    return precision, recall, fmeasure(precision, recall)


def score_pair(target: _Text, prediction: _Text, types: Sequence[str]) -> dict[str, tuple[float, float, float]]:
    """(precision, recall, f-measure) of each ROUGE type for one target and one prediction."""
    out: dict[str, tuple[float, float, float]] = {}
    lcs = None
    for rouge_type in types:
        if rouge_type == "rougeL" or (
            rouge_type == "rougeLsum" and target.lines is None and prediction.lines is None
        ):
            if lcs is None:
                lcs = _lcs_score(target, prediction)
            out[rouge_type] = lcs
        elif rouge_type == "rougeLsum":
            out[rouge_type] = _lsum_score(target, prediction)
        else:
            out[rouge_type] = _ngram_score(target, prediction, int(rouge_type[5:]))
    return out


def score_rows(rows: Sequence[Datum], params: Mapping[str, Any], cache: TextCache) -> list[dict[str, Cell]]:
    types = _types(params)
    stem = bool(params.get("use_stemmer", False))
    results: list[dict[str, Cell]] = []
    for row in rows:
        reason = row_inputs(row)
        if reason:
            results.append(unscored(types, reason))
            continue
        prediction = _prepared(cache, row.prediction, stem)  # type: ignore[arg-type]
        best: dict[str, tuple[float, float, float]] = {}
        chosen: dict[str, int] = {}
        for k, reference in enumerate(row.references):
            scores = score_pair(_prepared(cache, reference, stem), prediction, types)
            for rouge_type, triple in scores.items():
                # score_multi keeps the first reference with the largest f-measure (np.argmax).
                if k == 0 or triple[2] > best[rouge_type][2]:
                    best[rouge_type] = triple
                    chosen[rouge_type] = k
        several = len(row.references) > 1
        cells = {}
        for rouge_type in types:
            precision, recall, f = best[rouge_type]
            details: dict[str, Any] = {"precision": precision, "recall": recall}
            if several:
                details["reference"] = chosen[rouge_type]
            cells[rouge_type] = Cell(f, details)
        results.append(cells)
    return results


def _types(params: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(params.get("rouge_types") or DEFAULT_TYPES))


SPEC = LexicalSpec(
    name="rouge",
    label="ROUGE",
    group="lexical",
    description="N-gram (rouge1..rouge9) and longest-common-subsequence (rougeL, rougeLsum) overlap "
    "F-measure between the prediction and the reference, as Google's rouge-score computes it.",
    needs=("prediction", "references"),
    outputs=_types,
    params=(
        Param(
            "rouge_types",
            "choices",
            DEFAULT_TYPES,
            "ROUGE variants to compute; each becomes a score of that name.",
            choices=ROUGE_TYPES,
        ),
        Param("use_stemmer", "bool", False, "Porter-stem words longer than 3 characters before matching."),
    ),
    libraries=("rouge-score", "nltk"),
    tokenizer=lambda p: "rouge-lc-alnum" + ("+porter" if p.get("use_stemmer") else ""),
    score=RowScorer(score_rows),
    notes="Values equal rouge_score.rouge_scorer.RougeScorer(types, use_stemmer).score_multi: the value is "
    "the F-measure, precision and recall are in the details. Tokens are lowercase runs of [a-z0-9]; every "
    "other character (accents, CJK, emoji, punctuation) separates tokens and is dropped, so a text with "
    "none scores 0. With several references each ROUGE type takes the first reference with the largest "
    "F-measure (details.reference is its 0-based index). rougeLsum treats each line (split on '\\n', no "
    "sentence splitter) as a sentence. An empty prediction or reference scores 0; a row without "
    "references is unscored.",
)
