"""Loading a file or DataFrame into the normalized :class:`Dataset`.

Long format (one row per datum and model) and wide format (one row per datum,
one prediction column per model) end up as the same rows. Every column that is
not mapped is kept as per-row metadata text.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import pandas as pd

from ..errors import InputError
from ..model import TEXT_FIELDS, Dataset, Datum
from .cells import CellProblem, is_null_marker, key_cell, list_cell, meta_cell, plain, text_cell
from .fast_rows import fast_rows
from .formats import RawTable, check_header
from .mapping import (CONTEXT_NAMES, PREDICTION_NAMES, QUERY_NAMES, REFERENCE_NAMES, ColumnMapping, guess_mapping,
                      query_datum_id)
from .reader import ATTRS_KEY, ROW_INDEX_NAME, Source, read_raw, unpack_ints

_FIELD_HINTS = {
    "query": QUERY_NAMES, "prediction": PREDICTION_NAMES,
    "references": REFERENCE_NAMES, "contexts": CONTEXT_NAMES,
}


def frame_to_raw(frame: pd.DataFrame, label: str | None = None) -> RawTable:
    """A DataFrame as a :class:`RawTable`; undoes read_table's JSON-as-text for non-text cells."""
    info = frame.attrs.get(ATTRS_KEY) or {}
    label = label or info.get("file")
    columns = check_header([str(c) for c in frame.columns], label)
    if not columns:
        raise InputError("the table has no columns", file=label)
    if len(frame) == 0:
        raise InputError(f"the table has columns ({', '.join(columns)}) but no data rows", file=label)
    if frame.index.name == ROW_INDEX_NAME and pd.api.types.is_integer_dtype(frame.index):
        numbers = [int(i) for i in frame.index]
    else:
        numbers = list(range(1, len(frame) + 1))
    json_cells = {columns.index(c): set(unpack_ints(rows))
                  for c, rows in (info.get("json_cells") or {}).items() if c in columns}
    lines: dict[int, int] = {}
    if info.get("row_numbers") and info.get("lines"):
        lines = {n: line for n, line in zip(unpack_ints(info["row_numbers"]), unpack_ints(info["lines"])) if line}
    rows = []
    for number, values in zip(numbers, frame.itertuples(index=False, name=None)):
        row = [plain(v) for v in values]
        for position, marked in json_cells.items():
            if number in marked and isinstance(row[position], str):
                try:
                    row[position] = json.loads(row[position])
                except json.JSONDecodeError:
                    pass  # edited since read_table: keep the text
        rows.append(row)
    return RawTable(columns=columns, rows=rows, row_numbers=numbers,
                    lines=[lines.get(n) for n in numbers], label=label)


