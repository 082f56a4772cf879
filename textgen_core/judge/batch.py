"""The OpenAI Batch API as the judge's transport: the same requests, half the price, replies within hours.

:class:`Batcher` collects the chat requests a client would have sent over HTTP
(:meth:`Batcher.post`) until none has come for ``settle`` seconds, and sends
them as one batch through :class:`~textgen_core.llm.batch_api.BatchDriver`. Replies come back as
the bodies a direct request gets, so parsing, validation, cache and cells are
the same. A step built on a reply, a re-ask and a failed line that may be
retried (5xx, 429, an expired window) go in the next round.

Every batch is logged (``log.judge_batch_add``) as soon as it exists, with the
``custom_id`` (a hash of the body) of each request: a resumed run's request
whose id is logged waits for that batch instead of being sent again, also
without batch mode (``adopt_only``). Endpoint texts are scrubbed of the key
before they reach a cell or a log; a batch's files are deleted once read.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Mapping, Protocol, Sequence

import openai

from .asker import Stopped
from ..llm.batch_api import (ADOPTABLE, NO_DELETE, BatchDriver, BatchPending, LineResult, Polling, complete,
                             custom_id, line_failure, split)
from ..llm.endpoint import async_openai, is_azure
from ..llm.redact import scrub
from .replies import Unscored, shape_problem
from ..llm.retry import Failure, RetryPolicy, classify
from .settings import JudgeSettings
from .transport import FormatRejected, LogprobsRejected

log = logging.getLogger("textgen_core.judge")


class BatchStillPending(Stopped):
    """This request's batch did not finish within ``batch_wait``: its cell is left for the resume."""


class BatchLog(Protocol):
    """Where batches are recorded as soon as they exist (the store; see ``store/batch_sql.py``)."""

    def judge_batch_add(self, run_id: int, batch_id: str, input_file_id: str, endpoint: str, model: str,
                        custom_ids: Sequence[str]) -> None: ...
    def judge_batch_status(self, batch_id: str, status: str) -> None: ...
    def judge_batches(self, run_id: int) -> list[dict[str, Any]]: ...


