"""Finished cells of a run, handed to the store's writer thread: each cell with its verdicts, all or nothing."""

from __future__ import annotations

import json

from ..model import Datum
from .metric import Outcome
from .storage import JudgeStore
from .store_writer import CellWrite, StoreWriter, writer_for


class ResultWriter:
    """Queues finished cells of one run for :class:`~textgen_core.judge.store_writer.StoreWriter`.

    Nothing is written on the caller's thread: :meth:`add` only builds the
    rows. They share the store's queue with the reply cache, so a cell is
    committed with, or after, the replies it was computed from.
    """

    def __init__(self, store: JudgeStore, run_id: int, *, written: set[tuple[str, str, str]] | None = None,
                 sink: StoreWriter | None = None) -> None:
        self.store, self.run_id = store, run_id
        #: Cells written by an earlier pass of this run: their old verdicts are replaced, not added to.
        self.written = written if written is not None else set()
        self.sink = sink or writer_for(store)
        self.count = 0

    def add(self, row: Datum, metric: str, outcome: Outcome,
            usage: tuple[int, int, int, float | None] = (0, 0, 0, None)) -> None:
        """Queue one finished cell with the usage (calls, prompt and completion tokens, cost) spent since
        the previous cell: both land in one transaction. Raises if an earlier batch could not be written."""
        self.sink.check()
        cell = outcome.cell
        record = (row.datum_id, row.model, metric, metric, cell.value,
                  dict(cell.details) if cell.details is not None else None, cell.reason)
        verdicts = [(row.datum_id, row.model, metric, step, index, item, verdict, reason, key)
                    for step, index, item, verdict, reason, key in outcome.verdicts]
        exchanges = []
        for i, failed in enumerate(outcome.exchanges):
            messages = failed.get("messages")
            exchanges.append({
                "datum_id": row.datum_id, "model": row.model, "metric": metric, "step": failed.get("step", ""),
                "call_index": i, "status": "unscored", "reason": failed.get("reason"), "cache_key": None,
                "messages": messages if isinstance(messages, list) else [{"role": "user", "content": json.dumps(messages)}],
                "reply": failed.get("reply"), "prompt_tokens": 0, "completion_tokens": 0,
                "attempts": failed.get("attempts"), "latency_s": None,
            })
        self.sink.put_cell(CellWrite(self.run_id, record, verdicts, exchanges, record[:3] in self.written,
                                     usage))
        self.count += 1

    def flush(self) -> None:
        """Wait until every queued cell (and every reply queued before it) is committed."""
        self.sink.flush()
