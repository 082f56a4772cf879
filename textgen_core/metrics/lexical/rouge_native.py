"""ROUGE through rouge-score-rs: compiled, with values equal to rouge-score's.

rouge-score-rs reimplements rouge-score in Rust (tokenizer, nltk's Porter
stemmer, summary-level rougeLsum) and is parity-tested against rouge-score in
tests/metrics/lexical/test_lexical_rouge.py. Two things keep it cheap and safe here:

* When neither text has a line break, rougeLsum equals rougeL (one sentence
  each: the union LCS is one LCS), so such pairs are scored without rougeLsum
  and take rougeL's score; rouge-score-rs then skips the summary-level table.
* For rougeLsum, rouge-score-rs fills a full table per pair of lines
  (about 4 bytes per cell: two 20,000-word lines take 1.5 GB). Pairs whose
  longest lines could need more than :data:`TABLE_LIMIT` cells are not scored
  here (``None``); the caller gives them to the bit-parallel Python path.

rouge-score-rs tokenizes inside each call (a few microseconds in Rust), so
ROUGE tokens are not shared with the other metrics, whose tokenizers differ
anyway. When rouge_score_rs is not importable, :func:`available` is False and
ROUGE runs on the pure-Python path alone.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

try:
    from rouge_score_rs import RougeScorer
except ImportError:  # optional at run time: the pure-Python path scores everything
    RougeScorer = None

NAME = "rouge-score-rs"

#: Largest rougeLsum table (line characters times line characters, a bound on
#: tokens times tokens) left to rouge-score-rs: 16M cells, about 64 MB.
TABLE_LIMIT = 1 << 24

#: (precision, recall, fmeasure) of each ROUGE type; rouge-score-rs gives Score namedtuples.
Triples = Mapping[str, Sequence[float]]


def available() -> bool:
    """True when rouge_score_rs imported."""
    return RougeScorer is not None


def version() -> str | None:
    if RougeScorer is None:
        return None
    import rouge_score_rs

    return str(rouge_score_rs.__version__)


def pair_scorer(types: Sequence[str], stem: bool) -> Callable[[str, str], Triples | None]:
    """``score(target, prediction)``: rouge-score's scores of ``types``, or None to use the Python path."""
    if RougeScorer is None:
        raise RuntimeError("rouge_score_rs is not installed")
    summary = "rougeLsum" in types
    plain_types = [t for t in types if t != "rougeLsum"]
    if summary and "rougeL" not in plain_types:
        plain_types.append("rougeL")
    plain = _direct(RougeScorer(plain_types, use_stemmer=stem))
    if not summary:
        return plain
    full = _direct(RougeScorer(list(types), use_stemmer=stem))

    def score(target: str, prediction: str) -> Triples | None:
        if "\n" in target or "\n" in prediction:
            if len(target) * len(prediction) > TABLE_LIMIT and (
                _longest_line(target) * _longest_line(prediction) > TABLE_LIMIT
            ):
                return None
            return full(target, prediction)
        scores = plain(target, prediction)
        scores["rougeLsum"] = scores["rougeL"]
        return scores

    return score


def _direct(scorer: object) -> Callable[[str, str], Triples]:
    """``scorer.score``, without the per-call layers of the Python wrapper when they can be skipped.

    RougeScorer.score looks up its compiled scorer (rebuilding a cache key) and calls it through a
    helper that retries texts with lone surrogates; about 1 us a pair, an eighth of ROUGE's cost.
    With the default tokenizer the compiled scorer is fixed, so it is looked up once here; texts it
    cannot take (lone surrogates) still go through the public method. If a later rouge-score-rs
    has no such scorer, the public method is used for everything.
    """
    public = scorer.score  # type: ignore[attr-defined]
    lookup = getattr(scorer, "_native_scorer", None)
    natively = getattr(scorer, "_tokenizes_natively", None)
    if lookup is None or natively is None or not natively():
        return public
    compiled = lookup().score

    def score(target: str, prediction: str) -> Triples:
        try:
            return compiled(target, prediction)
        except UnicodeEncodeError:
            return public(target, prediction)

    return score


def _longest_line(text: str) -> int:
    """Characters in the longest line: at least the number of ROUGE tokens on any line."""
    return max(map(len, text.split("\n")))
