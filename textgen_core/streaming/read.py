"""Reading a large CSV, TSV, JSON Lines or Parquet file in chunks of rows, with the whole-file reader's rules.

Each chunk is a :class:`RawTable` whose row numbers and lines count from the start
of the file, so the loader's messages name the same row and line as when the file
is read whole. Files this reader cannot take in one pass (a JSON array, UTF-16, a
header with unnamed columns that spreadsheets may pad, JSON Lines without data)
raise :class:`NotStreamable` before any row is read; the caller then reads them whole.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import sys
from pathlib import Path
from typing import Any, Iterator

from ..datasets.formats import RawTable, ragged_column, ragged_message, check_header, csv_delimiter
from ..datasets.reader import EXTENSIONS, read_raw
from ..errors import InputError
from .read_jsonl import JsonLines

#: Formats read in chunks; the others are read whole.
STREAMED_FORMATS = ("csv", "tsv", "jsonl", "parquet")


class NotStreamable(Exception):
    """This file is read whole instead (the reason is the message)."""


class ChunkReader:
    """Opens ``path``, reads its header, then yields chunks of rows from :meth:`chunks`.

    ``bytes_read`` tells how far into the file the reader is, for progress.
    """

    def __init__(self, path: str | Path, label: str | None = None) -> None:
        self.path = Path(path)
        self.label = label or str(path)
        self.size = self.path.stat().st_size if self.path.is_file() else 0
        fmt = EXTENSIONS.get(self.path.suffix.lower())
        if fmt not in STREAMED_FORMATS or self.size == 0:
            raise NotStreamable(f"{fmt or 'this'} files are read whole")
        self.format = fmt
        self.bytes_read = 0
        if fmt == "parquet":
            self._open_parquet()
            return
        with open(self.path, "rb") as binary:
            if binary.read(4).startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                raise NotStreamable("UTF-16 files are read whole")
        if fmt == "jsonl":
            self._open_jsonl()
        else:
            self._open_csv("\t" if fmt == "tsv" else None)

    # -- CSV / TSV -------------------------------------------------------------
    def _open_csv(self, delimiter: str | None) -> None:
        self._binary = open(self.path, "rb")
        self._text = io.TextIOWrapper(self._binary, encoding="utf-8-sig", newline="")
        try:
            first = self._text.readline()
        except UnicodeDecodeError:
            self.close()
            raise NotStreamable("the header is not UTF-8: the whole-file reader reports where") from None
        if csv.field_size_limit() < (1 << 30):
            csv.field_size_limit(min(1 << 30, sys.maxsize))
        self._reader = csv.reader(itertools.chain([first], self._text),
                                  delimiter=delimiter or csv_delimiter(first.split("\n", 1)[0]))
        self._record = self._last_line = 0
        header = None
        for fields in self._csv_records():
            self._last_line = self._reader.line_num
            if fields and any(f.strip() for f in fields):
                header = fields
                break
        if header is None:
            self.close()
            raise NotStreamable("no header: the whole-file reader says why")
        if any(not name.strip() for name in header):
            self.close()
            raise NotStreamable("unnamed columns, which the whole-file reader drops when they are empty")
        self.columns = check_header(header, self.label)

    def _csv_records(self) -> Iterator[list[str]]:
        try:
            yield from self._reader
        except csv.Error as exc:
            row = self._record + 1 if getattr(self, "columns", None) else None
            raise InputError(f"line {self._reader.line_num} cannot be read as CSV ({exc})",
                             file=self.label, row=row) from None
        except UnicodeDecodeError:
            self.close()
            read_raw(self.path, file_name=self.label)  # raises with the byte offset, row and column
            raise InputError("the file is not valid UTF-8", file=self.label) from None

    def _csv_chunks(self, size: int) -> Iterator[RawTable]:
        table = self._empty()
        rows, numbers, lines = table.rows, table.row_numbers, table.lines
        width, reader = len(self.columns), self._reader
        for fields in self._csv_records():
            start, self._last_line = self._last_line + 1, reader.line_num
            self._record += 1
            if not (fields and fields[0].strip()) and not any(f.strip() for f in fields):  # a blank record
                continue
            if len(fields) != width:
                raise InputError(ragged_message(fields, self.columns, start), file=self.label,
                                 row=self._record, column=ragged_column(fields, self.columns))
            rows.append(fields)
            numbers.append(self._record)
            lines.append(start)
            if len(rows) >= size:
                self.bytes_read = self._binary.tell()
                yield table
                table = self._empty()
                rows, numbers, lines = table.rows, table.row_numbers, table.lines
        self.bytes_read = self.size
        if rows:
            yield table

    # -- JSON Lines ------------------------------------------------------------
    def _open_jsonl(self) -> None:
        self._jsonl = JsonLines(self.path, self.label)  # reads every line once for the columns
        if not self._jsonl.columns:
            raise NotStreamable("no line holds data: the whole-file reader says why")
        self.columns = self._jsonl.columns

    def _jsonl_chunks(self, size: int) -> Iterator[RawTable]:
        for table in self._jsonl.chunks(size):
            self.bytes_read = self._jsonl.bytes_read
            yield table
        self.bytes_read = self.size

    # -- Parquet ---------------------------------------------------------------
    def _open_parquet(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            self._parquet = pq.ParquetFile(self.path)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise NotStreamable(f"unreadable Parquet ({exc}): the whole-file reader reports it") from None
        self.columns = check_header([str(n) for n in self._parquet.schema_arrow.names], self.label)

    def _parquet_chunks(self, size: int) -> Iterator[RawTable]:
        from ..datasets.formats import unbytes

        number = 0
        total = max(1, self._parquet.metadata.num_rows)
        for batch in self._parquet.iter_batches(batch_size=size):
            by_column = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
            rows = [[unbytes(v) for v in values] for values in zip(*by_column)]
            table = self._empty()
            table.rows = rows
            table.row_numbers = list(range(number + 1, number + len(rows) + 1))
            table.lines = [None] * len(rows)
            number += len(rows)
            self.bytes_read = int(self.size * number / total)
            yield table

    # -- both ------------------------------------------------------------------
    def _empty(self) -> RawTable:
        return RawTable(columns=self.columns, rows=[], row_numbers=[], lines=[], label=self.label)

    def chunks(self, size: int) -> Iterator[RawTable]:
        """Chunks of at most ``size`` rows; an error names file, row and column as the whole-file reader does."""
        produced = 0
        try:
            parts = {"parquet": self._parquet_chunks, "jsonl": self._jsonl_chunks}.get(self.format, self._csv_chunks)(size)
            for table in parts:
                produced += len(table.rows)
                yield table
        finally:
            self.close()
        if not produced:
            raise InputError(f"the file has a header ({', '.join(self.columns)}) but no data rows", file=self.label)

    def close(self) -> None:
        text: Any = getattr(self, "_text", None)
        if text is not None:
            text.close()
        elif getattr(self, "_binary", None) is not None:
            self._binary.close()
