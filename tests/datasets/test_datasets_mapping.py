"""guess_mapping from column names, and ColumnMapping as plain data."""

from __future__ import annotations

import json

import pytest

from textgen_core.datasets import ColumnMapping, guess_mapping


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        (["id", "model", "query", "prediction", "reference", "context"],
         dict(id="id", model="model", query="query", prediction="prediction",
              references=("reference",), contexts=("context",))),
        (["QID", "Question", "Response", "Ground Truth", "Retrieved-Contexts"],
         dict(id="QID", query="Question", prediction="Response",
              references=("Ground Truth",), contexts=("Retrieved-Contexts",))),
        (["datum_id", "prompt", "generated", "gold"],
         dict(id="datum_id", query="prompt", prediction="generated", references=("gold",))),
        (["input", "output", "target"], dict(query="input", prediction="output", references=("target",))),
        (["question", "answer", "ground_truths", "contexts"],
         dict(query="question", prediction="answer", references=("ground_truths",), contexts=("contexts",))),
    ],
)
def test_guess_single_columns(columns: list[str], expected: dict) -> None:
    mapping = guess_mapping(columns)
    assert mapping == ColumnMapping(**expected)
    assert mapping.format == "long"


def test_numbered_columns_in_numeric_order() -> None:
    columns = ["id", "question", "answer", "reference_10", "reference_2", "Reference_1", "context_2", "context_1"]
    mapping = guess_mapping(columns)
    assert mapping.references == ("Reference_1", "reference_2", "reference_10")
    assert mapping.contexts == ("context_1", "context_2")


def test_single_reference_comes_before_numbered_ones() -> None:
    assert guess_mapping(["answer", "reference", "reference_2"]).references == ("reference", "reference_2")


def test_first_candidate_wins_and_no_column_is_used_twice() -> None:
    mapping = guess_mapping(["answer", "response", "prediction"])
    assert mapping.prediction == "prediction"
    # "answer" stays unmapped (it becomes metadata), not a second prediction
    assert "answer" not in mapping.columns_used()


@pytest.mark.parametrize(
    ("columns", "wide"),
    [
        (["id", "question", "prediction_gpt-4o", "prediction_llama3"], {"gpt-4o": "prediction_gpt-4o", "llama3": "prediction_llama3"}),
        (["id", "question", "GPT_Prediction", "Claude_Prediction"], {"GPT": "GPT_Prediction", "Claude": "Claude_Prediction"}),
        (["id", "question", "response_a", "response_b", "reference"], {"a": "response_a", "b": "response_b"}),
        (["id", "question", "model-x output", "model-y output"], {"model-x": "model-x output", "model-y": "model-y output"}),
    ],
)
def test_wide_format_guess(columns: list[str], wide: dict) -> None:
    mapping = guess_mapping(columns)
    assert mapping.format == "wide"
    assert mapping.wide_predictions == wide
    assert mapping.prediction is None and mapping.model is None
    assert mapping.id == "id" and mapping.query == "question"


def test_reference_like_columns_are_not_models() -> None:
    mapping = guess_mapping(["question", "expected_output", "response_a", "reference_response"])
    assert mapping.format == "wide"
    assert mapping.wide_predictions == {"a": "response_a"}


def test_a_prediction_column_means_long_format() -> None:
    mapping = guess_mapping(["id", "prediction", "prediction_gpt"])
    assert mapping.format == "long" and mapping.prediction == "prediction"


def test_nothing_recognised() -> None:
    mapping = guess_mapping(["foo", "bar"])
    assert mapping == ColumnMapping()
    assert mapping.columns_used() == []


def test_round_trip_through_json() -> None:
    mapping = ColumnMapping(id="qid", query="q", references=("r1", "r2"), format="wide",
                            wide_predictions={"a": "pa", "b": "pb"}, list_format="delimiter", delimiter=";",
                            max_cell_chars=5000)
    data = json.loads(json.dumps(mapping.to_dict()))
    assert data["references"] == ["r1", "r2"]
    back = ColumnMapping.from_dict(data)
    assert back == mapping
    assert hash(back) == hash(mapping)


def test_strings_and_lists_become_tuples() -> None:
    mapping = ColumnMapping(references="ref", contexts=["c1", "c2"])  # type: ignore[arg-type]
    assert mapping.references == ("ref",)
    assert mapping.contexts == ("c1", "c2")
    assert ColumnMapping(references="").references == ()  # type: ignore[arg-type]


def test_replace_overrides_a_guess() -> None:
    guess = guess_mapping(["id", "question", "answer", "notes"])
    fixed = guess.replace(references=["notes"], list_format="single")
    assert fixed.references == ("notes",) and fixed.list_format == "single"
    assert fixed.query == "question" and guess.references == ()


def test_columns_used_in_wide_format() -> None:
    mapping = ColumnMapping(id="id", query="q", references=("r",), format="wide", wide_predictions={"m": "p_m"})
    assert mapping.columns_used() == ["id", "q", "r", "p_m"]
    long = ColumnMapping(prediction="p", wide_predictions={"m": "p_m"})
    assert long.columns_used() == ["p"]


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        (["ticket_id", "model", "question", "answer", "category"], "ticket_id"),
        (["uid", "model", "prompt", "output"], "uid"),
        (["ticket", "system", "input", "response"], "ticket"),
        (["caseId", "model", "query", "prediction"], "caseId"),
        (["user_id", "conversation_id", "model", "query", "prediction"], "conversation_id"),
        (["id", "ticket_id", "model", "query", "prediction"], "id"),
    ],
)
def test_the_id_is_guessed_from_common_names(columns: list[str], expected: str) -> None:
    assert guess_mapping(columns).id == expected


@pytest.mark.parametrize("columns", [["model_id", "query", "prediction"], ["user_id", "run_id", "query", "answer"],
                                     ["valid", "query", "prediction"], ["model", "query", "prediction"]])
def test_a_person_model_or_run_id_is_not_taken_for_the_datum(columns: list[str]) -> None:
    assert guess_mapping(columns).id is None


def test_pairing_by_query_needs_a_query_and_no_id() -> None:
    from textgen_core.errors import InputError

    with pytest.raises(InputError, match="needs a mapped query column and no id"):
        ColumnMapping(query="q", id="id", pair_by_query=True)
    with pytest.raises(InputError, match="needs a mapped query column"):
        ColumnMapping(pair_by_query=True)
    mapping = ColumnMapping(query="q", model="m", prediction="p", pair_by_query=True)
    assert ColumnMapping.from_dict(json.loads(json.dumps(mapping.to_dict()))) == mapping
