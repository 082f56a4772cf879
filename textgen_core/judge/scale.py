"""What a run adds to its judge client at real-endpoint scale: batch mode and a spending cap.

:func:`attach` is called by the engine for each run. In batch mode it hands the
client's chat requests to a :class:`~.batch.Batcher` that logs its batches in
the store under the run, and lets every datum group of the run ask at once (a
round holds as many requests as can be asked before a reply is needed). With
``max_calls`` or ``max_cost`` set it installs a :class:`~.budget.SpendingCap`
counting from what the run has already spent; once it is reached every new
request is refused, the run ends when the admitted ones are in, and
:meth:`RunScale.check` raises
:class:`~.budget.BudgetReached`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from ..errors import BudgetReached, TextgenError
from .batch import Batcher
from .budget import SpendingCap
from .client import JudgeClient

log = logging.getLogger("textgen_core.judge")

#: Datum groups in flight at once in batch mode (a batch takes up to 50,000 requests).
BATCH_GROUPS = 10_000


@dataclass
class RunScale:
    client: JudgeClient
    batcher: Batcher | None = None
    cap: SpendingCap | None = None

    def stop_event(self, cancel: threading.Event | None) -> threading.Event:
        """What the run watches to stop: the caller's cancel.

        A reached cap does not stop the run at once: requests already admitted
        (a batch round waiting to go out, replies on the wire) are within the
        cap and finish, every later request is refused at once, and the cells
        that needed one are left for the resume.
        """
        return cancel or threading.Event()

    def detach(self) -> None:
        """Take batch mode and the cap off the client (it may serve other runs)."""
        transport = self.client._transport
        if transport.batcher is self.batcher:
            transport.batcher = None
        if transport.spending is self.cap:
            transport.spending = None

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


def width(settings: Any, groups: int) -> int:
    """Datum groups scored at once: the concurrency, or (batch mode) every group up to :data:`BATCH_GROUPS`."""
    if getattr(settings, "batch", False):
        return max(1, min(groups, BATCH_GROUPS))
    return settings.concurrency


def attach(client: JudgeClient, store: Any, run_id: int) -> RunScale:
    """Install the batch mode and spending cap of ``client.settings`` on the client for one run."""
    settings = client.settings
    scale = RunScale(client)
    transport = client._transport
    if settings.batch:
        scale.batcher = transport.batcher = Batcher(settings, store, run_id)
        # A probe of the response mode would cost a batch round of its own: start from json_schema as
        # confirmed; a batch line that rejects it still moves the client down to json_object.
        client._modes.confirm(client._modes.now()[0])
    else:  # a resume without --batch still takes over the run's pending batches (they are billed anyway)
        adopting = Batcher(settings, store, run_id, adopt_only=True)
        if adopting.logged_ids():
            log.warning("judge: run %d has batches that may still hold replies; their requests wait for them, "
                        "the rest go direct", run_id)
            scale.batcher = transport.batcher = adopting
            client._modes.confirm(client._modes.now()[0])  # as in batch mode: the batch's requests, unprobed
    scale.cap = SpendingCap.for_run(settings, lambda: client.usage, store.get_run(run_id))
    transport.spending = scale.cap
    return scale
