"""Inputs shared by the lexical metric tests: edge cases, seeded generated pairs, long texts.

A case is (case id, references, prediction). Generated cases mix the
realistic synthetic corpus with small-vocabulary texts full of ties, case
changes, punctuation, non-ASCII characters and line breaks.
"""

from __future__ import annotations

import random

from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.model import Datum

Case = tuple[str, tuple[str, ...], str]

EDGE_CASES: list[Case] = [
    ("both-empty", ("",), ""),
    ("empty-prediction", ("the cat sat on the mat",), ""),
    ("empty-reference", ("",), "the cat sat on the mat"),
    ("whitespace-only", ("   \n\t ",), " \n "),
    ("punctuation-only", ("... !!! ???",), "!?! ,,, ..."),
    ("punctuation-vs-words", ("Hello, world!",), "?!"),
    ("accents", ("Café déjà vu, naïve résumé à la carte.",), "cafe deja vu naive resume a la carte"),
    ("cjk", ("東京は日本の首都です。",), "東京は 首都 です"),
    ("emoji", ("I love pizza 🍕🍕 and parties 🎉",), "love pizza 🍕 🎉 parties"),
    ("mixed-scripts", ("Straße İstanbul Kelvin K ΑΣ",), "strasse istanbul kelvin k ας"),
    ("numbers-money", ("It costs $100 or 3.5 dollars, 2-3 days",), "costs $100, 3.5 dollars in 2-3 days"),
    ("underscores-apostrophes", ("don't use snake_case here's why",), "do not use snake_case, here is why"),
    ("case-only", ("THE QUICK BROWN FOX",), "the quick brown fox"),
    ("identical", ("the quick brown fox jumps over the lazy dog",), "the quick brown fox jumps over the lazy dog"),
    ("repeated-words", ("the the the the the the the",), "the cat the"),
    ("newlines", ("First line here.\nSecond line there.\nThird one.",), "Second line here.\nFirst line there."),
    ("blank-lines", ("\n\na b c\n\n\nd e\n",), "a b\n\n\nc d e\n\n"),
    ("one-line-vs-many", ("a b c d e f",), "a b\nc d\ne f"),
    ("tabs-nbsp", ("a\tb\u00a0c  d",), "a b c d"),
    ("several-references", ("the cat sat on the mat", "a cat was sitting on a mat", ""), "the cat is on the mat"),
    ("several-references-tie", ("x y z", "x y z", "a b"), "x y"),
    ("several-references-multiline", ("a b\nc d", "c d\na b", "a\nb c d"), "a b c\nd"),
    ("single-token", ("word",), "word"),
    ("long-token", ("a" * 300,), "a" * 300 + " b"),
]

_VOCAB = ["the", "The", "a", "cat", "cats", "running", "ran", "Run", "café", "東京", "🍕", "x1", "don't", "$5", "_", "-"]
_GLUE = [" ", " ", " ", ", ", ". ", "\n", "! ", " - ", "\t"]


def _noisy_text(rng: random.Random, vocab: list[str], words: int) -> str:
    parts = []
    for _ in range(words):
        parts.append(rng.choice(vocab))
        parts.append(rng.choice(_GLUE))
    return "".join(parts).strip(" ")


def generated_cases(count: int, seed: int = 7) -> list[Case]:
    """``count`` seeded cases: half realistic synthetic pairs, half noisy small-vocabulary texts.

    About one case in five has two or three references.
    """
    rng = random.Random(seed)
    realistic = synthetic_pairs(count // 2 + 1, seed=seed, min_words=5, max_words=60)
    extra = synthetic_pairs(count // 2 + 1, seed=seed + 1, min_words=5, max_words=60)
    cases: list[Case] = []
    for i, (reference, prediction) in enumerate(realistic[: count // 2]):
        refs = (reference,) if rng.random() < 0.8 else (reference, extra[i][0], extra[i][1])[: rng.randint(2, 3)]
        cases.append((f"synthetic-{i}", refs, prediction))
    while len(cases) < count:
        vocab = rng.sample(_VOCAB, rng.randint(2, len(_VOCAB)))
        refs = tuple(_noisy_text(rng, vocab, rng.randint(0, 25)) for _ in range(1 if rng.random() < 0.8 else 3))
        cases.append((f"noisy-{len(cases)}", refs, _noisy_text(rng, vocab, rng.randint(0, 25))))
    return cases


def long_pair(words: int = 5000, seed: int = 3) -> tuple[str, str, int]:
    """A (reference, prediction, LCS length) triple of ``words``-word texts.

    The prediction is the reference with some words deleted and words that
    never occur in the reference inserted, so its LCS with the reference is
    exactly the number of reference words it kept.
    """
    rng = random.Random(seed)
    reference = [f"w{rng.randrange(700)}" for _ in range(words)]
    prediction: list[str] = []
    kept = 0
    for i, word in enumerate(reference):
        r = rng.random()
        if r < 0.1:
            continue  # deleted
        prediction.append(word)
        kept += 1
        if r > 0.9:
            prediction.append(f"new{i}")
    return " ".join(reference), " ".join(prediction), kept


def rows(cases: list[Case], model: str = "m") -> list[Datum]:
    return [Datum(case_id, model, prediction=prediction, references=refs) for case_id, refs, prediction in cases]
