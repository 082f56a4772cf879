"""Writing tables to CSV, JSONL or Parquet: the one writer behind every export.

CSV is written for spreadsheets opened by people who did not write the data:
any field holding a carriage return or a line feed is quoted (a bare ``\\r``
otherwise starts a new record in Excel, LibreOffice and Python's ``csv``), and
text a spreadsheet would run as a formula gets a leading apostrophe, at the
start of the field and after every line break inside it. JSON Lines keeps
every float exactly (shortest round-trip form, never rounded).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import re
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from .errors import TextgenError

#: A cell starting with one of these is run as a formula by spreadsheet programs.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
SUPPORTED = (".csv", ".jsonl", ".parquet")

# A formula prefix at the start of the text or of any line inside it.
_LIVE_FORMULA = re.compile("(^|\r\n|\r|\n)(?=[" + re.escape("".join(FORMULA_PREFIXES)) + "])")


def neutralize(text: str) -> str:
    """``text`` with an apostrophe before every formula prefix that opens the field or a line in it."""
    return _LIVE_FORMULA.sub(lambda m: m.group(1) + "'", text)


def plain_value(value: Any) -> Any:
    """A cell as plain JSON data: numpy scalars unwrapped, NaN/NA as None, times as ISO text."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, (np.generic, np.ndarray)):
        return plain_value(value.tolist())
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return None if pd.isna(value) else value.isoformat()
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


def _csv_text(value: Any) -> str:
    value = plain_value(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    return neutralize(str(value))


def write_csv(frame: pd.DataFrame, stream: IO[str]) -> None:
    """CSV with CRLF records; fields holding a delimiter, quote, CR or LF are quoted."""
    # Both CR and LF are in the line terminator, so the csv module quotes any field holding either.
    writer = csv.writer(stream, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
    writer.writerow([neutralize(str(c)) for c in frame.columns])
    for values in frame.itertuples(index=False, name=None):
        writer.writerow([_csv_text(v) for v in values])


def write_jsonl(frame: pd.DataFrame, stream: IO[str]) -> None:
    """One JSON object per row; floats keep their exact value, NaN is null."""
    columns = [str(c) for c in frame.columns]
    for values in frame.itertuples(index=False, name=None):
        record = {name: plain_value(v) for name, v in zip(columns, values)}
        stream.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write by extension: .csv (quoted and formula-safe), .jsonl (exact floats) or .parquet."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise TextgenError(f"cannot write {path.name}: use one of {', '.join(SUPPORTED)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".parquet":
            frame.to_parquet(path, index=False)
        else:
            with path.open("w", encoding="utf-8", newline="") as stream:
                (write_csv if suffix == ".csv" else write_jsonl)(frame, stream)
    except OSError as exc:
        raise TextgenError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
