"""The OpenAI Batch API, one batch at a time: upload, create, poll, download, delete.

The judge drives it from :mod:`textgen_core.judge.batch`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, TypeVar

import openai

from .retry import UNREACHABLE_AFTER, Failure, RetryPolicy, classify

T = TypeVar("T")

#: Batch statuses after which nothing changes.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: Logged batches whose files may hold replies (failed and cancelled ones hold none; 'collected' ones were
#: downloaded and their files deleted).
ADOPTABLE = frozenset({"submitted", "validating", "in_progress", "finalizing", "completed", "expired", "cancelling"})
#: Attempts at one file or batch operation (upload, create, retrieve, download) on transient errors.
OPERATION_ATTEMPTS = 8
#: The Batch API's limits on one input file: requests, and bytes (200 MB, with room for the JSONL framing).
MAX_REQUESTS = 50_000
#: Statuses of a refused DELETE /files that say the endpoint does not delete files at all (no such method,
#: not implemented): asking again, for this batch or the next, cannot help. A 404 says the file is gone.
NO_DELETE = frozenset({405, 501})
MAX_BYTES = 190_000_000


class BatchPending(Exception):
    """A batch did not reach a final status within the wait allowed; it keeps running at the provider."""

    def __init__(self, batch_id: str, status: str, waited: float) -> None:
        super().__init__(f"judge batch {batch_id} is still {status} after {waited:g} s (--batch-wait)")
        self.batch_id = batch_id


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
                 completion_window: str = "24h", policy: RetryPolicy = RetryPolicy(),
                 max_wait: float = 90_000.0) -> None:
        self.api = api
        #: Seconds :meth:`wait` polls one batch before it gives up (:class:`BatchPending`; the batch stays).
        self.max_wait = max_wait
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
        """Poll until the batch reaches a terminal status; returns the batch object.

        Gives up after ``max_wait`` seconds with :class:`BatchPending` (the batch is left running).
        """
        seen = None
        deadline = time.monotonic() + self.max_wait
        for delay in self.polling.delays():
            batch = await self._retrying(lambda: self.api.batches.retrieve(batch_id))
            if batch.status != seen and on_status is not None:
                on_status(batch.status)
            seen = batch.status
            if batch.status in TERMINAL:
                return batch
            left = deadline - time.monotonic()
            if left <= 0:
                raise BatchPending(batch_id, str(batch.status), self.max_wait)
            await asyncio.sleep(min(delay, left))
        raise AssertionError("unreachable")  # pragma: no cover - delays() never ends

    async def results(self, batch: Any) -> dict[str, LineResult]:
        """Every line of the batch's error and output files, by ``custom_id``.

        A request answered twice (two lines with one ``custom_id``, in one file or across both) is an
        error for that request: neither line is used, since nothing says which one is right.
        """
        found: dict[str, LineResult] = {}
        for file_id in (batch.error_file_id, batch.output_file_id):
            if not file_id:
                continue
            content = await self._retrying(lambda: self.api.files.content(file_id))
            for line in content.text.splitlines():
                if line.strip():
                    cid, result = parse_line(json.loads(line))
                    if cid is None:
                        continue
                    if cid in found:
                        result = LineResult(None, None, "batch_duplicate",
                                            f"batch {batch.id} returned more than one line for this request "
                                            f"(custom_id {cid}); none of them is used")
                    found[cid] = result
        return found

    async def delete_files(self, batch: Any) -> tuple[list[str], Failure | None]:
        """Delete the batch's input, output and error files from the provider's storage, each tried once (a
        clean-up after the replies are read: not worth minutes of retries): the ids not deleted, and the
        first failure. After a refusal that says the endpoint does not delete files (:data:`NO_DELETE`),
        the batch's other files are not asked for."""
        kept: list[str] = []
        first: Failure | None = None
        for file_id in (batch.input_file_id, batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            if first is not None and first.status in NO_DELETE:
                kept.append(file_id)
                continue
            try:
                await self.api.files.delete(file_id)
            except openai.NotFoundError:
                continue  # gone already: nothing is kept
            except (openai.OpenAIError, TimeoutError) as exc:
                kept.append(file_id)
                first = first or classify(exc)
        return kept, first

    async def run(self, requests: Mapping[str, Mapping[str, Any]],
                  on_created: Callable[[str, str], None] | None = None) -> dict[str, LineResult]:
        """Submit, wait and collect one batch. Lines the batch did not answer get an error result."""
        batch_id, file_id = await self.submit(requests)
        if on_created is not None:
            on_created(batch_id, file_id)
        batch = await self.wait(batch_id)
        return complete(requests, batch, await self.results(batch))

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """One file or batch operation, retried on transient errors (these calls are free): up to
        :data:`OPERATION_ATTEMPTS`, or :data:`~.retry.UNREACHABLE_AFTER` when the endpoint does not answer."""
        silent = 0
        for attempt in range(1, OPERATION_ATTEMPTS + 1):
            try:
                return await call()
            except (openai.OpenAIError, TimeoutError) as exc:
                failure = classify(exc)
                silent += failure.kind in ("connection", "timeout")
                if not failure.retryable or attempt == OPERATION_ATTEMPTS or silent >= UNREACHABLE_AFTER:
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
    if result.code == "batch_unreachable":  # nothing answers: every later batch would fail the same way
        return Failure("connection", result.message, False, fatal=True)
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
