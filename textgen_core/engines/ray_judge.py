"""Judge metrics on Ray: blocks of whole datum groups in Ray tasks, one request limit per endpoint for all.

The driver reads the run's stored rows and orders them by datum id, so all
models' answers to one datum stay in one block (shared extraction steps and
pairwise comparisons need them together). Each Ray task scores its block with
the local judge engine and client, so a cell is the one the local engine
gives. The client's limiter is a proxy of one Ray actor per (endpoint, model):
the adaptive concurrency, pacing and pauses that keep one process within an
endpoint's limits hold for every worker of the cluster together. A task keeps
its results in memory (cells, verdicts, exchanges, replies) and returns them;
the driver writes each block in one transaction. A resumed run skips the
finished cells. Batch mode and spending caps count a run in one process: they
run with the local engine.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
import time
import uuid
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from ..errors import ParameterError, TextgenError
from ..llm.ratelimit import Limiter, Permit
from ..model import Datum
from ..progress import Progress, ProgressCallback

if TYPE_CHECKING:
    import pyarrow as pa

    from ..store import Store

# pyarrow and the store are imported where they are used: the limiter actor's process unpickles this module's
# SharedLimiter and needs neither (they cost it ~0.8 CPU-s of imports: pyarrow, pandas, duckdb)

#: The data table's columns a judge task reads, in :func:`stored_datum`'s order.
STORED_COLUMNS = ("datum_id", "model", "query", "prediction", "refs", "contexts", "metadata")
#: At most about how many rows one judge task scores (whole datum groups, so a block can be larger);
#: smaller runs are cut in about four blocks per CPU of the cluster, but not below MIN_BLOCK_ROWS.
JUDGE_BLOCK_ROWS = 64
MIN_BLOCK_ROWS = 8
#: Ray's namespace for the shared limiters: runs of several programs on one cluster share them.
NAMESPACE = "textgen-eval"


def check_judge_on_ray(judge: Any) -> None:
    """Refuse the judge settings that count a run in one process (batch mode, spending caps)."""
    if judge is None:
        raise ParameterError("judge metrics need a judge endpoint (--judge-url and --judge-model)")
    if judge.batch:
        raise ParameterError("batch mode (--batch) runs with --engine local: one process tracks the run's batches")
    if judge.max_calls is not None or judge.max_cost is not None:
        raise ParameterError("a spending cap (--max-calls, --max-cost) runs with --engine local: it counts the "
                             "run's calls in one process")


# -- the shared limiter ---------------------------------------------------------------
@dataclass
class Lease(Permit):
    """A permit of the shared limiter, named so the actor can take it back."""

    lease: int = 0


class RunEnded(RuntimeError):
    """A permit asked for a run that has ended (its driver stopped it)."""


class SharedLimiter:
    """One :class:`~textgen_core.llm.ratelimit.Limiter` that every worker asks, held in the :class:`Limiters` actor.

    Each permit is a lease of its owner (one run on one driver). A task that Ray
    cancels or a worker that dies never hands its permits back: the driver
    returns its run's leases when the run ends or stops (:meth:`forget`), and a
    lease older than ``lease_s`` (longer than any request may take) expires.
    """

    def __init__(self, cap: int, rpm: int | None, tpm: int | None, lease_s: float) -> None:
        self.limiter = Limiter(cap, rpm, tpm)
        self.lease_s = lease_s
        self.peak = 0
        self._leases: dict[int, tuple[Permit, str, float]] = {}
        self._ended: set[str] = set()  # owners whose run ended: a task Ray has not stopped yet gets no permit
        self._next = 0
        self._sweeper: asyncio.Task | None = None
        self._leased = asyncio.Event()  # set when a lease is handed out: the sweeper looks at its expiry

    async def acquire(self, tokens: int, owner: str) -> Lease:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        if owner in self._ended:
            raise RunEnded(owner)
        permit = await self.limiter.acquire(tokens)
        if owner in self._ended:  # it ended while this request waited
            self.limiter.release(permit)
            raise RunEnded(owner)
        self.peak = max(self.peak, self.limiter.in_use)
        self._next += 1
        self._leases[self._next] = (permit, owner, time.monotonic() + self.lease_s)
        self._leased.set()
        return Lease(permit.tokens, permit.paced_s, permit.at, lease=self._next)

    async def release(self, lease: int, status: int | None, headers: dict[str, str] | None,
                      retry_after: float | None, timed_out: bool = False, slow: bool = False) -> None:
        held = self._leases.pop(lease, None)
        if held is not None:  # None: taken back already (expired, or its run ended)
            self.limiter.release(held[0], status=status, headers=headers, retry_after=retry_after,
                                 timed_out=timed_out, slow=slow)

    async def forget(self, owner: str) -> int:
        """Take back every lease of ``owner`` and refuse it any other; returns how many were still out."""
        self._ended.add(owner)
        mine = [key for key, (_, who, _) in self._leases.items() if who == owner]
        for key in mine:
            self.limiter.release(self._leases.pop(key)[0])
        return len(mine)

    async def configure(self, cap: int, rpm: int | None, tpm: int | None, lease_s: float) -> None:
        self.limiter.configure(cap, rpm, tpm)
        self.lease_s = max(self.lease_s, lease_s)

    async def stats(self) -> dict[str, float]:
        """Seconds held by pacing, 429s seen, the most requests in flight at once, leases out."""
        return {"waited": self.limiter.waited, "refused": self.limiter.refused, "peak": self.peak,
                "out": len(self._leases)}

    async def _sweep(self) -> None:
        """Take each lease back when it expires (not up to a second later), and sleep while none is out."""
        while True:
            now = time.monotonic()
            for key in [k for k, (_, _, until) in self._leases.items() if until <= now]:
                self.limiter.release(self._leases.pop(key)[0])
            nearest = min((until for _, _, until in self._leases.values()), default=None)
            self._leased.clear()
            try:  # a new lease wakes it (the first after none were out: it was sleeping without end)
                await asyncio.wait_for(self._leased.wait(), None if nearest is None else nearest - now)
            except asyncio.TimeoutError:
                pass


class Limiters:
    """Ray actor (async): the cluster's shared limiters, one :class:`SharedLimiter` per (endpoint, model) key.

    One process holds them all: a cluster that judges with several endpoints or models keeps one actor
    process, not one per endpoint (each cost a worker process and its imports, kept for the cluster's life).
    """

    def __init__(self) -> None:
        self._limiters: dict[str, SharedLimiter] = {}

    async def configure(self, key: str, cap: int, rpm: int | None, tpm: int | None, lease_s: float) -> None:
        if key in self._limiters:
            await self._limiters[key].configure(cap, rpm, tpm, lease_s)
        else:
            self._limiters[key] = SharedLimiter(cap, rpm, tpm, lease_s)

    async def acquire(self, key: str, tokens: int, owner: str) -> Lease:
        return await self._limiters[key].acquire(tokens, owner)

    async def release(self, key: str, lease: int, status: int | None, headers: dict[str, str] | None,
                      retry_after: float | None, timed_out: bool = False, slow: bool = False) -> None:
        await self._limiters[key].release(lease, status, headers, retry_after, timed_out, slow)

    async def forget(self, key: str, owner: str) -> int:
        return await self._limiters[key].forget(owner)

    async def stats(self, key: str) -> dict[str, float]:
        return await self._limiters[key].stats()


class RemoteLimiter:
    """A worker's stand-in for the shared limiter: the same acquire, release and configure."""

    def __init__(self, actor: Any, key: str, owner: str) -> None:
        self._actor, self._key, self._owner = actor, key, owner

    async def acquire(self, tokens: int = 0) -> Lease:
        return await self._actor.acquire.remote(self._key, tokens, self._owner)

    def release(self, permit: Lease, *, status: int | None = None, headers: Any = None,
                retry_after: float | None = None, timed_out: bool = False, slow: bool = False) -> None:
        # only the rate-limit headers travel: nothing else of the reply leaves the worker
        limits = {k.lower(): str(v) for k, v in (headers or {}).items() if k.lower().startswith("x-ratelimit-")}
        self._actor.release.remote(self._key, permit.lease, status, limits or None, retry_after, timed_out, slow)

    def configure(self, cap: int, rpm: int | None, tpm: int | None) -> None:
        pass  # the driver configured the actor with this run's settings


def lease_seconds(settings: Any) -> float:
    """Longer than one request may take (the client's guard is twice the timeout plus a second)."""
    return settings.timeout * 2 + 5.0


#: Ray name of the actor holding the cluster's shared limiters (:class:`Limiters`), in :data:`NAMESPACE`.
LIMITERS = "limiters"


def limiter_key(settings: Any) -> str:
    """The shared limiter's key of the judge's (endpoint, model)."""
    return f"{settings.endpoint}:{settings.model}"


def shared_limiters(settings: Any) -> Any:
    """The cluster's limiters actor, created on first use, with the judge's limiter set to this run's settings."""
    import ray

    actor = ray.remote(Limiters).options(name=LIMITERS, namespace=NAMESPACE, get_if_exists=True,
                                          lifetime="detached", num_cpus=0, max_concurrency=10_000).remote()
    ray.get(actor.configure.remote(limiter_key(settings), settings.concurrency, settings.rpm, settings.tpm,
                                   lease_seconds(settings)))  # this run's settings win
    return actor


# -- the work of one block (runs on a Ray worker) -----------------------------------------
class _Collected:
    """The judge's store on a worker: the driver's cache of this judge (read only), every write kept for the
    driver. A worker cannot open the database file the driver holds; the cache travels to it instead, so a
    reply paid for once is not paid again on Ray either."""

    def __init__(self, cache: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.cache = dict(cache or {})
        self.entries: list[Any] = []
        self.cells: list[Any] = []
        self.usage: list[Any] = [0, 0, 0, None]  # calls, prompt and completion tokens, cost (None: no prices)
        self._lock = threading.Lock()

    def session(self) -> Any:
        return nullcontext(self)

    @property
    def judge_writer(self) -> "_Collected":
        return self  # the write queue too: writes are kept, in order, for the driver to commit

    def judge_cache_entries(self, cache_keys: Sequence[str]) -> dict[str, Any]:
        with self._lock:
            return {k: self.cache[k] for k in cache_keys if k in self.cache}

    def judge_cache_values(self, cache_keys: Sequence[str]) -> dict[str, Any]:
        with self._lock:
            return {k: self.cache[k]["parsed"] for k in cache_keys if k in self.cache}

    def judge_cache_maybe(self, cache_keys: Sequence[str]) -> list[str]:
        with self._lock:
            return [k for k in cache_keys if k in self.cache]

    def judge_cache_surely_missing(self, cache_key: str) -> bool:
        with self._lock:
            return cache_key not in self.cache

    def judge_cache_holds(self, base_url: str, models: Sequence[str]) -> bool:
        return bool(self.cache)

    def judge_unscored_cells(self, run_id: int) -> set[tuple[str, str, str]]:
        return set()  # the driver knows which cells it stored unscored before

    # -- the write queue (JudgeWrites) -------------------------------------------------
    def put_cache(self, entry: Any, on_done: Any = None) -> None:
        with self._lock:
            self.entries.append(entry)
            self.cache[entry.cache_key] = dict(vars(entry))  # a later ask in this worker reads it back
        if on_done is not None:
            on_done()

    def put_cell(self, write: Any) -> None:
        with self._lock:
            self.cells.append(write)

    def put_usage(self, run_id: int, calls: int, prompt_tokens: int, completion_tokens: int,
                  cost: float | None) -> None:
        with self._lock:  # the cost as the judge priced it: attempts without a reply at their estimate
            self.usage = [self.usage[0] + calls, self.usage[1] + prompt_tokens, self.usage[2] + completion_tokens,
                          None if cost is None else (self.usage[3] or 0.0) + cost]

    def nudge(self) -> None:
        return None

    def flush(self, timeout: float | None = None, *, check: bool = True) -> None:
        return None

    def check(self) -> None:
        return None

    def get_run(self, run_id: int) -> dict[str, Any]:
        return {"judge_calls": 0, "cost": 0.0}

    def judge_batches(self, run_id: int) -> list[dict[str, Any]]:
        return []  # a Ray worker logs no batch (batch mode runs on the driver's engines only)


def stored_rows(batch: pa.Table) -> list[Datum]:
    """Rows read from the store's data table (Arrow, as :meth:`Store.data_arrow` gives them) as datums."""
    from ..store.dataset_sql import stored_datum

    columns = [batch.column(name).to_pylist() for name in STORED_COLUMNS]
    return [stored_datum(*row) for row in zip(*columns)]


def judge_block(batch: pa.Table, *, run_id: int, metrics: Mapping[str, Mapping[str, Any]], settings: Any,
                models: Sequence[str], limiter: Any, owner: str, cache: Any = None) -> pa.Table:
    """Score one block's cells (those not listed in its ``done`` column); results pickled for the driver."""
    from ..judge.engine import run_judge_metrics
    from ..llm.ratelimit import use_limiter

    use_limiter(settings.endpoint, settings.model, RemoteLimiter(limiter, limiter_key(settings), owner))
    rows = stored_rows(batch)
    skip = {(r.datum_id, r.model, m) for r, done in zip(rows, batch.column("done").to_pylist()) for m in done or ()}
    import ray

    store = _Collected(ray.get(cache[0]) if cache else None)  # a JudgeStore by shape, with the driver's cache
    reasons = run_judge_metrics(store, run_id, rows, metrics, settings, skip=skip, models=models)
    import pyarrow as pa

    return pa.table({"result": [pickle.dumps((store.entries, store.cells, store.usage, reasons))]},
                    schema=pa.schema([("result", pa.binary())]))


# -- the driver ---------------------------------------------------------------------
def _blocks(table: pa.Table, finished: set[tuple[str, str, str]], metrics: Sequence[str],
            block_rows: int) -> Iterator[pa.Table]:
    """The rows of datum groups with a cell to score, grouped by datum id, in blocks of whole groups."""
    ids = table.column("datum_id").to_pylist()
    models = table.column("model").to_pylist()
    groups: dict[str, list[int]] = {}
    for index, datum_id in enumerate(ids):
        groups.setdefault(datum_id, []).append(index)
    done = [[m for m in metrics if (ids[i], models[i], m) in finished] for i in range(len(ids))]
    take: list[int] = []
    for members in groups.values():
        if all(len(done[i]) == len(metrics) for i in members):
            continue  # finished before a resume
        take.extend(members)
        if len(take) >= block_rows:
            yield _with_done(table, take, done)
            take = []
    if take:
        yield _with_done(table, take, done)


def _with_done(table: pa.Table, take: list[int], done: list[list[str]]) -> pa.Table:
    import pyarrow as pa

    picked = table.take(pa.array(take, pa.int64()))
    return picked.append_column("done", pa.array([done[i] for i in take], pa.list_(pa.string())))


def score_judge_on_ray(store: Store, run_id: int, dataset_id: int, metrics: Mapping[str, Mapping[str, Any]],
                       settings: Any, *, models: Sequence[str], progress: ProgressCallback | None = None,
                       cancel: threading.Event | None = None, block_rows: int = JUDGE_BLOCK_ROWS) -> bool:
    """Score the judge cells of a run on the cluster; False when ``cancel`` stopped it first."""
    import ray

    check_judge_on_ray(settings)
    names = list(metrics)
    finished = store.finished_cells(run_id)
    rows = store.data_arrow(dataset_id, models)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = max(MIN_BLOCK_ROWS, min(block_rows, -(-rows.num_rows // (4 * cpus))))  # work for every CPU
    blocks = list(_blocks(rows, finished, names, size))
    if not blocks:
        return True
    rewritten = store.judge_unscored_cells(run_id)
    total = sum(b.num_rows for b in blocks) * len(names) - sum(len(d) for b in blocks
                                                              for d in b.column("done").to_pylist())
    limiter = shared_limiters(settings)
    owner = f"{run_id}:{uuid.uuid4().hex}"
    # The cache of this judge goes to the object store once; each task reads it from there (a list keeps
    # Ray from resolving the reference before the task asks for it).
    cached = store.judge_cache_rows(settings.endpoint, list(dict.fromkeys(
        [settings.model, settings.embedding_model or settings.model])))
    cache = [ray.put(cached)] if cached else None
    # One Ray task per block, at most one running per CPU (Ray queues the rest): the tasks run in the worker
    # processes already started and keep them. A stop cancels them without killing their processes
    # (force=False raises KeyboardInterrupt in a running task; a queued one never starts): Ray Data's
    # map_batches ended an iteration early by killing the workers of the tasks in flight, and the resume or the
    # next run paid a new process and its imports for each, while Ray stopped the extra processes that half a
    # CPU a task had started as soon as they idled.
    task = ray.remote(judge_block).options(num_cpus=1)
    options = {"run_id": run_id, "metrics": dict(metrics), "settings": settings, "models": list(models),
               "limiter": limiter, "owner": owner, "cache": cache}
    pending = [task.remote(block, **options) for block in blocks]
    refused: dict[str, None] = {}
    done = failed = 0
    used = [0, 0, 0]  # this session's calls, prompt and completion tokens, for the progress line
    try:
        while pending:  # in block order, as the driver stores them
            if cancel is not None and cancel.is_set():
                return False
            ready, _ = ray.wait(pending[:1], timeout=0.1)
            if not ready:
                continue
            out = ray.get(pending.pop(0))
            for blob in out.column("result").to_pylist():
                entries, cells, usage, reasons = pickle.loads(blob)
                cells = [replace(c, rewritten=tuple(c.cell[:3]) in rewritten) for c in cells]
                store.write_judge_batch(entries, cells)
                if any(usage[:3]):
                    store.add_run_usage(run_id, calls=usage[0], prompt_tokens=usage[1], completion_tokens=usage[2],
                                        cost=usage[3])
                for part in [usage, *(c.usage for c in cells)]:  # as the store adds them to the run's totals
                    used = [so_far + more for so_far, more in zip(used, part[:3])]
                refused.update(dict.fromkeys(reasons))
                done += len(cells)
                failed += sum(1 for c in cells if c.cell[4] is None)
            if progress:
                progress(Progress("judge", total, done, failed, prompt_tokens=used[1], completion_tokens=used[2],
                                  calls=used[0]))
    finally:  # stop the tasks still running or queued; those stopped keep their permits: hand them back
        for ref in pending:
            ray.cancel(ref, force=False)
        ray.get(limiter.forget.remote(limiter_key(settings), owner))
    if refused:  # as the local engine: every later call would fail the same way
        raise TextgenError(f"the judge endpoint refused: {'; '.join(refused)}. The cells are kept as unscored; "
                           "fix the judge settings and resume the run.")
    return True
