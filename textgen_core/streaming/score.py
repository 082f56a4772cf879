"""Scoring chunks of rows as they come, storing each chunk's cells, keeping only corpus statistics.

At most ``workers + 1`` chunks are in flight, so memory stays bounded however
long the stream is; cells are written as each chunk finishes, in order. What
the corpus aggregates need is kept packed (:class:`RowStats`), not the cells.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import threading
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..metrics.registry import get_metric
from ..model import Cell, Datum
from ..store import Store
from .stats import RowStats

log = logging.getLogger(__name__)

Scored = dict[str, list[dict[str, Cell]]]


@dataclass
class StreamTotals:
    """What a stream of chunks has done so far."""

    rows: int = 0
    unscored: int = 0
    #: (metric, model) -> packed cells, for metrics with a corpus aggregate
    stats: dict[tuple[str, str], RowStats] = field(default_factory=dict)


def score_chunk(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]]) -> Scored:
    """Every chosen lexical metric on one chunk (module-level, so a process pool can run it)."""
    from ..metrics.lexical import score_lexical

    return score_lexical(rows, metrics)


def _in_order(chunks: Iterable[Sequence[Datum]], metrics: Mapping[str, Mapping[str, Any]],
              workers: int) -> Iterator[tuple[Sequence[Datum], Scored]]:
    """(chunk, cells) in input order, scored in a pool of ``workers`` processes (in-process for 1)."""
    chunks = iter(chunks)
    if workers <= 1:
        for chunk in chunks:
            yield chunk, score_chunk(chunk, metrics)
        return
    pending: deque[tuple[Sequence[Datum], Future | None]] = deque()
    context = multiprocessing.get_context("spawn")  # safe inside threaded hosts such as Streamlit
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for chunk in chunks:
                pending.append((chunk, None))
                pending[-1] = (chunk, pool.submit(score_chunk, chunk, metrics))
                while len(pending) > workers:
                    yield _oldest(pending)
            while pending:
                yield _oldest(pending)
    except BrokenProcessPool as exc:
        # e.g. a script without an `if __name__ == "__main__":` guard, which spawned workers re-run
        log.warning("process pool unavailable (%s); scoring the remaining rows in this process", exc)
        for chunk in itertools.chain((c for c, _ in pending), chunks):
            yield chunk, score_chunk(chunk, metrics)


def _oldest(pending: deque[tuple[Sequence[Datum], Future | None]]) -> tuple[Sequence[Datum], Scored]:
    """The first chunk's cells; it leaves the queue only once they are there (a broken pool keeps it)."""
    chunk, future = pending[0]
    scored = future.result()  # type: ignore[union-attr]
    pending.popleft()
    return chunk, scored


def score_stream(store: Store, run_id: int, chunks: Iterable[Sequence[Datum]],
                 metrics: Mapping[str, Mapping[str, Any]], *, workers: int = 1,
                 after_chunk: Callable[[StreamTotals], None] | None = None,
                 cancel: threading.Event | None = None) -> StreamTotals:
    """Score and store every chunk; returns the totals with the corpus statistics."""
    from ..evaluate import _records  # one cell -> record rule (non-finite values unscored) for every engine

    outputs = {m: get_metric(m).outputs(p) for m, p in metrics.items()}
    corpus = [m for m in metrics if get_metric(m).corpus is not None]
    totals = StreamTotals()
    for chunk, scored in _in_order(chunks, metrics, workers):
        records = []
        for metric, cells in scored.items():
            records.extend(_records(chunk, metric, outputs[metric], cells))
        store.write_cells(run_id, records)
        for metric in corpus:
            for row, cells in zip(chunk, scored[metric]):
                stats = totals.stats.get((metric, row.model))
                if stats is None:
                    stats = totals.stats[(metric, row.model)] = RowStats()
                stats.add(cells)
        totals.rows += len(chunk)
        totals.unscored += sum(1 for r in records if r[4] is None)
        if after_chunk is not None:
            after_chunk(totals)
        if cancel is not None and cancel.is_set():
            break
    return totals


def corpus_aggregates(metrics: Mapping[str, Mapping[str, Any]],
                      stats: Mapping[tuple[str, str], RowStats]) -> list[tuple[str, str, float | None, dict]]:
    """(model, score, value, details) of every corpus aggregate, from the packed statistics.

    Corpus scorers of chunked metrics read only the cells (the rows are for pass@k,
    which is scored over the whole dataset and never streamed).
    """
    aggregates = []
    for (metric, model), packed in stats.items():
        values = get_metric(metric).corpus([], packed, metrics[metric])  # type: ignore[misc, arg-type]
        aggregates.extend((model, score, value, {"metric": metric}) for score, value in values.items())
    return aggregates
