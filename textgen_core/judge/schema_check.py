"""Read a judge reply as JSON and check it against the response schema.

Judges wrap JSON in code fences, prepend reasoning, or stop short. This module
finds the JSON value in a reply and validates it against the small JSON Schema
subset our prompts use. A reply that fails either step is re-asked by the
client and, in the end, unscored with the message produced here: never a 0.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

#: Keywords the validator enforces.
CHECKED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "enum", "const", "items",
    "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "anyOf",
})
#: Keywords that describe but do not constrain; accepted and ignored.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$comment"})

_TYPES: Mapping[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and math.isfinite(v) and v.is_integer()),
}
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


class ReplyError(ValueError):
    """A reply that is not usable: no JSON in it, or JSON that breaks the schema (``schema`` True)."""

    def __init__(self, message: str, *, schema: bool = False) -> None:
        super().__init__(message)
        self.schema = schema


def check_schema(schema: Any, path: str = "$") -> None:
    """Raise ValueError for a schema using keywords this validator cannot enforce.

    Silently ignoring an unknown constraint would let invalid replies through,
    so a schema must stay within the supported subset.
    """
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
        check_schema(sub, f"{path}.{name}")
    if isinstance(schema.get("additionalProperties"), Mapping):
        check_schema(schema["additionalProperties"], f"{path}.*")
    if "items" in schema:
        check_schema(schema["items"], f"{path}[]")
    for i, sub in enumerate(schema.get("anyOf") or []):
        check_schema(sub, f"{path}|{i}")


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
    problem = _first_problem(value, schema, "$")
    if problem:
        raise ReplyError(problem, schema=True)


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
        options = {o.lower(): o for o in schema["enum"] if isinstance(o, str)}
        return options.get(value.strip().lower(), value)
    return value


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}.get(type(value), type(value).__name__)


def _first_problem(value: Any, schema: Mapping[str, Any], path: str) -> str | None:
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_TYPES[k](value) for k in kinds):
            return f"{path}: expected {' or '.join(kinds)}, got {_describe(value)}"
    if "anyOf" in schema:
        problems = [_first_problem(value, sub, path) for sub in schema["anyOf"]]
        if all(problems):
            return f"{path}: matches none of the allowed forms ({problems[0]})"
    if "const" in schema and not _same(value, schema["const"]):
        return f"{path}: expected {json.dumps(schema['const'])}, got {json.dumps(value)[:60]}"
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        allowed = ", ".join(json.dumps(o) for o in schema["enum"])
        return f"{path}: {json.dumps(value)[:60]} is not one of {allowed}"
    if isinstance(value, dict):
        return _object_problem(value, schema, path)
    if isinstance(value, list):
        return _array_problem(value, schema, path)
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"{path}: expected at least {schema['minLength']} characters, got {len(value)}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{path}: expected at most {schema['maxLength']} characters, got {len(value)}"
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number_problem(value, schema, path)
    return None


def _object_problem(value: dict, schema: Mapping[str, Any], path: str) -> str | None:
    props = schema.get("properties") or {}
    missing = [name for name in schema.get("required") or () if name not in value]
    if missing:
        return f"{path}: missing required field(s) {', '.join(missing)}"
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{path}.{name}"
        if name in props:
            problem = _first_problem(item, props[name], where)
        elif extra is False:
            problem = f"{path}: unexpected field {name!r}"
        elif isinstance(extra, Mapping):
            problem = _first_problem(item, extra, where)
        else:
            problem = None
        if problem:
            return problem
    return None


def _array_problem(value: list, schema: Mapping[str, Any], path: str) -> str | None:
    low, high = schema.get("minItems"), schema.get("maxItems")
    if low is not None and low == high and len(value) != low:
        return f"{path}: expected exactly {low} items, got {len(value)}"
    if low is not None and len(value) < low:
        return f"{path}: expected at least {low} items, got {len(value)}"
    if high is not None and len(value) > high:
        return f"{path}: expected at most {high} items, got {len(value)}"
    if "items" in schema:
        for i, item in enumerate(value):
            problem = _first_problem(item, schema["items"], f"{path}[{i}]")
            if problem:
                return problem
    return None


def _number_problem(value: float, schema: Mapping[str, Any], path: str) -> str | None:
    checks = (
        ("minimum", lambda b: value >= b, "at least"),
        ("maximum", lambda b: value <= b, "at most"),
        ("exclusiveMinimum", lambda b: value > b, "more than"),
        ("exclusiveMaximum", lambda b: value < b, "less than"),
    )
    for keyword, ok, words in checks:
        if keyword in schema and not ok(schema[keyword]):
            return f"{path}: expected {words} {schema[keyword]}, got {value}"
    return None


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b
