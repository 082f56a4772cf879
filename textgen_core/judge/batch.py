"""The OpenAI Batch API as the judge's transport: the same requests, half the price, replies within hours.

Two layers:

* :class:`BatchDriver` -- one batch, with the real ``openai`` client: upload the
  requests as a JSONL file (``files.create``, purpose ``batch``), create the batch
  (``batches.create``), poll it with a growing interval (``batches.retrieve``),
  download the output and error files (``files.content``) and map each
  ``custom_id`` to its reply or its error.
* :class:`Batcher` -- rounds. The judge client hands it each chat request it
  would have sent over HTTP (:meth:`Batcher.post`). Requests arriving together
  are collected until no new one has come for ``settle`` seconds -- every cell is
  then waiting on a reply -- and go out as one batch. Replies come back to the
  client as the bodies a direct request gets, so the same parser, validation,
  cache and cells handle them and the numbers are identical. A step built on a
  reply (verdicts on extracted statements) and a re-ask of an invalid reply are
  only asked once that reply is in: they form the next round. Lines that failed
  (5xx, 429, an expired window, a failed batch) are sent again alone in the
  next round, within the request's retry budget; other errors are final and the
  cell is unscored with the endpoint's reason.

Every batch is logged (``log.judge_batch_add``) the moment it is created, with
the ``custom_id`` of each request -- a hash of the request body. A process killed
while waiting is resumed by a run that makes the same requests: a request whose
id is in a logged batch waits for that batch (or reads its output file) instead
of being submitted again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Protocol, Sequence, TypeVar

import openai

from .endpoint import async_openai, is_azure
from .replies import Unscored, shape_problem
from .retry import Failure, RetryPolicy, classify
from .settings import JudgeSettings
from .transport import FormatRejected

log = logging.getLogger("textgen_core.judge")
T = TypeVar("T")

#: Batch statuses after which nothing changes.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: Logged batches whose files may hold replies (failed and cancelled ones hold none).
ADOPTABLE = frozenset({"submitted", "validating", "in_progress", "finalizing", "completed", "expired", "cancelling"})
#: Attempts at one file or batch operation (upload, create, retrieve, download) on transient errors.
OPERATION_ATTEMPTS = 8
#: The Batch API's limits on one input file: requests, and bytes (200 MB, with room for the JSONL framing).
MAX_REQUESTS = 50_000
MAX_BYTES = 190_000_000


@dataclass(frozen=True)
class LineResult:
    """One request's fate in a batch: its reply body (status 200) or its error."""

    reply: dict | None
    status: int | None = None
    code: str | None = None
    message: str = ""


@dataclass(frozen=True)
class Polling:
    """Seconds between status checks: ``first``, growing by ``factor`` up to ``cap``."""

    first: float = 5.0
    factor: float = 1.5
    cap: float = 60.0

    def delays(self) -> Any:
        delay = self.first
        while True:
            yield delay
            delay = min(self.cap, delay * self.factor)


