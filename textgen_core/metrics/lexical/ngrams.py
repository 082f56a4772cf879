"""N-gram counting shared by ROUGE-N, BLEU and GLEU.

Unigrams are counted as the tokens themselves and longer n-grams as tuples
built by ``zip``, so counting runs inside ``Counter``'s C loop. Counts of a
text are memoized in the per-call :class:`TextCache`.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from .tokenize import TextCache


def count_ngrams(tokens: Sequence[str], n: int) -> Counter:
    """Occurrences of each n-gram of ``tokens`` (unigrams keyed by the token itself)."""
    if n == 1:
        return Counter(tokens)
    if len(tokens) < n:
        return Counter()
    return Counter(zip(*[tokens[i:] for i in range(n)]))


def overlap(a: Counter, b: Counter) -> int:
    """Size of the multiset intersection: the sum over n-grams of min(count in a, count in b)."""
    if len(a) > len(b):
        a, b = b, a
    common = a.keys() & b.keys()
    if not common:
        return 0
    total = 0
    for gram in common:
        x = a[gram]
        y = b[gram]
        total += x if x < y else y
    return total


def clipped_matches(hyp: Counter, refs: Sequence[Counter]) -> int:
    """BLEU's clipped count: each hypothesis n-gram counts at most its largest count in one reference."""
    if len(refs) == 1:
        return overlap(hyp, refs[0])
    total = 0
    for gram, count in hyp.items():
        most = 0
        for ref in refs:
            c = ref.get(gram, 0)
            if c > most:
                most = c
        total += count if count < most else most
    return total


def cached_counts(cache: TextCache, tokenizer: str, text: str, tokens: Sequence[str], n: int) -> Counter:
    """``count_ngrams(tokens, n)`` for the tokens of ``text`` under ``tokenizer``, memoized."""
    table = cache.table(("ngrams", tokenizer, n))
    counts = table.get(text)
    if counts is None:
        counts = table[text] = count_ngrams(tokens, n)
    return counts  # type: ignore[return-value]
