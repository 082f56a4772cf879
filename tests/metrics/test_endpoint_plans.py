"""Endpoint metrics are plans in metrics/ (a request, then a function of the reply) that import nothing of the judge."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics.pairwise import cosine_similarity

from textgen_core.registry import get_metric
from textgen_core.metrics.endpoint import Embeddings, EndpointPlan, PromptLogprobs
from textgen_core.model import Cell, Datum

ENDPOINT = Path(__file__).resolve().parents[2] / "textgen_core" / "metrics"


def test_the_metrics_layer_imports_nothing_of_the_judge() -> None:
    offenders = {}
    for path in ENDPOINT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level >= 2 and (node.module or "").startswith("judge"):
                offenders.setdefault(path.name, []).append(node.module)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("textgen_core.judge"):
                offenders.setdefault(path.name, []).append(node.module)
    assert offenders == {}


def _row(**kw) -> Datum:
    return Datum(datum_id=kw.pop("datum_id", "d1"), model=kw.pop("model", "m"), **kw)


def test_perplexity_plan_reads_a_column_without_a_request_and_asks_otherwise() -> None:
    plan = get_metric("perplexity").plan
    assert isinstance(plan, EndpointPlan)
    row = _row(prediction="a b c", metadata={"lp": "[-0.5, -1.25, null, -2]"})
    cell = plan.request(row, {"logprobs_column": "lp"})
    assert isinstance(cell, Cell)
    assert cell.value == pytest.approx(math.exp((0.5 + 1.25 + 2) / 3), abs=1e-12)
    assert cell.details == {"tokens": 3, "source": "column"}
    assert plan.request(row, {"logprobs_column": "missing"}).reason == "no log-probabilities in column 'missing'"
    assert "not a log-probability" in plan.request(_row(prediction="x", metadata={"lp": "0.5"}),
                                                   {"logprobs_column": "lp"}).reason
    asked = plan.request(row, {"logprobs_column": None})
    assert asked == PromptLogprobs("a b c")
    scored = plan.score(row, {}, [-0.1, None, -0.3])
    assert scored.value == pytest.approx(math.exp(0.2), abs=1e-12)
    assert scored.details == {"tokens": 2, "source": "endpoint"}
    assert plan.score(row, {}, []).reason == "the endpoint returned no log-probabilities"
    assert plan.score(row, {}, [-1e6]).reason == "perplexity overflows (log-probabilities too low)"


def test_semantic_similarity_plan_matches_scikit_learn() -> None:
    plan = get_metric("semantic_similarity").plan
    row = _row(prediction="p", references=("r1", "  ", "r2"))
    assert plan.request(row, {}) == Embeddings(("p", "r1", "r2"))
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(3, 8)).tolist()
    cell = plan.score(row, {}, vectors)
    expected = cosine_similarity([vectors[0]], vectors[1:])[0]
    assert cell.details["reference"] == int(np.argmax(expected)) + 1
    assert cell.value == pytest.approx(float(expected.max()), abs=1e-9)
    assert cell.details["per_reference"] == pytest.approx(expected.tolist(), abs=1e-9)
    assert plan.score(row, {}, vectors[:2]).reason == "the endpoint returned 2 embeddings for 3 texts"
    assert plan.score(row, {}, [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]).reason == "zero or mismatched embedding vectors"
