"""Background evaluation jobs that outlive a page rerun or a closed browser tab.

A :class:`JobRegistry` (held once per server process by ``ui.data.jobs()``)
starts each evaluation on its own thread with a :class:`threading.Event` for
Cancel. The thread publishes a :class:`~textgen_core.progress.Progress`
snapshot that pages poll; nothing here imports streamlit.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from textgen_core.errors import ParameterError
from textgen_core.evaluate import evaluate, resume
from textgen_core.progress import Progress

#: A job body: gets the store and its job (cancel event, progress and run-id hooks); returns a run id.
JobBody = Callable[[Any, "Job"], int]

RUNNING, FINISHED, FAILED, CANCELLED, INTERRUPTED = "running", "finished", "failed", "cancelled", "interrupted"
#: A job whose body refused to start (an error it raises only before changing anything): the run is as it was.
REFUSED = "refused"


@dataclass
class Job:
    """One background run: its progress snapshot, outcome and cancel switch."""

    job_id: int
    label: str
    cancel: threading.Event = field(default_factory=threading.Event)
    status: str = RUNNING
    progress: Progress | None = None
    run_id: int | None = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    thread: threading.Thread | None = field(default=None, repr=False)
    #: The run's judge settings (prices, spending cap) and its judge cost before this job, for live spend.
    judge: Any = None
    spent_before: float = 0.0
    #: The run's judge calls before this job (a resume or an extend adds to them), to say what this job made.
    calls_before: int = 0
    #: Errors the body raises only before it changes anything: the job ends "refused", not "failed".
    refusals: tuple[type[BaseException], ...] = ()

    def report(self, progress: Progress) -> None:
        self.progress = progress

    def run_started(self, run_id: int) -> None:
        """The run is registered: pages can link to it while it is still scoring."""
        self.run_id = run_id

    @property
    def live(self) -> bool:
        return self.status == RUNNING

    @property
    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started


class JobRegistry:
    """Every job started in this server process, by id; safe to use from many threads."""

    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        #: Bumped whenever a job starts or ends; cached readers key on it to see fresh run rows.
        self.version = 0

    def start(self, label: str, store: Any, body: JobBody, *, run_id: int | None = None, judge: Any = None,
              refusals: tuple[type[BaseException], ...] = ()) -> Job:
        """Run ``body`` on a daemon thread; ``run_id`` is known up front when resuming or extending.
        ``refusals``: errors the body raises only before it changes anything (the job ends "refused")."""
        before = store.get_run(run_id) if run_id is not None and judge is not None else {}
        spent, calls = float(before.get("cost") or 0.0), int(before.get("judge_calls") or 0)
        with self._lock:
            job = Job(next(self._ids), label, run_id=run_id, judge=judge, spent_before=spent, calls_before=calls,
                      refusals=refusals)
            self._jobs[job.job_id] = job
            self.version += 1
        job.thread = threading.Thread(target=self._work, args=(job, store, body),
                                      name=f"textgen-eval-job-{job.job_id}", daemon=True)
        job.thread.start()
        return job

    def _work(self, job: Job, store: Any, body: JobBody) -> None:
        try:
            job.run_id = body(store, job)
            job.status = CANCELLED if job.cancel.is_set() else FINISHED
            run = store.get_run(job.run_id)
            if run["status"] == INTERRUPTED:  # stopped cleanly at a spending cap
                job.status, job.error = INTERRUPTED, run["error"]
        except Exception as exc:  # the job reports it; the run row records it too
            job.error = str(exc) or type(exc).__name__
            job.status = REFUSED if isinstance(exc, job.refusals) else FAILED
        finally:
            job.ended = time.monotonic()
            with self._lock:
                self.version += 1

    def get(self, job_id: int | None) -> Job | None:
        if job_id is None:
            return None
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def live_run_ids(self) -> set[int]:
        """Runs that a thread of this process is working on right now."""
        return {j.run_id for j in self.jobs() if j.live and j.run_id is not None}

    def for_run(self, run_id: int) -> Job | None:
        """The newest job working on ``run_id``, if any."""
        matches = [j for j in self.jobs() if j.run_id == run_id]
        return matches[-1] if matches else None

    def cancel(self, job_id: int) -> None:
        job = self.get(job_id)
        if job is not None:
            job.cancel.set()

    def wait(self, job_id: int, timeout: float | None = None) -> Job | None:
        """Block until the job ends (tests and shutdown); returns it."""
        job = self.get(job_id)
        if job is not None and job.thread is not None:
            job.thread.join(timeout)
        return job


def start_evaluation(registry: JobRegistry, store: Any, dataset_id: int, metrics: list[str],
                     params: dict[str, dict[str, Any]] | None = None, *, models: list[str] | None = None,
                     judge: Any | None = None, label: str = "evaluation", jury: Any | None = None) -> Job:
    """Start :func:`textgen_core.evaluate.evaluate` in the background (``jury``: samples and a judge panel)."""
    def body(db: Any, job: Job) -> int:
        return evaluate(db, dataset_id, metrics, params, models=models, judge=judge, progress=job.report,
                        cancel=job.cancel, on_start=job.run_started, jury=jury)

    return registry.start(label, store, body, judge=judge)


def start_extend(registry: JobRegistry, store: Any, run_id: int, metrics: list[str],
                 params: dict[str, dict[str, Any]] | None = None, *, judge: Any | None = None) -> Job:
    """Start :func:`textgen_core.runs.extend.extend` (add metrics to a finished run) in the background."""
    from textgen_core.runs.extend import extend

    def body(db: Any, job: Job) -> int:
        return extend(db, run_id, metrics, params, judge=judge, progress=job.report, cancel=job.cancel)

    # extend refuses with a ParameterError, and only before it changes the run
    return registry.start(f"add {', '.join(metrics)} to run {run_id}", store, body, run_id=run_id, judge=judge,
                          refusals=(ParameterError,))


def start_resume(registry: JobRegistry, store: Any, run_id: int, *, judge: Any | None = None) -> Job:
    """Start :func:`textgen_core.evaluate.resume` of one run in the background."""
    def body(db: Any, job: Job) -> int:
        return resume(db, run_id, judge=judge, progress=job.report, cancel=job.cancel)

    return registry.start(f"resume run {run_id}", store, body, run_id=run_id, judge=judge)
