"""ROUGE against rouge-score's RougeScorer.score_multi: values equal to 1e-12 (in practice bit-equal).

Every test runs on both backends: rouge-score-rs (compiled) and the pure-Python path.
"""

from __future__ import annotations

import functools
import random

import pytest
from rouge_score import rouge_scorer

from lexical_cases import EDGE_CASES, generated_cases, long_pair, rows
from textgen_core.errors import ParameterError
from textgen_core.registry import get_metric
from textgen_core.metrics.lexical import rouge, rouge_native, score_lexical
from textgen_core.model import Datum

TYPES = ("rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum")
TOL = 1e-12


@pytest.fixture(params=[rouge.NATIVE, rouge.PYTHON], autouse=True)
def backend(request, monkeypatch):
    """Runs the test with ROUGE on one backend (rouge-score-rs is skipped when not installed)."""
    if request.param == rouge.NATIVE and not rouge_native.available():
        pytest.skip("rouge-score-rs is not installed")
    monkeypatch.setattr(rouge, "BACKEND", request.param)
    assert rouge.backend() == request.param
    return request.param


def _ours(cases, types=TYPES, stem=False):
    return score_lexical(rows(cases), {"rouge": {"rouge_types": types, "use_stemmer": stem}})["rouge"]


@functools.cache
def _reference(cases, types, stem):
    """rouge-score's score_multi of each case, computed once for both backends (the reference is the same)."""
    scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=stem)
    return [scorer.score_multi(list(refs), prediction) for _, refs, prediction in cases]


@functools.cache
def _reference_per_text(cases, types, stem):
    """rouge-score's score of the prediction against each reference alone, per case (once for both backends)."""
    scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=stem)
    return [[scorer.score(r, prediction) for r in refs] for _, refs, prediction in cases]


def _assert_matches(cases, types=TYPES, stem=False):
    cases, types = tuple(cases), tuple(types)
    for (case_id, refs, prediction), cells, expected in zip(cases, _ours(cases, types, stem),
                                                           _reference(cases, types, stem), strict=True):
        for rouge_type in types:
            cell, want = cells[rouge_type], expected[rouge_type]
            got = (cell.value, cell.details["precision"], cell.details["recall"])
            assert got == pytest.approx((want.fmeasure, want.precision, want.recall), abs=TOL, rel=0), (
                case_id, rouge_type, got, want)


@pytest.mark.parametrize("stem", [False, True], ids=["plain", "stemmed"])
def test_generated_pairs_match_rouge_score(stem):
    _assert_matches(generated_cases(600, seed=11), stem=stem)


@pytest.mark.parametrize("case", EDGE_CASES, ids=[c[0] for c in EDGE_CASES])
@pytest.mark.parametrize("stem", [False, True], ids=["plain", "stemmed"])
def test_edge_cases_match_rouge_score(case, stem):
    _assert_matches([case], stem=stem)


def test_empty_texts_score_zero_like_rouge_score():
    cells = _ours([("e", ("",), "")])[0]
    assert {t: cells[t].value for t in TYPES} == {t: 0.0 for t in TYPES}


def test_multiline_ties_match_rouge_score():
    # Small vocabularies and many lines: many equally long LCS, so the backtracking path matters.
    rng = random.Random(5)
    cases = []
    for i in range(400):
        vocab = "abcdef"[: rng.randint(1, 6)]

        def text():
            return "\n".join(
                " ".join(rng.choice(vocab) for _ in range(rng.randint(0, rng.choice((3, 9, 20)))))
                for _ in range(rng.randint(1, 5))
            )

        cases.append((f"ties-{i}", (text(),), text()))
    _assert_matches(cases, types=("rougeL", "rougeLsum"))


def test_several_references_pick_first_best_per_type():
    refs = ("a b c d", "a b c d", "x y")
    cells = _ours([("multi", refs, "a b c d")], types=("rouge1", "rougeL"))[0]
    assert cells["rouge1"].value == 1.0
    assert cells["rouge1"].details["reference"] == 0  # np.argmax: the first of equal maxima
    cells = _ours([("multi", ("x y", "c d", "a b c"), "a b c d")], types=("rouge1",))[0]
    assert cells["rouge1"].details["reference"] == 2
    assert cells["rouge1"].value == pytest.approx(2 * 0.75 * 1.0 / 1.75, abs=TOL)