def custom_id(body: Mapping[str, Any]) -> str:
    """The id of a request in a batch: a hash of its body (the same request gets the same id on resume)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "tg-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


class BatchDriver:
    """Runs one batch of chat requests through the Batch API with an ``openai`` async client."""

    def __init__(self, api: openai.AsyncOpenAI, *, azure: bool = False, polling: Polling = Polling(),
                 completion_window: str = "24h", policy: RetryPolicy = RetryPolicy()) -> None:
        self.api = api
        #: Azure names the route without the version prefix.
        self.url = "/chat/completions" if azure else "/v1/chat/completions"
        self.polling = polling
        self.completion_window = completion_window
        self.policy = policy

    async def submit(self, requests: Mapping[str, Mapping[str, Any]]) -> tuple[str, str]:
        """Upload ``{custom_id: body}`` and create the batch; returns (batch id, input file id)."""
        lines = "".join(json.dumps({"custom_id": cid, "method": "POST", "url": self.url, "body": body},
                                   ensure_ascii=False) + "\n" for cid, body in requests.items())
        upload = await self._retrying(lambda: self.api.files.create(
            file=("textgen-eval-judge.jsonl", lines.encode("utf-8"), "application/jsonl"), purpose="batch"))
        batch = await self._retrying(lambda: self.api.batches.create(
            input_file_id=upload.id, endpoint=self.url, completion_window=self.completion_window,  # type: ignore[arg-type]
            metadata={"source": "textgen-eval"}))
        return batch.id, upload.id

    async def wait(self, batch_id: str, on_status: Callable[[str], None] | None = None) -> Any:
        """Poll until the batch reaches a terminal status; returns the batch object."""
        seen = None
        for delay in self.polling.delays():
            batch = await self._retrying(lambda: self.api.batches.retrieve(batch_id))
            if batch.status != seen and on_status is not None:
                on_status(batch.status)
            seen = batch.status
            if batch.status in TERMINAL:
                return batch
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover - delays() never ends

    async def results(self, batch: Any) -> dict[str, LineResult]:
        """Every line of the batch's error and output files, by ``custom_id`` (a reply wins over an error)."""
        found: dict[str, LineResult] = {}
        for file_id in (batch.error_file_id, batch.output_file_id):
            if not file_id:
                continue
            content = await self._retrying(lambda: self.api.files.content(file_id))
            for line in content.text.splitlines():
                if line.strip():
                    cid, result = parse_line(json.loads(line))
                    if cid is not None:
                        found[cid] = result
        return found

    async def run(self, requests: Mapping[str, Mapping[str, Any]],
                  on_created: Callable[[str, str], None] | None = None) -> dict[str, LineResult]:
        """Submit, wait and collect one batch. Lines the batch did not answer get an error result."""
        batch_id, file_id = await self.submit(requests)
        if on_created is not None:
            on_created(batch_id, file_id)
        batch = await self.wait(batch_id)
        return complete(requests, batch, await self.results(batch))

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """One file or batch operation, retried on transient errors (these calls are free)."""
        for attempt in range(1, OPERATION_ATTEMPTS + 1):
            try:
                return await call()
            except (openai.OpenAIError, TimeoutError) as exc:
                failure = classify(exc)
                if not failure.retryable or attempt == OPERATION_ATTEMPTS:
                    raise
                await asyncio.sleep(self.policy.delay(attempt, _RNG, failure.retry_after))
        raise AssertionError("unreachable")  # pragma: no cover


_RNG = random.Random()


def parse_line(line: Mapping[str, Any]) -> tuple[str | None, LineResult]:
    """(custom_id, result) of one line of an output or error file."""
    cid = line.get("custom_id")
    response = line.get("response") if isinstance(line.get("response"), Mapping) else None
    error = line.get("error") if isinstance(line.get("error"), Mapping) else None
    if response is not None:
        status = response.get("status_code")
        body = response.get("body")
        if status == 200 and isinstance(body, Mapping):
            return cid, LineResult(dict(body), 200)
        detail = body.get("error") if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping) else {}
        return cid, LineResult(None, status if isinstance(status, int) else None, detail.get("code"),
                               str(detail.get("message") or f"HTTP {status}"))
    if error is not None:
        return cid, LineResult(None, None, str(error.get("code") or "batch_error"), str(error.get("message") or ""))
    return cid, LineResult(None, None, "batch_error", "the batch line holds neither a response nor an error")


