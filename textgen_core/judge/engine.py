"""The judge engine: score (row, metric) cells, grouped by datum, with a fixed pool of workers.

Inside a group each distinct request is asked once (:mod:`.once`); every finished cell goes with its
verdicts to the store's write queue, committed after the replies it came from, so a stopped run leaves
whole cells and resumes from the cache without paying twice.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from dataclasses import dataclass, fields, replace
from typing import Any, Awaitable, Callable, Mapping, Sequence, TypeVar

from ..errors import ParameterError
from ..metrics.endpoint import Embeddings, EndpointPlan
from ..metrics.spec import MetricSpec
from ..model import Cell, Datum
from ..progress import Progress, ProgressCallback
from .asker import CacheLookup, ClientAsker, DryAsker, Gate, Stopped, Tally
from .client import JudgeClient, Unscored, Usage
from .metric import JudgePlan, Outcome, StepFailed, precheck
from .metrics import BY_NAME
from .scale import attach as attach_scale, width as group_width
from .settings import JudgeSettings
from .storage import JudgeStore, ResultWriter

log = logging.getLogger(__name__)
T = TypeVar("T")
#: (row, metric name, plan, resolved params) for one cell to score.
Job = tuple[Datum, str, JudgePlan | EndpointPlan, Mapping[str, Any]]


@dataclass(frozen=True)
class Estimate:
    """What a run would cost: judge calls still to make, calls served by the cache, tokens, money."""

    calls: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    #: Of ``calls``, those built on a reply not made yet (verdicts on extracted statements or opinions):
    #: a run skips them when the extraction finds nothing, so it makes between calls - dependent and calls.
    dependent: int = 0
    #: Completion tokens if every reply ran to ``max_tokens`` (a rambling or looping judge): the upper bound.
    completion_bound: int = 0
    #: The first request a run would make, for :func:`probe` (None when nothing is to be asked).
    first: Any = None

    def bound_cost(self, settings: JudgeSettings) -> float | None:
        """The cost if every reply ran to ``max_tokens``; None without prices."""
        return settings.price(self.prompt_tokens, self.completion_bound)


def _spec(name: str) -> MetricSpec:
    spec = BY_NAME.get(name)
    if spec is None:
        raise ParameterError(f"{name} is not a judge or endpoint metric")
    return spec


def plan_groups(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]],
                skip: set[tuple[str, str, str]] | frozenset = frozenset(),
                models: Sequence[str] | None = None) -> list[list[Job]]:
    """Cells to score, grouped by datum id in first-seen order; cells in ``skip`` are left out.

    A plan with ``peers`` (a metric that compares models) gets, in its params, ``peers``:
    every row of the same datum id, and ``models``: the run's models (default: every model
    of ``rows`` in first-seen order; a part of a run passes the whole run's).
    """
    resolved = {name: (_spec(name).plan, _spec(name).resolve(params)) for name, params in metrics.items()}
    by_datum: dict[str, list[Datum]] = {}
    for row in rows:
        by_datum.setdefault(row.datum_id, []).append(row)
    models = tuple(models) if models is not None else tuple(dict.fromkeys(row.model for row in rows))
    groups: list[list[Job]] = []
    for peers in by_datum.values():
        jobs = [(row, name, plan, {**params, "peers": tuple(peers), "models": models} if plan.peers else params)
                for row in peers for name, (plan, params) in resolved.items()
                if (row.datum_id, row.model, name) not in skip]
        if jobs:
            groups.append(jobs)
    return groups


async def score_cell(asker: Any, job: Job) -> Outcome:
    """One cell; a failed step or an unexpected error unscores this cell only."""
    row, name, plan, params = job
    early = precheck(BY_NAME[name], row)
    if early is not None:
        return early
    try:
        outcome = await (_endpoint(asker, plan, row, params) if isinstance(plan, EndpointPlan)
                         else plan.score(asker, row, params))
    except StepFailed as exc:
        return Outcome(Cell.unscored(exc.reason), exchanges=[exc.exchange] if exc.exchange else [])
    except (asyncio.CancelledError, Stopped):
        raise
    except Exception as exc:  # noqa: BLE001 - one odd reply must not sink a run of thousands of cells
        log.exception("judge metric %s failed on datum %s / %s", name, row.datum_id, row.model)
        return Outcome(Cell.unscored(f"internal error: {type(exc).__name__}: {exc}"))
    value = outcome.cell.value
    if value is not None and not math.isfinite(value):
        return Outcome(Cell.unscored(f"non-finite value {value}", outcome.cell.details), outcome.verdicts)
    return outcome


async def _endpoint(asker: Any, plan: EndpointPlan, row: Datum, params: Mapping[str, Any]) -> Outcome:
    """Execute an endpoint metric's plan: its request (if any) through the asker, then its scoring."""
    need = plan.request(row, params)
    if isinstance(need, Cell):
        return Outcome(need)
    reply = await (asker.embed(list(need.texts)) if isinstance(need, Embeddings) else asker.prompt_logprobs(need.text))
    return Outcome(plan.score(row, params, reply))