def test_long_text_5000_words():
    reference, prediction, lcs = long_pair(5000)
    cells = _ours([("long", (reference,), prediction)], types=("rouge1", "rouge2", "rougeL", "rougeLsum"))[0]
    expected = rouge_scorer.RougeScorer(["rouge1", "rouge2"]).score(reference, prediction)
    for rouge_type in ("rouge1", "rouge2"):
        assert cells[rouge_type].value == pytest.approx(expected[rouge_type].fmeasure, abs=TOL)
    # rouge-score's LCS table would take minutes here; the LCS length is known by construction.
    precision, recall = lcs / len(prediction.split()), lcs / len(reference.split())
    assert cells["rougeL"].details["precision"] == pytest.approx(precision, abs=TOL)
    assert cells["rougeL"].details["recall"] == pytest.approx(recall, abs=TOL)
    assert cells["rougeL"].value == pytest.approx(2 * precision * recall / (precision + recall), abs=TOL)
    assert cells["rougeLsum"].value == cells["rougeL"].value  # one line each: summary level equals rougeL


def test_long_multiline_text_matches_rouge_score():
    reference, prediction, _ = long_pair(1000, seed=9)
    ref_words, pred_words = reference.split(), prediction.split()
    reference = "\n".join(" ".join(ref_words[i : i + 50]) for i in range(0, len(ref_words), 50))
    prediction = "\n".join(" ".join(pred_words[i : i + 45]) for i in range(0, len(pred_words), 45))
    _assert_matches([("long-lines", (reference,), prediction)], types=("rougeLsum",))


def test_seed_example_mean_of_score_multi():
    # The evaluate-style example of seed 003: its printed aggregate is the mean of rouge-score's
    # per-row score_multi F-measures.
    predictions = [
        "Transformers Transformers are fast plus efficient",
        "Good Morning",
        "I am waiting for new Transformers",
    ]
    references = [
        ("HuggingFace Transformers are fast efficient plus awesome",
         "Transformers are awesome because they are fast to execute"),
        ("Good Morning Transformers", "Morning Transformers"),
        ("People are eagerly waiting for new Transformer models", "People are very excited about new Transformers"),
    ]
    cases = [(str(i), refs, p) for i, (refs, p) in enumerate(zip(references, predictions))]
    types = ("rouge1", "rouge2", "rougeL", "rougeLsum")
    cells = _ours(cases, types)
    scorer = rouge_scorer.RougeScorer(list(types))
    printed = {"rouge1": 0.6659340659340659, "rouge2": 0.45454545454545453,
               "rougeL": 0.6146520146520146, "rougeLsum": 0.6146520146520146}
    for rouge_type in types:
        ours = sum(c[rouge_type].value for c in cells) / 3
        direct = sum(scorer.score_multi(list(r), p)[rouge_type].fmeasure for r, p in zip(references, predictions)) / 3
        assert ours == pytest.approx(direct, abs=TOL)
        assert ours == pytest.approx(printed[rouge_type], abs=TOL)


def test_outputs_follow_rouge_types():
    spec = get_metric("rouge")
    params = spec.resolve({"rouge_types": "rougeLsum,rouge4"})
    assert spec.outputs(params) == ("rougeLsum", "rouge4")
    cells = score_lexical(rows([("x", ("a b c d e",), "a b c d e")]), {"rouge": params})["rouge"][0]
    assert set(cells) == {"rougeLsum", "rouge4"} and cells["rouge4"].value == 1.0


@pytest.mark.parametrize("raw", ["rouge0", "rougeS", "rouge10", ""])
def test_unknown_rouge_type_is_a_parameter_error(raw):
    with pytest.raises(ParameterError, match="rouge.rouge_types"):
        get_metric("rouge").resolve({"rouge_types": raw})


@pytest.mark.parametrize(
    "row, reason",
    [
        (Datum("1", "m", prediction="a b", references=()), "no references"),
        (Datum("2", "m", prediction=None, references=("a b",)), "no prediction"),
    ],
    ids=["no-references", "no-prediction"],
)
def test_rows_without_inputs_are_unscored(row, reason):
    cells = score_lexical([row], {"rouge": {}})["rouge"][0]
    assert set(cells) == {"rouge1", "rouge2", "rougeL", "rougeLsum"}
    assert all(c.value is None and c.reason == reason for c in cells.values())


