"""The OpenAI Batch API on the loopback judge (tests/judge_server.py).

Routes (also under Azure's ``/openai/...``):

* ``POST /v1/files`` -- multipart upload (``purpose=batch``); the JSONL is checked line by line.
* ``POST /v1/batches`` -- create a batch from an uploaded file (``/v1/chat/completions`` only).
* ``GET /v1/batches/{id}`` -- ``validating`` -> ``in_progress`` -> ``completed`` after ``delay`` seconds
  (or ``failed`` / ``expired`` when scripted); the replies are computed on completion with the
  server's responder, as a direct chat request would get them.
* ``GET /v1/files/{id}/content`` -- the output file (one line per answered request) and the error
  file (requests that failed or expired).
* ``POST /v1/batches/{id}/cancel`` -- ``cancelling`` then ``cancelled`` on the next retrieve.
* ``DELETE /v1/files/{id}`` -- delete a stored file (``deleted`` lists them).

Scripting::

    server.batches.delay = 0.3                    # seconds from creation to completion
    server.batches.outcomes.append("expired")     # the next batch expires with half its requests done
    server.batches.outcomes.append("failed")      # the next batch fails validation (no output at all)
    server.batches.outcomes.append("cancelled")   # the next batch is cancelled by someone else
    server.batches.line_error = lambda custom_id, body: 500 if "x" in custom_id else None
    server.batches.created                        # ids of every batch created, in order
    server.batches.duplicate = {"score": 0}       # every request answered twice, the second time with this
    server.echo_key_in_errors = True              # error lines and batch errors quote the server's API key
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from judge_scripting import CHAT, count_tokens, prompt_text

FILES = "/v1/files"
BATCHES = "/v1/batches"


def is_batch_path(path: str) -> bool:
    return path.startswith((FILES, BATCHES))


@dataclass
class _File:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "object": "file", "bytes": len(self.data), "created_at": self.created_at,
                "filename": self.filename, "purpose": self.purpose, "status": "processed"}


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict | None
    created: float
    outcome: str  # completed | failed | expired
    total: int
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed_n: int = 0
    failed_n: int = 0
    errors: list[dict] = field(default_factory=list)
    times: dict[str, int] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id, "object": "batch", "endpoint": self.endpoint, "input_file_id": self.input_file_id,
            "completion_window": self.completion_window, "status": self.status,
            "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
            "created_at": int(self.created), "metadata": self.metadata,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "request_counts": {"total": self.total, "completed": self.completed_n, "failed": self.failed_n},
            **{f"{name}_at": self.times.get(name) for name in
               ("in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")},
            "expires_at": int(self.created) + 86400,
        }


class BatchService:
    """Files and batches of one :class:`~judge_server.JudgeServer`; thread-safe."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.delay = 0.2
        self.outcomes: deque[str] = deque()
        self.line_error: Callable[[str, dict], int | None] | None = None
        #: Answer every request of a completed batch twice: a first line, then one with this reply instead.
        self.duplicate: Any = None
        self.created: list[str] = []
        #: Ids of the files deleted, in order; ``files`` holds those still stored.
        self.deleted: list[str] = []
        #: When set, DELETE /files answers this status (501: an endpoint that does not delete files).
        self.delete_status: int | None = None
        self.files: dict[str, _File] = {}
        #: Every output and error file's bytes, in order, deleted or not.
        self.outputs: list[bytes] = []
        #: Every uploaded input file's bytes, by id, deleted or not.
        self.uploaded: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()
        self._ids = 0

    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids:06d}"

    def lines(self, batch_id: str) -> list[dict]:
        """The requests of a batch as uploaded (for assertions; kept after the client deletes the file)."""
        with self._lock:
            data = self.uploaded[self.batches[batch_id].input_file_id]
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]

    # -- HTTP -------------------------------------------------------------------------------
    def post(self, path: str, raw: bytes, content_type: str) -> tuple[int, Any]:
        if path == FILES:
            return self._upload(raw, content_type)
        if path == BATCHES:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return 400, _error("request body is not JSON")
            return self._create(body)
        parts = path.split("/")
        if len(parts) == 5 and parts[2] == "batches" and parts[4] == "cancel":
            return self._cancel(parts[3])
        return 404, _error(f"no route {path}")

    def get(self, path: str) -> tuple[int, Any]:
        parts = path.split("/")
        if len(parts) == 4 and parts[2] == "batches":
            with self._lock:
                batch = self.batches.get(parts[3])
                if batch is None:
                    return 404, _error(f"no batch {parts[3]}", "not_found")
                self._advance(batch)
                return 200, batch.public()
        if len(parts) in (4, 5) and parts[2] == "files":
            with self._lock:
                stored = self.files.get(parts[3])
            if stored is None:
                return 404, _error(f"no file {parts[3]}", "not_found")
            return 200, (stored.data if len(parts) == 5 and parts[4] == "content" else stored.public())
        return 404, _error(f"no route {path}")

    def delete(self, path: str) -> tuple[int, Any]:
        if self.delete_status is not None:
            return self.delete_status, _error(f"DELETE {path} is not supported here", "not_implemented")
        parts = path.split("/")
        if len(parts) == 4 and parts[2] == "files":
            with self._lock:
                stored = self.files.pop(parts[3], None)
                if stored is not None:
                    self.deleted.append(stored.id)
            if stored is None:
                return 404, _error(f"no file {parts[3]}", "not_found")
            return 200, {"id": stored.id, "object": "file", "deleted": True}
        return 404, _error(f"no route {path}")

    # -- handlers ---------------------------------------------------------------------------
    def _upload(self, raw: bytes, content_type: str) -> tuple[int, Any]:
        if not content_type.startswith("multipart/form-data"):
            return 400, _error("files must be uploaded as multipart/form-data")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"batch":
            return 400, _error("expected a 'file' part and purpose=batch")
        filename, data = fields["file"]
        for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                return 400, _error(f"line {number} of the batch file is not JSON")
            if not {"custom_id", "method", "url", "body"} <= set(item):
                return 400, _error(f"line {number} lacks custom_id, method, url or body")
        with self._lock:
            stored = _File(self._new_id("file"), filename or "batch.jsonl", "batch", data, int(time.time()))
            self.files[stored.id] = stored
            self.uploaded[stored.id] = data
        return 200, stored.public()

    def _create(self, body: dict) -> tuple[int, Any]:
        with self._lock:
            source = self.files.get(str(body.get("input_file_id")))
            if source is None:
                return 404, _error(f"no file {body.get('input_file_id')}", "not_found")
            if body.get("endpoint") not in (CHAT, "/chat/completions"):  # Azure names it without /v1
                return 400, _error(f"endpoint {body.get('endpoint')!r} is not served here")
            total = sum(1 for line in source.data.splitlines() if line.strip())
            outcome = self.outcomes.popleft() if self.outcomes else "completed"
            batch = _Batch(self._new_id("batch"), source.id, body["endpoint"], str(body.get("completion_window")),
                           body.get("metadata"), time.time(), outcome, total)
            self.batches[batch.id] = batch
            self.created.append(batch.id)
            return 200, batch.public()

    def _cancel(self, batch_id: str) -> tuple[int, Any]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, _error(f"no batch {batch_id}", "not_found")
            if batch.status in ("validating", "in_progress"):
                batch.status = "cancelling"
                batch.times["cancelling"] = int(time.time())
            return 200, batch.public()

    # -- the batch's life -------------------------------------------------------------------
    def _advance(self, batch: _Batch) -> None:
        """Move a batch along its life according to the time since creation (called under the lock)."""
        age = time.time() - batch.created
        now = int(time.time())
        if batch.status == "cancelling":
            batch.status = "cancelled"
            batch.times["cancelled"] = now
            return
        if batch.status == "validating" and age >= self.delay * 0.2:
            if batch.outcome == "cancelled":  # cancelled by someone else (the provider's console, another tool)
                batch.status = "cancelled"
                batch.times["cancelled"] = now
                return
            if batch.outcome == "failed":
                batch.status = "failed"
                batch.times["failed"] = now
                batch.errors = [{"code": "invalid_request", "message": "scripted validation failure"
                                 + self._echo(), "param": None, "line": 1}]
                return
            batch.status = "in_progress"
            batch.times["in_progress"] = now
        if batch.status == "in_progress" and age >= self.delay:
            self._finish(batch, now)

    def _finish(self, batch: _Batch, now: int) -> None:
        requests = [json.loads(line) for line in self.uploaded[batch.input_file_id].decode("utf-8").splitlines()
                    if line.strip()]
        keep = len(requests) if batch.outcome != "expired" else (len(requests) + 1) // 2
        output, errors = [], []
        for number, item in enumerate(requests):
            line_id = f"batch_req_{batch.id}_{number}"
            custom_id = item["custom_id"]
            if number >= keep:
                errors.append({"id": line_id, "custom_id": custom_id, "response": None,
                               "error": {"code": "batch_expired",
                                         "message": "This request could not be executed before the completion "
                                                    "window expired."}})
                continue
            status = self.line_error(custom_id, item["body"]) if self.line_error else None
            if status:
                errors.append({"id": line_id, "custom_id": custom_id, "error": None, "response": {
                    "status_code": status, "request_id": line_id,
                    "body": _error(f"scripted failure {status}" + self._echo(), "server_error")}})
                continue
            output.append({"id": line_id, "custom_id": custom_id, "error": None, "response": {
                "status_code": 200, "request_id": line_id, "body": self._chat(item["body"], number)}})
            if self.duplicate is not None:
                reply = chat_payload(_shape(self.duplicate, item["body"]), item["body"], f"chatcmpl-dup-{number}")
                output.append({"id": line_id + "_again", "custom_id": custom_id, "error": None, "response": {
                    "status_code": 200, "request_id": line_id, "body": reply}})
        batch.completed_n, batch.failed_n = len(output), len(errors)
        if output:
            batch.output_file_id = self._store_lines(output, "batch_output.jsonl")
        if errors:
            batch.error_file_id = self._store_lines(errors, "batch_errors.jsonl")
        batch.status = "expired" if batch.outcome == "expired" else "completed"
        batch.times["finalizing"] = now
        batch.times[batch.status] = now

    def _echo(self) -> str:
        """The server's API key in an error message, when the server is set to echo it (a hostile endpoint)."""
        return f" (key {self.server.api_key})" if self.server.echo_key_in_errors and self.server.api_key else ""

    def _store_lines(self, lines: list[dict], name: str) -> str:
        data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
        self.outputs.append(data)
        stored = _File(self._new_id("file"), name, "batch_output", data, int(time.time()))
        self.files[stored.id] = stored
        return stored.id

    def _chat(self, body: dict, number: int) -> dict:
        """The chat completion a direct request with ``body`` would get (no faults, no latency)."""
        from judge_server import _Handler

        return chat_payload(_Handler._shape(_Handler._respond(self.server, body), body), body, f"chatcmpl-batch-{number}")


def _shape(answer: Any, body: dict) -> Any:
    from judge_server import _Handler

    return _Handler._shape(answer, body)


def chat_payload(reply: Any, body: dict, reply_id: str) -> dict[str, Any]:
    """A chat.completion body for a :class:`judge_scripting.Reply` (usage counted unless the reply sets it)."""
    prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else max(1, count_tokens(prompt_text(body)))
    completion_tokens = (reply.completion_tokens if reply.completion_tokens is not None
                         else count_tokens(reply.content or reply.refusal or ""))
    payload: dict[str, Any] = {
        "id": reply_id, "object": "chat.completion", "created": int(time.time()), "model": body.get("model", ""),
        "choices": [{"index": 0, "finish_reason": reply.finish_reason, "logprobs": None,
                     "message": {"role": "assistant", "content": reply.content, "refusal": reply.refusal}}],
    }
    if body.get("logprobs") and getattr(reply, "logprobs", None) is not None:  # only when asked, as OpenAI does
        payload["choices"][0]["logprobs"] = {"content": reply.logprobs, "refusal": None}
    if reply.usage:
        payload["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens}
    return payload


def _error(message: str, code: str = "invalid_request") -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}

