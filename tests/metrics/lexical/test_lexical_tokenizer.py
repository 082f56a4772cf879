"""The regex and regex-lower word tokenizers against nltk's RegexpTokenizer, live, on all of Unicode.

nltk (3.10 on) compiles the pattern with the ``regex`` engine, whose \\w, \\d and \\s follow Unicode
properties; ``re`` differs on about 30,000 code points (combining marks, superscripts, U+001C..U+001F).
Every code point is checked alone, inside words and between words; then real sentences in many
scripts, then BLEU on them.
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import unicodedata
import warnings
from functools import lru_cache

import numpy as np
import pytest
from nltk import redos
from nltk.tokenize import RegexpTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from textgen_core.metrics.lexical import bleu_kernel, score_lexical
from textgen_core.metrics.lexical.tokenize import REGEX_PATTERN, regex_lower_tokens, regex_tokens
from textgen_core.model import Datum

#: nltk's default flags, named so that the stand-ins below ask nltk's engine with the same ones.
NLTK_FLAGS = re.UNICODE | re.MULTILINE | re.DOTALL
NLTK_TOKENIZER = RegexpTokenizer(REGEX_PATTERN, flags=NLTK_FLAGS)
NLTK = NLTK_TOKENIZER.tokenize
#: Every question the pattern asks of a single character: \w, \d, \s, is it the period, is it the dollar sign.
QUESTIONS = (r"\w", r"\d", r"\s", r"\.", r"\$")
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


def _blocks(first: int = 0, last: int = sys.maxunicode):
    for start in range(first, last + 1, BLOCK):
        yield start, [chr(cp) for cp in range(start, min(start + BLOCK, last + 1))]


def _alone_difference(tokenize, blocks) -> str | None:
    """The first code point that ``tokenize`` alone splits unlike nltk, in batches of non-ASCII code points.

    A batch is the block's non-ASCII code points joined by spaces, compared in one call of each tokenizer.
    It cannot hide a difference: nltk is a findall of REGEX_PATTERN, which has no anchors, lookarounds or
    backreferences and whose every alternative matches non-space characters only, so no token spans a space
    and the scan after each space starts as at the start of a text: its tokens of the batch are its tokens of
    each code point alone, one after the other. The same holds for ``regex_tokens`` because it picks its path
    by the whole text and every text with a non-ASCII character -- each of these code points alone, and the
    batch -- takes the regex engine with the same pattern. Each piece's tokens are substrings of the piece,
    so equal batches mean equal pieces. ASCII characters alone take the split and ``re`` shortcuts, which a
    batch would not reach: they are compared one by one. On a difference the batch is redone one by one to
    name the code point. nltk's tokens of a batch are read off its stand-in text (:func:`_nltk_spans`).
    """
    spans: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for start, chars in blocks:
        ascii_chars = [c for c in chars if c.isascii()]
        for c in ascii_chars:
            if tokenize(c) != NLTK(c):
                return f"U+{ord(c):04X}: ours {tokenize(c)!r}, nltk {NLTK(c)!r}"
        batch = " ".join(c for c in chars if not c.isascii())
        codes = _codes(batch)
        if not Expected(codes, *_nltk_spans(codes, spans)).agrees(tokenize(batch)):
            bad = next((c for c in chars if tokenize(c) != NLTK(c)), None)
            return f"U+{ord(bad):04X}: ours {tokenize(bad)!r}, nltk {NLTK(bad)!r}" if bad else f"block U+{start:04X}"
    return None


def test_every_code_point_alone_equals_nltk():
    assert _alone_difference(regex_tokens, _blocks()) is None


def _piece(c: str) -> str:
    """One code point inside a word, glued to each side, alone between spaces, doubled, after a dollar sign, and
    before a period and a comma."""
    return f"a{c}b {c}x y{c} {c} {c}{c} ${c}1 1{c}. {c}, ,{c}"


#: :func:`_piece` of a stand-in, as code points with the places of the code point marked (\x00 is no other
#: character of the piece), and a space after it: the unit :func:`_pieces_text` repeats.
_PIECE = np.frombuffer((_piece("\x00") + " ").encode("utf-32-le"), np.uint32)
_PLACES = _PIECE == 0


def _pieces_text(chars: list[str]) -> tuple[str, np.ndarray]:
    """``" ".join(_piece(c) for c in chars)`` and its code points, built as one array (a block's text in numpy
    rather than 512 f-strings and a join; test_a_planted_difference_is_found_by_the_batched_checks holds the two
    equal)."""
    codes = np.tile(_PIECE, (len(chars), 1))
    codes[:, _PLACES] = _codes("".join(chars))[:, None]
    codes = codes.reshape(-1)[:-1]  # no space after the last piece
    return codes.tobytes().decode("utf-32-le", "surrogatepass"), codes


#: The word tokenizers held to nltk on every code point: (tokenizer, whether nltk sees the lowercased text). The
#: kernel's entry gives the character spans of its tokens (bleu_kernel.tokens slices the text at them), compared
#: with nltk's spans: equal spans of one text are equal tokens.
WORD_TOKENIZERS = {"regex": (regex_tokens, False), "regex-lower": (regex_lower_tokens, True),
                   "bleu kernel": (bleu_kernel.token_spans, False)}


@lru_cache(maxsize=1)
def _stand_ins() -> np.ndarray:
    """Entry cp holds the first code point that answers each of QUESTIONS like code point cp does.

    The answers are nltk's own: each question compiled through ``nltk.redos`` (the ``regex`` engine nltk's
    tokenizer runs) with the tokenizer's flags, and run over every code point at once.
    """
    everything = "".join(map(chr, range(sys.maxunicode + 1)))
    kinds = np.zeros(sys.maxunicode + 1, np.int64)
    for bit, question in enumerate(QUESTIONS):
        for match in redos.compile(question + "+", NLTK_FLAGS).finditer(everything):
            kinds[match.start():match.end()] |= 1 << bit
    first = np.zeros(1 << len(QUESTIONS), np.uint32)
    for kind in np.unique(kinds).tolist():
        first[kind] = np.argmax(kinds == kind)
    return first[kinds]


def _nltk_spans(codes: np.ndarray,
                spans: dict[bytes, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """nltk's token spans (starts, ends) in a text given as its code points, read off its stand-in text.

    The stand-in text puts each code point's stand-in (:func:`_stand_ins`) where the code point was. The
    pattern reads a character only through QUESTIONS (no case folding, anchors, lookarounds, word boundaries
    or backreferences), and each position of the two texts answers them alike, so nltk's match spans are the
    same in both. Blocks with the same stand-in text (92 distinct among 2,177: unassigned planes, CJK, private
    use...) share one nltk call (``spans`` keeps them).
    """
    key = _stand_ins()[codes].tobytes()
    if key not in spans:
        found = np.array(list(NLTK_TOKENIZER.span_tokenize(key.decode("utf-32-le"))), np.int64).reshape(-1, 2)
        spans[key] = found[:, 0], found[:, 1]
    return spans[key]


#: Separators for :class:`Expected`: each text's is the first of these that is not in it (a block of 512 code
#: points holds at most one of them; the pieces around it are ASCII).
SEPARATORS = (0x10FFFF, 0xE000)


class Expected:
    """nltk's tokens of one text: their character spans, and for token lists their characters in one string,
    joined by a separator that is not in the text (read in numpy, not token by token).

    A list of tokens is nltk's when it has as many tokens and the same separator-joined string: that string holds
    exactly one separator between tokens, so a token of the list holding the separator would add one; none does,
    and splitting the two equal strings at the separators gives the same tokens in the same order.
    """

    def __init__(self, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        self.starts, self.ends = starts, ends
        size = codes.size + 1
        inside = np.cumsum(np.bincount(starts, minlength=size) - np.bincount(ends, minlength=size))
        self.separator = chr(next(s for s in SEPARATORS if not np.any(codes == s)))
        kept = codes[inside[: codes.size] > 0]
        joined = np.insert(kept, np.cumsum(ends - starts)[:-1], ord(self.separator))
        self.joined = joined.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")

    def agrees(self, got) -> bool:
        """Whether a tokenizer's answer is nltk's: its tokens, or (a tuple) the character spans of its tokens."""
        if isinstance(got, tuple):
            return np.array_equal(got[0], self.starts) and np.array_equal(got[1], self.ends)
        return len(got) == self.starts.size and self.separator.join(got) == self.joined


def _nltk_of(text: str) -> Expected:
    """nltk's tokens of ``text``, read directly."""
    found = np.array(list(NLTK_TOKENIZER.span_tokenize(text)), np.int64).reshape(-1, 2)
    return Expected(_codes(text), found[:, 0], found[:, 1])


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


