"""A seeded synthetic corpus of reference/prediction pairs, for benchmarks and parity tests.

Texts look enough like English for the metrics to do real work: Zipf-distributed
words (function words and inflected pseudo-words), capitals, commas and periods,
predictions that keep part of the reference and edit the rest, and some texts
with several sentences on separate lines.
"""

from __future__ import annotations

import itertools
import random

_FUNCTION_WORDS = (
    "the of and to a in is that it for was on are as with be by this at from or an have not "
    "they which one you were all we her she there can their has more will would about if"
).split()
_ONSETS = ("b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "pl", "gr", "ch")
_NUCLEI = ("a", "e", "i", "o", "u", "ai", "ea", "ou")
_SUFFIXES = ("", "", "", "s", "ed", "ing", "er", "ly", "ation", "ness")


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words = list(_FUNCTION_WORDS)
    seen = set(words)
    while len(words) < size:
        stem = "".join(rng.choice(_ONSETS) + rng.choice(_NUCLEI) for _ in range(rng.randint(1, 3)))
        word = stem + rng.choice(_SUFFIXES)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _render(words: list[str], rng: random.Random, lines: int) -> str:
    """Words -> text with capitals, commas, periods, and ``lines`` sentences on separate lines."""
    if not words:
        return ""
    cuts = sorted(rng.sample(range(1, len(words)), min(lines - 1, len(words) - 1))) if lines > 1 else []
    sentences = []
    for start, end in zip([0, *cuts], [*cuts, len(words)]):
        part = list(words[start:end])
        for i in range(1, len(part) - 1):
            if rng.random() < 0.06:
                part[i] += ","
        part[0] = part[0].capitalize()
        sentences.append(" ".join(part) + ".")
    return "\n".join(sentences)


def synthetic_pairs(count: int, seed: int = 0, min_words: int = 20, max_words: int = 80) -> list[tuple[str, str]]:
    """``count`` (reference, prediction) pairs; the same seed always gives the same pairs."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 6000)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocab))))
    pairs = []
    for _ in range(count):
        length = rng.randint(min_words, max_words)
        reference = rng.choices(vocab, cum_weights=cumulative, k=length)
        keep = rng.uniform(0.3, 0.95)
        prediction: list[str] = []
        for word in reference:
            r = rng.random()
            if r < keep:
                prediction.append(word)
            elif r < keep + (1 - keep) * 0.5:
                prediction.append(rng.choices(vocab, cum_weights=cumulative)[0])
            elif r < keep + (1 - keep) * 0.75:
                prediction.extend(rng.choices(vocab, cum_weights=cumulative, k=2))
        if len(prediction) > 4 and rng.random() < 0.3:
            a = rng.randrange(len(prediction) - 3)
            b = min(len(prediction), a + rng.randint(2, 8))
            prediction[a:b] = prediction[a:b][::-1]
        del prediction[max_words:]
        if len(prediction) < min_words:
            prediction.extend(rng.choices(vocab, cum_weights=cumulative, k=min_words - len(prediction)))
        multi = rng.random() < 0.3
        ref_lines = rng.randint(2, 4) if multi else 1
        pred_lines = rng.randint(2, 4) if multi else 1
        pairs.append((_render(reference, rng, ref_lines), _render(prediction, rng, pred_lines)))
    return pairs
