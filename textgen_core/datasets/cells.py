"""Turning one raw cell into the text a normalized field holds.

Each function raises :class:`CellProblem` with a message for the user; the loader
adds the file, row and column.
"""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

from .formats import MAX_DEPTH, describe_kind, surrogate_message, too_deep, unpaired_surrogate

#: Texts that spreadsheets and pandas write for a missing value; as a reference they are flagged.
NULL_MARKERS = frozenset({"nan", "none", "null"})


def is_null_marker(text: str) -> bool:
    """True for the text 'NaN', 'None' or 'null' (any case, surrounding spaces ignored)."""
    return text.strip().lower() in NULL_MARKERS


class CellProblem(ValueError):
    """A cell that cannot become the value its field needs."""


def plain(value: Any) -> Any:
    """A pandas / numpy cell as a plain Python value; NaN and NA become None."""
    if value is None or isinstance(value, (str, bool, int, list, dict)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, tuple):
        return list(value)
    tolist = getattr(value, "tolist", None)
    if callable(tolist):  # numpy scalars and arrays (list columns arrive as arrays)
        return plain(tolist())
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return value


def check_size(text: str, limit: int) -> str:
    """``text`` when it is at most ``limit`` characters of valid Unicode (no lone surrogate)."""
    if len(text) > limit:
        raise CellProblem(f"the cell holds {len(text):,} characters, more than the limit of {limit:,} "
                          "(max_cell_chars); shorten it or raise the limit in the column mapping")
    bad = unpaired_surrogate(text)
    if bad is not None:
        raise CellProblem(surrogate_message(text, bad))
    return text


def number_text(value: Any) -> str | None:
    """A JSON or Parquet number as the text a CSV file would hold for it ('1' for 1 and 1.0, '0.5'), so numeric
    labels (classes 0, 1, 2) are read as text labels; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) < 2 ** 53:
            return str(int(value))
        return repr(value)
    return str(value)


def text_cell(value: Any, limit: int) -> str | None:
    """Text for query and prediction: a string, a number (read as its text, as in a CSV file) or null. Lists and
    objects are refused."""
    if value is None:
        return None
    if isinstance(value, str):
        return check_size(value, limit)
    number = number_text(value)
    if number is not None:
        return number
    raise CellProblem(f"expected text but found {describe_kind(value)}")


def key_cell(value: Any, what: str) -> str:
    """A datum id or model name: non-empty text, or a whole number written as text."""
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        raise CellProblem(f"the {what} must be text or a whole number, not {describe_kind(value)}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # an integer column with gaps arrives as floats
    if isinstance(value, (int, float)):
        value = str(value)
    if value is None or not str(value).strip():
        raise CellProblem(f"the {what} is empty; every row needs one")
    return check_size(str(value).strip(), 10_000)


def meta_cell(value: Any, limit: int) -> str | None:
    """Any value kept as metadata text; lists and objects as JSON."""
    if value is None or isinstance(value, str):
        return None if value is None else check_size(value, limit)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (bool, int, float, list, dict)):
        try:
            return check_size(json.dumps(value, ensure_ascii=False), limit)
        except (TypeError, ValueError):
            pass
    return check_size(str(value), limit)


def _items(values: Sequence[Any], limit: int) -> list[str]:
    out = []
    for position, item in enumerate(values, 1):
        if item is None:
            continue
        if number_text(item) is not None:
            item = number_text(item)
        if not isinstance(item, str):
            raise CellProblem(f"item {position} of the list is {describe_kind(item)}; each item must be text")
        out.append(check_size(item, limit))
    return out


def list_cell(value: Any, list_format: str, delimiter: str, limit: int, *, one_item: bool = False) -> list[str]:
    """The items of a references or contexts cell, in order, empty ones dropped.

    A real list (JSON Lines, Parquet) is always a list. A text cell is read by
    ``list_format``: ``json`` (a JSON list of strings when it starts with ``[``,
    otherwise one item), ``delimiter`` (split on ``delimiter``), ``single`` (one
    item), or ``auto`` (a JSON list of strings when it parses as one, else one
    item: plain text is never split, so ``return x || y;`` stays whole).
    ``one_item`` reads text as a single item, as for numbered columns like ``reference_1``.
    """
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = _items(list(value), limit)
    elif isinstance(value, str):
        check_size(value, limit)
        items = _text_items(value, "single" if one_item else list_format, delimiter, limit)
    elif number_text(value) is not None:  # a numeric label: one item, its text
        items = [number_text(value)]
    else:
        raise CellProblem(f"expected text or a list of texts but found {describe_kind(value)}")
    return [item for item in items if item.strip()]


def _json_list(text: str) -> Any:
    """json.loads of a cell; nesting deeper than MAX_DEPTH is a CellProblem, never a RecursionError."""
    try:
        parsed = json.loads(text)
    except RecursionError:
        parsed = None
    if parsed is None or too_deep(parsed):
        raise CellProblem(f"the cell nests lists more than {MAX_DEPTH} levels deep; "
                          "a references or contexts cell holds a flat list of texts")
    return parsed


def _text_items(text: str, list_format: str, delimiter: str, limit: int) -> list[str]:
    stripped = text.strip()
    if list_format == "single" or not stripped:
        return [text]
    if list_format == "delimiter":
        return [part.strip() for part in text.split(delimiter)] if delimiter else [text]
    looks_json = stripped.startswith("[")
    if list_format == "json" and looks_json:
        try:
            parsed = _json_list(stripped)
        except json.JSONDecodeError as exc:
            raise CellProblem(f"the cell starts with '[' but is not valid JSON ({exc.msg} at character {exc.pos + 1}); "
                              'write a JSON list like ["first", "second"], or set list_format to "single"') from None
        if not isinstance(parsed, list):
            raise CellProblem(f"expected a JSON list but found {describe_kind(parsed)}")
        return _items(parsed, limit)
    if list_format == "auto" and looks_json and stripped.endswith("]"):
        try:
            parsed = _json_list(stripped)
        except json.JSONDecodeError:
            parsed = None  # text that merely starts with "[", like "[1] Smith et al."
        if isinstance(parsed, list) and all(isinstance(x, str) or x is None for x in parsed):
            return _items(parsed, limit)
    return [text]
