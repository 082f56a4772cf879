"""Reading a CSV, JSON Lines or Parquet file into a table of text cells.

The file type comes from the extension of ``file_name`` or the path. Bytes are
decoded as UTF-8 (a byte-order mark is allowed); anything else is reported with
the byte offset, the row and the column it falls in.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

from ..errors import InputError
from .formats import RawTable, csv_delimiter, parse_csv, parse_json, parse_jsonl, parse_parquet

Source = str | Path | bytes | bytearray | memoryview | BinaryIO

#: File extension -> format name.
EXTENSIONS = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
    ".parquet": "parquet", ".pq": "parquet",
}
#: Key of DataFrame.attrs where read_table records where its cells came from.
ATTRS_KEY = "textgen_source"
#: Name of the index read_table gives its frames: the 1-based data row number.
ROW_INDEX_NAME = "row"


def read_source(source: Source, file_name: str | None = None) -> tuple[bytes, str | None]:
    """The raw bytes of ``source`` and the label that names it in messages."""
    if isinstance(source, (str, Path)):
        if isinstance(source, str) and "\n" in source:
            raise InputError("a str source is a file path; pass the file's contents as bytes instead")
        path = Path(source)
        label = file_name or str(source)
        if not path.is_file():
            raise InputError("no such file" if not path.exists() else "this is a folder, not a file", file=label)
        try:
            return path.read_bytes(), label
        except OSError as exc:
            raise InputError(f"the file cannot be read: {exc.strerror or exc}", file=label) from None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), file_name
    if hasattr(source, "read"):
        label = file_name or _stream_name(source)
        # An in-memory upload (BytesIO, Streamlit's UploadedFile) is read whole, even after a preview read it.
        getvalue = getattr(source, "getvalue", None)
        data = getvalue() if callable(getvalue) else source.read()
        if isinstance(data, str):  # a file opened in text mode
            data = data.encode("utf-8")
        return bytes(data), label
    raise InputError(f"cannot read a dataset from {type(source).__name__}; pass a path, bytes or an open binary file")


def _stream_name(stream: Any) -> str | None:
    name = getattr(stream, "name", None)
    return Path(name).name if isinstance(name, str) and name else None


def detect_format(data: bytes, label: str | None) -> str:
    """The format from the file extension; content is sniffed only when there is no name at all."""
    if label:
        suffix = Path(label).suffix.lower()
        if suffix in EXTENSIONS:
            return EXTENSIONS[suffix]
        shown = f"extension {suffix!r}" if suffix else "no extension"
        raise InputError(f"the file has {shown}; supported extensions are {', '.join(EXTENSIONS)} "
                         "(CSV, tab-separated, JSON Lines, JSON and Parquet)", file=label)
    if data[:4] == b"PAR1":
        return "parquet"
    head = data[:200].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{"):
        return "jsonl"
    if head.startswith(b"["):
        return "json"
    return "csv"


def decode_text(data: bytes, label: str | None, fmt: str) -> str:
    """UTF-8, with or without a byte-order mark; UTF-16 only when its BOM says so."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass  # fall through: report it as a UTF-8 problem with an offset
    try:
        # "utf-8-sig" reads plain UTF-8 and UTF-8 that starts with a byte-order mark alike.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _decode_error(data, exc, label, fmt) from None


def _decode_error(data: bytes, exc: UnicodeDecodeError, label: str | None, fmt: str) -> InputError:
    offset = exc.start
    bad = data[offset:max(exc.end, offset + 1)]
    prefix = data[:offset].decode("utf-8-sig")
    line = prefix.count("\n") + 1
    how = "in Excel: Save As > 'CSV UTF-8'; in a text editor: encoding UTF-8" if fmt in {"csv", "tsv"} \
        else "in a text editor: encoding UTF-8"
    message = (f"byte offset {offset} (line {line}) is not valid UTF-8 (byte {bad.hex(' ')}). "
               f"Re-save the file as UTF-8 ({how}) and load it again")
    try:
        data.decode("cp1252")
        message += "; it looks like Windows-1252 / Latin-1 text"
    except UnicodeDecodeError:
        pass
    row: int | None = None
    column: str | None = None
    if fmt in {"csv", "tsv"}:
        row, column = _csv_position(prefix, "\t" if fmt == "tsv" else None)
    elif fmt == "jsonl":
        row = sum(1 for text in prefix.split("\n")[:-1] if text.strip()) + 1
    return InputError(message, file=label, row=row, column=column)


