"""BLEU's compiled kernel: its tokens equal nltk's, its cells equal the Python path's.

Its tokens are held to nltk's on every code point in test_lexical_tokenizer.py
(test_every_code_point_in_words_and_between_words_equals_nltk), in the same
pass as the Python tokenizers, so that nltk reads those texts once.

Large chunks take the kernel (``bleu.COMPILED_MIN_ROWS``); here it is forced
on for every chunk, and the values are checked against nltk and against the
Python path, bit for bit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
from nltk.tokenize import RegexpTokenizer
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu

from lexical_cases import EDGE_CASES, generated_cases, long_pair, rows
from test_lexical_tokenizer import SENTENCES
from textgen_core.metrics.lexical import bleu, bleu_kernel, score_lexical
from textgen_core.metrics.lexical.synthetic import synthetic_pairs
from textgen_core.metrics.lexical.tokenize import REGEX_PATTERN
from textgen_core.model import Datum

NLTK = RegexpTokenizer(REGEX_PATTERN).tokenize
CASES = generated_cases(400, seed=31) + EDGE_CASES + [("long", (long_pair(3000)[0],), long_pair(3000)[1])]


@pytest.fixture(autouse=True)
def _quiet_nltk():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns for every sentence without some n-gram match
        yield


@pytest.fixture
def compiled(monkeypatch):
    monkeypatch.setattr(bleu, "COMPILED_MIN_ROWS", 1)


def _python(monkeypatch, data, params):
    monkeypatch.setattr(bleu, "COMPILED_MIN_ROWS", 10**12)
    return score_lexical(data, {"bleu": params})["bleu"]


@pytest.mark.parametrize("name", list(SENTENCES))
def test_kernel_tokens_equal_nltk_on_real_text(name):
    assert bleu_kernel.tokens(SENTENCES[name]) == NLTK(SENTENCES[name])
    assert bleu_kernel.tokens("") == [] and bleu_kernel.tokens(" . \n") == []


@pytest.mark.parametrize("tokenizer", ["regex", "regex-lower"])
@pytest.mark.parametrize("smoothing", bleu.SMOOTHING)
def test_kernel_cells_equal_the_python_path(monkeypatch, tokenizer, smoothing):
    data = rows(CASES)
    params = {"tokenizer": tokenizer, "smoothing": smoothing}
    want = _python(monkeypatch, data, params)
    monkeypatch.setattr(bleu, "COMPILED_MIN_ROWS", 1)
    assert score_lexical(data, {"bleu": params})["bleu"] == want


@pytest.mark.parametrize("weights", [(1.0,), (0.5, 0.5), (0.2,) * 5, (1 / 9,) * 9])
def test_kernel_cells_with_other_orders_equal_the_python_path(monkeypatch, weights):
    data = rows(CASES)
    want = _python(monkeypatch, data, {"weights": weights, "smoothing": "method7"})
    monkeypatch.setattr(bleu, "COMPILED_MIN_ROWS", 1)
    assert score_lexical(data, {"bleu": {"weights": weights, "smoothing": "method7"}})["bleu"] == want


def test_kernel_sentence_and_corpus_bleu_equal_nltk(compiled):
    cases = CASES + [(name, (text,), " ".join(text.split()[::-1])) for name, text in SENTENCES.items()]
    data = rows(cases)
    cells = score_lexical(data, {"bleu": {"smoothing": "method1"}})["bleu"]
    refs = [[NLTK(r) for r in case_refs] for _, case_refs, _ in cases]
    hyps = [NLTK(p) for _, _, p in cases]
    smooth = SmoothingFunction().method1
    for (case_id, _, _), cell, r, h in zip(cases, cells, refs, hyps):
        assert cell["bleu"].value == float(sentence_bleu(r, h, smoothing_function=smooth)), case_id
    aggregate = bleu.corpus(data, cells, bleu.SPEC.resolve({"smoothing": "method1"}))["bleu"]
    assert aggregate == float(corpus_bleu(refs, hyps, smoothing_function=smooth))


def test_kernel_handles_shared_references_duplicates_and_unscorable_rows(compiled):
    shared = "the cat sat on the mat . the end"
    data = [
        Datum("1", "a", prediction="the cat sat on the mat", references=(shared,)),
        Datum("1", "b", prediction="a cat sat on a mat", references=(shared,)),
        Datum("2", "a", prediction=None, references=(shared,)),
        Datum("3", "a", prediction="x y", references=()),
        Datum("4", "a", prediction="the the the the", references=("the", "the the", "cat the the")),
        Datum("5", "a", prediction="", references=("a b c", "a b")),
        Datum("6", "a", prediction="a b", references=("", "a b c d")),
    ]
    data.append(data[0])  # the same row object twice
    cells = score_lexical(data, {"bleu": {}})["bleu"]
    assert cells[2]["bleu"].reason == "no prediction" and cells[3]["bleu"].reason == "no references"
    assert cells[-1] == cells[0]
    for row, cell in zip(data, cells):
        if cell["bleu"].value is None:
            continue
        want = sentence_bleu([NLTK(r) for r in row.references], NLTK(row.prediction))
        assert cell["bleu"].value == float(want), row


def test_small_chunks_stay_in_python_and_large_ones_take_the_kernel(monkeypatch):
    calls = []
    real = bleu_kernel.bleu_stats
    monkeypatch.setattr(bleu_kernel, "bleu_stats", lambda *a, **k: (calls.append(len(a[0])), real(*a, **k))[1])
    pairs = synthetic_pairs(bleu.COMPILED_MIN_ROWS + 10, seed=2)
    data = [Datum(str(i), "m", prediction=p, references=(r,)) for i, (r, p) in enumerate(pairs)]
    small = score_lexical(data[:20], {"bleu": {}})["bleu"]
    assert calls == []
    large = score_lexical(data, {"bleu": {}})["bleu"]
    assert calls == [len(data)]
    assert large[:20] == small
    score_lexical(data, {"bleu": {"tokenizer": "13a"}})
    assert calls == [len(data)]  # only the regex tokenizers are compiled


def test_after_compile_now_a_new_process_compiles_no_kernel():
    # `make install` calls compile_now: a user's first BLEU score then loads the kernels from numba's cache
    # (under a second) instead of compiling them (~7 CPU-s). Other texts and shapes than compile_now's own.
    warm = "from textgen_core.metrics.lexical import bleu_kernel as k; k.compile_now()"
    use = ("from textgen_core.metrics.lexical import bleu_kernel as k\n"
           "k.bleu_stats(['x y x', 'caf\\u00e9 $5'], [['x y'], ['caf\\u00e9', 'y $5 z']], 4, lower=True)\n"
           "k.tokens('ab. c\\u0915d')\n"
           "kernels = [f for f in vars(k).values() if hasattr(f, 'signatures') and hasattr(f, 'stats')]\n"
           "print(sum(sum(f.stats.cache_misses.values()) for f in kernels),"
           " sum(sum(f.stats.cache_hits.values()) for f in kernels))")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    for code in (warm, use):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
    misses, hits = map(int, done.stdout.split())
    assert misses == 0 and hits >= 2, done.stdout
