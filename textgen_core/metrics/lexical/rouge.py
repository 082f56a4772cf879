"""ROUGE-N, ROUGE-L and ROUGE-Lsum with values equal to rouge-score's RougeScorer.

Two backends give the same values. By default pairs go to rouge-score-rs
(``rouge_native``: compiled, tens of times faster). The pure-Python path here
scores the pairs that one declines (huge rougeLsum lines) and everything when
it is not installed, or when :data:`BACKEND` says ``"python"``.

The Python path differs from rouge-score only in speed: each text is
tokenized once, n-gram overlaps come from bit masks of token positions (see
``ngrams``), ROUGE-L uses a bit-parallel LCS, and ROUGE-Lsum equals ROUGE-L
(and reuses it) unless one of the texts has tokens on two lines or more; then
``lcs`` replays rouge-score's union-LCS backtracking exactly.
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Callable, Mapping, Sequence

from ...model import Cell, Datum
from ..spec import Param
from .rouge_native import NAME as NATIVE_NAME, available as native_available, pair_scorer as native_pair_scorer
from .base import LexicalSpec, RowFn, Scorer, fmeasure, row_inputs, scored, unscored
from .lcs import lcs_length, summary_hits
from .ngrams import TokenText, overlaps_from, position_masks
from .tokenize import TextCache, rouge_tokens

ROUGE_TYPES = tuple(f"rouge{n}" for n in range(1, 10)) + ("rougeL", "rougeLsum")
DEFAULT_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

NATIVE, PYTHON = NATIVE_NAME, "python"
#: The backend asked for: rouge-score-rs when it is installed, else the Python path.
BACKEND = NATIVE if native_available() else PYTHON

#: Scores one (target, prediction) pair: {type: (precision, recall, f-measure)}.
PairFn = Callable[[str, str, TextCache], Mapping[str, Sequence[float]]]


class _Text(TokenText):
    """A text as ROUGE sees it: its tokens, and its lines when tokens sit on two lines or more."""

    __slots__ = ("lines",)

    def __init__(self, text: str, stem: bool) -> None:
        self.lines: list[list[str]] | None = None
        if "\n" not in text:
            super().__init__(rouge_tokens(text, stem))
            return
        # A newline always separates tokens, so the text's tokens are its lines' tokens end to end.
        lines = [rouge_tokens(line, stem) for line in text.split("\n") if line]
        super().__init__(list(chain.from_iterable(lines)))
        if sum(1 for line in lines if line) > 1:
            self.lines = lines

    def line_list(self) -> list[list[str]]:
        return self.lines if self.lines is not None else [self.tokens]  # type: ignore[list-item]


def _plain(text: str) -> _Text:
    return _Text(text, False)


def _stemmed(text: str) -> _Text:
    return _Text(text, True)


def _prf(hits: int, predicted: int, target: int) -> tuple[float, float, float]:
    """rouge-score's precision, recall and F-measure (denominators floored at 1, as for n-grams)."""
    precision = hits / max(predicted, 1)
    recall = hits / max(target, 1)
    return precision, recall, fmeasure(precision, recall)


_NGRAM, _LCS, _SUMMARY = 0, 1, 2


def plan(types: Sequence[str]) -> tuple[int, list[tuple[str, int, int]]]:
    """(longest n-gram order needed, [(type, kind, n)]) for a list of ROUGE types."""
    steps = []
    for rouge_type in types:
        if rouge_type == "rougeL":
            steps.append((rouge_type, _LCS, 0))
        elif rouge_type == "rougeLsum":
            steps.append((rouge_type, _SUMMARY, 0))
        else:
            steps.append((rouge_type, _NGRAM, int(rouge_type[5:])))
    return max((n for _, kind, n in steps if kind == _NGRAM), default=0), steps


def _score_pair(
    target: _Text, prediction: _Text, top: int, steps: list[tuple[str, int, int]]
) -> dict[str, tuple[float, float, float]]:
    t_len, p_len = len(target.tokens), len(prediction.tokens)
    short, long = (target, prediction) if t_len <= p_len else (prediction, target)
    d = position_masks(short, long) if short.tokens else []
    hits = overlaps_from(d, top, len(long.tokens)) if d else [0] * top
    out: dict[str, tuple[float, float, float]] = {}
    lcs = None
    for rouge_type, kind, n in steps:
        if kind == _NGRAM:
            out[rouge_type] = _prf(hits[n - 1], prediction.total(n), target.total(n))
        elif kind == _LCS or (target.lines is None and prediction.lines is None):
            if lcs is None:
                # rouge-score gives 0 when either side has no token; otherwise LCS / length.
                lcs = _prf(lcs_length(d, len(long.tokens)), p_len, t_len) if d else (0.0, 0.0, 0.0)
            out[rouge_type] = lcs
        elif not t_len or not p_len:
            out[rouge_type] = (0.0, 0.0, 0.0)
        else:
            found = summary_hits(target.line_list(), prediction.line_list(), prediction.masks())
            out[rouge_type] = _prf(found, p_len, t_len)
    return out


