"""Judge batches of a run (the OpenAI Batch API): recorded the moment they are created, so a resume waits for them.

One row per batch: its id, the run, the endpoint and model, the uploaded input
file, the ``custom_id`` of every request in it and its last known status. A
process killed while a batch is pending leaves the row behind; the resumed run
finds its requests there and takes the batch over instead of paying again.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .database import Part, reads, writes

#: DDL run by :class:`~textgen_core.store.Store` with the rest of the schema.
BATCH_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS judge_batches (
        batch_id VARCHAR PRIMARY KEY,
        run_id INTEGER NOT NULL,
        endpoint VARCHAR,
        model VARCHAR,
        input_file_id VARCHAR,
        custom_ids JSON,
        n_requests INTEGER,
        status VARCHAR NOT NULL,
        created_at TIMESTAMP DEFAULT current_timestamp,
        updated_at TIMESTAMP DEFAULT current_timestamp)""",
)


class JudgeBatches(Part):
    """Reads and writes of ``judge_batches``."""

    @writes
    def judge_batch_add(self, run_id: int, batch_id: str, input_file_id: str, endpoint: str, model: str,
                        custom_ids: Sequence[str]) -> None:
        """Record a batch just created (committed before this returns)."""
        cur = self.cur
        cur.execute("INSERT OR REPLACE INTO judge_batches (batch_id, run_id, endpoint, model, input_file_id, "
                    "custom_ids, n_requests, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'submitted')",
                    [batch_id, run_id, endpoint, model, input_file_id, json.dumps(list(custom_ids)),
                     len(custom_ids)])

    @writes
    def judge_batch_status(self, batch_id: str, status: str) -> None:
        """Record a batch's latest status."""
        cur = self.cur
        cur.execute("UPDATE judge_batches SET status = ?, updated_at = current_timestamp WHERE batch_id = ?",
                    [status, batch_id])

    @reads
    def judge_batches(self, run_id: int) -> list[dict[str, Any]]:
        """The batches of a run, oldest first, with their request ids."""
        rows = self.cur.execute(
            "SELECT batch_id, endpoint, model, input_file_id, custom_ids, n_requests, status, created_at "
            "FROM judge_batches WHERE run_id = ? ORDER BY created_at, batch_id", [run_id]).fetchall()
        names = ("batch_id", "endpoint", "model", "input_file_id", "custom_ids", "n_requests", "status", "created_at")
        found = [dict(zip(names, row)) for row in rows]
        for row in found:
            row["custom_ids"] = json.loads(row["custom_ids"] or "[]")
        return found
