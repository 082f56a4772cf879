"""BLEU and GLEU against nltk (sentence and corpus level), tokenizers, and parameter validation."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from nltk.tokenize import RegexpTokenizer
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
from nltk.translate.gleu_score import corpus_gleu, sentence_gleu

from lexical_cases import EDGE_CASES, generated_cases, long_pair, rows
from textgen_core.errors import ParameterError
from textgen_core.registry import get_metric
from textgen_core.metrics.lexical import bleu, score_lexical
from textgen_core.metrics.lexical.tokenize import WORD_TOKENIZERS, regex_tokens, tokens_13a
from textgen_core.model import Datum

TOL = 1e-12
SMOOTHINGS = bleu.SMOOTHING
WEIGHTS = [(0.25, 0.25, 0.25, 0.25), (0.5, 0.5), (0.1, 0.2, 0.3, 0.4), (1 / 3, 1 / 3, 1 / 3), (0.2,) * 5]
CASES = generated_cases(500, seed=21)
EDGES = EDGE_CASES + [("long", (long_pair(5000)[0],), long_pair(5000)[1])]


@pytest.fixture(autouse=True)
def _quiet_nltk():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns for every sentence without some n-gram match
        yield


def _smoothing(name):
    return None if name == "none" else getattr(SmoothingFunction(), name)


def _tokens(cases, tokenizer="regex"):
    split = WORD_TOKENIZERS[tokenizer]
    return [[split(r) for r in refs] for _, refs, _ in cases], [split(p) for _, _, p in cases]


def _nltk_sentence(refs, hyp, weights, smoothing):
    try:
        return float(sentence_bleu(refs, hyp, weights, _smoothing(smoothing)))
    except AssertionError:  # method6 without trigram matches
        return None


def _check_sentences(cases, weights, smoothing):
    params = {"weights": weights, "smoothing": smoothing}
    cells = score_lexical(rows(cases), {"bleu": params})["bleu"]
    refs, hyps = _tokens(cases)
    for (case_id, _, _), cell, r, h in zip(cases, cells, refs, hyps):
        want = _nltk_sentence(r, h, weights, smoothing)
        if want is None:
            assert cell["bleu"].value is None and "method6" in cell["bleu"].reason, case_id
        else:
            assert cell["bleu"].value == pytest.approx(want, abs=TOL, rel=0), (case_id, cell["bleu"], want)


@pytest.mark.parametrize("smoothing", SMOOTHINGS)
def test_sentence_bleu_matches_nltk(smoothing):
    _check_sentences(CASES + EDGES, WEIGHTS[0], smoothing)


OTHER_WEIGHTS = [(w, s) for w in WEIGHTS[1:] for s in ("none", "method1", "method3", "method5", "method6", "method7")
                 if not (s == "method6" and len(w) < 3)]


@pytest.mark.parametrize("weights, smoothing", OTHER_WEIGHTS,
                         ids=[f"{s}-w{'-'.join(f'{x:.2g}' for x in w)}" for w, s in OTHER_WEIGHTS])
def test_sentence_bleu_with_other_weights_matches_nltk(weights, smoothing):
    _check_sentences(CASES[:150] + EDGES, weights, smoothing)


@pytest.mark.parametrize("smoothing", SMOOTHINGS)
def test_corpus_bleu_from_row_statistics_matches_nltk(smoothing):
    spec = get_metric("bleu")
    params = spec.resolve({"smoothing": smoothing})
    cells = score_lexical(rows(CASES), {"bleu": params})["bleu"]
    refs, hyps = _tokens(CASES)
    want = corpus_bleu(refs, hyps, params["weights"], _smoothing(smoothing))
    assert spec.corpus(rows(CASES), cells, params)["bleu"] == pytest.approx(want, abs=TOL, rel=0)


def test_corpus_bleu_skips_rows_without_references():
    spec = get_metric("bleu")
    params = spec.resolve({})
    data = rows(CASES[:50]) + [Datum("none", "m", prediction="a b c", references=())]
    cells = score_lexical(data, {"bleu": params})["bleu"]
    assert cells[-1]["bleu"].reason == "no references"
    refs, hyps = _tokens(CASES[:50])
    assert spec.corpus(data, cells, params)["bleu"] == pytest.approx(corpus_bleu(refs, hyps), abs=TOL)


def test_seed_corpus_bleu_example():
    # Seed 003: corpus_bleu of ['this','is','a','test'] against [['this','is','a','test'], ['this','is' 'test']] is 1.
    data = [Datum("1", "m", prediction="this is a test", references=("this is a test", "this is" "test"))]
    params = get_metric("bleu").resolve({"tokenizer": "whitespace"})
    cells = score_lexical(data, {"bleu": params})["bleu"]
    assert corpus_bleu([[["this", "is", "a", "test"], ["this", "is" "test"]]], [["this", "is", "a", "test"]]) == 1.0
    assert cells[0]["bleu"].value == 1.0
    assert bleu.corpus(data, cells, params) == {"bleu": 1.0}


def test_nltk_documented_sentence_example():
    hypothesis = "It is a guide to action which ensures that the military always obeys the commands of the party"
    reference = "It is a guide to action that ensures that the military will forever heed Party commands"
    cell = score_lexical([Datum("1", "m", prediction=hypothesis, references=(reference,))], {"bleu": {}})["bleu"][0]
    assert round(cell["bleu"].value, 4) == 0.4118
    assert cell["bleu"].details == {"matches": [11, 8, 6, 4], "totals": [18, 17, 16, 15], "hyp_len": 18, "ref_len": 16}


@pytest.mark.parametrize("low, high", [(1, 4), (1, 1), (2, 3), (1, 6)])
def test_gleu_matches_nltk(low, high):
    spec = get_metric("gleu")
    params = spec.resolve({"min_len": low, "max_len": high})
    cells = score_lexical(rows(CASES + EDGES), {"gleu": params})["gleu"]
    refs, hyps = _tokens(CASES + EDGES)
    for (case_id, _, _), cell, r, h in zip(CASES + EDGES, cells, refs, hyps):
        assert cell["gleu"].value == pytest.approx(sentence_gleu(r, h, low, high), abs=TOL, rel=0), case_id
    refs, hyps = _tokens(CASES)
    corpus = spec.corpus(rows(CASES), cells[: len(CASES)], params)["gleu"]
    assert corpus == pytest.approx(corpus_gleu(refs, hyps, low, high), abs=TOL, rel=0)


def test_references_shared_by_several_models_match_nltk():
    # The second model's rows reuse each reference's cached tokens and masks, whichever side is longer.
    cases = CASES[:200]
    data = rows(cases, "m1") + rows([(c, refs, p[: len(p) // 2]) for c, refs, p in cases], "m2")
    cells = score_lexical(data, {"bleu": {}, "gleu": {}})
    refs, hyps = _tokens(cases)
    half_refs, half_hyps = _tokens([(c, refs, p[: len(p) // 2]) for c, refs, p in cases])
    for cell, gleu_cell, r, h in zip(cells["bleu"], cells["gleu"], refs + half_refs, hyps + half_hyps):
        assert cell["bleu"].value == pytest.approx(_nltk_sentence(r, h, (0.25,) * 4, "none"), abs=TOL, rel=0)
        assert gleu_cell["gleu"].value == pytest.approx(sentence_gleu(r, h), abs=TOL, rel=0)


def test_bleu_and_gleu_together_equal_each_alone():
    # The two share each row's n-gram overlaps; GLEU asks for more orders than BLEU here.
    together = score_lexical(rows(CASES), {"bleu": {}, "gleu": {"max_len": 6}})
    assert together["bleu"] == score_lexical(rows(CASES), {"bleu": {}})["bleu"]
    assert together["gleu"] == score_lexical(rows(CASES), {"gleu": {"max_len": 6}})["gleu"]
    together = score_lexical(rows(CASES), {"gleu": {"min_len": 2, "max_len": 2}, "bleu": {}})
    assert together["bleu"] == score_lexical(rows(CASES), {"bleu": {}})["bleu"]


@pytest.mark.parametrize("tokenizer", ["regex-lower", "13a", "whitespace"])
def test_other_tokenizers_match_nltk_on_the_same_tokens(tokenizer):
    cells = score_lexical(rows(CASES[:150]), {"bleu": {"tokenizer": tokenizer, "smoothing": "method1"}})["bleu"]
    refs, hyps = _tokens(CASES[:150], tokenizer)
    for cell, r, h in zip(cells, refs, hyps):
        assert cell["bleu"].value == pytest.approx(_nltk_sentence(r, h, (0.25,) * 4, "method1"), abs=TOL, rel=0)


def test_regex_tokens_equal_the_reference_systems_tokenizer():
    reference = RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+")
    texts = [t for _, refs, p in CASES + EDGES for t in (*refs, p)]
    texts += ["a,,b", ", x", "x ,y", "$5,", "a.b,c", "1,000.5 $3", "x_y, z", "\u00a0,\u2028.", "K\u212a",
              "a,", "a,\nb", "a,.b", "a.,b", "a, b,", ",", ",\t", "a,\rb", "a\x00, b", "caf\u00e9, b", "caf\u00e9,b"]
    # Random texts around the shortcut's conditions: commas before every kind of character, other
    # whitespace, non-ASCII word characters, the NUL byte and the dollar sign.
    rng = random.Random(17)
    alphabet = list("aZ09 \n.,,$_'-\t\r\x00") + ["\u00e9", "\u00a0", ", ", ",.", ",\n", ".,", "\u0663"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(20000)]
    for text in texts:
        assert regex_tokens(text) == reference.tokenize(text), repr(text)


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Hello, world!", ["Hello", ",", "world", "!"]),
        ("It costs $3.50.", ["It", "costs", "$", "3.50", "."]),
        ("well-known 2-3", ["well-known", "2", "-", "3"]),
        ("don't", ["don't"]),
        ("&quot;quoted&quot; &amp; &lt;tag&gt;", ['"', "quoted", '"', "&", "<", "tag", ">"]),
        ("line one-\ntwo", ["line", "onetwo"]),
        ("a,b 1,000.5", ["a", ",", "b", "1,000.5"]),
        ("(a) [b] {c}", ["(", "a", ")", "[", "b", "]", "{", "c", "}"]),
    ],
)
def test_13a_tokenizer(text, tokens):
    assert tokens_13a(text) == tokens


@pytest.mark.parametrize(
    "metric, raw, message",
    [
        ("bleu", {"weights": "0,0,0"}, "bleu.weights"),
        ("bleu", {"weights": "-0.5,1.5"}, "bleu.weights"),
        ("bleu", {"weights": "nan,1"}, "bleu.weights"),
        ("bleu", {"weights": "a,b"}, "bleu.weights"),
        ("bleu", {"weights": ",".join(["0.1"] * 10)}, "bleu.weights"),
        ("bleu", {"weights": ""}, "bleu.weights"),
        ("bleu", {"smoothing": "method8"}, "bleu.smoothing"),
        ("bleu", {"smoothing": "exp"}, "bleu.smoothing"),
        ("bleu", {"smoothing": "method6", "weights": "0.5,0.5"}, "bleu.smoothing"),
        ("bleu", {"tokenizer": "spacy"}, "bleu.tokenizer"),
        ("bleu", {"weight": "1"}, "weight"),
        ("gleu", {"min_len": 3, "max_len": 2}, "gleu.max_len"),
        ("gleu", {"min_len": 0}, "gleu.min_len"),
        ("gleu", {"max_len": 1.5}, "gleu.max_len"),
    ],
)
def test_bad_parameters_name_the_parameter(metric, raw, message):
    with pytest.raises(ParameterError, match=message.replace(".", r"\.")):
        get_metric(metric).resolve(raw)


def test_bad_parameters_raise_from_score_lexical():
    with pytest.raises(ParameterError, match="bleu.smoothing"):
        score_lexical(rows(CASES[:2]), {"bleu": {"smoothing": "method9"}})


def test_rows_without_references_are_unscored():
    data = [Datum("1", "m", prediction="a b", references=()), Datum("2", "m", prediction=None, references=("a",))]
    out = score_lexical(data, {"bleu": {}, "gleu": {}})
    assert [c["bleu"].reason for c in out["bleu"]] == ["no references", "no prediction"]
    assert [c["gleu"].reason for c in out["gleu"]] == ["no references", "no prediction"]


def test_no_unigram_match_is_zero_and_missing_order_is_tiny():
    out = score_lexical(rows([("a", ("x y z",), "a b c"), ("b", ("a b x y",), "a b c d")]), {"bleu": {}})["bleu"]
    assert out[0]["bleu"].value == 0.0
    assert 0.0 < out[1]["bleu"].value < 1e-100  # nltk's float-minimum precision for missing orders
    assert math.isfinite(out[1]["bleu"].value)