def complete(requests: Mapping[str, Any], batch: Any, found: Mapping[str, LineResult]) -> dict[str, LineResult]:
    """A result for every request: lines the batch did not answer get the batch's own failure."""
    if batch.status == "failed":
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        detail = "; ".join(str(getattr(e, "message", e)) for e in errors) or "no reason given"
        missing = LineResult(None, None, "batch_failed", f"batch {batch.id} failed: {detail}")
    elif batch.status == "expired":
        missing = LineResult(None, None, "batch_expired", f"batch {batch.id} expired before this request ran")
    elif batch.status == "cancelled":
        missing = LineResult(None, None, "batch_cancelled", f"batch {batch.id} was cancelled")
    else:
        missing = LineResult(None, None, "batch_missing", f"batch {batch.id} returned no line for this request")
    return {cid: found.get(cid, missing) for cid in requests}


#: Line error codes worth sending again (in a later batch).
_RETRY_CODES = frozenset({"batch_expired", "batch_failed", "batch_cancelled", "batch_missing", "batch_error",
                          "batch_submit", "batch_poll"})


def line_failure(result: LineResult, mode: str | None = None) -> Failure:
    """Classify a failed line the way a failed direct request is classified (see :func:`.retry.classify`)."""
    if result.status is None:
        return Failure("server", result.message or str(result.code), result.code in _RETRY_CODES)
    return classify(_status_error(result), mode=None if mode in (None, "text") else mode)


def _status_error(result: LineResult) -> openai.APIStatusError:
    try:
        import httpx2 as httpx  # the SDK's HTTP library from openai 3
    except ImportError:  # pragma: no cover - openai 1.x and 2.x use httpx
        import httpx  # type: ignore[no-redef]
    body = {"error": {"message": result.message, "code": result.code}}
    response = httpx.Response(int(result.status or 500), json=body,
                              request=httpx.Request("POST", "https://batch.invalid/v1/chat/completions"))
    return openai.APIStatusError(result.message, response=response, body=body)


def split(requests: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Mapping[str, Any]]]:
    """Requests in parts that each fit one batch (:data:`MAX_REQUESTS`, :data:`MAX_BYTES`)."""
    parts: list[dict[str, Mapping[str, Any]]] = []
    size = 0
    for cid, body in requests.items():
        length = len(json.dumps(body, ensure_ascii=False).encode("utf-8")) + 200
        if not parts or len(parts[-1]) >= MAX_REQUESTS or size + length > MAX_BYTES:
            parts.append({})
            size = 0
        parts[-1][cid] = body
        size += length
    return parts


class BatchLog(Protocol):
    """Where batches are recorded as soon as they exist (the store; see ``store/batch_sql.py``)."""

    def judge_batch_add(self, run_id: int, batch_id: str, input_file_id: str, endpoint: str, model: str,
                        custom_ids: Sequence[str]) -> None: ...
    def judge_batch_status(self, batch_id: str, status: str) -> None: ...
    def judge_batches(self, run_id: int) -> list[dict[str, Any]]: ...


