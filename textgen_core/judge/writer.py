"""Buffered writes of finished cells: each cell with its verdicts and failed exchanges, all or nothing."""

from __future__ import annotations

import json
import time
from typing import Any

from ..model import Datum
from ..store import Store
from .cells import Outcome


class ResultWriter:
    """Collects finished cells and writes them in batches (by count or by age)."""

    def __init__(self, store: Store, run_id: int, *, max_cells: int = 400, max_age: float = 1.0,
                 written: set[tuple[str, str, str]] | None = None) -> None:
        self.store, self.run_id = store, run_id
        #: Cells written by an earlier pass of this run: their old verdicts are replaced, not added to.
        self.written = written if written is not None else set()
        self.max_cells, self.max_age = max_cells, max_age
        self.cells: list[tuple] = []
        self.verdicts: list[tuple] = []
        self.exchanges: list[dict[str, Any]] = []
        self.count = 0
        self._since = time.monotonic()

    def add(self, row: Datum, metric: str, outcome: Outcome) -> None:
        cell = outcome.cell
        self.cells.append((row.datum_id, row.model, metric, metric, cell.value,
                           dict(cell.details) if cell.details is not None else None, cell.reason))
        for step, index, item, verdict, reason, key in outcome.verdicts:
            self.verdicts.append((row.datum_id, row.model, metric, step, index, item, verdict, reason, key))
        for i, failed in enumerate(outcome.exchanges):
            messages = failed.get("messages")
            self.exchanges.append({
                "datum_id": row.datum_id, "model": row.model, "metric": metric, "step": failed.get("step", ""),
                "call_index": i, "status": "unscored", "reason": failed.get("reason"), "cache_key": None,
                "messages": messages if isinstance(messages, list) else [{"role": "user", "content": json.dumps(messages)}],
                "reply": failed.get("reply"), "prompt_tokens": 0, "completion_tokens": 0,
                "attempts": failed.get("attempts"), "latency_s": None,
            })
        if len(self.cells) >= self.max_cells or time.monotonic() - self._since >= self.max_age:
            self.flush()

    def flush(self) -> None:
        """Write everything buffered in one transaction."""
        self._since = time.monotonic()
        if not self.cells:
            return
        rewritten = [c[:3] for c in self.cells if c[:3] in self.written]
        self.store.write_judge_results(self.run_id, self.cells, self.verdicts, self.exchanges, rewritten)
        self.count += len(self.cells)
        self.cells, self.verdicts, self.exchanges = [], [], []
