"""What the judge needs from a store, as a protocol (the judge never imports the store): the reply cache
reads, the key index, the run facts and the store's write queue. The Ray worker's store serves it too.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from ..model import Datum
from .metric import Outcome


class JudgeWrites(Protocol):
    """The store's judge write queue: first in, first out, committed in batches by the store."""

    def put_cache(self, entry: Any, on_done: Callable[[], None] | None = None) -> None: ...
    def put_cell(self, write: Any) -> None: ...
    def put_usage(self, run_id: int, calls: int, prompt_tokens: int, completion_tokens: int,
                  cost: float | None) -> None: ...
    def nudge(self) -> None: ...
    def flush(self, timeout: float | None = None, *, check: bool = True) -> None: ...
    def check(self) -> None: ...


class JudgeStore(Protocol):
    """The reply cache, the write queue and the run facts: everything the judge reads or writes."""

    @property
    def judge_writer(self) -> JudgeWrites: ...
    def session(self) -> AbstractContextManager[Any]: ...
    def judge_cache_entries(self, cache_keys: Sequence[str]) -> dict[str, dict[str, Any]]: ...
    def judge_cache_values(self, cache_keys: Sequence[str]) -> dict[str, Any]: ...
    def judge_cache_maybe(self, cache_keys: Sequence[str]) -> list[str]: ...
    def judge_cache_surely_missing(self, cache_key: str) -> bool: ...
    def judge_cache_holds(self, base_url: str, models: Sequence[str]) -> bool: ...
    def judge_unscored_cells(self, run_id: int) -> set[tuple[str, str, str]]: ...
    def get_run(self, run_id: int) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CellWrite:
    """One finished cell: its score row, verdict rows and failed exchanges; ``rewritten`` if written before."""

    run_id: int
    cell: tuple
    verdicts: Sequence[tuple]
    exchanges: Sequence[dict[str, Any]]
    rewritten: bool
    #: Usage spent since the previous cell of the run: (calls, prompt tokens, completion tokens, cost or None).
    usage: tuple[int, int, int, float | None] = (0, 0, 0, None)


class ResultWriter:
    """Queues finished cells of one run on the store's write queue (:class:`JudgeWrites`).

    Nothing is written on the caller's thread: :meth:`add` only builds the
    rows. They share the store's queue with the reply cache, so a cell is
    committed with, or after, the replies it was computed from.
    """

    def __init__(self, store: JudgeStore, run_id: int, *, written: set[tuple[str, str, str]] | None = None) -> None:
        self.store, self.run_id = store, run_id
        #: Cells written by an earlier pass of this run: their old verdicts are replaced, not added to.
        self.written = written if written is not None else set()
        self.sink = store.judge_writer
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
                "reply": failed.get("reply"), "prompt_tokens": failed.get("prompt_tokens") or 0,
                "completion_tokens": failed.get("completion_tokens") or 0,
                "attempts": failed.get("attempts"), "latency_s": failed.get("latency_s"),
            })
        self.sink.put_cell(CellWrite(self.run_id, record, verdicts, exchanges, record[:3] in self.written,
                                     usage))
        self.count += 1

    def add_usage(self, usage: tuple[int, int, int, float | None]) -> None:
        """Queue what requests just billed (calls, prompt and completion tokens, cost), ahead of their cells."""
        if usage[0] or usage[1] or usage[2]:
            self.sink.put_usage(self.run_id, *usage)

    def flush(self) -> None:
        """Wait until every queued cell (and every reply queued before it) is committed."""
        self.sink.flush()