async def _in_session(store: JudgeStore, work: Awaitable[T]) -> T:
    """Run an estimate (seconds of CPU, no HTTP) with the store's file held open on this loop's thread: its
    cache reads are then 0.5 ms queries instead of file opens (15-20 ms). A run does not do this: it would
    lock other programs out of the file while its requests are on the wire (see ReplyCache.aget)."""
    with store.session():
        store.judge_cache_maybe([])
        return await work


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
             store: JudgeStore | None, *, client: JudgeClient | None = None) -> Estimate:
    """Judge calls a run would make (cached exchanges excluded), with a token and cost estimate.

    The metrics' own scoring runs against a dry asker: a request known up front counts exactly (a call
    unless cached); one built on an uncached reply is built on a placeholder of the right shape and counted,
    so dependent steps are an upper bound. Tokens are estimates (:func:`.prompting.estimate_tokens`).
    """
    fresh = client is None and store is None  # a new client without a store has an empty cache
    made = client or JudgeClient(settings, store)
    if store is None:
        return run_sync(lambda: _estimate(rows, metrics, settings, made, store, fresh))
    return run_sync(lambda: _in_session(store, _estimate(rows, metrics, settings, made, store, fresh)))


#: Datum groups estimated together (their cache lookups share queries).
ESTIMATE_CHUNK = 1000


async def _estimate(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]], settings: JudgeSettings,
                    client: JudgeClient, store: JudgeStore | None, fresh: bool) -> Estimate:
    tally = Tally()
    counted: set[Any] = set()
    empty = fresh or (store is not None and not store.judge_cache_holds(
        settings.endpoint, (settings.model, settings.embedding_model or settings.model)))
    if store is not None and not empty:
        store.judge_cache_maybe([])  # load the key index once, before the rounds
    lookup = CacheLookup(client, empty=empty)
    groups = plan_groups(rows, metrics)

    async def dry_group(group: list[Job]) -> None:
        asker = DryAsker(client, tally, counted, lookup)
        for job in group:  # one after another: a dry ask only waits for its round's lookup
            await score_cell(asker, job)

    try:
        for start in range(0, len(groups), ESTIMATE_CHUNK):
            await asyncio.gather(*(dry_group(g) for g in groups[start:start + ESTIMATE_CHUNK]))
    finally:
        await client.aclose()
    return Estimate(tally.calls, tally.cached, tally.prompt_tokens, tally.completion_tokens,
                    settings.price(tally.prompt_tokens, tally.completion_tokens), tally.dependent,
                    tally.calls * settings.max_tokens, tally.first)


