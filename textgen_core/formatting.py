"""Text that people read about runs and datasets, written once so the CLI and the dashboard agree.

A run's duration is the time spent scoring it, summed over its sessions (a
resume adds its own); every place that shows it calls :func:`duration_text`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def duration_text(seconds: float | None) -> str:
    """'0.4 s', '12.3 s', '2 min 05 s', '1 h 02 min'; '' when unknown."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return ""
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def plain_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy fit to show as text: lists joined by ', ', timestamps to the second, nothing missing shown as None/NaN.

    Numeric columns that hold a missing value become text ('' where missing), so a
    table never says 'None' or 'NaN' where it means 'not known'.
    """
    table = frame.copy()
    for column in table.columns:
        values = table[column]
        if pd.api.types.is_datetime64_any_dtype(values):
            table[column] = values.dt.strftime("%Y-%m-%d %H:%M:%S").fillna("")
        elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            if values.isna().any():
                table[column] = values.map(_number)
        else:
            table[column] = values.map(_cell)
    return table


def text_table(frame: pd.DataFrame) -> str:
    """:func:`plain_table` as terminal text: text columns left-aligned, numbers right-aligned, no index."""
    table = plain_table(frame)
    numeric = {c for c in frame.columns
               if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])}
    for column in table.columns:
        if column not in numeric:
            width = max([len(str(column)), *(len(v) for v in table[column])])
            table[column] = table[column].str.ljust(width)
            table = table.rename(columns={column: str(column).ljust(width)})
    return _plain_layout(table) or table.to_string(index=False)


def _plain_layout(table: pd.DataFrame) -> str | None:
    """``table.to_string(index=False)`` written directly for a table of text and numpy-integer columns (pandas
    formats every cell through its pretty-printer: about a second for the 4,000 rows of a history); None, and
    pandas' own layout, for anything else (floats, booleans, nullable integers, an empty table, a text that
    holds a tab or a line break, which pandas escapes). Every column is right-aligned; an integer column is one
    wider than its header (pandas keeps a place for the sign there). tests/core/test_text_table.py holds the
    equality on random tables."""
    if table.empty:
        return None
    columns: list[list[str]] = []
    widths: list[int] = []
    for name in table.columns:
        values = table[name]
        header = str(name)
        if isinstance(values.dtype, np.dtype) and values.dtype.kind in "iu":
            texts = [str(v) for v in values.tolist()]
            widths.append(max(len(header) + 1, *map(len, texts)))
        elif values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            texts = values.tolist()
            if not all(isinstance(t, str) and "\t" not in t and "\n" not in t and "\r" not in t for t in texts):
                return None
            widths.append(max(len(header), *map(len, texts)))
        else:
            return None
        columns.append([header, *texts])
    return "\n".join(" ".join(cell.rjust(width) for cell, width in zip(row, widths)) for row in zip(*columns))


def _number(value: Any) -> str:
    if value is None or pd.isna(value):
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _cell(value: Any) -> str:
    if isinstance(value, (list, tuple, np.ndarray)):
        return ", ".join(str(v) for v in value)
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)
