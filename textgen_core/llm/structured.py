"""Structured replies: the JSON value in a model's reply, checked against a JSON Schema.

Models wrap JSON in code fences, prepend reasoning, or stop short. This module
finds the JSON value in a reply and validates it with ``jsonschema`` (Draft 2020-12,
numbers finite) against the JSON Schema subset that strict structured outputs accept.
A failure names the first problem in a short form ("$.verdicts: expected exactly 3
items, got 2"), which the judge sends back when it asks again.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from functools import lru_cache
from typing import Any, Mapping

from jsonschema import Draft202012Validator, SchemaError, ValidationError, validators

#: Keywords the validator enforces.
CHECKED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "enum", "const", "items",
    "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "anyOf",
})
#: Keywords that describe but do not constrain; accepted and ignored.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$comment"})

_TYPES = frozenset({"object", "array", "string", "boolean", "null", "number", "integer"})
#: Draft 2020-12, except that NaN and infinities (which Python's json reads) are not numbers.
_Validator = validators.extend(Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many({
    "number": lambda _c, v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    "integer": lambda _c, v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and math.isfinite(v) and v.is_integer()),
}))
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


class ReplyError(ValueError):
    """A reply that is not usable: no JSON in it, or JSON that breaks the schema (``schema`` True)."""

    def __init__(self, message: str, *, schema: bool = False) -> None:
        super().__init__(message)
        self.schema = schema


def check_schema(schema: Any) -> None:
    """Raise ValueError for a schema using keywords this validator cannot enforce, or malformed.

    Silently ignoring an unknown constraint would let invalid replies through,
    so a schema must stay within the supported subset. Each schema is checked
    once per process (every ask checks its schema; the answer is remembered).
    """
    if not isinstance(schema, Mapping):
        raise ValueError(f"schema at $ must be an object, got {type(schema).__name__}")
    _validator(json.dumps(schema, sort_keys=True))


def _subset(schema: Any, path: str) -> None:
    if not isinstance(schema, Mapping):
        raise ValueError(f"schema at {path} must be an object, got {type(schema).__name__}")
    unknown = set(schema) - CHECKED_KEYWORDS - ANNOTATIONS
    if unknown:
        raise ValueError(f"schema at {path} uses unsupported keyword(s): {', '.join(sorted(unknown))}")
    kinds = schema.get("type")
    for kind in ([kinds] if isinstance(kinds, str) else kinds or []):
        if kind not in _TYPES:
            raise ValueError(f"schema at {path} has unknown type {kind!r}")
    for name, sub in (schema.get("properties") or {}).items():
        _subset(sub, f"{path}.{name}")
    if isinstance(schema.get("additionalProperties"), Mapping):
        _subset(schema["additionalProperties"], f"{path}.*")
    if "items" in schema:
        _subset(schema["items"], f"{path}[]")
    for i, sub in enumerate(schema.get("anyOf") or []):
        _subset(sub, f"{path}|{i}")


def strict_compatible(schema: Mapping[str, Any]) -> bool:
    """:func:`is_strict_compatible`, remembered per schema (by its JSON text): every ask asks it."""
    return _strict(json.dumps(schema, sort_keys=True))


@lru_cache(maxsize=1024)
def _strict(schema_text: str) -> bool:
    return is_strict_compatible(json.loads(schema_text))


def is_strict_compatible(schema: Mapping[str, Any]) -> bool:
    """True when OpenAI's strict structured outputs accept the schema.

    Strict mode needs every object closed (``additionalProperties: false``)
    with every property listed in ``required``.
    """
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if schema.get("additionalProperties", True) is not False or set(schema.get("required") or ()) != set(props):
            return False
        if not all(is_strict_compatible(sub) for sub in props.values()):
            return False
    if "items" in schema and not is_strict_compatible(schema["items"]):
        return False
    return all(is_strict_compatible(sub) for sub in schema.get("anyOf") or [])


def extract_json(text: str | None) -> Any:
    """The JSON value in a reply: the whole text, a fenced block, or the first object/array in it."""
    if text is None or not text.strip():
        raise ReplyError("empty reply")
    body = _THINK.sub("", text).strip()
    candidates = [body] + [m.group(1).strip() for m in _FENCE.finditer(body)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for start, char in enumerate(body):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(body, start)
            except ValueError:
                continue
            return value
    snippet = body[:80].replace("\n", " ")
    raise ReplyError(f"no JSON object or array in the reply ({snippet!r}{'...' if len(body) > 80 else ''})")


def validate(value: Any, schema: Mapping[str, Any]) -> None:
    """Raise :class:`ReplyError` naming the first place where ``value`` breaks ``schema``."""
    errors = list(_validator(json.dumps(schema, sort_keys=True)).iter_errors(value))
    if errors:
        raise ReplyError(_message(min(errors, key=lambda e: _order(e, value))), schema=True)


@lru_cache(maxsize=1024)
def _validator(schema_text: str) -> Any:
    """The validator of one schema (by its JSON text), built once after checking the schema."""
    schema = json.loads(schema_text)
    _subset(schema, "$")
    try:  # a malformed value of a known keyword ("minItems": "2")
        _Validator.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"schema at $: {exc.message}") from None
    return _Validator(schema)


#: Which problem of a node is told first: its type, the alternatives, the fixed values, then the contents.
_RANK = {k: i for i, k in enumerate(("type", "anyOf", "const", "enum", "required", "minItems", "maxItems",
                                     "additionalProperties", "minLength", "maxLength", "minimum", "maximum",
                                     "exclusiveMinimum", "exclusiveMaximum"))}


def _order(error: ValidationError, root: Any = None) -> tuple:
    """Outer places first; at one place, by :data:`_RANK`; among items and fields, in the reply's order."""
    positions, node = [], root
    for step in error.absolute_path:
        if isinstance(step, int):
            positions.append(step)
        else:
            positions.append(list(node).index(step) if isinstance(node, dict) and step in node else 0)
        node = node[step] if isinstance(node, (dict, list)) and (isinstance(node, dict) or step < len(node)) else None
    return len(positions), tuple(positions), _RANK.get(str(error.validator), len(_RANK))