# --- Parity on what differs most between implementations: Unicode, stemming, ties, sizes. ---

ODD_CASES = [
    ("lone-surrogates", ("ab\ud800cd \udfff ef",), "ab cd\ud800ef"),
    ("surrogate-lines", ("a b\n\ud800\nc d",), "\udc00a b c\nd"),
    ("combining-marks", ("cafe\u0301 re\u0301sume\u0301 nai\u0308ve",), "cafe resume naive"),
    ("dotted-i-kelvin", ("\u0130stanbul \u212aelvin \u0130\u0130",), "istanbul kelvin i i"),
    ("final-sigma", ("\u039f\u0394\u039f\u03a3 \u03a3\u03a3",), "\u03bf\u03b4\u03bf\u03c2"),
    ("fullwidth-ligatures", ("\uff21\uff22\uff23 \ufb01ne \u2460\u2461",), "abc fine 12"),
    ("control-characters", ("a\x00b\x1cc\x7fd",), "a b c d"),
    ("crlf-and-separators", ("one two\r\nthree\u2028four\x85five",), "one\r\ntwo three four five"),
    ("only-newlines", ("\n\n\n",), "\n"),
    ("digits-and-scripts", ("\u0663\u0664 12 \u00b2 3\u2083",), "12 3"),
    ("emoji-joiners", ("\U0001f468\u200d\U0001f469 family \U0001f1eb\U0001f1f7",), "family"),
]


@pytest.mark.parametrize("case", ODD_CASES, ids=[c[0] for c in ODD_CASES])
@pytest.mark.parametrize("stem", [False, True], ids=["plain", "stemmed"])
def test_odd_unicode_matches_rouge_score(case, stem):
    _assert_matches([case], stem=stem)


def _spelled(code_points):
    return _spelled_text(map(chr, code_points))


def _spelled_text(chars):
    return "".join(f"a{c}b {c}{c} Z{c}9 " for c in chars)


def _making(expected, points) -> list[int]:
    """The code points c for which rouge-score's tokens of 'a<c>b' are not ['a', 'b'], read a block at a time.

    A block's pieces 'a<c>b' joined by spaces are tokenized in one call: rouge-score lowercases, turns every
    run of characters outside [a-z0-9] into a space and splits, so a space ends every token and the batch's
    tokens are each piece's tokens in turn. Each piece's tokens start with one beginning with 'a' and end
    with one ending with 'b'. A piece of one token (a, c and b glued) puts a token that is neither 'a' nor 'b'
    in the batch; a piece of more than two tokens makes the batch longer than two tokens a piece. So the batch
    reads ['a', 'b'] repeated only when every piece does; otherwise the block is read one code point at a time.
    """
    if expected(" ".join(f"a{chr(c)}b" for c in points)) == ["a", "b"] * len(points):
        return []
    return [c for c in points if expected(f"a{chr(c)}b") != ["a", "b"]]


@functools.cache
def _code_point_texts():
    """(text, rouge-score's tokens) for all code points in blocks, and the code points that make tokens.

    rouge-score reads each block's stand-in text: the code points that make tokens (:func:`_making`, found
    live) stand for themselves and every other one is replaced by '!'. Its tokens of a text are the runs of
    [a-z0-9] of the lowercased text; lowercasing maps each code point on its own (the Greek final sigma, the
    one exception, is outside [a-z0-9] in both forms), and a code point that makes no token in 'a<c>b'
    lowercases to characters outside [a-z0-9] only, as '!' does. So a block and its stand-in text have the
    same tokens, and blocks without such code points share one stand-in text, read once.
    """
    from rouge_score import tokenizers

    expected = tokenizers.DefaultTokenizer(use_stemmer=False).tokenize
    blocks = []
    making = []
    read: dict[str, list[str]] = {}
    for start in range(0, 0x110000, 4096):
        points = range(start, min(start + 4096, 0x110000))
        found = _making(expected, points)
        making += found
        stand_in = _spelled_text([chr(c) if c in found else "!" for c in points])
        if stand_in not in read:
            read[stand_in] = expected(stand_in)
        blocks.append((_spelled(points), read[stand_in]))
    return blocks, making