def _csv_position(prefix: str, delimiter: str | None) -> tuple[int | None, str | None]:
    """Data row and column of the character that follows ``prefix`` in a CSV file."""
    delimiter = delimiter or csv_delimiter(prefix.split("\n", 1)[0])
    try:
        # A sentinel stands in for the undecodable byte so the last record is the one holding it.
        records = list(csv.reader(io.StringIO(prefix + "\x1f", newline=""), delimiter=delimiter))
    except csv.Error:
        return None, None
    while records and not any(field.strip() for field in records[0]):
        records.pop(0)  # blank lines before the header are not counted, as in parse_csv
    if len(records) < 2:
        return None, None  # the bad byte is in the header
    header, last = records[0], records[-1]
    index = len(last) - 1
    if index >= len(header):
        return len(records) - 1, None
    return len(records) - 1, header[index].strip() or f"column_{index + 1}"


def read_raw(source: Source, *, file_name: str | None = None) -> RawTable:
    """Parse a file into a :class:`RawTable`, keeping JSON and Parquet values as they are."""
    data, label = read_source(source, file_name)
    fmt = detect_format(data, label)
    if not data:
        raise InputError("the file is empty (0 bytes)", file=label)
    if fmt == "parquet":
        return parse_parquet(data, label)
    text = decode_text(data, label, fmt)
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InputError("the file holds only blank lines: no header and no data", file=label)
    if fmt == "csv":
        return parse_csv(text, label)
    if fmt == "tsv":
        return parse_csv(text, label, delimiter="\t")
    if fmt == "jsonl":
        return parse_jsonl(text, label)
    return parse_json(text, label)


def as_text(value: Any) -> tuple[str | None, bool]:
    """A cell as text or None, and whether that text is the JSON form of a non-text value."""
    if value is None or isinstance(value, str):
        return value, False
    if isinstance(value, float) and math.isnan(value):
        return None, False
    if isinstance(value, (bool, int, float, list, tuple, dict)):
        try:
            return json.dumps(value, ensure_ascii=False), True
        except (TypeError, ValueError):
            pass
    return str(value), False


def read_table(source: Source, *, file_name: str | None = None) -> pd.DataFrame:
    """A file as a DataFrame of text cells (``str`` or ``None``), for previews and mapping.

    Nothing is type-guessed, so ids like ``007`` keep their zeros. Lists, numbers and
    objects from JSON or Parquet become their JSON text; ``df.attrs`` remembers which
    cells those were, so :func:`load_dataset` given this frame checks types as strictly
    as when given the file. The index is the 1-based data row number.
    """
    raw = read_raw(source, file_name=file_name)
    return raw_to_frame(raw)


def raw_to_frame(raw: RawTable) -> pd.DataFrame:
    json_cells: dict[str, list[int]] = {}
    columns: dict[str, list[str | None]] = {c: [] for c in raw.columns}
    for values, number in zip(raw.rows, raw.row_numbers):
        for name, value in zip(raw.columns, values):
            text, was_json = as_text(value)
            columns[name].append(text)
            if was_json:
                json_cells.setdefault(name, []).append(number)
    # dtype=object: pandas 3 would otherwise make a str column and turn None into NaN.
    frame = pd.DataFrame(columns, columns=raw.columns, dtype=object,
                         index=pd.Index(raw.row_numbers, name=ROW_INDEX_NAME))
    frame.attrs[ATTRS_KEY] = {
        "file": raw.label,
        "json_cells": {name: pack_ints(numbers) for name, numbers in json_cells.items()},
        "row_numbers": pack_ints(raw.row_numbers),
        "lines": pack_ints([line or 0 for line in raw.lines] or [0] * len(raw.rows)),
    }
    return frame


# Row numbers in attrs are packed into bytes: pandas deep-copies attrs on every operation
# and compares them with == when concatenating; bytes are immutable, so both are cheap.
def pack_ints(values: list[int]) -> bytes:
    return np.asarray(values, dtype="<i8").tobytes()


def unpack_ints(data: bytes) -> list[int]:
    return np.frombuffer(data, dtype="<i8").tolist()
