"""Alignment of a judge with people's labels: the stored training/held-out splits and each alignment's result.

``align_splits`` holds one split per (run, score, labels' run, seed, held-out share): which labelled cells
train candidates and which judge them. It is written once and read back by every later alignment of the same
key, so the held-out part stays fixed (cells labelled later are split among themselves and added).
``alignments`` keeps what each alignment found -- the figures of the current version and of every
candidate, and the version accepted (if any) -- as the provenance of an accepted criterion version.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pandas as pd

from .database import Part, reads, writes

#: DDL run by :class:`~textgen_core.store.Store` with the rest of the schema.
ALIGN_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS align_splits (
        run_id INTEGER NOT NULL,
        score VARCHAR NOT NULL,
        labels_run INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        holdout DOUBLE NOT NULL,
        cells JSON NOT NULL,
        created_at TIMESTAMP DEFAULT current_timestamp,
        PRIMARY KEY (run_id, score, labels_run, seed, holdout))""",
    "CREATE SEQUENCE IF NOT EXISTS alignment_ids START 1",
    """CREATE TABLE IF NOT EXISTS alignments (
        alignment_id INTEGER PRIMARY KEY DEFAULT nextval('alignment_ids'),
        run_id INTEGER NOT NULL,
        score VARCHAR NOT NULL,
        labels_run INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        holdout DOUBLE NOT NULL,
        criterion VARCHAR NOT NULL,
        accepted_version INTEGER,
        result JSON NOT NULL,
        created_at TIMESTAMP DEFAULT current_timestamp)""",
)

_COLUMNS = ["alignment_id", "run_id", "score", "labels_run", "seed", "holdout", "criterion", "accepted_version",
            "result", "created_at"]


class Alignments(Part):
    """Writes and reads of ``align_splits`` and ``alignments``."""

    @writes
    def save_split(self, run_id: int, score: str, labels_run: int, seed: int, holdout: float,
                   cells: dict[str, list[list[str]]]) -> None:
        """Store (or extend) the split of a key: ``cells`` maps 'train' and 'held_out' to [datum_id, model] lists."""
        self.cur.execute("INSERT OR REPLACE INTO align_splits (run_id, score, labels_run, seed, holdout, cells) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         [run_id, score, labels_run, seed, holdout, json.dumps(cells, ensure_ascii=False)])

    @reads
    def split(self, run_id: int, score: str, labels_run: int, seed: int, holdout: float) -> dict[str, Any] | None:
        """The stored split of a key, or None."""
        try:
            row = self.cur.execute("SELECT cells FROM align_splits WHERE run_id = ? AND score = ? AND labels_run = ? "
                                   "AND seed = ? AND holdout = ?", [run_id, score, labels_run, seed, holdout]).fetchone()
        except duckdb.CatalogException:
            return None
        return None if row is None else json.loads(row[0])

    @writes
    def record_alignment(self, run_id: int, score: str, labels_run: int, seed: int, holdout: float,
                         criterion: str, accepted_version: int | None, result: dict[str, Any]) -> int:
        """Keep one alignment's figures and the version it accepted (None: none); its id."""
        row = self.cur.execute(
            "INSERT INTO alignments (run_id, score, labels_run, seed, holdout, criterion, accepted_version, result) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING alignment_id",
            [run_id, score, labels_run, seed, holdout, criterion, accepted_version,
             json.dumps(result, ensure_ascii=False, default=str)]).fetchone()
        return int(row[0])

    @reads
    def alignments(self, run_id: int | None = None) -> pd.DataFrame:
        """Recorded alignments (of one run, or all), newest first."""
        try:
            return self.cur.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM alignments WHERE ? IS NULL OR run_id = ? "
                "ORDER BY alignment_id DESC", [run_id, run_id]).df()
        except duckdb.CatalogException:
            return pd.DataFrame(columns=_COLUMNS)
