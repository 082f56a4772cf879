"""The judge engine: score (row, metric) cells with shared steps, bounded concurrency and resume.

Rows are grouped by datum id (all models' outputs for one datum) and handed to
a fixed pool of workers, so no more than ``concurrency`` groups are in flight
and the client's semaphore bounds the HTTP requests. Inside a group every
request is asked once (a reference's statements serve every model's row), and
every finished cell is written with its verdicts in one transaction, so a
cancelled or killed run leaves only whole cells behind and resumes from the
judge cache without repeating a finished exchange.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Sequence, TypeVar

from ..metrics.spec import MetricSpec
from ..model import Cell, Datum
from ..progress import Progress, ProgressCallback
from ..store import Store
from .asker import ClientAsker, DryAsker, Tally
from .cells import Outcome
from .client import JudgeClient
from .metrics import BY_NAME, JudgePlan
from .settings import JudgeSettings
from .steps import StepFailed
from .writer import ResultWriter

log = logging.getLogger(__name__)
T = TypeVar("T")
#: (row, metric name, plan, resolved params) for one cell to score.
Job = tuple[Datum, str, JudgePlan, Mapping[str, Any]]


@dataclass(frozen=True)
class Estimate:
    """What a run would cost: judge calls still to make, calls served by the cache, tokens, money."""

    calls: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


def _spec(name: str) -> MetricSpec:
    spec = BY_NAME.get(name)
    if spec is None:
        raise KeyError(f"{name} is not a judge or endpoint metric")
    return spec


def plan_groups(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]],
                skip: set[tuple[str, str, str]] | frozenset = frozenset()) -> list[list[Job]]:
    """Cells to score, grouped by datum id in first-seen order; cells in ``skip`` are left out."""
    resolved = {name: (_spec(name).plan, _spec(name).resolve(params)) for name, params in metrics.items()}
    groups: dict[str, list[Job]] = {}
    for row in rows:
        for name, (plan, params) in resolved.items():
            if (row.datum_id, row.model, name) not in skip:
                groups.setdefault(row.datum_id, []).append((row, name, plan, params))
    return list(groups.values())


async def score_cell(asker: Any, job: Job) -> Outcome:
    """One cell; a failed step or an unexpected error unscores this cell only."""
    row, name, plan, params = job
    try:
        outcome = await plan.score(asker, row, params)
    except StepFailed as exc:
        return Outcome(Cell.unscored(exc.reason), exchanges=[exc.exchange] if exc.exchange else [])
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - one odd reply must not sink a run of thousands of cells
        log.exception("judge metric %s failed on datum %s / %s", name, row.datum_id, row.model)
        return Outcome(Cell.unscored(f"internal error: {type(exc).__name__}: {exc}"))
    value = outcome.cell.value
    if value is not None and not math.isfinite(value):
        return Outcome(Cell.unscored(f"non-finite value {value}", outcome.cell.details), outcome.verdicts)
    return outcome


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, also when this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="judge-engine")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- estimate ---------------------------------------------------------------------

def estimate(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]], settings: JudgeSettings,
             store: Store | None) -> Estimate:
    """Judge calls a run would make (cached exchanges excluded), with a token and cost estimate.

    Runs the metrics' own scoring code against a dry asker: a request whose
    reply is cached is answered from the cache (so its dependants are rendered
    exactly); any other request is counted and answered with a placeholder of
    the right shape, whose dependants then count as calls too.
    """
    return run_sync(lambda: _estimate(rows, metrics, settings, store))


async def _estimate(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]], settings: JudgeSettings,
                    store: Store | None) -> Estimate:
    client = JudgeClient(settings, store)
    tally = Tally()
    counted: set[bytes] = set()
    try:
        for group in plan_groups(rows, metrics):
            asker = DryAsker(client, tally, counted)
            for job in group:
                await score_cell(asker, job)
    finally:
        await client.aclose()
    return Estimate(tally.calls, tally.cached, tally.prompt_tokens, tally.completion_tokens,
                    settings.price(tally.prompt_tokens, tally.completion_tokens))


# -- run --------------------------------------------------------------------------

def run_judge_metrics(store: Store, run_id: int, rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]],
                      settings: JudgeSettings, *, progress: ProgressCallback | None = None,
                      cancel: threading.Event | None = None,
                      skip: set[tuple[str, str, str]] | frozenset = frozenset()) -> None:
    """Score every (row, metric) cell not in ``skip`` and write cells and verdicts as they finish.

    Returns when all cells are written, or soon after ``cancel`` is set (cells
    in progress are dropped whole; their finished exchanges stay cached).
    """
    groups = plan_groups(rows, metrics, skip)
    run_sync(lambda: _run(store, run_id, groups, settings, progress, cancel or threading.Event()))


class _Tracker:
    """Counts finished cells and reports progress at most every ``interval`` seconds."""

    def __init__(self, total: int, client: JudgeClient, callback: ProgressCallback | None,
                 interval: float = 0.2) -> None:
        self.total, self.client, self.callback, self.interval = total, client, callback, interval
        self.done = self.failed = 0
        self._last = 0.0

    def add(self, outcome: Outcome) -> None:
        self.done += 1
        self.failed += outcome.cell.value is None
        self.report()

    def report(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.callback is None or (not force and now - self._last < self.interval):
            return
        self._last = now
        usage = self.client.usage
        self.callback(Progress("judge", self.total, self.done, self.failed, usage.in_flight,
                               usage.prompt_tokens, usage.completion_tokens, usage.cached))


async def _run(store: Store, run_id: int, groups: list[list[Job]], settings: JudgeSettings,
               progress: ProgressCallback | None, cancel: threading.Event) -> None:
    client = JudgeClient(settings, store)
    tracker = _Tracker(sum(len(g) for g in groups), client, progress)
    writer = ResultWriter(store, run_id)
    pending = iter(groups)

    async def worker() -> None:
        for group in pending:  # one shared iterator: each group goes to exactly one worker
            if cancel.is_set():
                return
            await _score_group(client, group, writer, tracker)

    tracker.report(force=True)
    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(settings.concurrency, len(groups))))]
    watcher = asyncio.create_task(_watch(cancel, workers))
    try:
        done, _ = await asyncio.wait(workers)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()
    finally:
        watcher.cancel()
        for task in workers:
            task.cancel()
        writer.flush()
        usage = client.usage
        store.add_run_usage(run_id, calls=usage.calls, prompt_tokens=usage.prompt_tokens,
                            completion_tokens=usage.completion_tokens, cost=client.cost())
        await client.aclose()
        tracker.report(force=True)


async def _watch(cancel: threading.Event, workers: list[asyncio.Task]) -> None:
    """Cancel the workers as soon as ``cancel`` is set (polled: it is a thread event)."""
    while not cancel.is_set():
        if all(w.done() for w in workers):
            return
        await asyncio.sleep(0.05)
    for task in workers:
        task.cancel()


async def _score_group(client: JudgeClient, group: list[Job], writer: ResultWriter, tracker: _Tracker) -> None:
    asker = ClientAsker(client)

    async def one(job: Job) -> None:
        outcome = await score_cell(asker, job)
        writer.add(job[0], job[1], outcome)
        tracker.add(outcome)

    try:
        await asyncio.gather(*(one(job) for job in group))
    finally:
        asker.cancel_pending()


def exchange(store: Store, cache_key: str) -> dict[str, Any] | None:
    """The prompt and reply behind a verdict row's cache key, or None when it is not cached."""
    entry = store.judge_cache_get(cache_key)
    if entry is None:
        return None
    request = entry.get("request") or {}
    return {"cache_key": cache_key, "model": entry.get("model"), "prompt_version": entry.get("prompt_version"),
            "messages": request.get("messages", []), "request": request, "reply": entry.get("reply"),
            "parsed": entry.get("parsed"), "prompt_tokens": entry.get("prompt_tokens"),
            "completion_tokens": entry.get("completion_tokens")}
