"""METEOR with values equal to nltk's meteor_score (exact, Porter-stem and WordNet-synonym matching).

The alignment follows nltk 3.10 stage by stage: words are lowercased; exact
matches first, then matches of the Porter stems of the words left, then
WordNet synonyms of those stems. In each stage the hypothesis words are taken
from the last to the first, each pairing with the last unused reference word
it matches. Stems and synonym sets are memoized per process, which is where
nltk spends its time.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..spec import Param
from .wordnet import load as load_wordnet, problem as wordnet_problem
from .base import LexicalSpec, RowFn, Scorer, row_inputs, tokenizer_label, tokenizer_param
from .ngrams import word_text
from .tokenize import TextCache

_CACHE_LIMIT = 200_000
_stems: dict[str, str] = {}
_synonyms: dict[str, frozenset[str]] = {}
_stemmer: Any = None

Pairs = list[tuple[int, str]]


def _stem(word: str) -> str:
    global _stemmer
    found = _stems.get(word)
    if found is None:
        if _stemmer is None:
            from nltk.stem.porter import PorterStemmer

            _stemmer = PorterStemmer()
        if len(_stems) >= _CACHE_LIMIT:
            _stems.clear()
        found = _stems[word] = _stemmer.stem(word)
    return found


def _synonyms_of(word: str, reader: Any) -> frozenset[str]:
    """The word and the single-word lemma names of all its WordNet synsets."""
    found = _synonyms.get(word)
    if found is None:
        names = {word}
        for synset in reader.synsets(word):
            for lemma in synset.lemmas():
                name = lemma.name()
                if "_" not in name:
                    names.add(name)
        if len(_synonyms) >= _CACHE_LIMIT:
            _synonyms.clear()
        found = _synonyms[word] = frozenset(names)
    return found


def _pair_off(hyp: Pairs, ref: Pairs, candidates: Any = None) -> tuple[list[tuple[int, int]], Pairs, Pairs]:
    """One matching stage: each hypothesis word, last first, takes the last unused reference word it matches.

    Without ``candidates`` a word matches itself; with it, any word of ``candidates(word)``.
    Returns (hypothesis index, reference index) pairs and the words left on each side.
    """
    slots: dict[str, list[int]] = {}
    for k, (_, word) in enumerate(ref):
        slots.setdefault(word, []).append(k)
    pairs: list[tuple[int, int]] = []
    used_hyp: set[int] = set()
    used_ref: set[int] = set()
    for k in range(len(hyp) - 1, -1, -1):
        word = hyp[k][1]
        if candidates is None:
            stack = slots.get(word)
        else:
            stack, last = None, -1
            for option in candidates(word):
                found = slots.get(option)
                if found and found[-1] > last:
                    stack, last = found, found[-1]
        if stack:
            j = stack.pop()
            used_hyp.add(k)
            used_ref.add(j)
            pairs.append((hyp[k][0], ref[j][0]))
    return (
        pairs,
        [item for k, item in enumerate(hyp) if k not in used_hyp],
        [item for k, item in enumerate(ref) if k not in used_ref],
    )


def align(hypothesis: Sequence[str], reference: Sequence[str], reader: Any) -> list[tuple[int, int]]:
    """Matched (hypothesis index, reference index) pairs, sorted by hypothesis index."""
    hyp = list(enumerate(w.lower() for w in hypothesis))
    ref = list(enumerate(w.lower() for w in reference))
    exact, hyp, ref = _pair_off(hyp, ref)
    stemmed, hyp, ref = _pair_off([(i, _stem(w)) for i, w in hyp], [(i, _stem(w)) for i, w in ref])
    synonym, _, _ = _pair_off(hyp, ref, lambda word: _synonyms_of(word, reader))
    return sorted(exact + stemmed + synonym, key=lambda pair: pair[0])


def _chunks(matches: list[tuple[int, int]]) -> int:
    """Fewest runs of matches adjacent on both sides."""
    runs = 1
    for (h0, r0), (h1, r1) in zip(matches, matches[1:]):
        if not (h1 == h0 + 1 and r1 == r0 + 1):
            runs += 1
    return runs


def single(
    hypothesis: Sequence[str], reference: Sequence[str], reader: Any, alpha: float, beta: float, gamma: float
) -> tuple[float, dict[str, Any]]:
    """METEOR of one hypothesis against one reference, and the numbers behind it."""
    matches = align(hypothesis, reference, reader)
    count = len(matches)
    try:
        precision = float(count) / len(hypothesis)
        recall = float(count) / len(reference)
        fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
        chunks = float(_chunks(matches))
        fragmentation = chunks / count
    except ZeroDivisionError:
        return 0.0, {"matches": count}
    penalty = gamma * fragmentation**beta
    return (1 - penalty) * fmean, {"matches": count, "chunks": int(chunks), "precision": precision, "recall": recall}


def row_scorer(params: Mapping[str, Any]) -> RowFn:
    alpha, beta, gamma = params["alpha"], params["beta"], params["gamma"]
    tokenizer = params["tokenizer"]

    def score_row(row: Datum, cache: TextCache) -> dict[str, Cell]:
        reason = row_inputs(row)
        if reason:
            return {"meteor": Cell.unscored(reason)}
        try:
            reader = load_wordnet()
        except RuntimeError as exc:
            return {"meteor": Cell.unscored(str(exc))}
        hyp = word_text(cache, tokenizer, row.prediction).tokens  # type: ignore[arg-type]
        best: tuple[float, dict[str, Any]] | None = None
        for k, reference in enumerate(row.references):
            value, details = single(hyp, word_text(cache, tokenizer, reference).tokens, reader, alpha, beta, gamma)
            if best is None or value > best[0]:  # nltk takes max(): the first of equal scores
                if len(row.references) > 1:
                    details["reference"] = k
                best = (value, details)
        assert best is not None
        return {"meteor": Cell(best[0], best[1])}

    return score_row


SPEC = LexicalSpec(
    name="meteor",
    label="METEOR",
    group="lexical",
    description="Unigram alignment by exact words, Porter stems and WordNet synonyms, scored by a recall-weighted "
    "harmonic mean with a fragmentation penalty, as nltk's meteor_score computes it.",
    needs=("prediction", "references"),
    outputs=lambda _p: ("meteor",),
    params=(
        Param("alpha", "float", 0.9, "Relative weight of precision against recall in the harmonic mean.",
              minimum=0.0, maximum=1.0),
        Param("beta", "float", 3.0, "Shape of the fragmentation penalty (its exponent).", minimum=0.0),
        Param("gamma", "float", 0.5, "Weight of the fragmentation penalty.", minimum=0.0, maximum=1.0),
        tokenizer_param(),
    ),
    libraries=("nltk", "regex"),  # regex: the engine (and Unicode tables) behind the word tokens
    tokenizer=tokenizer_label,
    score=Scorer(per_row=row_scorer),
    unavailable=wordnet_problem,
    notes="Equal to nltk.translate.meteor_score.meteor_score(references, prediction, alpha, beta, gamma) on the "
    "chosen tokens, with WordNet 3.0 read offline (nltk's wordnet corpus if installed, else Debian's wordnet-base "
    "files under /usr/share/wordnet or $TEXTGEN_EVAL_WORDNET_DIR; without either the metric is unavailable: "
    "apt-get install wordnet-base). Words are lowercased before matching. Several references: the best score "
    "(details.reference is its index). An empty prediction or reference scores 0, as in nltk.",
)