def probe(settings: JudgeSettings, request: Any) -> tuple[float, int, str | None]:
    """Time one real call of ``request`` (nothing cached or stored): (seconds, completion tokens, failure).

    For a local endpoint time is the cost, and it cannot be guessed from token counts. One attempt, never
    retried: a retry's backoff is not the endpoint's time, and a local endpoint that is down (nothing listens)
    is said at once instead of after the whole retry schedule (5 attempts, 6 s).
    """
    client = JudgeClient(replace(settings, retries=0))

    async def once() -> tuple[float, int, str | None]:
        started = time.monotonic()
        try:
            reply = await client.ask(list(request.messages), request.schema, schema_name=request.step,
                                     prompt_version=request.version)
            return time.monotonic() - started, reply.completion_tokens, None
        except Unscored as exc:
            return time.monotonic() - started, exc.completion_tokens, exc.reason
        finally:
            await client.aclose()
    return run_sync(once)


# -- run --------------------------------------------------------------------------

def run_judge_metrics(store: JudgeStore, run_id: int, rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]],
                      settings: JudgeSettings, *, progress: ProgressCallback | None = None,
                      cancel: threading.Event | None = None,
                      skip: set[tuple[str, str, str]] | frozenset = frozenset(),
                      client: JudgeClient | None = None, models: Sequence[str] | None = None) -> list[str]:
    """Score every (row, metric) cell not in ``skip``, writing cells and verdicts as they finish.

    Returns the reasons the endpoint refused for good (bad key, unknown model, no quota); the caller fails
    the run. On ``cancel`` nothing new is sent, requests on the wire get up to ``STOP_GRACE`` s to land in
    the cache, and unfinished cells are dropped whole. ``models``: the run's models when ``rows`` are part
    of it (see :func:`plan_groups`).
    """
    groups = plan_groups(rows, metrics, skip, models)
    if not groups:
        return []
    written = store.judge_unscored_cells(run_id)
    client = client or JudgeClient(settings, store)
    scale = attach_scale(client, store, run_id)  # this run's client: batch mode, spending cap (judge/scale.py)
    store.judge_cache_maybe([])  # load the cache's key index once: a miss then asks the database nothing
    run_sync(lambda: _run(store, run_id, groups, scale.client, progress, cancel or threading.Event(), written))
    scale.check()
    return scale.client.fatal_reasons()


#: Seconds a cancelled run waits for requests already sent (bounded by the judge timeout).
STOP_GRACE = 5.0