class Batcher:
    """Collects a client's chat requests into batch rounds; resumes logged batches instead of resubmitting.

    ``settle``: seconds without a new request before a round goes out (default: the ``batch_settle`` setting).
    ``policy``: the retry timing of file and batch operations (default: the ``backoff`` setting).
    ``log`` and ``run_id``: where batches are recorded (None: not recorded, no resume).
    ``adopt_only``: a run resumed without batch mode; only requests of logged batches go through
    batches (:meth:`takes`), and a line that failed is sent again directly.
    """

    def __init__(self, settings: JudgeSettings, log: BatchLog | None = None, run_id: int | None = None, *,
                 polling: Polling | None = None, settle: float | None = None, policy: RetryPolicy | None = None,
                 adopt_only: bool = False) -> None:
        self.settings = settings
        self.adopt_only = adopt_only
        #: Batches left running at the provider when ``batch_wait`` ran out (the resume takes them over).
        self.pending: list[str] = []
        self.log = log
        self.run_id = run_id
        self.polling = polling or Polling(first=settings.batch_poll)
        self.settle = settings.batch_settle if settle is None else settle
        self.policy = policy or settings.retry_policy()
        #: Why the endpoint refused for good (bad key, unknown model): every later request would fail the same way.
        self.fatal: list[str] = []
        self._pending: dict[str, tuple[dict, list[asyncio.Future]]] = {}
        self._arrived = 0.0  # loop time of the newest request
        self._flusher: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._logged: dict[str, str] | None = None  # custom_id -> id of the newest logged batch holding it
        self._collected: dict[str, tuple[Any, dict[str, LineResult]]] = {}  # batch id -> (batch, its lines)
        #: Why the endpoint does not delete files (said once; later batches' files are not asked for).
        self.no_delete: str | None = None

    # -- what the client calls ---------------------------------------------------------------
    def logged_ids(self) -> set[str]:
        """``custom_id`` of every request in a logged batch that may still hold its reply."""
        return set(self._logged_batches())

    def takes(self, body: Mapping[str, Any]) -> bool:
        """True when this chat request goes through a batch (always, unless ``adopt_only``)."""
        return not self.adopt_only or custom_id(dict(body)) in self._logged_batches()

    async def post(self, body: Mapping[str, Any], budget: Any, *, mode: str | None = None) -> dict | None:
        """The reply body to one chat request, through batch rounds; raises :class:`Unscored` when final.

        ``budget`` is the client's retry budget (``attempts``, ``transient_left``):
        a failed line is sent again in the next round while it lasts. With ``adopt_only``, a line
        that failed and may be retried returns None: the caller sends it directly.
        """
        body = dict(body)
        while True:
            budget.attempt()
            result = await self._request(body)
            if result.code == "batch_pending":
                raise BatchStillPending(result.message)
            if result.reply is not None:
                problem = shape_problem(result.reply, "choices")
                if problem is None:
                    return result.reply
                failure = Failure("server", problem, True)
            else:
                failure = line_failure(result, mode)
            if failure.logprobs_rejected:
                raise LogprobsRejected(failure)
            if failure.format_rejected:
                raise FormatRejected(failure)
            if self.adopt_only and failure.retryable:
                return None
            if not failure.retryable or not budget.retry():
                message = failure.message + (f" (gave up after {budget.attempts} batch attempts)"
                                             if failure.retryable else "")
                if failure.fatal and message not in self.fatal:
                    self.fatal.append(message)
                raise Unscored(message, kind=failure.kind, status=failure.status, attempts=budget.attempts,
                               fatal=failure.fatal)
            log.info("judge batch line failed (%s); sending it again in the next batch", failure.message)

    async def aclose(self) -> None:
        """Stop collecting (requests still waiting are cancelled)."""
        if self._flusher is not None and not self._flusher.done():
            self._flusher.cancel()
        self._loop = None

    # -- rounds ----------------------------------------------------------------------------------
    async def _request(self, body: dict) -> LineResult:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new run on a new loop: loop-bound objects are made afresh
            self._loop, self._flusher, self._pending = loop, None, {}
        cid = custom_id(body)
        future: asyncio.Future = loop.create_future()
        self._pending.setdefault(cid, (body, []))[1].append(future)
        self._arrived = loop.time()
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())
        return await future

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            # Wait until every cell that can ask has asked: ``settle`` seconds with no new request, counted from
            # the newest one (or from now: the replies of the round just read make their cells ask again).
            quiet_since = loop.time()
            while (left := max(self._arrived, quiet_since) + self.settle - loop.time()) > 0:
                await asyncio.sleep(left)
            batch, self._pending = self._pending, {}
            live = {cid: entry for cid, entry in batch.items() if any(not f.done() for f in entry[1])}
            if live:
                await self._round(live)

    async def _round(self, batch: dict[str, tuple[dict, list[asyncio.Future]]]) -> None:
        logged = self._logged_batches()
        adopt: dict[str, list[str]] = {}
        fresh: dict[str, dict] = {}
        for cid, (body, _) in batch.items():
            owner = logged.pop(cid, None)  # taken over once: a retry of a failed line goes in a new batch
            if owner is not None:
                adopt.setdefault(owner, []).append(cid)
            else:
                fresh[cid] = body
        api = async_openai(self.settings)  # one per round: rounds are minutes to hours apart
        driver = BatchDriver(api, azure=is_azure(self.settings), polling=self.polling, policy=self.policy,
                             max_wait=self.settings.batch_wait)
        try:
            jobs = [self._resume(driver, batch_id, cids) for batch_id, cids in adopt.items()]
            jobs += [self._submit(driver, part) for part in split(fresh)]
            for done in asyncio.as_completed(jobs):
                for cid, result in (await done).items():
                    if result.message:  # the one scrub between the endpoint and cells, logs and the run
                        result = LineResult(result.reply, result.status, result.code,
                                            scrub(result.message, self.settings.api_key))
                    for future in batch[cid][1]:
                        if not future.done():
                            future.set_result(result)
        finally:
            await api.close()

    async def _submit(self, driver: BatchDriver, requests: dict[str, dict]) -> dict[str, LineResult]:
        try:
            batch_id, file_id = await driver.submit(requests)
        except (openai.OpenAIError, TimeoutError) as exc:
            failure = classify(exc)
            if failure.kind in ("connection", "timeout"):  # nothing answers: fail the run as direct mode does
                message = f"the judge endpoint is unreachable: {failure.message}"
                return {cid: LineResult(None, None, "batch_unreachable", message) for cid in requests}
            return {cid: LineResult(None, failure.status, "batch_submit", failure.message) for cid in requests}
        if self.log is not None and self.run_id is not None:
            self.log.judge_batch_add(self.run_id, batch_id, file_id, self.settings.endpoint, self.settings.model,
                                     list(requests))
        log.info("judge batch %s created with %d requests", batch_id, len(requests))
        return await self._collect(driver, batch_id, requests)

    async def _resume(self, driver: BatchDriver, batch_id: str, cids: list[str]) -> dict[str, LineResult]:
        if batch_id in self._collected:  # read in an earlier round (its files are gone from the provider)
            batch, found = self._collected[batch_id]
            return complete(dict.fromkeys(cids), batch, found)
        log.info("judge batch %s resumed (%d requests)", batch_id, len(cids))
        return await self._collect(driver, batch_id, dict.fromkeys(cids))

    async def _collect(self, driver: BatchDriver, batch_id: str, requests: Mapping[str, Any]) -> dict[str, LineResult]:
        def status(value: str) -> None:
            if self.log is not None:
                self.log.judge_batch_status(batch_id, value)

        try:
            batch = await driver.wait(batch_id, status)
            found = await driver.results(batch)
            results = complete(requests, batch, found)
        except BatchPending as exc:
            self.pending.append(batch_id)
            log.warning("%s; it is left running and 'textgen-eval resume' takes it over", exc)
            return {cid: LineResult(None, None, "batch_pending", str(exc)) for cid in requests}
        except (openai.OpenAIError, TimeoutError) as exc:
            failure = classify(exc)
            if failure.status == 404:  # the batch or its files are gone: send the requests again
                status("failed")
                return {cid: LineResult(None, None, "batch_missing", f"batch {batch_id} is gone ({failure.message})")
                        for cid in requests}
            return {cid: LineResult(None, failure.status, "batch_poll", failure.message) for cid in requests}
        self._collected[batch_id] = (batch, found)  # later rounds may take over more of its requests
        await self._clean_up(driver, batch)
        status("collected")
        return results

    async def _clean_up(self, driver: BatchDriver, batch: Any) -> None:
        """Delete a read batch's files at the provider, each tried once; a failure is said at once, and an
        endpoint that does not delete files is not asked again in this run."""
        if self.no_delete is not None:
            return
        kept, failure = await driver.delete_files(batch)  # read: nothing of it should stay at the provider
        if failure is None:
            return
        reason = scrub(failure.message, self.settings.api_key)
        if failure.status in NO_DELETE:
            self.no_delete = reason
            log.warning("judge batch %s: the endpoint does not delete files (%s); files %s and those of later "
                        "batches stay at the provider: delete them there", batch.id, reason, ", ".join(kept))
        else:
            log.warning("judge batch %s: could not delete files %s from the provider (%s)", batch.id,
                        ", ".join(kept), reason)

    def _logged_batches(self) -> dict[str, str]:
        if self._logged is None:
            self._logged = {}
            if self.log is not None and self.run_id is not None:
                for row in self.log.judge_batches(self.run_id):  # oldest first: newer batches win
                    if row["status"] in ADOPTABLE:
                        self._logged.update(dict.fromkeys(row["custom_ids"], row["batch_id"]))
        return self._logged
