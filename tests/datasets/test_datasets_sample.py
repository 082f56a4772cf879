"""The bundled sample dataset: shape, content rules from its README, and dataset_summary."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from textgen_core.datasets import SAMPLE_NAME, dataset_summary, load_dataset, load_sample, sample_dataset_path


@pytest.fixture(scope="module")
def sample():
    return load_sample()


def test_sample_file_is_bundled() -> None:
    path = sample_dataset_path()
    assert path.is_file() and path.suffix == ".csv"
    assert (path.parent / "README.md").is_file()


def test_shape(sample) -> None:
    assert sample.name == SAMPLE_NAME == "sample-qa"
    assert sample.models == ["model-a", "model-b"]
    ids = {row.datum_id for row in sample.rows}
    assert len(ids) >= 40
    assert len(sample.rows) == 2 * len(ids)
    assert Counter(row.model for row in sample.rows) == {"model-a": len(ids), "model-b": len(ids)}
    assert sample.mapping["format"] == "long"
    assert sample.metadata_columns == ("relevant_contexts", "human_score", "human_label")


def test_every_row_is_complete(sample) -> None:
    for row in sample.rows:
        assert row.query and row.query.endswith("?"), row.datum_id
        assert row.prediction, row.datum_id
        assert 1 <= len(row.references) <= 2, row.datum_id
        assert 2 <= len(row.contexts) <= 4, row.datum_id
        assert 5 <= len(row.prediction.split()) <= 80, row.datum_id


def test_some_rows_have_two_references(sample) -> None:
    assert sum(1 for row in sample.rows if len(row.references) == 2) >= 10


def test_relevant_contexts_point_inside_the_context_list(sample) -> None:
    positions_seen: Counter[int] = Counter()
    for row in sample.rows:
        relevant = json.loads(row.metadata["relevant_contexts"])
        assert all(1 <= p <= len(row.contexts) for p in relevant), row.datum_id
        positions_seen.update(relevant)
    assert positions_seen[1] and positions_seen[2] and positions_seen[3]  # relevant is not always first
    assert any(json.loads(r.metadata["relevant_contexts"]) == [] for r in sample.rows)  # a retrieval miss


def test_human_ratings_separate_the_models(sample) -> None:
    by_model: dict[str, list[int]] = {"model-a": [], "model-b": []}
    for row in sample.rows:
        score = int(row.metadata["human_score"])
        label = row.metadata["human_label"]
        assert 1 <= score <= 5 and label in {"correct", "incorrect"}
        assert (label == "correct") == (score >= 3), row.datum_id  # rater's label agrees with the score
        by_model[row.model].append(score)
    mean = {model: sum(scores) / len(scores) for model, scores in by_model.items()}
    assert mean["model-a"] > 4.5 > mean["model-b"] + 1.5
    assert min(by_model["model-a"]) == 1  # model-a is not perfect either
    assert by_model["model-b"].count(5) >= 5  # and model-b is sometimes right


def test_answers_vary_in_length(sample) -> None:
    lengths = [len(row.prediction.split()) for row in sample.rows]
    assert min(lengths) <= 6 and max(lengths) >= 50


def test_shared_fields_agree_between_models(sample) -> None:
    by_id: dict[str, list] = {}
    for row in sample.rows:
        by_id.setdefault(row.datum_id, []).append(row)
    for datum_id, rows in by_id.items():
        assert len({(r.query, r.references, r.contexts) for r in rows}) == 1, datum_id


def test_loads_with_every_field_required() -> None:
    dataset = load_dataset(sample_dataset_path(), required=["query", "prediction", "references", "contexts",
                                                            "relevant_contexts", "human_score", "human_label"])
    assert len(dataset.rows) == len(load_sample().rows)


def test_dataset_summary(sample) -> None:
    summary = dataset_summary(sample)
    ids = len({row.datum_id for row in sample.rows})
    assert summary == {
        "name": "sample-qa",
        "source": str(sample_dataset_path()),
        "rows": 2 * ids,
        "datums": ids,
        "paired_datums": ids,
        "models": ["model-a", "model-b"],
        "rows_per_model": {"model-a": ids, "model-b": ids},
        "warnings": [],
        "fields": ["query", "prediction", "references", "contexts"],
        "metadata_columns": ["relevant_contexts", "human_score", "human_label"],
    }
    json.dumps(summary)  # plain data, ready for a UI or the CLI's --json
