"""Saved custom judge metric definitions: one row per (name, version), the one write path of ``criteria``.

A definition is stored as its canonical JSON text. Saving a text equal to the
name's latest version stores nothing and returns that version; any other text
becomes the next version, so an edit never rewrites what a run used.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pandas as pd

from .database import Part, reads, writes

#: DDL run by :class:`~textgen_core.store.Store` with the rest of the schema.
CRITERIA_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS criteria (
        name VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        title VARCHAR,
        definition JSON NOT NULL,
        created_at TIMESTAMP DEFAULT current_timestamp,
        PRIMARY KEY (name, version))""",
)

_COLUMNS = ["name", "version", "title", "definition", "created_at"]


class Criteria(Part):
    """Writes and reads of ``criteria``."""

    @writes
    def save_criterion(self, name: str, title: str, text: str) -> int:
        """Store a definition's canonical JSON text under ``name``; its version (a new one only when it changed)."""
        cur = self.cur
        latest = cur.execute("SELECT version, definition FROM criteria WHERE name = ? "
                             "ORDER BY version DESC LIMIT 1", [name]).fetchone()
        if latest is not None and json.loads(latest[1]) == json.loads(text):
            return int(latest[0])
        version = 1 if latest is None else int(latest[0]) + 1
        cur.execute("INSERT INTO criteria (name, version, title, definition) VALUES (?, ?, ?, ?)",
                    [name, version, title, text])
        return version

    @reads
    def criteria(self) -> pd.DataFrame:
        """The latest version of every saved definition, by name (a file from before the table: none)."""
        try:
            return self.cur.execute(
                "SELECT name, version, title, definition, created_at FROM criteria "
                "QUALIFY version = max(version) OVER (PARTITION BY name) ORDER BY name").df()
        except duckdb.CatalogException:
            return pd.DataFrame(columns=_COLUMNS)

    @reads
    def load_criterion(self, name: str, version: int | None = None) -> tuple[int, dict[str, Any]] | None:
        """(version, definition) of a saved definition (its latest version by default), or None."""
        try:
            row = self.cur.execute(
                "SELECT version, definition FROM criteria WHERE name = ? AND (? IS NULL OR version = ?) "
                "ORDER BY version DESC LIMIT 1", [name, version, version]).fetchone()
        except duckdb.CatalogException:
            return None
        return None if row is None else (int(row[0]), json.loads(row[1]))
