"""The work of one chunk of a run's rows on a pool worker: every chosen lexical metric on those rows.

A module of its own, importing nothing at the top but the row types: a spawned worker imports the module
of the function it runs, and the run loop's module (:mod:`.loop`) brings the store, DuckDB and pandas with it
(about 0.8 CPU-s more in each worker, for nothing a worker uses). Also the scoring step of a streamed chunk
(:mod:`textgen_core.streaming.score`) and of a Ray block.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..model import Cell, Datum


def score_chunk(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Cell]]]:
    """Every chosen lexical metric on one chunk of rows (module-level: picklable)."""
    from ..metrics.local import score_local

    return score_local(rows, metrics)
