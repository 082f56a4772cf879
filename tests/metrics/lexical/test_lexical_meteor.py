"""METEOR against nltk's meteor_score with the same WordNet reader, read offline."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from nltk.translate.meteor_score import meteor_score

from lexical_cases import EDGE_CASES, generated_cases, long_pair, rows
from textgen_core.errors import ParameterError
from textgen_core.registry import get_metric
from textgen_core.metrics.lexical import score_lexical, wordnet
from textgen_core.metrics.lexical.tokenize import WORD_TOKENIZERS
from textgen_core.model import Datum

TOL = 1e-12
HYPOTHESIS = "It is a guide to action which ensures that the military always obeys the commands of the party"
REFERENCE = "It is a guide to action that ensures that the military will forever heed Party commands"
SYNONYMS = "run running ran car automobile auto big large great dog hound quick fast rapid happy glad house home".split()


@pytest.fixture(scope="module")
def reader():
    reason = wordnet.problem()
    if reason:
        pytest.skip(reason)
    return wordnet.load()


def _assert_matches(cases, reader, tokenizer="regex", **weights):
    params = {"tokenizer": tokenizer, **weights}
    cells = score_lexical(rows(cases), {"meteor": params})["meteor"]
    split = WORD_TOKENIZERS[tokenizer]
    for (case_id, refs, prediction), cell in zip(cases, cells):
        want = meteor_score([split(r) for r in refs], split(prediction), wordnet=reader, **weights)
        assert cell["meteor"].value == pytest.approx(want, abs=TOL, rel=0), (case_id, cell["meteor"], want)


def test_nltk_documentation_example(reader):
    data = [Datum("1", "m", prediction=HYPOTHESIS, references=(REFERENCE,))]
    cell = score_lexical(data, {"meteor": {"tokenizer": "whitespace"}})["meteor"][0]["meteor"]
    assert round(cell.value, 4) == 0.6944
    assert cell.value == meteor_score([REFERENCE.split()], HYPOTHESIS.split(), wordnet=reader)


def test_generated_pairs_match_nltk(reader):
    _assert_matches(generated_cases(500, seed=31), reader)


@pytest.mark.parametrize("case", EDGE_CASES, ids=[c[0] for c in EDGE_CASES])
def test_edge_cases_match_nltk(case, reader):
    _assert_matches([case], reader)


def test_synonym_and_stem_matches(reader):
    rng = random.Random(3)
    cases = [
        (f"syn-{i}", tuple(" ".join(rng.choice(SYNONYMS) for _ in range(rng.randint(0, 12))) for _ in range(2)),
         " ".join(rng.choice(SYNONYMS) for _ in range(rng.randint(0, 12))))
        for i in range(300)
    ]
    _assert_matches(cases, reader, tokenizer="whitespace")


@pytest.mark.parametrize("alpha, beta, gamma", [(0.5, 1.0, 0.2), (1.0, 3.0, 0.5), (0.0, 2.0, 1.0), (0.85, 0.2, 0.6)])
def test_weights_match_nltk(reader, alpha, beta, gamma):
    _assert_matches(generated_cases(80, seed=32), reader, alpha=alpha, beta=beta, gamma=gamma)


def test_long_text(reader):
    reference, prediction, _ = long_pair(5000)
    _assert_matches([("long", (reference,), prediction)], reader)


def test_several_references_keep_the_best(reader):
    data = [Datum("1", "m", prediction=HYPOTHESIS, references=("completely different words", REFERENCE))]
    cell = score_lexical(data, {"meteor": {"tokenizer": "whitespace"}})["meteor"][0]["meteor"]
    assert round(cell.value, 4) == 0.6944 and cell.details["reference"] == 1


def test_unavailable_without_wordnet_data(monkeypatch, tmp_path):
    monkeypatch.setenv(wordnet.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(wordnet, "_reader", None)
    monkeypatch.setattr(wordnet, "_error", None)
    monkeypatch.setattr(wordnet, "_nltk_has_wordnet", lambda: False)
    reason = wordnet.problem()
    assert reason is not None and reason.startswith(wordnet.MISSING)
    spec = get_metric("meteor")
    assert any(wordnet.MISSING in r for r in spec.missing({"prediction", "references"}, spec.resolve()))
    cell = score_lexical([Datum("1", "m", prediction="a", references=("a",))], {"meteor": {}})["meteor"][0]["meteor"]
    assert cell.value is None and wordnet.MISSING in cell.reason
    assert "wordnet-base" in spec.notes



def test_asking_whether_wordnet_is_there_reads_the_files_before_importing_nltk(tmp_path):
    # the Evaluate and Runs pages ask on every rerun; importing nltk to answer costs ~2.5 CPU-s a process
    for name in wordnet.NEEDED:
        (tmp_path / name).write_text("")
    code = ("import sys; from textgen_core.metrics.lexical import wordnet\n"
            "print(wordnet.problem(), 'nltk' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, wordnet.ENV_DIR: str(tmp_path)})
    assert done.stdout.split() == ["None", "False"], done.stderr

def test_copied_wordnet_root_is_a_private_cache(reader):
    if wordnet._nltk_has_wordnet():
        pytest.skip("nltk's own wordnet corpus is used here")
    root = wordnet.cache_root() / "wordnet-3.0"
    assert (root / "lexnames").read_text().splitlines()[44] == "44\tadj.ppl\t3"
    assert all((root / name).is_file() and not (root / name).is_symlink() for name in wordnet.NEEDED)


def test_the_stored_lemma_index_is_the_one_nltk_parses(reader, tmp_path):
    """The index a process reads back instead of parsing equals nltk's own parse of the same files, and a file that
    is broken or from another nltk version is not read (the reader parses the index files again)."""
    if wordnet._nltk_has_wordnet():
        pytest.skip("nltk's own wordnet corpus is used here")
    import copy
    from collections import defaultdict

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    parsed = copy.copy(reader)
    parsed._lemma_pos_offset_map = defaultdict(dict)
    WordNetCorpusReader._load_lemma_pos_offset_map(parsed)  # nltk's parse, on a copy of the loaded reader
    stored = wordnet.read_index(wordnet.cache_root() / "wordnet-3.0" / wordnet.INDEX_CACHE)
    assert stored is not None and len(stored) > 140_000
    assert stored == dict(parsed._lemma_pos_offset_map) == dict(reader._lemma_pos_offset_map)
    broken = tmp_path / "index.json"
    for text in ("", '{"nltk": "', "[]", '{"nltk": "0.1", "index": {}}', f'{{"nltk": "{nltk.__version__}"}}'):
        broken.write_text(text)
        assert wordnet.read_index(broken) is None, text
    wordnet.write_index(broken, {"dog": {"n": [2084071]}})
    assert wordnet.read_index(broken) == {"dog": {"n": [2084071]}}


@pytest.mark.parametrize("raw, name", [({"alpha": 1.5}, "meteor.alpha"), ({"gamma": -0.1}, "meteor.gamma"),
                                       ({"beta": "x"}, "meteor.beta")])
def test_bad_parameters(raw, name):
    with pytest.raises(ParameterError, match=name.replace(".", r"\.")):
        get_metric("meteor").resolve(raw)
