"""The regex and regex-lower word tokenizers against nltk's RegexpTokenizer, live, on all of Unicode.

nltk (3.10 on) compiles the pattern with the ``regex`` engine, whose \\w, \\d and \\s follow Unicode
properties; ``re`` differs on about 30,000 code points (combining marks, superscripts, U+001C..U+001F).
Every code point is checked alone, inside words and between words; then real sentences in many
scripts, then BLEU on them.
"""

from __future__ import annotations

import itertools
import random
import sys
import unicodedata
import warnings

import pytest
from nltk.tokenize import RegexpTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from textgen_core.metrics.lexical import score_lexical
from textgen_core.metrics.lexical.tokenize import REGEX_PATTERN, regex_lower_tokens, regex_tokens
from textgen_core.model import Datum

NLTK = RegexpTokenizer(REGEX_PATTERN).tokenize
BLOCK = 512

#: Real text in each script the issue names, with the marks that split words under ``re``.
SENTENCES = {
    "devanagari": "हिन्दी भाषा सुंदर है। भारत एक विशाल देश है, जहाँ अनेक भाषाएँ बोली जाती हैं।",
    "bengali": "আমি বাংলায় গান গাই। কলকাতা একটি পুরনো শহর।",
    "tamil": "தமிழ் ஒரு பழமையான மொழி ஆகும். சென்னை பெரிய நகரம்.",
    "thai": "ภาษาไทยเป็นภาษาที่สวยงาม ผู้คนยิ้มแย้มแจ่มใส",
    "arabic-harakat": "اَلْعَرَبِيَّةُ لُغَةٌ جَمِيلَةٌ، وَالْكِتَابُ مُفِيدٌ.",
    "hebrew-niqqud": "שָׁלוֹם עוֹלָם, מָה שְׁלוֹמְךָ? הַסֵּפֶר עַל הַשֻּׁלְחָן.",
    "cjk": "東京は日本の首都です。中文也很美，한국어도 아름답습니다.",
    "nfd-latin": unicodedata.normalize("NFD", "Café déjà vu, naïve résumé à la carte. Ångström, Øre, Straße."),
    "emoji-zwj": "family 👨‍👩‍👧‍👦 and 👩🏽‍💻 coder 🏳️‍🌈 flag, ❤️ 1️⃣",
    "superscripts": "E = mc² and x³ + y¹, H₂O, ½ cup, ⁴⁄₅ done",
    "controls": "a\x1cb\x1dc\x1e d\x1f. e\x1c \x1f\x1e f\x85g\u00a0h\u2028i",
    "turkish": "İstanbul ŞEHRİ IĞDIR ılık İçel",
    "greek": "ΑΣ ας Σίσυφος, ΟΔΥΣΣΕΥΣ.",
    "money": "It costs $100, or $3.50 — €20 and $ 5 and $x.",
    "zero-width": "co\u200cop\u200dera\u2060tion a\ufeffb",
}


@pytest.fixture(autouse=True)
def _quiet_nltk():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns for every sentence without some n-gram match
        yield


def _blocks():
    for start in range(0, sys.maxunicode + 1, BLOCK):
        yield start, [chr(cp) for cp in range(start, min(start + BLOCK, sys.maxunicode + 1))]


def test_every_code_point_alone_equals_nltk():
    for start, chars in _blocks():
        ours = [regex_tokens(c) for c in chars]
        want = [NLTK(c) for c in chars]
        if ours != want:
            bad = next(c for c, o, w in zip(chars, ours, want) if o != w)
            pytest.fail(f"U+{ord(bad):04X}: ours {regex_tokens(bad)!r}, nltk {NLTK(bad)!r}")


@pytest.mark.parametrize("lower", [False, True], ids=["regex", "regex-lower"])
def test_every_code_point_in_words_and_between_words_equals_nltk(lower):
    # Each code point inside a word, glued to each side, between spaces, doubled, after a dollar
    # sign and before a period and a comma: one text per block of code points.
    ours_fn = regex_lower_tokens if lower else regex_tokens
    for start, chars in _blocks():
        text = " ".join(f"a{c}b {c}x y{c} {c} {c}{c} ${c}1 1{c}. {c}, ,{c}" for c in chars)
        want = NLTK(text.lower() if lower else text)
        if ours_fn(text) != want:
            for c in chars:  # name the first code point that differs
                piece = f"a{c}b {c}x y{c} {c} {c}{c} ${c}1 1{c}. {c}, ,{c}"
                expected = NLTK(piece.lower() if lower else piece)
                assert ours_fn(piece) == expected, f"U+{ord(c):04X}"
            pytest.fail(f"block at U+{start:04X} differs")


