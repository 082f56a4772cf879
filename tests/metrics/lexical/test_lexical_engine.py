"""The lexical contract: declarations, shared tokenization, process pools, robustness on odd input."""

from __future__ import annotations

import gc
import math
import multiprocessing
import pickle
import random
from concurrent.futures import ProcessPoolExecutor

import pytest

from lexical_cases import EDGE_CASES, generated_cases, rows
from textgen_core.errors import ParameterError
from textgen_core.registry import all_metrics
from textgen_core.metrics.lexical import SPECS, bleu, ngrams, rouge, score_lexical, wordnet
from textgen_core.metrics.spec import MetricSpec
from textgen_core.model import TEXT_FIELDS, Datum

EXPECTED = {
    "rouge": ("rouge1", "rouge2", "rougeL", "rougeLsum"),
    "bleu": ("bleu",),
    "gleu": ("gleu",),
    "meteor": ("meteor",),
    "wer": ("wer",),
    "exact_match": ("exact_match",),
    "token_f1": ("f1",),
    "mrr": ("reciprocal_rank",),
    "lengths": ("answer_length", "reference_length", "context_length"),
    "pass_at_k": ("pass@1",),
}
ALL = {spec.name: {} for spec in SPECS}


def test_specs_declare_the_contract():
    assert {spec.name: spec.outputs(spec.resolve()) for spec in SPECS} == EXPECTED
    for spec in SPECS:
        assert isinstance(spec, MetricSpec) and spec.group == "lexical"
        assert spec.score is not None and spec.label and spec.description and spec.notes
        assert set(spec.needs) <= set(TEXT_FIELDS)
        assert spec.direction in ("higher", "lower", "none")
        assert all(p.help.strip() for p in spec.params), spec.name
        signature = spec.signature(spec.resolve())
        assert signature.startswith(spec.name + "|") and "textgen-eval:" in signature
        assert all(f"{lib}:" in signature for lib in spec.libraries)


def test_score_names_are_unique_across_all_metrics():
    names = [name for spec in all_metrics().values() for name in spec.outputs(spec.resolve())]
    assert len(names) == len(set(names))


def test_libraries_that_change_numbers_are_declared():
    libraries = {spec.name: spec.libraries for spec in SPECS}
    assert libraries["rouge"] == ("rouge-score", "rouge-score-rs", "nltk")  # the oracle, the backend, the stemmer
    # nltk's formulas, and the regex engine whose Unicode tables decide the word tokens
    assert libraries["bleu"] == libraries["gleu"] == libraries["meteor"] == ("nltk", "regex")
    assert libraries["wer"] == ("jiwer",)


def test_score_lexical_shapes_and_unknown_metric():
    data = rows(generated_cases(40, seed=2))
    out = score_lexical(data, ALL)
    assert set(out) == set(ALL)
    for name, cells in out.items():
        assert len(cells) == len(data)
        assert all(set(c) == set(EXPECTED[name]) for c in cells)
    with pytest.raises(ParameterError, match="bertscore"):
        score_lexical(data, {"bertscore": {}})


def test_each_text_is_tokenized_once_per_tokenizer(monkeypatch):
    monkeypatch.setattr(rouge, "BACKEND", rouge.PYTHON)  # rouge-score-rs tokenizes inside its own calls
    seen = {"regex": [], "rouge": []}
    regex_builder, rouge_builder = ngrams._BUILDERS["regex"], rouge._plain
    monkeypatch.setitem(ngrams._BUILDERS, "regex", lambda t: (seen["regex"].append(t), regex_builder(t))[1])
    monkeypatch.setattr(rouge, "_plain", lambda t: (seen["rouge"].append(t), rouge_builder(t))[1])
    references = {"d1": ("the cat sat", "a cat"), "d2": ("dogs bark",), "d3": ("birds sing loud",)}
    data = [Datum(d, model, prediction=f"{model} says {d}", references=refs)
            for model in ("m1", "m2") for d, refs in references.items()]
    metrics = {"bleu": {}, "gleu": {}, "rouge": {}}
    if not wordnet.problem():
        metrics["meteor"] = {}
    score_lexical(data, metrics)
    distinct = {t for row in data for t in (row.prediction, *row.references)}
    assert sorted(seen["regex"]) == sorted(distinct)
    assert sorted(seen["rouge"]) == sorted(distinct)


def test_process_pool_gives_the_same_cells():
    data = rows(generated_cases(60, seed=3))
    chunks = [data[:30], data[30:]]
    metrics = {"rouge": {}, "bleu": {}, "wer": {}, "token_f1": {}}
    pickle.dumps((score_lexical, chunks[0], metrics))
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        pooled = list(pool.map(score_lexical, chunks, [metrics, metrics]))
    here = score_lexical(data, metrics)
    for name in metrics:
        assert pooled[0][name] + pooled[1][name] == here[name]