def test_code_points_that_make_tokens_are_found_in_batches_as_one_by_one():
    # Blocks with such code points (ASCII letters and digits, the Kelvin sign U+212A, the dotted capital I
    # U+0130) and one without: the batched reading finds exactly what one call per code point finds.
    from rouge_score import tokenizers

    expected = tokenizers.DefaultTokenizer(use_stemmer=False).tokenize
    for start in (0x0000, 0x2000, 0x4000):
        points = range(start, start + 4096)
        one_by_one = [c for c in points if expected(f"a{chr(c)}b") != ["a", "b"]]
        assert _making(expected, points) == one_by_one
    assert 0x212A in _making(expected, range(0x2000, 0x3000)) and 0x130 in _making(expected, range(0x1000))
    assert _making(expected, range(0x4000, 0x5000)) == []


def test_every_code_point_tokenizes_and_scores_like_rouge_score(backend):
    # Each code point inside words, doubled and after a capital: what lower() and the [a-z0-9]
    # filter make of it (a Kelvin sign becomes k, a dotted capital I becomes i plus a mark...).
    from textgen_core.metrics.lexical.tokenize import rouge_tokens

    if backend == rouge.NATIVE:
        from rouge_score_rs.tokenizers import DefaultTokenizer

        ours = DefaultTokenizer(use_stemmer=False).tokenize
    else:
        ours = rouge_tokens
    blocks, making = _code_point_texts()
    for k, (text, tokens) in enumerate(blocks):
        assert ours(text) == tokens, f"code points from {hex(k * 4096)}"
    # Scored too: every code point that makes tokens of its own, and a sample of the others.
    rng = random.Random(6)
    sample = making + rng.sample(range(0x110000), 600)
    cases = []
    for i in range(0, len(sample), 20):
        text = _spelled(sample[i : i + 20])
        cases.append((f"code-points-{i}", (text,), " ".join(rouge_tokens(text)[::2])))
    _assert_matches(cases, types=("rouge1", "rouge2", "rougeL"))


def _inflected_words(count, seed=4):
    """English-like words with the suffixes the Porter rules handle, nltk's irregular forms and y-runs."""
    rng = random.Random(seed)
    suffixes = ("", "s", "es", "ies", "ied", "ing", "ed", "ly", "ness", "ational", "tional", "enci", "anci", "izer",
                "abli", "alli", "entli", "eli", "ousli", "ization", "ation", "ator", "alism", "iveness", "fulness",
                "ousness", "aliti", "iviti", "biliti", "icate", "ative", "alize", "iciti", "ical", "ful", "ance",
                "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti",
                "ous", "ive", "ize", "e", "ll", "y", "eed", "sses", "logi", "fulli", "lessli", "bli", "yy", "ys")
    words = ["sky", "skies", "dying", "lying", "tying", "news", "innings", "inning", "outings", "cannings",
             "howe", "proceed", "exceed", "succeed", "syzygy", "yyyy", "ayyy", "yay", "generously", "agreed",
             "feed", "bled", "hoping", "hopping", "filing", "conditional", "rational", "valency", "digitizer",
             "abc1ing", "x2ed", "ing", "eed", "ying", "sses", "caresses", "ponies", "ties", "cats"]
    while len(words) < count:
        stem = "".join(rng.choice("bcdfghlmnprstvwy" if i % 2 else "aeiouy") for i in range(rng.randint(1, 8)))
        words.append(stem + rng.choice(suffixes))
    return words


@functools.cache
def _inflected_text_and_stems() -> tuple[str, list[str], list[tuple[str, tuple[str], str]]]:
    """The inflected words' text, rouge-score's stemmed tokens of it, and cases scoring words against nltk's
    stems (computed once for both backends)."""
    from nltk.stem import porter
    from rouge_score import tokenizers

    words = _inflected_words(20000)
    text = " ".join(words)
    stemmer = porter.PorterStemmer()
    cases = [(f"stems-{i}", (" ".join(words[i : i + 40]),), " ".join(stemmer.stem(w) for w in words[i + 5 : i + 45]))
             for i in range(0, 4000, 40)]
    return text, tokenizers.DefaultTokenizer(use_stemmer=True).tokenize(text), cases


