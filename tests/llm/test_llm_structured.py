"""Judge replies are validated by jsonschema (Draft 2020-12, finite numbers): the re-ask message names the first
problem in reply order, and schemas outside the subset (or malformed) are refused when a request is built."""

from __future__ import annotations

import math
import random

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


def _schema(rng: random.Random, depth: int = 0) -> dict:
    """A random schema of the supported subset."""
    kind = rng.choice(["object", "array", "string", "integer", "number", "boolean", "null", "enum", "const",
                       "anyOf", "types"] if depth < 3 else ["string", "integer", "number", "boolean", "enum"])
    if kind == "object":
        names = rng.sample(["a", "b", "c", "id", "verdict"], rng.randint(0, 3))
        out: dict = {"type": "object", "properties": {n: _schema(rng, depth + 1) for n in names}}
        if names and rng.random() < 0.7:
            out["required"] = rng.sample(names, rng.randint(1, len(names)))
        extra = rng.choice([None, False, True, "schema"])
        if extra == "schema":
            out["additionalProperties"] = _schema(rng, depth + 1)
        elif extra is not None:
            out["additionalProperties"] = extra
        return out
    if kind == "array":
        out = {"type": "array", "items": _schema(rng, depth + 1)}
        for bound in ("minItems", "maxItems"):
            if rng.random() < 0.4:
                out[bound] = rng.randint(0, 3)
        return out
    if kind == "string":
        out = {"type": "string", "description": "said"}
        for bound in ("minLength", "maxLength"):
            if rng.random() < 0.4:
                out[bound] = rng.randint(0, 4)
        return out
    if kind in ("integer", "number"):
        out = {"type": kind}
        for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if rng.random() < 0.3:
                out[bound] = rng.choice([0, 1, 2.5, -1, 5])
        return out
    if kind == "enum":
        return {"enum": rng.sample(["yes", "no", 1, 2, 0, True, False, None, 1.0, "Yes"], rng.randint(1, 4))}
    if kind == "const":
        return {"const": rng.choice(["yes", 1, 1.0, True, None, 0])}
    if kind == "anyOf":
        return {"anyOf": [_schema(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    if kind == "types":
        return {"type": rng.sample(["string", "integer", "number", "boolean", "null"], 2)}
    return {"type": kind}


def _value(rng: random.Random, schema: dict | None, depth: int = 0):  # noqa: ANN202 - any JSON value
    """A random finite JSON value, most often shaped like ``schema`` (so that many are valid)."""
    if schema is None or rng.random() < 0.15 or depth > 4:
        return rng.choice(["yes", "no", "", "abcde", 0, 1, 2, -3, 1.0, 2.5, True, False, None, [], {}, [1, "a"],
                           {"a": 1}])
    if "anyOf" in schema:
        return _value(rng, rng.choice(schema["anyOf"]), depth + 1)
    if "enum" in schema or "const" in schema:
        return rng.choice(schema.get("enum", [schema.get("const")]))
    kind = schema.get("type")
    kind = rng.choice(kind) if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        out = {n: _value(rng, s, depth + 1) for n, s in props.items() if rng.random() < 0.85}
        if rng.random() < 0.2:
            extra = schema.get("additionalProperties")
            out["zz"] = _value(rng, extra if isinstance(extra, dict) else None, depth + 1)
        return out
    if kind == "array":
        return [_value(rng, schema.get("items"), depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == "string":
        return "x" * rng.randint(0, 6)
    if kind == "integer":
        return rng.choice([rng.randint(-2, 6), float(rng.randint(-2, 6))])
    if kind == "number":
        return rng.choice([rng.randint(-2, 6), rng.uniform(-2, 6)])
    if kind == "boolean":
        return rng.random() < 0.5
    return None


def test_validation_agrees_with_jsonschema_on_random_schemas_and_replies() -> None:
    """Most replies are found valid without jsonschema (the judge's hot path); whatever the shortcut passes,
    Draft 2020-12 passes too, and every reply it fails is failed by jsonschema (random subset schemas)."""
    rng = random.Random(20261128)
    valid = 0
    for _ in range(250):
        schema = _schema(rng)
        check_schema(schema)
        reference = Draft202012Validator(schema)
        for _ in range(8):
            value = _value(rng, schema)
            try:
                validate(value, schema)
                ours = True
            except ReplyError:
                ours = False
            assert ours == reference.is_valid(value), (schema, value)
            valid += ours
    assert valid > 600  # the random replies include many valid ones, so the shortcut's "valid" is exercised
