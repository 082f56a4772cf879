"""Writing tables to CSV, JSONL or Parquet, safe to open in a spreadsheet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .errors import TextgenError

#: A cell starting with one of these is run as a formula by spreadsheet programs.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
SUPPORTED = (".csv", ".jsonl", ".parquet")


def formula_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy where text cells a spreadsheet would evaluate get a leading apostrophe."""
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(_neutralize)
    safe.columns = [_neutralize(str(c)) for c in safe.columns]
    return safe


def _neutralize(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write by extension: .csv (formula-safe), .jsonl or .parquet."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise TextgenError(f"cannot write {path.name}: use one of {', '.join(SUPPORTED)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if suffix == ".csv":
            formula_safe(frame).to_csv(path, index=False)
        elif suffix == ".jsonl":
            frame.to_json(path, orient="records", lines=True, force_ascii=False)
        else:
            frame.to_parquet(path, index=False)
    except OSError as exc:
        raise TextgenError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
