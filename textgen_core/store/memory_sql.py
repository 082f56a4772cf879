"""What the dashboard remembers between visits: the column mapping of each uploaded file, and named judge
profiles. A part of the store; each table has one writer.

``upload_mappings``: a file's content hash -> the mapping it was last saved with, so uploading the same file
again shows that mapping instead of a fresh guess. ``judge_profiles``: a name -> judge settings (base URL,
model, prices, concurrency...), picked on every page that asks a judge. An API key is never stored: the
writer refuses settings that hold one.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import duckdb
import pandas as pd

from .database import Part, reads, writes

#: DDL run by :class:`~textgen_core.store.Store` with the rest of the schema.
MEMORY_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS upload_mappings (
        content_sha256 VARCHAR PRIMARY KEY,
        file_name VARCHAR,
        mapping JSON NOT NULL,
        saved_at TIMESTAMP DEFAULT current_timestamp)""",
    """CREATE TABLE IF NOT EXISTS judge_profiles (
        name VARCHAR PRIMARY KEY,
        settings JSON NOT NULL,
        saved_at TIMESTAMP DEFAULT current_timestamp)""",
)

#: Setting names that could hold a secret: a profile holding one is refused.
SECRET_NAMES = ("api_key", "key", "token", "password", "secret", "authorization")


class Memory(Part):
    """Writes and reads of ``upload_mappings`` and ``judge_profiles``."""

    @writes
    def remember_mapping(self, content_sha256: str, file_name: str, mapping: Mapping[str, Any]) -> None:
        """Keep the mapping a file (by the SHA-256 of its bytes) was saved with; a later save replaces it."""
        self.cur.execute("INSERT OR REPLACE INTO upload_mappings (content_sha256, file_name, mapping, saved_at) "
                         "VALUES (?, ?, ?, current_timestamp)",
                         [content_sha256, file_name, json.dumps(dict(mapping), sort_keys=True)])

    @reads
    def remembered_mapping(self, content_sha256: str) -> dict[str, Any] | None:
        """The mapping this file was last saved with, or None (a file from before the table: None)."""
        try:
            row = self.cur.execute("SELECT mapping FROM upload_mappings WHERE content_sha256 = ?",
                                   [content_sha256]).fetchone()
        except duckdb.CatalogException:
            return None
        return None if row is None else json.loads(row[0])

    @writes
    def save_judge_profile(self, name: str, settings: Mapping[str, Any]) -> None:
        """Store (or replace) a named judge profile; a ValueError when the name is empty or the settings
        hold anything named like a key, so a secret can never reach the file."""
        name = str(name).strip()
        if not name:
            raise ValueError("a judge profile needs a name")
        secret = sorted(k for k in settings if str(k).lower() in SECRET_NAMES and settings[k] not in (None, ""))
        if secret:
            raise ValueError(f"a judge profile never stores a key; drop {', '.join(secret)} from its settings")
        self.cur.execute("INSERT OR REPLACE INTO judge_profiles (name, settings, saved_at) "
                         "VALUES (?, ?, current_timestamp)", [name, json.dumps(dict(settings), sort_keys=True)])

    @reads
    def judge_profiles(self) -> pd.DataFrame:
        """Every saved judge profile (name, settings as a dict, saved_at), by name."""
        try:
            frame = self.cur.execute("SELECT name, settings, saved_at FROM judge_profiles ORDER BY name").df()
        except duckdb.CatalogException:
            return pd.DataFrame(columns=["name", "settings", "saved_at"])
        frame["settings"] = frame["settings"].map(json.loads)
        return frame