def _words_difference(tokenizers, blocks) -> str | None:
    """The first tokenizer and code point whose tokens differ from nltk's in :func:`_piece`'s positions.

    One text per block of 512 code points: their pieces joined by spaces, compared whole. By the argument of
    :func:`_alone_difference` (no token of nltk's spans a space; each of ours scans with a state that a
    space resets: the regex engine's findall with nltk's pattern, and the kernel's byte scanner), a piece
    that differs makes the text differ. nltk's tokens of the text are its spans (:func:`_nltk_spans`) of the
    text; the lowercased text of regex-lower is the same string in all but 17 blocks (lowering changes no code
    point of them), and there nltk reads the lowercased text itself. Each of our tokenizers reads every text.
    """
    spans: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for start, chars in blocks:
        text, codes = _pieces_text(chars)
        lowered = text.lower()
        want = Expected(codes, *_nltk_spans(codes, spans))
        want_lowered = want if lowered == text else _nltk_of(lowered)
        for name, (tokenize, lower) in tokenizers.items():
            if not (want_lowered if lower else want).agrees(tokenize(text)):
                for c in chars:  # name the first code point that differs
                    piece = _piece(c)
                    if not _nltk_of(piece.lower() if lower else piece).agrees(tokenize(piece)):
                        return f"{name}: U+{ord(c):04X}"
                return f"{name}: the block at U+{start:04X}"
    return None


