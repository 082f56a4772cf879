"""The DuckDB store (the only module that touches the database)."""

from .store import CellRecord, Store

__all__ = ["CellRecord", "Store"]
