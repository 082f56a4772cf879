"""Names of failure modes from their distinctive words: class-based TF-IDF (c-TF-IDF).

All texts of a mode form one document. A term's weight in a mode is its
frequency there, divided by the mode's number of words, times
``log(1 + A / f)`` where ``A`` is the mean number of words per mode and ``f``
the term's frequency over all modes: a word every mode uses ("answer") weighs
little, a word one mode keeps using ("refund") names it. Terms are single
words and word pairs counted by scikit-learn's CountVectorizer (English stop
words dropped); a word already inside a chosen pair is not repeated.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

#: Terms in a mode's name.
NAME_TERMS = 3
#: Terms kept as the mode's words.
WORDS = 8


def ctfidf_terms(documents: Sequence[str], top: int = WORDS) -> list[list[str]]:
    """The ``top`` most distinctive terms of each document (one document per mode), best first."""
    from sklearn.feature_extraction.text import CountVectorizer

    if not documents:
        return []
    vectorizer = CountVectorizer(ngram_range=(1, 2), stop_words="english", token_pattern=r"(?u)\b[^\W\d_]{2,}\b")
    try:
        counts = vectorizer.fit_transform(documents).astype(np.float64)
    except ValueError:  # nothing but stop words and digits
        return [[] for _ in documents]
    terms = vectorizer.get_feature_names_out()
    words_per_doc = np.asarray(counts[:, [i for i, t in enumerate(terms) if " " not in t]].sum(axis=1)).ravel()
    tf = counts.multiply(1.0 / np.maximum(words_per_doc, 1.0)[:, None]).tocsr()
    frequency = np.asarray(counts.sum(axis=0)).ravel()
    average = max(float(words_per_doc.mean()), 1.0)
    weights = tf.multiply(np.log1p(average / np.maximum(frequency, 1.0))[None, :]).tocsr()
    out: list[list[str]] = []
    for row in range(weights.shape[0]):
        data, index = weights[row].data, weights[row].indices
        order = index[np.lexsort((index, -data))]  # best weight first; ties by term order
        out.append(_distinct([str(terms[i]) for i in order], top))
    return out


def _distinct(ranked: Sequence[str], top: int) -> list[str]:
    """Best terms, skipping a word that a better-ranked pair already holds and a pair of two chosen words."""
    chosen: list[str] = []
    for term in ranked:
        parts = term.split()
        if len(parts) == 1 and any(term in c.split() for c in chosen if " " in c):
            continue
        if len(parts) == 2 and all(p in chosen for p in parts):
            continue
        chosen.append(term)
        if len(chosen) == top:
            break
    return chosen


def mode_name(words: Sequence[str], terms: int = NAME_TERMS) -> str:
    """A short name: the mode's best terms joined by ' / ' ("refund policy / invents / store")."""
    return " / ".join(words[:terms]) if words else "(no distinctive words)"