def test_every_code_point_in_words_and_between_words_equals_nltk():
    """regex, regex-lower and the compiled BLEU kernel's tokenizer (bleu_kernel.token_spans) in one pass."""
    assert _words_difference(WORD_TOKENIZERS, _blocks()) is None


def test_a_planted_difference_is_found_by_the_batched_checks():
    # A code point tokenized unlike nltk in one position only, or everywhere: each batched check names it.
    def splits_after_ka(text):
        return regex_tokens(text.replace("\u0915b", "\u0915 b"))  # 'a<KA>b' becomes two words

    def doubles_ka(text):
        return regex_tokens(text.replace("\u0915", "\u0915\u0915"))

    def glues_at_the_end(text):
        return regex_tokens(text) + (["\U000e01ef"] if text.endswith("\U000e01ef") else [])

    devanagari = list(_blocks(0x0900, 0x0AFF))
    # the blocks' texts built in numpy are the pieces joined (the first block: controls, the last: the end)
    for _, chars in [*devanagari, *_blocks(0, 1023), *_blocks(sys.maxunicode - 600)]:
        text, codes = _pieces_text(chars)
        assert text == " ".join(_piece(c) for c in chars) and np.array_equal(codes, _codes(text))
    # same count and same characters but a character moved between tokens; a token holding the separator
    want = _nltk_of("ab cd \U0010ffff")
    assert want.separator == "\ue000" and want.agrees(["ab", "cd", "\U0010ffff"])
    assert not want.agrees(["a", "bcd", "\U0010ffff"]) and not want.agrees(["ab\ue000cd", "", "\U0010ffff"])
    assert _words_difference({"planted": (splits_after_ka, False)}, devanagari) == "planted: U+0915"
    assert _words_difference({"planted": (splits_after_ka, True)}, devanagari) == "planted: U+0915"
    assert _words_difference({"planted": (regex_tokens, False)}, devanagari) is None
    # a tokenizer that reports spans: a split inserted after KA moves every later span
    assert _words_difference({"planted": (lambda t: bleu_kernel.token_spans(t.replace("\u0915b", "\u0915 b")),
                                          False)}, devanagari) == "planted: U+0915"
    assert _words_difference({"kernel": (bleu_kernel.token_spans, False)}, devanagari) is None
    assert _alone_difference(doubles_ka, devanagari) == "U+0915: ours ['\u0915\u0915'], nltk ['\u0915']"
    assert _alone_difference(regex_tokens, devanagari) is None
    # the last code point of a batch, where no separator follows it
    assert _alone_difference(glues_at_the_end, list(_blocks(0xE0000, 0xE01EF))).startswith("U+E01EF")


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