def test_porter_stems_equal_rouge_scores(backend):
    from textgen_core.metrics.lexical.tokenize import rouge_tokens

    text, expected, cases = _inflected_text_and_stems()
    if backend == rouge.NATIVE:
        from rouge_score_rs.tokenizers import DefaultTokenizer

        ours = DefaultTokenizer(use_stemmer=True).tokenize(text)
    else:
        ours = rouge_tokens(text, stem=True)
    assert ours == expected
    # Scored: each word against its nltk stem, so any stem that differs changes a value.
    _assert_matches(cases, types=("rouge1", "rouge2", "rougeL"), stem=True)


@pytest.mark.parametrize("stem", [False, True], ids=["plain", "stemmed"])
def test_several_references_with_ties_pick_the_first_best(stem):
    rng = random.Random(8)
    vocab = ["cat", "cats", "sat", "sitting", "mat", "the", "a"]

    def text():
        lines = rng.randint(1, 3)
        return "\n".join(" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 6))) for _ in range(lines))

    cases = []
    for i in range(300):
        refs = [text() for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.5:
            refs.append(rng.choice(refs))  # an exact duplicate: equal F-measures
        cases.append((f"multi-{i}", tuple(refs), text()))
    _assert_matches(cases, stem=stem)
    for (case_id, refs, prediction), cells, per_ref in zip(cases, _ours(cases, stem=stem),
                                                           _reference_per_text(tuple(cases), TYPES, stem), strict=True):
        for rouge_type in TYPES:
            fs = [s[rouge_type].fmeasure for s in per_ref]
            assert cells[rouge_type].details["reference"] == fs.index(max(fs)), (case_id, rouge_type)


def test_one_line_of_20000_words_is_cheap():
    # rouge-score-rs would fill a 20,000 x 20,000 table for rougeLsum; one line each means rougeLsum is rougeL.
    reference, prediction, lcs = long_pair(20000, seed=4)
    cells = _ours([("huge", (reference,), prediction)], types=("rougeL", "rougeLsum"))[0]
    assert cells["rougeLsum"].value == cells["rougeL"].value
    assert cells["rougeL"].details["precision"] == pytest.approx(lcs / len(prediction.split()), abs=TOL)


def test_pairs_with_huge_lines_go_to_the_python_path(backend, monkeypatch):
    built = []
    plain = rouge._plain
    monkeypatch.setattr(rouge, "_plain", lambda text: (built.append(text), plain(text))[1])
    monkeypatch.setattr(rouge_native, "TABLE_LIMIT", 100)  # lines of 10 x 11 characters are already too long
    cases = [("short-lines", ("a b\nc d",), "a\nb c d"), ("long-lines", ("a b c d e f\ng",), "a b c d e f g h\ni")]
    _assert_matches(cases, types=("rouge1", "rougeL", "rougeLsum"))
    if backend == rouge.NATIVE:
        assert sorted(built) == sorted(["a b c d e f\ng", "a b c d e f g h\ni"])
        assert rouge_native.pair_scorer(["rougeLsum"], False)("x " * 40, "x\n" * 5) is not None  # 80 x 1 cells
        assert rouge_native.pair_scorer(["rougeLsum"], False)("x " * 60 + "\n", "x " * 5) is None
        assert rouge_native.pair_scorer(["rougeL"], False)("x " * 60 + "\n", "x " * 5) is not None


def test_without_rouge_score_rs_the_python_path_scores(monkeypatch):
    monkeypatch.setattr(rouge, "BACKEND", rouge.NATIVE)
    monkeypatch.setattr(rouge_native, "RougeScorer", None)
    assert not rouge_native.available() and rouge.backend() == rouge.PYTHON
    _assert_matches(EDGE_CASES + generated_cases(40, seed=12))


@pytest.mark.parametrize("stem", [False, True], ids=["plain", "stemmed"])
def test_values_are_bit_identical_to_rouge_score(stem):
    # Not merely within 1e-12: the same floats, so stored scores do not depend on the backend.
    cases = tuple(generated_cases(300, seed=31) + EDGE_CASES + ODD_CASES)
    for (case_id, refs, prediction), cells, expected in zip(cases, _ours(cases, stem=stem),
                                                           _reference(cases, TYPES, stem), strict=True):
        for rouge_type in TYPES:
            cell, want = cells[rouge_type], expected[rouge_type]
            assert (cell.value, cell.details["precision"], cell.details["recall"]) == (
                want.fmeasure, want.precision, want.recall), (case_id, rouge_type)
