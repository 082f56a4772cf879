"""Reading a JSON Lines file in chunks of rows, with the whole-file reader's per-line rules.

The columns of a JSON Lines file are the keys of all its lines in first-seen order,
so a first pass parses every line (holding only the key names) and the second
yields chunks laid out on those columns. A bad line is found in the first pass,
before anything is stored, with the message the whole-file reader gives.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Iterator

from ..datasets.formats import RawTable, fill_rows, jsonl_objects, key_columns
from ..datasets.reader import read_raw
from ..errors import InputError


class JsonLines:
    """The columns of a UTF-8 JSON Lines file (read at construction; none when no line holds data) and its
    rows in chunks."""

    def __init__(self, path: Path, label: str) -> None:
        self.path, self.label = path, label
        self.bytes_read = 0
        self.names = key_columns((value for _, _, value in jsonl_objects(self._lines(), label)), label)
        self.columns = list(dict.fromkeys(self.names.values()))

    def _lines(self) -> Iterator[str]:
        """The file's lines as text, without "\\n" or a leading byte-order mark; ``bytes_read`` follows them."""
        self.bytes_read = 0
        with open(self.path, "rb") as binary:
            for number, line in enumerate(binary):
                self.bytes_read += len(line)
                if number == 0 and line.startswith(codecs.BOM_UTF8):
                    line = line[len(codecs.BOM_UTF8):]
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError:
                    read_raw(self.path, file_name=self.label)  # raises with the byte offset and row
                    raise InputError("the file is not valid UTF-8", file=self.label) from None
                text = text.removesuffix("\n")
                yield text.removeprefix("\ufeff") if number == 0 else text

    def chunks(self, size: int) -> Iterator[RawTable]:
        """Chunks of at most ``size`` rows, numbered (rows and lines) from the start of the file."""
        table, objects = self._empty(), []
        for line_no, record, value in jsonl_objects(self._lines(), self.label):
            objects.append(value)
            table.row_numbers.append(record)
            table.lines.append(line_no)
            if len(objects) >= size:
                yield fill_rows(objects, table, self.names)
                table, objects = self._empty(), []
        if objects:
            yield fill_rows(objects, table, self.names)

    def _empty(self) -> RawTable:
        return RawTable(columns=self.columns, rows=[], row_numbers=[], lines=[], label=self.label)
