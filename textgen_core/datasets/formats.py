"""Parsers for each file format, all producing a :class:`RawTable`.

Each parser keeps values as the file holds them (text from CSV; text, numbers,
lists or objects from JSON Lines and Parquet) so that the loader can tell a
number from text when it matters. Every problem is an :class:`InputError`
located by file, data row and column.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..errors import InputError

# The csv module refuses fields over 128 KiB by default; cell size is checked later
# against the mapping's max_cell_chars, with a message that names the cell.
_CSV_FIELD_LIMIT = 1 << 30


@dataclass
class RawTable:
    """Columns and rows as read from a file, with where each row came from."""

    columns: list[str]
    rows: list[list[Any]]
    #: 1-based data row number of each row (the header is not counted).
    row_numbers: list[int]
    #: 1-based line in the file where each row starts, for messages (None for Parquet and frames).
    lines: list[int | None] = field(default_factory=list)
    label: str | None = None

    def where(self, index: int) -> str:
        """'line N: ' for messages, or '' when the line is unknown."""
        line = self.lines[index] if index < len(self.lines) else None
        return f"line {line}: " if line is not None else ""


#: Invisible characters spreadsheets and editors leave in header names (BOM, zero-width space/joiners,
#: word joiner, Mongolian vowel separator); a name like "\ufeffmodel" must still be "model".
_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060\u180e"))
#: Deepest list/object nesting accepted in one cell; deeper values are refused, not recursed into.
MAX_DEPTH = 64


def clean_name(name: str) -> str:
    """A header name without invisible characters or surrounding white space."""
    return str(name).translate(_INVISIBLE).strip()


def unpaired_surrogate(text: str) -> int | None:
    """0-based index of the first lone surrogate in ``text`` (not valid Unicode), else None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def surrogate_message(text: str, index: int) -> str:
    return (f"character {index + 1} is a lone surrogate (\\u{ord(text[index]):04x}), which is not valid Unicode "
            "text; a \\uD800-\\uDFFF escape must be part of a pair. Fix or remove it")


def check_header(columns: list[str], label: str | None) -> list[str]:
    """Blank header cells get a name; invisible characters are dropped; repeated names are an error."""
    for name in columns:
        bad = unpaired_surrogate(str(name))
        if bad is not None:
            raise InputError(f"a column name is not valid text: {surrogate_message(str(name), bad)}",
                             file=label, column=str(name).encode("utf-8", "backslashreplace").decode())
    named = [clean_name(c) or f"column_{i}" for i, c in enumerate(columns, 1)]
    seen: dict[str, int] = {}
    for position, name in enumerate(named, 1):
        if name in seen:
            raise InputError(f"the column name {name!r} appears twice in the header (columns {seen[name]} and {position}); "
                             "rename one of them", file=label, column=name)
        seen[name] = position
    return named


def csv_delimiter(header_line: str) -> str:
    """Comma, unless the header has no comma but has semicolons or tabs (spreadsheet exports)."""
    if "," in header_line:
        return ","
    if "\t" in header_line:
        return "\t"
    if ";" in header_line:
        return ";"
    return ","


def parse_csv(text: str, label: str | None, delimiter: str | None = None) -> RawTable:
    """CSV with a header row; quoted cells may span lines. Blank records are skipped."""
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(min(_CSV_FIELD_LIMIT, sys.maxsize))
    delimiter = delimiter or csv_delimiter(text.split("\n", 1)[0])
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns: list[str] | None = None
    header: list[str] = []
    table = RawTable(columns=[], rows=[], row_numbers=[], label=label)
    record = 0
    last_line = 0
    try:
        for fields in reader:
            start_line, last_line = last_line + 1, reader.line_num
            if columns is None:
                if not fields or not any(f.strip() for f in fields):
                    continue  # blank lines before the header
                header = fields
                columns = check_header(fields, label)
                table.columns = columns
                continue
            record += 1
            if not any(f.strip() for f in fields):
                continue
            if len(fields) != len(columns):
                raise InputError(ragged_message(fields, columns, start_line),
                                 file=label, row=record, column=ragged_column(fields, columns))
            table.rows.append(list(fields))
            table.row_numbers.append(record)
            table.lines.append(start_line)
    except csv.Error as exc:
        row = record + 1 if columns is not None else None
        raise InputError(f"line {reader.line_num} cannot be read as CSV ({exc})", file=label, row=row) from None
    if columns is None:
        raise InputError("the file has no header row (it holds only blank lines)", file=label)
    if not table.rows:
        raise InputError(f"the file has a header ({', '.join(columns)}) but no data rows", file=label)
    return _drop_blank_columns(table, header)


