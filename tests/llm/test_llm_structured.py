"""Judge replies are validated by jsonschema (Draft 2020-12, finite numbers): the re-ask message names the first
problem in reply order, and schemas outside the subset (or malformed) are refused when a request is built."""

from __future__ import annotations

import math

import pytest
from jsonschema import Draft202012Validator

from textgen_core.llm.structured import ReplyError, check_schema, parse_reply, validate

VERDICTS = {"type": "object", "additionalProperties": False, "required": ["verdicts"], "properties": {
    "verdicts": {"type": "array", "minItems": 3, "maxItems": 3, "items": {
        "type": "object", "additionalProperties": False, "required": ["id", "verdict"],
        "properties": {"id": {"type": "integer", "minimum": 1}, "verdict": {"enum": ["yes", "no"]}}}}}}


def _problem(value) -> str | None:  # noqa: ANN001
    try:
        validate(value, VERDICTS)
    except ReplyError as exc:
        assert exc.schema
        return str(exc)
    return None


def test_the_first_problem_in_reply_order_is_named() -> None:
    good = [{"id": 1, "verdict": "yes"}, {"id": 2, "verdict": "no"}, {"id": 3, "verdict": "yes"}]
    assert _problem({"verdicts": good}) is None
    bad = [dict(good[0]), {"id": 2, "verdict": "maybe"}, {"id": 0, "verdict": "nope"}]
    assert _problem({"verdicts": bad}) == '$.verdicts[1].verdict: "maybe" is not one of "yes", "no"'
    assert _problem({"verdicts": good[:2]}) == "$.verdicts: expected exactly 3 items, got 2"
    assert _problem({"verdicts": [good[0], {"verdict": "yes"}, good[2]]}) == "$.verdicts[1]: missing required field(s) id"
    assert _problem({"verdicts": good, "echo": "sk-x"}) == "$: unexpected field 'echo'"


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_numbers_that_json_has_no_word_for_are_not_numbers(number: float) -> None:
    with pytest.raises(ReplyError, match=r"\$\.n: expected number, got number"):
        validate({"n": number}, {"type": "object", "properties": {"n": {"type": "number"}}})
    with pytest.raises(ReplyError):
        parse_reply('{"n": NaN}', {"type": "object", "properties": {"n": {"type": "number"}}})


def test_integers_as_floats_and_text_are_read_but_booleans_are_not() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert parse_reply('{"n": 4.0}', schema) == {"n": 4} and parse_reply('{"n": "4"}', schema) == {"n": 4}
    with pytest.raises(ReplyError, match="expected integer, got boolean"):
        parse_reply('{"n": true}', schema)


def test_agrees_with_jsonschema_on_finite_values() -> None:
    reference = Draft202012Validator(VERDICTS)
    values = [{"verdicts": [{"id": i, "verdict": v} for i, v in zip(ids, verdicts)]}
              for ids in ([1, 2, 3], [1, 2], [0, 1, 2], [1.0, 2, 3], [True, 2, 3])
              for verdicts in (["yes", "no", "yes"], ["yes", "No", "no"], ["yes", 1, "no"])]
    for value in values:
        assert (_problem(value) is None) == reference.is_valid(value), value


def test_a_malformed_or_unsupported_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="schema at \\$: '2' is not of type 'integer'"):
        check_schema({"type": "array", "minItems": "2"})
    with pytest.raises(ValueError, match="unsupported keyword"):
        check_schema({"type": "string", "pattern": "^a"})