class _Tracker:
    """Counts finished cells and reports progress at most every ``interval`` seconds."""

    def __init__(self, total: int, client: JudgeClient, callback: ProgressCallback | None,
                 interval: float = 0.2) -> None:
        self.total, self.client, self.callback, self.interval = total, client, callback, interval
        self.done = self.failed = 0
        self.start = replace(client.usage)
        self.committed = replace(client.usage)  # usage already handed to the writer with a cell
        self._last = 0.0

    def add(self, outcome: Outcome) -> None:
        self.done += 1
        self.failed += outcome.cell.value is None
        self.report()

    def spent(self) -> Usage:
        """Usage of this run only (the client may be shared)."""
        return _minus(self.client.usage, self.start)

    def take_usage(self) -> Usage:
        """Usage since the last call, for the writer (queued as each request ends: a crash loses only what
        was on the wire and the writer's last uncommitted batch)."""
        now, before = replace(self.client.usage), self.committed
        self.committed = now
        return _minus(now, before)

    def report(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.callback is None or (not force and now - self._last < self.interval):
            return
        self._last = now
        used = self.spent()
        self.callback(Progress("judge", self.total, self.done, self.failed, self.client.usage.in_flight,
                               used.prompt_tokens, used.completion_tokens, used.cached, used.rate_limited,
                               used.waited_s, used.retries, used.unanswered, used.calls))


def _minus(now: Usage, before: Usage) -> Usage:
    return Usage(*(getattr(now, f.name) - getattr(before, f.name) for f in fields(Usage)))


async def _run(store: JudgeStore, run_id: int, groups: list[list[Job]], client: JudgeClient,
               progress: ProgressCallback | None, cancel: threading.Event,
               written: set[tuple[str, str, str]]) -> None:
    settings = client.settings
    tracker = _Tracker(sum(len(g) for g in groups), client, progress)
    writer = ResultWriter(store, run_id, written=written)

    def settled() -> None:  # a request is over: what it billed is queued at once, not with a later cell
        writer.add_usage(_priced(tracker.take_usage(), settings))

    gate = Gate(settled)
    pending = iter(groups)

    async def worker() -> None:
        for group in pending:  # one shared iterator: each group goes to exactly one worker
            if gate.closed:
                return
            await _score_group(ClientAsker(client, gate), group, writer, tracker)

    tracker.report(force=True)
    if cancel.is_set():
        return
    workers = [asyncio.create_task(worker()) for _ in range(min(group_width(settings, len(groups)), len(groups)))]
    watcher = asyncio.create_task(_watch(cancel, gate, workers, min(STOP_GRACE, settings.timeout)))
    try:
        await asyncio.wait(workers)
        errors = [t.exception() for t in workers if not t.cancelled() and t.exception() is not None]
        if errors:
            raise errors[0]
    finally:
        watcher.cancel()
        for task in workers:
            task.cancel()
        writer.add_usage(_priced(tracker.take_usage(), settings))  # calls behind cells a stop dropped
        writer.flush()
        await client.aclose()
        tracker.report(force=True)
        spent = tracker.spent()
        if spent.unanswered or spent.retries:
            unanswered = settings.price(spent.unanswered_prompt_tokens, spent.unanswered_completion_tokens)
            log.warning("judge: %d attempts timed out or were refused (5xx, 429) and count as calls%s; %d retries "
                        "and re-asks in all", spent.unanswered, "" if not spent.unanswered or unanswered is None
                        else f", at an estimated ${unanswered:.4f} (no usage came back)", spent.retries)
        if spent.rate_limited or spent.waited_s >= 1.0:
            log.warning("judge: requests waited %.1f s in all for the endpoint's rate limits; %d refused with 429 "
                        "were waited out and sent again", spent.waited_s, spent.rate_limited)


def _priced(used: Usage, settings: JudgeSettings) -> tuple[int, int, int, float | None]:
    """(calls, prompt tokens, completion tokens, cost or None) of ``used`` at the run's prices; attempts
    that got no reply are in the cost at their upper estimate (they are billed; no usage says how much)."""
    return used.calls, used.prompt_tokens, used.completion_tokens, settings.cost_of(used)


async def _watch(cancel: threading.Event, gate: Gate, workers: list[asyncio.Task], grace: float) -> None:
    """On ``cancel`` (a thread event, so polled): close the gate, let sent requests land, stop the workers."""
    while not cancel.is_set():
        if all(w.done() for w in workers):
            return
        await asyncio.sleep(0.02)
    await gate.drain(grace)
    for task in workers:
        task.cancel()


async def _score_group(asker: ClientAsker, group: list[Job], writer: ResultWriter, tracker: _Tracker) -> None:
    async def one(job: Job) -> None:
        try:
            outcome = await score_cell(asker, job)
        except Stopped:
            return  # the run is stopping: this cell is left for the resume, not written half-done
        tracker.add(outcome)
        writer.add(job[0], job[1], outcome, usage=_priced(tracker.take_usage(), tracker.client.settings))

    try:
        await asyncio.gather(*(one(job) for job in group))
    finally:
        asker.cancel_pending()


def exchange(store: JudgeStore, cache_key: str) -> dict[str, Any] | None:
    """The prompt and reply behind a verdict row's cache key, or None when it is not cached."""
    entry = store.judge_cache_entries([cache_key]).get(cache_key)
    if entry is None:
        return None
    request = entry.get("request") or {}
    return {"cache_key": cache_key, "model": entry.get("model"), "prompt_version": entry.get("prompt_version"),
            "messages": request.get("messages", []), "request": request, "reply": entry.get("reply"),
            "parsed": entry.get("parsed"), "prompt_tokens": entry.get("prompt_tokens"),
            "completion_tokens": entry.get("completion_tokens")}