def _missing_column(column: str, role: str, raw: RawTable) -> InputError:
    close = difflib.get_close_matches(column, raw.columns, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    return InputError(f"the {role} column {column!r} is not in the file{hint} Columns are: {', '.join(raw.columns)}",
                      file=raw.label, column=column)


def check_mapping(raw: RawTable, mapping: ColumnMapping) -> None:
    roles = [("datum id", mapping.id), ("model", mapping.model), ("query", mapping.query),
             ("prediction", mapping.prediction)]
    roles += [("references", c) for c in mapping.references] + [("contexts", c) for c in mapping.contexts]
    if mapping.format == "wide":
        if not mapping.wide_predictions:
            raise InputError("wide format needs one prediction column per model (wide_predictions is empty)",
                             file=raw.label)
        if mapping.model:
            raise InputError("wide format takes model names from wide_predictions; leave the model column unmapped",
                             file=raw.label, column=mapping.model)
        roles += [(f"model {model!r} prediction", c) for model, c in mapping.wide_predictions.items()]
    present = set(raw.columns)
    for role, column in roles:
        if column and column not in present:
            raise _missing_column(column, role, raw)


def _field_columns(mapping: ColumnMapping, field: str) -> list[str]:
    if field == "prediction" and mapping.format == "wide":
        return list(mapping.wide_predictions.values())
    value = getattr(mapping, field)
    return list(value) if isinstance(value, tuple) else [value] if value else []


def needed_fields(required: Iterable[str] | Mapping[str, str]) -> dict[str, str]:
    """Required name -> who needs it (may be empty)."""
    if isinstance(required, Mapping):
        return {str(k): str(v or "") for k, v in required.items()}
    if isinstance(required, str):
        required = [required]
    return {str(name): "" for name in required}


def _need_text(field: str, why: str) -> str:
    return f"the chosen metrics ({why}) need" if why else "the chosen metrics need"


def check_required(raw: RawTable, mapping: ColumnMapping, needs: Mapping[str, str]) -> None:
    for field, why in needs.items():
        if field in TEXT_FIELDS:
            if not _field_columns(mapping, field):
                usual = ", ".join(_FIELD_HINTS[field])
                raise InputError(f"{_need_text(field, why)} a {field} column, but none is mapped; map one of "
                                 f"the columns ({', '.join(raw.columns)}) to {field} (usual names: {usual})",
                                 file=raw.label, column=field)
        elif field not in raw.columns:
            raise InputError(f"{_need_text(field, why)} a {field!r} column, which is not in the file; "
                             f"columns are: {', '.join(raw.columns)}", file=raw.label, column=field)


def check_filled(rows: list[Datum], raw: RawTable, mapping: ColumnMapping, needs: Mapping[str, str]) -> None:
    for field, why in needs.items():
        if field in TEXT_FIELDS and not any(getattr(r, field) for r in rows):
            columns = ", ".join(repr(c) for c in _field_columns(mapping, field))
            raise InputError(f"{_need_text(field, why)} {field}, but the mapped column {columns} is empty in every row",
                             file=raw.label, column=_field_columns(mapping, field)[0])


class _Row:
    """Reads the cells of one raw row, turning cell problems into located InputErrors."""

    def __init__(self, raw: RawTable, index: int, positions: Mapping[str, int]) -> None:
        self.raw, self.index, self.positions = raw, index, positions
        self.values = raw.rows[index]
        self.number = raw.row_numbers[index]

    def get(self, column: str, convert: Callable[[Any], Any]) -> Any:
        try:
            return convert(self.values[self.positions[column]])
        except CellProblem as exc:
            raise InputError(f"{self.raw.where(self.index)}{exc}", file=self.raw.label,
                             row=self.number, column=column) from None

    def items(self, columns: tuple[str, ...], mapping: ColumnMapping, *, drop_nulls: bool = False) -> tuple[str, ...]:
        one_item = len(columns) > 1
        out: list[str] = []
        for column in columns:
            out.extend(self.get(column, lambda v: list_cell(v, mapping.list_format, mapping.delimiter,
                                                           mapping.max_cell_chars, one_item=one_item)))
        return tuple(item for item in out if not is_null_marker(item)) if drop_nulls else tuple(out)


def normalize_rows(raw: RawTable, mapping: ColumnMapping) -> tuple[list[Datum], tuple[str, ...]]:
    """(the normalized rows of ``raw``, its metadata columns): column by column when every cell is plain text
    and passes, else row by row (which names the row and column of a problem)."""
    used = set(mapping.columns_used())
    meta_columns = tuple(c for c in raw.columns if c not in used)
    fast = fast_rows(raw, mapping, meta_columns)
    if fast is not None:
        return fast, meta_columns
    return normalize_each_row(raw, mapping, meta_columns), meta_columns


def normalize_each_row(raw: RawTable, mapping: ColumnMapping, meta_columns: tuple[str, ...]) -> list[Datum]:
    """The rows of ``raw`` one by one, every cell checked where it is read (a problem names its row and column);
    :func:`normalize_rows` takes this path for what the column-wise one declines."""
    positions = {c: i for i, c in enumerate(raw.columns)}
    limit = mapping.max_cell_chars
    text = lambda v: text_cell(v, limit)  # noqa: E731
    rows: list[Datum] = []
    first_row: dict[tuple[str, str], int] = {}
    for index in range(len(raw.rows)):
        row = _Row(raw, index, positions)
        query = row.get(mapping.query, text) if mapping.query else None
        if mapping.id:
            datum_id = row.get(mapping.id, lambda v: key_cell(v, "datum id"))
        else:
            datum_id = query_datum_id(query) if mapping.pair_by_query else str(row.number)
        shared = dict(
            query=query,
            references=row.items(mapping.references, mapping, drop_nulls=mapping.null_references == "missing"),
            contexts=row.items(mapping.contexts, mapping),
            metadata={c: row.get(c, lambda v: meta_cell(v, limit)) for c in meta_columns},
        )
        if mapping.format == "wide":
            outputs = [(model, row.get(column, text)) for model, column in mapping.wide_predictions.items()]
        else:
            model = row.get(mapping.model, lambda v: key_cell(v, "model")) if mapping.model else mapping.default_model
            outputs = [(model, row.get(mapping.prediction, text) if mapping.prediction else None)]
        for model, prediction in outputs:
            key = (datum_id, model)
            if key in first_row:
                raise duplicate_key_error(raw, mapping, key, first_row[key], row.number)
            first_row[key] = row.number
            rows.append(Datum(datum_id=datum_id, model=model, prediction=prediction,
                              **{**shared, "metadata": dict(shared["metadata"])}))
    return rows


#: Row numbers a warning lists before "and N more".
_ROWS_SHOWN = 10


def null_reference_rows(raw: RawTable, mapping: ColumnMapping) -> dict[str, list[int]]:
    """references column -> data rows holding an item that reads 'NaN', 'None' or 'null'."""
    found: dict[str, list[int]] = {}
    positions = {c: i for i, c in enumerate(raw.columns)}
    one_item = len(mapping.references) > 1
    for column in mapping.references:
        cells = [values[positions[column]] for values in raw.rows]
        candidates: Iterable[int] = range(len(cells))
        lowered = "\0".join(cells).lower().split("\0") if all(type(v) is str for v in cells) else []
        if len(lowered) == len(cells):  # text (without NUL): only cells holding a marker can hold a marker
            # the word, or a backslash (a JSON list's item may spell a letter as an escape, like "\\u006eull")
            candidates = [index for index, text in enumerate(lowered)
                          if "nan" in text or "none" in text or "null" in text or "\\" in text]
        for index in candidates:
            try:
                items = list_cell(plain(cells[index]), mapping.list_format, mapping.delimiter,
                                  mapping.max_cell_chars, one_item=one_item)
            except CellProblem:
                continue  # reported by the load itself
            if any(is_null_marker(item) for item in items):
                found.setdefault(column, []).append(raw.row_numbers[index])
    return found


def null_reference_warnings(label: str | None, mapping: ColumnMapping,
                            rows_by_column: Mapping[str, list[int]]) -> tuple[str, ...]:
    """One warning per references column with 'NaN'/'None'/'null' items, naming the rows (chunked loads
    gather the rows of every chunk first)."""
    warnings = []
    for column, rows in rows_by_column.items():
        shown = ", ".join(map(str, rows[:_ROWS_SHOWN]))
        if len(rows) > _ROWS_SHOWN:
            shown += f" and {len(rows) - _ROWS_SHOWN} more"
        where = f"file {label!r}, column {column!r}" if label else f"column {column!r}"
        if mapping.null_references == "missing":
            warnings.append(f"{where}: rows {shown} hold a reference that reads NaN, None or null; "
                            "it is treated as missing (those rows have no such reference)")
        else:
            warnings.append(f"{where}: rows {shown} hold a reference that reads NaN, None or null, which is "
                            "scored as that text; if it means 'no reference', treat such references as missing "
                            "(CLI: --null-references missing; Upload page: 'Treat NaN/None/null references as missing')")
    return tuple(warnings)


def duplicate_key_error(raw: RawTable, mapping: ColumnMapping, key: tuple[str, str], first: int, second: int) -> InputError:
    datum_id, model = key
    if mapping.format == "wide":
        what = f"datum id {datum_id!r} appears in rows {first} and {second}"
    else:
        what = f"datum id {datum_id!r} with model {model!r} appears in rows {first} and {second}"
    return InputError(f"{what}; each (datum id, model) pair must be unique", file=raw.label, row=second,
                      column=mapping.id or mapping.model)


def load_dataset(
    source: Source | pd.DataFrame,
    mapping: ColumnMapping | Mapping[str, Any] | Callable[[list[str]], ColumnMapping] | None = None,
    *,
    name: str | None = None,
    file_name: str | None = None,
    required: Iterable[str] | Mapping[str, str] = (),
) -> Dataset:
    """Read and normalize a dataset; every problem is an :class:`InputError` with file, row and column.

    ``mapping`` defaults to :func:`guess_mapping` of the columns; a callable gets the (cleaned)
    column names and returns the mapping, as the CLI builds its own. ``required`` lists the
    normalized fields or metadata columns the chosen metrics need (a mapping of name ->
    metric names also works, and puts those names in the message).
    """
    if isinstance(source, pd.DataFrame):
        raw = frame_to_raw(source, file_name)
        default_name, origin = "dataset", raw.label or "DataFrame"
    else:
        raw = read_raw(source, file_name=file_name)
        default_name = Path(raw.label).stem if raw.label else "dataset"
        origin = raw.label or "uploaded bytes"
    if mapping is None:
        mapping = guess_mapping(raw.columns)
    elif callable(mapping):
        mapping = mapping(list(raw.columns))
    elif not isinstance(mapping, ColumnMapping):
        mapping = ColumnMapping.from_dict(mapping)
    needs = needed_fields(required)
    check_mapping(raw, mapping)
    check_required(raw, mapping, needs)
    rows, meta_columns = normalize_rows(raw, mapping)
    check_filled(rows, raw, mapping, needs)
    return Dataset(name=name or default_name, rows=rows, source=origin, mapping=mapping.to_dict(),
                   metadata_columns=meta_columns,
                   warnings=null_reference_warnings(raw.label, mapping, null_reference_rows(raw, mapping)))