@pytest.mark.parametrize("name", list(SENTENCES))
def test_real_text_in_each_script_equals_nltk(name):
    text = SENTENCES[name]
    assert regex_tokens(text) == NLTK(text)
    assert regex_lower_tokens(text) == NLTK(text.lower())


def test_named_cases_from_the_issue():
    assert regex_tokens("हिन्दी भाषा सुंदर है") == ["हिन्दी", "भाषा", "सुंदर", "है"]
    # 'İ'.lower() is 'i' plus U+0307 COMBINING DOT ABOVE: one word for the regex engine, two for re.
    assert regex_lower_tokens("İstanbul") == NLTK("İstanbul".lower()) == ["i\u0307stanbul"]
    assert regex_tokens("x² y\u00b3") == NLTK("x² y\u00b3") == ["x", "²", "y", "³"]
    assert regex_tokens("a\x1cb") == ["a", "\x1cb"]  # U+001C is not whitespace to the regex engine
    family = "👨\u200d👩\u200d👧"
    assert regex_tokens(f"a {family} b") == NLTK(f"a {family} b")


def test_ascii_shortcuts_equal_nltk_on_every_short_string_of_their_character_classes():
    # The ASCII shortcuts (split, and re where it agrees with the regex engine) only see these
    # classes: word characters, digits, the dollar, each kind of whitespace, the period, the comma,
    # U+001C..U+001F and other punctuation. Every string of up to 4 of them, then random longer ones.
    alphabet = ["a", "Z", "_", "0", "$", " ", "\t", "\n", "\x0b", "\x0c", "\r", ".", ",", "!", "'", "\x1c", "\x1f",
                "\x00", "\x7f", "-"]
    for size in range(1, 5):
        for chars in itertools.product(alphabet, repeat=size):
            text = "".join(chars)
            assert regex_tokens(text) == NLTK(text), repr(text)
    rng = random.Random(5)
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 40)))
        assert regex_tokens(text) == NLTK(text), repr(text)
        assert regex_lower_tokens(text) == NLTK(text.lower()), repr(text)


def _nltk_bleu(reference: str, prediction: str, lower: bool = False, smoothing=None) -> float:
    prep = str.lower if lower else str
    return float(sentence_bleu([NLTK(prep(reference))], NLTK(prep(prediction)), smoothing_function=smoothing))


HINDI_PAIRS = [
    ("हिन्दी भाषा सुंदर है", "हिन्दी भाषा सुंदर है"),
    ("हिन्दी भाषा बहुत सुंदर है", "हिन्दी भाषा सुंदर है"),
    ("यह हिन्दी भाषा सुंदर है", "हिन्दी भाषा सुंदर है"),
    ("हिन्दी सुंदर भाषा है", "हिन्दी भाषा सुंदर है"),
]


@pytest.mark.parametrize("reference, prediction", HINDI_PAIRS)
@pytest.mark.parametrize("tokenizer", ["regex", "regex-lower"])
def test_bleu4_on_hindi_equals_nltk(reference, prediction, tokenizer):
    row = Datum("1", "m", prediction=prediction, references=(reference,))
    for smoothing in ("none", "method1"):
        params = {"tokenizer": tokenizer, "smoothing": smoothing}
        cell = score_lexical([row], {"bleu": params})["bleu"][0]["bleu"]
        smooth = None if smoothing == "none" else SmoothingFunction().method1
        assert cell.value == _nltk_bleu(reference, prediction, tokenizer == "regex-lower", smooth)
    if reference == "हिन्दी सुंदर भाषा है":
        # the issue's case: four words, no 4-gram in common: nltk's BLEU-4 is (all but) zero (the float minimum stands in for each empty precision)
        assert score_lexical([row], {"bleu": {}})["bleu"][0]["bleu"].value < 1e-200


@pytest.mark.parametrize("name", list(SENTENCES))
def test_bleu_on_each_script_equals_nltk(name):
    text = SENTENCES[name]
    words = text.split()
    edited = " ".join(words[1:] + words[:1])  # same words, one moved: some n-grams survive
    rows = [Datum(str(i), "m", prediction=p, references=(r,)) for i, (r, p) in
            enumerate([(text, edited), (text, text), (edited, text.lower())])]
    for tokenizer in ("regex", "regex-lower"):
        cells = score_lexical(rows, {"bleu": {"tokenizer": tokenizer, "smoothing": "method1"}})["bleu"]
        for row, cell in zip(rows, cells):
            want = _nltk_bleu(row.references[0], row.prediction, tokenizer == "regex-lower",
                              SmoothingFunction().method1)
            assert cell["bleu"].value == want, (name, tokenizer, row.prediction)