def _odd_text(rng):
    alphabet = ["a", "B", " ", "\n", "\t", ".", ",", "$", "_", "'", "-", "é", "ß", "İ", "K", "東", "🍕", "\u0301",
                "\u200b", "\u00a0", "\x00", "\x1c", "\ud800", "&quot;", "<skipped>", "1", "٣", "ﬁ", "Σ"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


@pytest.mark.parametrize("rouge_backend", [rouge.NATIVE, rouge.PYTHON])
def test_odd_strings_never_crash_and_stay_in_range(rouge_backend, monkeypatch):
    monkeypatch.setattr(rouge, "BACKEND", rouge_backend)
    rng = random.Random(13)
    data = []
    for i in range(150):
        refs = tuple(_odd_text(rng) for _ in range(rng.randint(0, 3)))
        contexts = tuple(_odd_text(rng) for _ in range(rng.randint(0, 3)))
        metadata = {"relevant_contexts": _odd_text(rng), "n": rng.choice([3, "x", None]), "c": 1}
        data.append(Datum(str(i), "m", prediction=rng.choice([None, _odd_text(rng)]), references=refs,
                          contexts=contexts, metadata=metadata))
    data += rows(EDGE_CASES)
    metrics = dict(ALL)
    metrics["bleu"] = {"smoothing": "method7", "tokenizer": "13a"}
    out = score_lexical(data, metrics)
    specs = {spec.name: spec for spec in SPECS}
    for name, cells in out.items():
        low, high = specs[name].value_range
        if name == "bleu":
            high = None  # nltk's smoothing method 7 (like 5) averages precisions with p1 + 1: BLEU can pass 1
        for row, row_cells in zip(data, cells):
            for cell in row_cells.values():
                assert (cell.value is None) != (cell.reason is None), (name, row.datum_id, cell)
                if cell.value is not None:
                    assert math.isfinite(cell.value) and low <= cell.value and (high is None or cell.value <= high)
                    pickle.dumps(cell)


def test_values_that_are_not_text_are_unscored_not_crashing():
    data = [
        Datum("1", "m", prediction=float("nan"), references=("a",), contexts=(1.5,), metadata={"relevant_contexts": "1"}),
        Datum("2", "m", prediction="a", references=("a", None), contexts=("x",)),  # type: ignore[arg-type]
        Datum("3", "m", prediction=["a", "list"], references=("a",)),  # type: ignore[arg-type]
    ]
    out = score_lexical(data, ALL)
    assert out["rouge"][0]["rouge1"].reason == "the prediction is not text but float"
    assert out["bleu"][1]["bleu"].reason == "a reference is not text but NoneType"
    assert out["mrr"][0]["reciprocal_rank"].reason == "the contexts are not all text"
    assert out["lengths"][0]["context_length"].reason == "a context is not text"
    assert out["lengths"][2]["answer_length"].reason == "the prediction is not text"
    assert out["wer"][2]["wer"].reason == "the prediction is not text but list"


def test_spec_score_resolves_raw_parameters():
    spec = next(s for s in SPECS if s.name == "bleu")
    cells = spec.score([Datum("1", "m", prediction="a b", references=("a b",))], {"weights": "1"})
    assert cells[0]["bleu"].value == 1.0


def test_cycle_collector_is_paused_only_while_scoring(monkeypatch):
    data = rows(generated_cases(20, seed=4))
    assert gc.isenabled()
    score_lexical(data, {"rouge": {}, "bleu": {}})
    assert gc.isenabled()
    gc.disable()
    try:
        score_lexical(data, {"bleu": {}})
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()
    def broken(*_args):
        raise RuntimeError("boom")

    monkeypatch.setattr(bleu, "row_stats", broken)
    with pytest.raises(RuntimeError, match="boom"):
        score_lexical(data, {"bleu": {}})
    assert gc.isenabled()


def test_fast_cells_equal_cells_built_by_the_dataclass():
    import dataclasses

    from textgen_core.metrics.lexical.base import scored
    from textgen_core.model import Cell

    assert [f.name for f in dataclasses.fields(Cell)] == ["value", "details", "reason"]
    assert not hasattr(Cell, "__post_init__")  # scored() would skip it
    for value, details in [(0.5, {"precision": 1.0}), (0.0, {}), (1e-300, {"matches": [1, 2]})]:
        fast, slow = scored(value, details), Cell(value, details)
        assert fast == slow and hash(scored(value, None)) == hash(Cell(value, None))
        assert (fast.value, fast.details, fast.reason) == (value, details, None)
        assert pickle.loads(pickle.dumps(fast)) == slow
    with pytest.raises(dataclasses.FrozenInstanceError):
        scored(1.0, {}).value = 2.0  # type: ignore[misc]