def backend() -> str:
    """The backend :func:`row_scorer` uses now: rouge-score-rs, or python."""
    return NATIVE if BACKEND == NATIVE and native_available() else PYTHON


def _python_pairs(types: Sequence[str], stem: bool) -> PairFn:
    top, steps = plan(types)
    kind = "rouge+stem" if stem else "rouge"
    build = _stemmed if stem else _plain

    def pair(target: str, prediction: str, cache: TextCache) -> Mapping[str, Sequence[float]]:
        return _score_pair(cache.memo(kind, target, build), cache.memo(kind, prediction, build), top, steps)  # type: ignore[arg-type]

    return pair


def pair_scorer(types: Sequence[str], stem: bool) -> PairFn:
    """The pair scorer of the current backend; rouge-score-rs hands the pairs it declines to Python."""
    python = _python_pairs(types, stem)
    if backend() != NATIVE:
        return python
    native = native_pair_scorer(types, stem)

    def pair(target: str, prediction: str, cache: TextCache) -> Mapping[str, Sequence[float]]:
        scores = native(target, prediction)
        return python(target, prediction, cache) if scores is None else scores

    return pair


def row_scorer(params: Mapping[str, Any]) -> RowFn:
    types = _types(params)
    pair = pair_scorer(types, bool(params.get("use_stemmer", False)))

    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        reason = row_inputs(row)
        if reason:
            return unscored(types, reason)
        prediction = row.prediction
        references = row.references
        if len(references) == 1:
            return _cells(types, pair(references[0], prediction, cache), None)  # type: ignore[arg-type]
        best: dict[str, Sequence[float]] = {}
        chosen: dict[str, int] = {}
        for k, reference in enumerate(references):
            scores = pair(reference, prediction, cache)  # type: ignore[arg-type]
            for rouge_type in types:
                triple = scores[rouge_type]
                # score_multi keeps the first reference with the largest f-measure (np.argmax).
                if k == 0 or triple[2] > best[rouge_type][2]:
                    best[rouge_type] = triple
                    chosen[rouge_type] = k
        return _cells(types, best, chosen)

    return score_row


def _cells(types: Sequence[str], scores: Mapping[str, Sequence[float]],
           chosen: Mapping[str, int] | None) -> dict[str, Cell]:
    """One Cell per ROUGE type; types with the very same result (rougeL, rougeLsum) share it."""
    cells: dict[str, Cell] = {}
    if chosen is None:
        made: dict[int, Cell] = {}
        for rouge_type in types:
            triple = scores[rouge_type]
            cell = made.get(id(triple))
            if cell is None:
                cell = made[id(triple)] = scored(triple[2], {"precision": triple[0], "recall": triple[1]})
            cells[rouge_type] = cell
        return cells
    for rouge_type in types:
        precision, recall, f = scores[rouge_type]
        cells[rouge_type] = scored(f, {"precision": precision, "recall": recall, "reference": chosen[rouge_type]})
    return cells


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
    libraries=("rouge-score", "rouge-score-rs", "nltk"),
    tokenizer=lambda p: "rouge-lc-alnum" + ("+porter" if p.get("use_stemmer") else ""),
    score=Scorer(per_row=row_scorer),
    notes="Values equal rouge_score.rouge_scorer.RougeScorer(types, use_stemmer).score_multi: the value is "
    "the F-measure, precision and recall are in the details. Tokens are lowercase runs of [a-z0-9]; every "
    "other character (accents, CJK, emoji, punctuation) separates tokens and is dropped, so a text with "
    "none scores 0. With several references each ROUGE type takes the first reference with the largest "
    "F-measure (details.reference is its 0-based index). rougeLsum treats each line (split on '\\n', no "
    "sentence splitter) as a sentence. An empty prediction or reference scores 0; a row without "
    "references is unscored. Computed by rouge-score-rs (a compiled reimplementation, parity-tested "
    "against rouge-score) when it is installed, else by an equivalent pure-Python path.",
)
