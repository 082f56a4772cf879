"""Normalizing a chunk of text cells column by column: the common case of a large file, at a fraction of the cost.

A long-format chunk whose cells are all text (every CSV and TSV, most JSON Lines)
is checked one column at a time (types, lengths, valid Unicode, empty keys, repeated
(datum id, model) pairs) and turned into rows with the loader's rules. Anything
this path does not take, or any cell it would refuse, makes it return None: the
caller then normalizes the chunk row by row, which gives the same rows or the
located error message. So this path never decides a message, only skips work.
"""

from __future__ import annotations

from typing import Sequence

from ..model import Datum
from .cells import CellProblem, is_null_marker, list_cell
from .formats import RawTable
from .mapping import ColumnMapping, query_datum_id

#: The longest datum id or model name (as :func:`~textgen_core.datasets.cells.key_cell` allows).
_KEY_CHARS = 10_000


def _plain_text(values: Sequence[object], limit: int) -> bool:
    """Every value is a str of at most ``limit`` characters, all valid Unicode (no lone surrogate)."""
    if not all(type(v) is str for v in values):
        return False
    if max(map(len, values), default=0) > limit:  # type: ignore[arg-type]
        return False
    try:
        "".join(values).encode("utf-8")  # type: ignore[arg-type]
    except UnicodeEncodeError:
        return False
    return True


def _keys(values: Sequence[str]) -> list[str] | None:
    keys = [v.strip() for v in values]
    if not all(keys) or max(map(len, keys), default=0) > _KEY_CHARS:
        return None
    return keys


def _lists(values: Sequence[str], mapping: ColumnMapping, one_item: bool) -> list[tuple[str, ...]]:
    """The items of each cell, as :func:`~textgen_core.datasets.cells.list_cell` reads text (it raises
    CellProblem where that does)."""
    how = "single" if one_item else mapping.list_format
    delimiter, limit = mapping.delimiter, mapping.max_cell_chars
    out: list[tuple[str, ...]] = []
    for text in values:
        stripped = text.strip()
        if not stripped:
            out.append(())
        elif how == "single":
            out.append((text,))
        elif how == "delimiter":
            out.append(tuple(list_cell(text, how, delimiter, limit)))
        elif stripped[0] == "[":
            out.append(tuple(list_cell(text, how, delimiter, limit, one_item=one_item)))
        else:
            out.append((text,))
    return out


def _joined(columns: list[list[tuple[str, ...]]], rows: int, drop_nulls: bool) -> list[tuple[str, ...]]:
    if not columns:
        return [()] * rows
    joined = columns[0] if len(columns) == 1 else [sum(parts, ()) for parts in zip(*columns)]
    if drop_nulls:
        joined = [tuple(item for item in items if not is_null_marker(item)) for items in joined]
    return joined


def fast_rows(raw: RawTable, mapping: ColumnMapping, meta_columns: tuple[str, ...]) -> list[Datum] | None:
    """The chunk's rows as :func:`~textgen_core.datasets.loader.normalize_rows` makes them, or None when the
    chunk needs the row-by-row path (wide format, a value that is not text, any cell it would refuse)."""
    if mapping.format != "long" or not raw.rows:
        return None
    positions = {c: i for i, c in enumerate(raw.columns)}
    columns = list(zip(*raw.rows))
    if len(columns) != len(raw.columns):
        return None
    limit = mapping.max_cell_chars
    read = [c for c in (mapping.id, mapping.model, mapping.query, mapping.prediction, *mapping.references,
                        *mapping.contexts, *meta_columns) if c]
    if not all(_plain_text(columns[positions[c]], limit) for c in dict.fromkeys(read)):
        return None
    n = len(raw.rows)
    if mapping.id:
        ids = _keys(columns[positions[mapping.id]])
    elif mapping.pair_by_query:
        ids = [query_datum_id(q) for q in columns[positions[mapping.query]]]
    else:
        ids = [str(number) for number in raw.row_numbers]
    models = _keys(columns[positions[mapping.model]]) if mapping.model else [mapping.default_model] * n
    if ids is None or models is None or len(set(zip(ids, models))) != n:
        return None
    queries = columns[positions[mapping.query]] if mapping.query else (None,) * n
    predictions = columns[positions[mapping.prediction]] if mapping.prediction else (None,) * n
    try:
        references = _joined([_lists(columns[positions[c]], mapping, len(mapping.references) > 1)
                              for c in mapping.references], n, mapping.null_references == "missing")
        contexts = _joined([_lists(columns[positions[c]], mapping, len(mapping.contexts) > 1)
                            for c in mapping.contexts], n, False)
    except CellProblem:
        return None
    if meta_columns:
        metadata = [dict(zip(meta_columns, values))
                    for values in zip(*(columns[positions[c]] for c in meta_columns))]
    else:
        metadata = [{} for _ in range(n)]
    return [Datum(*fields) for fields in zip(ids, models, queries, predictions, references, contexts, metadata)]