def _drop_blank_columns(table: RawTable, header: list[str]) -> RawTable:
    """Spreadsheets often export trailing columns with no name and no values: drop those."""
    keep = [i for i, name in enumerate(header)
            if name.strip() or any(row[i].strip() for row in table.rows)]
    if len(keep) == len(header):
        return table
    table.columns = [table.columns[i] for i in keep]
    table.rows = [[row[i] for i in keep] for row in table.rows]
    return table


def ragged_message(fields: list[str], columns: list[str], line: int) -> str:
    message = (f"line {line} has {len(fields)} fields but the header has {len(columns)}; "
               "every row needs exactly one value per column")
    if len(fields) > len(columns):
        message += " (a cell with an unquoted comma? wrap such cells in double quotes)"
    if any("\n" in f for f in fields):
        message += " (a quoted cell here runs across lines: is a closing double quote missing?)"
    return message


def ragged_column(fields: list[str], columns: list[str]) -> str | None:
    """The first column that is missing a value, or the last one when there are extra values."""
    if len(fields) < len(columns):
        return columns[len(fields)]
    return columns[-1]


def parse_jsonl(text: str, label: str | None) -> RawTable:
    """One JSON object per line; blank lines are skipped; columns in first-seen order."""
    objects: list[dict[str, Any]] = []
    table = RawTable(columns=[], rows=[], row_numbers=[], label=label)
    # split on "\n" only: str.splitlines() would also break at U+2028, which JSON allows inside strings
    for line_no, record, value in jsonl_objects(text.split("\n"), label):
        objects.append(value)
        table.row_numbers.append(record)
        table.lines.append(line_no)
    if not objects:
        raise InputError("the file has no data: every line is blank or an empty object {}", file=label)
    return _from_objects(objects, table)


def jsonl_objects(lines: Iterable[str], label: str | None) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, data row number, object) of each JSON Lines line that holds data.

    ``lines`` are the file's lines without their "\\n"; blank lines and ``{}`` are skipped, a
    trailing carriage return is dropped, and data rows count every non-blank line.
    """
    record = 0
    for line_no, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        record += 1
        value = _loads(line, label, record, f"line {line_no}")
        if not isinstance(value, dict):
            raise InputError(f"line {line_no} holds {describe_kind(value)}, but each line must be one JSON object "
                             '(like {"question": "...", "answer": "..."})', file=label, row=record)
        if value:  # {} holds no value: skipped like a blank line
            yield line_no, record, value


class _JsonProblem(ValueError):
    """Raised from inside json.loads hooks; turned into a located InputError."""

    def __init__(self, message: str, column: str | None = None) -> None:
        super().__init__(message)
        self.column = column


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _JsonProblem(f"the key {key!r} appears twice in one object; JSON readers keep only one of "
                               "the values, so remove or rename the other", column=key)
        obj[key] = value
    return obj


def _constant(name: str) -> Any:
    if name == "NaN":
        return None  # what pandas and numpy write for a missing number: read as null
    raise _JsonProblem(f"{name} is not a JSON value; write a number or null")


def too_deep(value: Any) -> bool:
    """True when lists/objects in ``value`` nest more than MAX_DEPTH levels (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > MAX_DEPTH:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _loads(text: str, label: str | None, row: int | None, where: str | None = None) -> Any:
    """Strict JSON: duplicate keys, Infinity and nesting deeper than MAX_DEPTH are InputErrors; NaN is null.

    ``where`` names the text in messages ("line 3"); without it the decoder's line number is used.
    """
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where or f'line {exc.lineno}'} is not valid JSON: {exc.msg} (character {exc.colno})",
                         file=label, row=row) from None
    except _JsonProblem as exc:
        raise InputError(f"{where or 'the file'}: {exc}", file=label, row=row, column=exc.column) from None
    except RecursionError:
        raise _deep_error(text, label, row, where) from None
    if too_deep(value):
        raise _deep_error(text, label, row, where)
    if _SURROGATE_ESCAPE.search(text):
        _check_surrogates(value, label, row, where)
    return value


# A \uD800-\uDFFF escape: only then can parsed JSON hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _check_surrogates(value: Any, label: str | None, row: int | None, where: str | None) -> None:
    """A located error for the first text holding a lone surrogate (previews and stores cannot encode it)."""
    if isinstance(value, list) and row is None:  # a JSON array file: each item is a row
        for position, item in enumerate(value, 1):
            _check_surrogates(item, label, position, f"item {position} of the array")
        return
    tops = value.items() if isinstance(value, dict) else [(None, value)]
    for column, top in tops:
        stack = [top]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                bad = unpaired_surrogate(item)
                if bad is not None:
                    raise InputError(f"{where or 'the file'}: {surrogate_message(item, bad)}", file=label, row=row,
                                     column=column)
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)


def _deep_error(text: str, label: str | None, row: int | None, where: str | None) -> InputError:
    return InputError(f"{where or 'the file'} nests lists or objects more than {MAX_DEPTH} levels deep; "
                      "flatten the value (a cell holds text or a list of texts)", file=label, row=row,
                      column=_deep_column(text))


