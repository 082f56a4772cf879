"""What a run adds to its judge client at real-endpoint scale: batch mode and a spending cap.

:func:`attach` builds the run's client (:meth:`JudgeClient.for_run`) with its transport chosen at
construction -- direct, batch (:class:`~.batch.Batcher`, logging its batches under the run), capped
(:class:`~.budget.SpendingCap`, counting from what the run already spent) -- and :meth:`RunScale.check`
says at the end why the run stopped short. In batch mode every datum group asks at once, so a round
holds as many requests as can be asked before a reply is needed.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..errors import BudgetReached, TextgenError
from .batch import Batcher
from .budget import SpendingCap
from .client import JudgeClient
from .settings import JudgeSettings

log = logging.getLogger("textgen_core.judge")

#: Datum groups in flight at once in batch mode (a batch takes up to 50,000 requests).
BATCH_GROUPS = 10_000


@dataclass
class RunScale:
    """One run's client (built with its batch mode and cap) and what the run checks at its end."""

    client: JudgeClient
    batcher: Batcher | None = None
    cap: SpendingCap | None = None

    def check(self) -> None:
        """Raise :class:`BudgetReached` when the cap stopped the run, or the batch endpoint's refusal for good."""
        if self.batcher is not None and self.batcher.fatal:  # as the engine reports a direct endpoint's refusal
            raise TextgenError(f"the judge endpoint refused: {'; '.join(self.batcher.fatal)}. The cells are kept "
                               "as unscored; fix the judge settings and resume the run.")
        if self.cap is not None and self.cap.reached.is_set():
            raise BudgetReached(self.cap.reason)
        if self.batcher is not None and self.batcher.pending:  # stopped waiting; the batches keep running
            raise BudgetReached(f"judge batch {', '.join(self.batcher.pending)} still running after "
                                f"{self.client.settings.batch_wait:g} s (--batch-wait); resume takes it over")


def width(settings: JudgeSettings, groups: int) -> int:
    """Datum groups scored at once: the concurrency, or (batch mode) every group up to :data:`BATCH_GROUPS`."""
    if settings.batch:
        return max(1, min(groups, BATCH_GROUPS))
    return settings.concurrency


def attach(client: JudgeClient, store: Any, run_id: int) -> RunScale:
    """The client of one run: ``client``'s usage, response mode and cache, with a transport built for the
    batch mode and spending cap of ``client.settings`` (``client`` itself is left as it is)."""
    settings = client.settings
    batcher = None
    if settings.batch:
        batcher = Batcher(settings, store, run_id, policy=client.policy)
    else:  # a resume without --batch still takes over the run's pending batches (they are billed anyway)
        adopting = Batcher(settings, store, run_id, policy=client.policy, adopt_only=True)
        if adopting.logged_ids():
            log.warning("judge: run %d has batches that may still hold replies; their requests wait for them, "
                        "the rest go direct", run_id)
            batcher = adopting
    cap = SpendingCap.for_run(settings, lambda: client.usage, store.get_run(run_id))
    return RunScale(client.for_run(batcher=batcher, cap=cap), batcher, cap)