def _where(error: ValidationError) -> str:
    return "$" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in error.absolute_path)


def _message(error: ValidationError) -> str:
    """One problem in the words a judge is re-asked with."""
    path, value, bound, keyword = _where(error), error.instance, error.validator_value, error.validator
    if keyword == "type":
        kinds = [bound] if isinstance(bound, str) else list(bound)
        return f"{path}: expected {' or '.join(kinds)}, got {_describe(value)}"
    if keyword == "anyOf":
        first = min(error.context or [], key=lambda e: (e.schema_path[0], _order(e)), default=None)
        return f"{path}: matches none of the allowed forms ({_message(first) if first else 'no form'})"
    if keyword == "const":
        return f"{path}: expected {json.dumps(bound)}, got {json.dumps(value)[:60]}"
    if keyword == "enum":
        return f"{path}: {json.dumps(value)[:60]} is not one of {', '.join(json.dumps(o) for o in bound)}"
    if keyword == "required":
        missing = [name for name in bound if name not in value]
        return f"{path}: missing required field(s) {', '.join(missing)}"
    if keyword == "additionalProperties":
        known = error.schema.get("properties") or {}
        return f"{path}: unexpected field {next(k for k in value if k not in known)!r}"
    if keyword in ("minItems", "maxItems"):
        low, high = error.schema.get("minItems"), error.schema.get("maxItems")
        if low is not None and low == high:
            return f"{path}: expected exactly {low} items, got {len(value)}"
        return f"{path}: expected {'at least' if keyword == 'minItems' else 'at most'} {bound} items, got {len(value)}"
    if keyword in ("minLength", "maxLength"):
        words = "at least" if keyword == "minLength" else "at most"
        return f"{path}: expected {words} {bound} characters, got {len(value)}"
    words = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
             "exclusiveMaximum": "less than"}.get(str(keyword))
    if words:
        return f"{path}: expected {words} {bound}, got {value}"
    return f"{path}: {error.message}"


def parse_reply(text: str | None, schema: Mapping[str, Any]) -> Any:
    """Extract, normalise and validate in one step."""
    value = normalize(extract_json(text), schema)
    validate(value, schema)
    return value


_INTEGER_TEXT = re.compile(r"^[+-]?\d+(?:\.0*)?$")


def normalize(value: Any, schema: Mapping[str, Any]) -> Any:
    """Read integer-valued numbers in any form (4, 4.0, "4") as integers where the schema wants an integer,
    and labels in any case ("Yes") as the schema writes them, so a polite-enough reply is not re-asked."""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        props = schema["properties"]
        return {k: normalize(v, props[k]) if k in props else v for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [normalize(v, schema["items"]) for v in value]
    if "integer" in kinds and not isinstance(value, bool):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        if isinstance(value, str) and _INTEGER_TEXT.match(value.strip()):
            return int(float(value.strip()))
    if isinstance(value, str) and schema.get("enum"):
        options = {_folded(o): o for o in schema["enum"] if isinstance(o, str)}
        return options.get(_folded(value), value)
    return value


def _folded(text: str) -> str:
    """A label as a reply may spell it: Unicode NFC ('e' + combining accent is 'é'), any case, no outer spaces."""
    return unicodedata.normalize("NFC", text.strip()).casefold()


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}.get(type(value), type(value).__name__)