def _deep_column(text: str) -> str | None:
    """The key of a one-object text whose value nests too deep (None when it cannot be told)."""
    decoder, text = json.JSONDecoder(), text.strip()
    if not text.startswith("{"):
        return None
    position = 1
    try:
        while position < len(text):
            while text[position] in " \t\r\n,":
                position += 1
            key, position = decoder.raw_decode(text, position)
            position = text.index(":", position) + 1
            while text[position] in " \t\r\n":
                position += 1
            try:
                value, position = decoder.raw_decode(text, position)
            except RecursionError:
                return str(key)
            if too_deep(value):
                return str(key)
    except (ValueError, IndexError):
        return None
    return None


def parse_json(text: str, label: str | None) -> RawTable:
    """A JSON array of objects, or JSON Lines saved with a .json extension."""
    stripped = text.lstrip()
    if not stripped.startswith("["):
        return parse_jsonl(text, label)
    values = _loads(text, label, None)
    table = RawTable(columns=[], rows=[], row_numbers=[], label=label)
    kept = []
    for position, value in enumerate(values, 1):
        if not isinstance(value, dict):
            raise InputError(f"item {position} of the array holds {describe_kind(value)}, but each item must be a JSON object",
                             file=label, row=position)
        if value:
            kept.append(value)
            table.row_numbers.append(position)
    if not kept:
        raise InputError("the file holds no data: the JSON array is empty or holds only empty objects {}", file=label)
    return _from_objects(kept, table)


def _from_objects(objects: list[dict[str, Any]], table: RawTable) -> RawTable:
    """Columns are the cleaned keys in first-seen order ("\ufeffmodel" in one line and "model" in
    the next are one column); two keys of one object that clean to the same name are an error."""
    names = key_columns(objects, table.label)
    table.columns = list(dict.fromkeys(names.values()))
    return fill_rows(objects, table, names)


def key_columns(objects: Iterable[Mapping[str, Any]], label: str | None,
                names: dict[str, str] | None = None) -> dict[str, str]:
    """Raw key -> cleaned column name of every key of ``objects`` (added to ``names``), in first-seen order."""
    names = {} if names is None else names
    for obj in objects:
        for key in obj:
            if key not in names:
                names[key] = check_header([key], label)[0]
    return names


def fill_rows(objects: Sequence[Mapping[str, Any]], table: RawTable, names: Mapping[str, str]) -> RawTable:
    """``table.rows`` from ``objects`` (one per row number already in ``table``), laid out on ``table.columns``."""
    position = {column: i for i, column in enumerate(table.columns)}
    for index, obj in enumerate(objects):
        row: list[Any] = [None] * len(table.columns)
        seen: dict[str, str] = {}
        for key, value in obj.items():
            column = names.get(key)
            if column is None:  # a line written after the pass that read the columns
                raise InputError(f"{table.where(index)}the key {key!r} was not in the file when its columns were "
                                 "read: the file changed while it was read, so nothing was stored. Score it again "
                                 "once it is complete", file=table.label, row=table.row_numbers[index], column=key)
            if column in seen:
                raise InputError(f"{table.where(index)}the keys {seen[column]!r} and {key!r} both name the column "
                                 f"{column!r} once invisible characters are removed; keep one of them",
                                 file=table.label, row=table.row_numbers[index], column=column)
            seen[column] = key
            row[position[column]] = value
        table.rows.append(row)
    return table


def parse_parquet(data: bytes, label: str | None) -> RawTable:
    """A Parquet file; list columns stay lists, every other value a Python scalar."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        arrow = pq.read_table(io.BytesIO(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"this is not a readable Parquet file (the reader said: {exc}); "
                         "re-export it, or save the data as CSV or JSON Lines", file=label) from None
    columns = check_header([str(name) for name in arrow.column_names], label)
    if arrow.num_rows == 0:
        raise InputError(f"the file has columns ({', '.join(columns)}) but no data rows", file=label)
    try:
        by_column = [arrow.column(i).to_pylist() for i in range(arrow.num_columns)]
    except (pa.ArrowException, ValueError, OverflowError) as exc:
        raise InputError(f"a Parquet column cannot be read ({exc})", file=label) from None
    rows = [[unbytes(v) for v in values] for values in zip(*by_column)]
    return RawTable(columns=columns, rows=rows, row_numbers=list(range(1, len(rows) + 1)),
                    lines=[None] * len(rows), label=label)


def unbytes(value: Any) -> Any:
    """Binary Parquet cells (some writers store text that way) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return [unbytes(v) for v in value]
    return value


def describe_kind(value: Any) -> str:
    """How a JSON-ish value is described to a user."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__} value"