class Batcher:
    """Collects a client's chat requests into batch rounds; resumes logged batches instead of resubmitting.

    ``settle``: seconds without a new request before a round goes out.
    ``log`` and ``run_id``: where batches are recorded (None: not recorded, no resume).
    """

    def __init__(self, settings: JudgeSettings, log: BatchLog | None = None, run_id: int | None = None, *,
                 polling: Polling | None = None, settle: float = 0.5, policy: RetryPolicy = RetryPolicy()) -> None:
        self.settings = settings
        self.log = log
        self.run_id = run_id
        self.polling = polling or Polling(first=getattr(settings, "batch_poll", 5.0))
        self.settle = settle
        self.policy = policy
        #: Ids of the batches this batcher created, and of the logged ones it took over, in order.
        self.created: list[str] = []
        self.adopted: list[str] = []
        self.rounds = 0
        #: Why the endpoint refused for good (bad key, unknown model): every later request would fail the same way.
        self.fatal: list[str] = []
        self._pending: dict[str, tuple[dict, list[asyncio.Future]]] = {}
        self._flusher: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._logged: dict[str, str] | None = None  # custom_id -> id of the newest logged batch holding it

    # -- what the client calls ---------------------------------------------------------------
    async def post(self, body: Mapping[str, Any], budget: Any, *, mode: str | None = None) -> dict:
        """The reply body to one chat request, through batch rounds; raises :class:`Unscored` when final.

        ``budget`` is the client's retry budget (``attempts``, ``transient_left``):
        a failed line is sent again in the next round while it lasts.
        """
        body = dict(body)
        while True:
            budget.attempts += 1
            result = await self._request(body)
            if result.reply is not None:
                problem = shape_problem(result.reply, "choices")
                if problem is None:
                    return result.reply
                failure = Failure("server", problem, True)
            else:
                failure = line_failure(result, mode)
            if failure.format_rejected:
                raise FormatRejected(failure)
            if not failure.retryable or budget.transient_left <= 0:
                message = failure.message + (f" (gave up after {budget.attempts} batch attempts)"
                                             if failure.retryable else "")
                if failure.fatal and message not in self.fatal:
                    self.fatal.append(message)
                raise Unscored(message, kind=failure.kind, status=failure.status, attempts=budget.attempts,
                               fatal=failure.fatal)
            budget.transient_left -= 1
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
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())
        return await future

    async def _flush(self) -> None:
        while self._pending:
            size = -1
            while len(self._pending) != size:  # wait until every cell that can ask has asked
                size = len(self._pending)
                await asyncio.sleep(self.settle)
            batch, self._pending = self._pending, {}
            live = {cid: entry for cid, entry in batch.items() if any(not f.done() for f in entry[1])}
            if live:
                await self._round(live)

    async def _round(self, batch: dict[str, tuple[dict, list[asyncio.Future]]]) -> None:
        self.rounds += 1
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
        driver = BatchDriver(api, azure=is_azure(self.settings), polling=self.polling, policy=self.policy)
        try:
            jobs = [self._resume(driver, batch_id, cids) for batch_id, cids in adopt.items()]
            jobs += [self._submit(driver, part) for part in split(fresh)]
            for done in asyncio.as_completed(jobs):
                for cid, result in (await done).items():
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
            return {cid: LineResult(None, failure.status, "batch_submit", failure.message) for cid in requests}
        self.created.append(batch_id)
        if self.log is not None and self.run_id is not None:
            self.log.judge_batch_add(self.run_id, batch_id, file_id, self.settings.endpoint, self.settings.model,
                                     list(requests))
        log.info("judge batch %s created with %d requests", batch_id, len(requests))
        return await self._collect(driver, batch_id, requests)

    async def _resume(self, driver: BatchDriver, batch_id: str, cids: list[str]) -> dict[str, LineResult]:
        self.adopted.append(batch_id)
        log.info("judge batch %s resumed (%d requests)", batch_id, len(cids))
        return await self._collect(driver, batch_id, dict.fromkeys(cids))

    async def _collect(self, driver: BatchDriver, batch_id: str, requests: Mapping[str, Any]) -> dict[str, LineResult]:
        def status(value: str) -> None:
            if self.log is not None:
                self.log.judge_batch_status(batch_id, value)

        try:
            batch = await driver.wait(batch_id, status)
            return complete(requests, batch, await driver.results(batch))
        except (openai.OpenAIError, TimeoutError) as exc:
            failure = classify(exc)
            if failure.status == 404:  # the batch or its files are gone: send the requests again
                status("failed")
                return {cid: LineResult(None, None, "batch_missing", f"batch {batch_id} is gone ({failure.message})")
                        for cid in requests}
            return {cid: LineResult(None, failure.status, "batch_poll", failure.message) for cid in requests}

    def _logged_batches(self) -> dict[str, str]:
        if self._logged is None:
            self._logged = {}
            if self.log is not None and self.run_id is not None:
                for row in self.log.judge_batches(self.run_id):  # oldest first: newer batches win
                    if row["status"] in ADOPTABLE:
                        self._logged.update(dict.fromkeys(row["custom_ids"], row["batch_id"]))
        return self._logged
