"""How a run ends: one set of status and duration rules for every source (stored, streamed, Ray).

A run's duration is the time of all its sessions: a resumed run starts its clock
at the duration stored so far. A run that cannot record its end because another
program holds the database file stays 'running' under a program that has ended;
`textgen-eval resume` claims it then, so nothing is lost by failing to write here.
"""

from __future__ import annotations

import time

from ..errors import StoreBusy
from ..store import Store


def clock(already: float = 0.0) -> float:
    """The start of a run's clock for a session, given the ``already`` seconds of earlier sessions."""
    return time.monotonic() - already


def end_run(store: Store, run_id: int, status: str, started: float, *, error: str | None = None) -> None:
    """Record how the run ended ('finished', 'failed', 'cancelled', 'interrupted'), with its duration since
    ``started`` (:func:`clock`); a file that stays busy raises, as the end must be known."""
    store.runs.set_run_status(run_id, status, error=error, duration_s=time.monotonic() - started)


def stop_run(store: Store, run_id: int, started: float, *, error: str | None = None) -> bool:
    """Record a stop ('interrupted': what is stored is kept for a resume); False when the file stayed busy (the
    run then stays 'running' under a program that has ended, which a resume claims)."""
    try:
        end_run(store, run_id, "interrupted", started, error=error)
    except StoreBusy:
        return False
    return True


def kept_for_resume(exc: StoreBusy, run_id: int) -> StoreBusy:
    """The busy-file error of a run that stopped with its stored work kept, saying how to finish it."""
    return StoreBusy(f"{exc}. Run {run_id} stopped with what it stored kept: 'textgen-eval resume {run_id}' "
                     "finishes it (leave the data file as it is until then)")


def forget_dataset(store: Store, dataset_id: int) -> None:
    """Delete a dataset a failed load started (with its runs); left as it is when the file stays busy."""
    try:
        store.datasets.delete_dataset(dataset_id, force=True)
    except StoreBusy:
        pass


class RunSession:
    """One session of a run, as a ``with`` block: how it ends is recorded here, the same way for every source.

    Leaving the block normally records 'finished' (or what :meth:`end_as` chose, e.g. 'cancelled'); a stop
    (Ctrl-C, SIGTERM) records 'interrupted' and goes on; a file another program holds too long records
    'interrupted' and raises a :class:`StoreBusy` saying how to resume; a spending cap
    (:class:`BudgetReached`) records 'interrupted' with its message and ends the block quietly; any other error
    records 'failed' and reaches the caller as a :class:`TextgenError` naming the run.
    """

    def __init__(self, store: Store, run_id: int, already: float = 0.0, *, keeps_failures: bool = True) -> None:
        """``already``: the seconds of the run's earlier sessions. ``keeps_failures`` False: a failed session's
        run is deleted by the caller (a file that cannot be read whole keeps nothing), so no status is recorded
        and the error passes unchanged."""
        self.store, self.run_id, self.keeps_failures = store, run_id, keeps_failures
        self.started = clock(already)
        self.outcome = "finished"

    def end_as(self, status: str) -> None:
        """The status recorded when the block ends normally ('finished' unless told otherwise)."""
        self.outcome = status

    def __enter__(self) -> RunSession:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        from ..errors import BudgetReached, TextgenError

        store, run_id = self.store, self.run_id
        if exc is None:
            try:
                end_run(store, run_id, self.outcome, self.started)
            except StoreBusy as busy:  # the end cannot be written: the run stays 'running' and a resume claims it
                raise kept_for_resume(busy, run_id) from None
            return False
        self.outcome = "interrupted" if isinstance(exc, (StoreBusy, KeyboardInterrupt, SystemExit, BudgetReached)) \
            else "failed"
        if isinstance(exc, StoreBusy):  # what is stored is kept for a resume
            stop_run(store, run_id, self.started)
            raise kept_for_resume(exc, run_id) from None
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            stop_run(store, run_id, self.started)
            return False
        if isinstance(exc, BudgetReached):  # the cap stopped the run cleanly: what finished is kept
            end_run(store, run_id, "interrupted", self.started, error=str(exc))
            return True
        if not isinstance(exc, Exception) or not self.keeps_failures:
            return False
        end_run(store, run_id, "failed", self.started, error=str(exc)[:2000])
        if isinstance(exc, TextgenError):
            return False
        raise TextgenError(f"run {run_id} failed: {type(exc).__name__}: {exc}. Fix the cause and resume it: "
                           f"textgen-eval resume {run_id}") from exc
