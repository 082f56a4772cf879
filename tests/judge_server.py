"""A loopback OpenAI-compatible server for judge tests: scripted replies, injected faults.

It is a real HTTP server (stdlib ``ThreadingHTTPServer`` on 127.0.0.1, HTTP/1.1
keep-alive), so the real ``openai`` client, its connection pool, timeouts and
error mapping are all exercised. It speaks three endpoints:

* ``POST /v1/chat/completions`` -- the judge. The reply content comes from
  ``responder(request_json)``, which returns a string (sent as is), a JSON value
  (dict or list, serialised), a :class:`Reply` (content plus finish reason,
  refusal, usage) or a :class:`Fault`. Without a responder, a value matching the
  request's ``json_schema`` is generated.
* ``POST /v1/completions`` -- with ``echo`` and ``logprobs``, returns per-token
  prompt log-probabilities (whitespace tokens; ``logprob(token)`` decides).
* ``POST /v1/embeddings`` -- deterministic vectors (``embed(text)`` decides),
  float or base64 encoding.

Faults are served, in order: faults queued with :meth:`JudgeServer.script`,
then a fault returned by the responder, then one drawn at ``fault_rate`` from
``fault_kinds`` with a seeded RNG. Every request is recorded with its body,
headers, timing and status; ``peak`` is the highest number handled at once.

    server = JudgeServer(responder=lambda req: {"verdict": "yes"}, latency=0.05)
    with server:
        server.script(Fault.rate_limit(retry_after="1"), Fault.http(503))
        ...  # JudgeSettings(base_url=server.url, model="judge", api_key="sk-test")
        assert server.count("/v1/chat/completions") == 3
"""

from __future__ import annotations

import base64
import json
import random
import socket
import struct
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Mapping, Sequence

from judge_scripting import (  # noqa: F401 - the tests import these from judge_server
    CHAT, COMPLETIONS, EMBEDDINGS, TRANSIENT_FAULTS, Fault, Recorded, Reply, Responder, count_tokens,
    default_embed, default_logprob, example_for, last_user_text, prompt_text, request_schema, schema_reply,
)
from judge_server_batch import BatchService, chat_payload, is_batch_path  # the Batch API (H2, #13)
from judge_server_extra import SlotGate, client_gone, completions_payload  # one-slot servers, /completions
from judge_server_limits import RateLimit, Route, azure_route  # noqa: F401 - rate limits, Azure paths (H2, #13)


class JudgeServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies and faults."""

    def __init__(self, responder: Responder | None = None, *, latency: float | Callable[[dict], float] = 0.0,
                 fault_rate: float = 0.0, fault_kinds: Sequence[Fault] = TRANSIENT_FAULTS, seed: int = 0,
                 api_key: str | None = None, json_schema: bool = True, json_object: bool = True,
                 embed: Callable[[str], list[float]] = default_embed,
                 logprob: Callable[[str], float] = default_logprob, echo_key_in_errors: bool = False) -> None:
        self.responder = responder
        self.latency = latency
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(fault_kinds)
        self.api_key = api_key
        self.json_schema = json_schema
        self.json_object = json_object
        self.embed = embed
        self.logprob = logprob
        self.echo_key_in_errors = echo_key_in_errors
        #: A :class:`RateLimit` to enforce (429 + Retry-After + x-ratelimit-* headers); None: no limit.
        self.limits: RateLimit | None = None
        #: Headers sent with every judge reply (e.g. absurd ``x-ratelimit-*`` values).
        self.reply_headers: dict[str, str] = {}
        #: Requests served at once, like a llama.cpp server's slots (None: no limit); the rest queue,
        #: and a request whose client gave up still takes its turn.
        self.slots: int | None = None
        self._slot_gate = SlotGate()
        #: Files and batches (see judge_server_batch.py).
        self.batches = BatchService(self)
        #: When set, every request must carry ``?api-version=`` with this value (Azure OpenAI).
        self.api_version: str | None = None
        self.rng = random.Random(seed)
        self.requests: list[Recorded] = []
        self.active = 0
        self.peak = 0
        self._scripts: dict[str, deque[Fault | Reply | Any]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> "JudgeServer":
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="judge-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "JudgeServer":
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for the openai client (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and inspection -------------------------------------------------
    def script(self, *items: Fault | Reply | Any, path: str = CHAT) -> None:
        """Queue replies or faults served, in order, to the next requests on ``path``."""
        with self._lock:
            self._scripts.setdefault(path, deque()).extend(items)

    def count(self, path: str | None = CHAT, *, status: int | None = None, fault: str | None = None) -> int:
        """Requests received on ``path`` (None: all), optionally with a given status or fault kind."""
        with self._lock:
            return sum(1 for r in self.requests if (path is None or r.path == path)
                       and (status is None or r.status == status) and (fault is None or r.fault == fault))

    def recorded(self, path: str | None = CHAT) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if path is None or r.path == path]

    def reset(self) -> None:
        """Forget recorded requests, the peak and queued scripts (configuration is kept)."""
        with self._lock:
            self.requests.clear()
            self._scripts.clear()
            self.peak = self.active

    # -- request handling (called on server threads) -------------------------------
    def _enter(self, record: Recorded) -> None:
        with self._lock:
            self.requests.append(record)
            self.active += 1
            self.peak = max(self.peak, self.active)

    def _leave(self, record: Recorded, status: int) -> None:
        with self._lock:
            self.active -= 1
            record.status = status
            record.ended = time.monotonic()

    def _next_fault(self, path: str, body: dict) -> Fault | Reply | Any | None:
        with self._lock:
            queue = self._scripts.get(path)
            if queue:
                return queue.popleft()
            draw = self.fault_rate > 0 and self.rng.random() < self.fault_rate
            pick = self.rng.choice(self.fault_kinds) if draw and self.fault_kinds else None
        return pick

    def _slot(self) -> Any:
        """A context holding one of ``slots`` (a no-op without slots)."""
        return self._slot_gate.hold(self.slots)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


#: Connections the listening socket queues before they are accepted. The stdlib default (5) makes
#: the kernel drop the SYNs of a client opening 32+ connections at once, which then wait a 1 s
#: retransmit: benchmarks and concurrency tests would measure that, not the client.
BACKLOG = 128


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = BACKLOG

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out or hang up are part of the drills; anything else is printed."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_state: JudgeServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out as separate writes; without this, Nagle's
        # algorithm and delayed ACKs add ~40 ms to every reply.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    # -- plumbing ----------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self._send_bytes(status, data, headers)

    def _send_bytes(self, status: int, data: bytes, headers: Mapping[str, str] | None = None,
                    content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in {**getattr(self, "extra_headers", {}), **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _error(self, status: int, message: str, code: str | None = None,
               headers: Mapping[str, str] | None = None, kind: str = "invalid_request_error") -> int:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers)
        return status

    def _drop(self) -> int:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return 0

    def do_GET(self) -> None:
        route = azure_route(self.path)
        self.extra_headers: dict[str, str] = {}
        if is_batch_path(route.path):
            self._batch_request("GET", route, b"")
        elif route.path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": "judge-test", "object": "model"}]})
        else:
            self._error(404, f"no route {self.path}")

    def do_DELETE(self) -> None:
        route = azure_route(self.path)
        self.extra_headers = {}
        if is_batch_path(route.path):
            self._batch_request("DELETE", route, b"")
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        state = self.server_state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        route = azure_route(self.path)
        path = route.path
        self.extra_headers = {}
        if is_batch_path(path):
            self._batch_request("POST", route, raw)
            return
        record = Recorded(path, body, {k.lower(): v for k, v in self.headers.items()}, time.monotonic(), route=route)
        state._enter(record)
        status = 0
        try:
            status = self._dispatch(state, path, body, record)
        except Exception as exc:  # a responder bug: answer 500 with the error so the test shows it
            record.fault = "server_exception"
            status = self._error(500, f"judge_server: {type(exc).__name__}: {exc}", "server_exception", kind="server_error")
        finally:
            state._leave(record, status)

    def _dispatch(self, state: JudgeServer, path: str, body: Any, record: Recorded) -> int:
        if body is None or not isinstance(body, dict):
            return self._error(400, "request body is not a JSON object")
        refused = self._refuse_key(state)
        if refused:
            return refused
        self.extra_headers = dict(state.reply_headers)
        if state.limits is not None:
            verdict = state.limits.admit(body)
            self.extra_headers = {**self.extra_headers, **verdict.headers}
            if not verdict.allowed:
                record.fault = "429"
                return self._error(429, verdict.message, "rate_limit_exceeded", kind="requests")
        with state._slot():
            if state.slots is not None and client_gone(self.connection):  # cancelled in the queue, as llama.cpp does
                record.fault = "cancelled"
                return 0
            latency = state.latency(body) if callable(state.latency) else state.latency
            state._sleep(latency)
            if path == CHAT:
                return self._chat(state, body, record)
        if path == COMPLETIONS:
            return self._completions(state, body, record)
        if path == EMBEDDINGS:
            return self._embeddings(state, body, record)
        return self._error(404, f"no route {path}")

    def _refuse_key(self, state: JudgeServer) -> int:
        """Answer 401 (bad key) or 400 (wrong api-version) and return the status; 0 when the request may pass."""
        route = azure_route(self.path)
        if state.api_version is not None and route.api_version != state.api_version:
            return self._error(400, f"unsupported api-version {route.api_version!r}", "invalid_api_version")
        sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ") or self.headers.get("api-key") or ""
        if state.api_key is not None and sent != state.api_key:
            shown = sent if state.echo_key_in_errors else sent[:3] + "****"
            return self._error(401, f"Incorrect API key provided: {shown}", "invalid_api_key")
        return 0

    def _batch_request(self, method: str, route: Route, raw: bytes) -> None:
        """Files and batches: recorded like the others, served by :class:`BatchService`."""
        state = self.server_state
        record = Recorded(route.path if method == "POST" else f"{method} {route.path}", None,
                          {k.lower(): v for k, v in self.headers.items()}, time.monotonic(), route=route)
        state._enter(record)
        status = self._refuse_key(state)
        try:
            if not status:
                if method == "POST":
                    status, payload = state.batches.post(route.path, raw, self.headers.get("Content-Type") or "")
                elif method == "DELETE":
                    status, payload = state.batches.delete(route.path)
                else:
                    status, payload = state.batches.get(route.path)
                if isinstance(payload, bytes):
                    self._send_bytes(status, payload, content_type="application/octet-stream")
                else:
                    self._send_json(status, payload)
        finally:
            state._leave(record, status)

    # -- faults -------------------------------------------------------------------
    def _serve_fault(self, state: JudgeServer, fault: Fault, record: Recorded) -> int | None:
        """Answer a transport/HTTP fault; None when the fault shapes a normal reply instead."""
        record.fault = fault.kind
        if fault.kind == "drop":
            return self._drop()
        if fault.kind == "bad_body":
            self._send_bytes(200, b"<html>gateway hiccup</html>", content_type="text/html")
            return 200
        if fault.kind == "hang":
            state._sleep(fault.seconds)
            return None
        if fault.status >= 400:
            message = fault.message
            if state.echo_key_in_errors:
                message += " (key " + (self.headers.get("Authorization") or "").removeprefix("Bearer ") + ")"
            return self._error(fault.status, message, fault.code, fault.headers,
                               "rate_limit_error" if fault.status == 429 else "invalid_request_error")
        return None

    # -- chat -----------------------------------------------------------------------
    def _chat(self, state: JudgeServer, body: dict, record: Recorded) -> int:
        fmt = (body.get("response_format") or {}).get("type")
        if fmt == "json_schema" and not state.json_schema:
            record.fault = "reject_json_schema"
            return self._error(400, "response_format type 'json_schema' is not supported by this server",
                               "unsupported_response_format")
        if fmt == "json_object" and not state.json_object:
            record.fault = "reject_json_object"
            return self._error(400, "response_format type 'json_object' is not supported by this server",
                               "unsupported_response_format")
        answer = state._next_fault(CHAT, body)
        if answer is None:
            answer = self._respond(state, body)
        if isinstance(answer, Fault):
            done = self._serve_fault(state, answer, record)
            if done is not None:
                return done
            if answer.kind == "hang":  # the client gave up long ago; answer normally
                answer = self._respond(state, body)
        reply = self._shape(answer, body)
        record.reply = reply.content
        self._send_json(200, chat_payload(reply, body, f"chatcmpl-{len(state.requests)}"))
        return 200

    @staticmethod
    def _respond(state: JudgeServer, body: dict) -> Any:
        return state.responder(body) if state.responder else schema_reply(body)

    @staticmethod
    def _shape(answer: Any, body: dict) -> Reply:
        """Turn a responder's answer (or a reply-shaping fault) into a :class:`Reply`."""
        if isinstance(answer, Fault):
            if answer.kind == "length":
                limit = body.get("max_completion_tokens") or body.get("max_tokens") or 16
                return Reply(answer.content, finish_reason="length", completion_tokens=int(limit))
            if answer.kind == "content_filter":
                return Reply(None, finish_reason="content_filter")
            if answer.kind == "refusal":
                return Reply(None, refusal=answer.content)
            return Reply(answer.content if answer.kind == "malformed" else "")
        if isinstance(answer, Reply):
            return answer
        if isinstance(answer, str):
            return Reply(answer)
        return Reply(json.dumps(answer))

    # -- completions (prompt log-probabilities) ---------------------------------------
    def _completions(self, state: JudgeServer, body: dict, record: Recorded) -> int:
        scripted = state._next_fault(COMPLETIONS, body)
        if isinstance(scripted, Fault):
            done = self._serve_fault(state, scripted, record)
            if done is not None:
                return done
        payload = completions_payload(body, state.logprob, f"cmpl-{len(state.requests)}")
        self._send_json(200, payload)
        return 200

    # -- embeddings -------------------------------------------------------------------
    def _embeddings(self, state: JudgeServer, body: dict, record: Recorded) -> int:
        scripted = state._next_fault(EMBEDDINGS, body)
        if isinstance(scripted, Fault):
            done = self._serve_fault(state, scripted, record)
            if done is not None:
                return done
        inputs = body.get("input")
        texts: Iterable[str] = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = []
        total = 0
        for i, text in enumerate(texts):
            vector = state.embed(str(text))
            total += max(1, count_tokens(str(text)))
            if body.get("encoding_format") == "base64":
                packed = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
                data.append({"object": "embedding", "index": i, "embedding": packed})
            else:
                data.append({"object": "embedding", "index": i, "embedding": vector})
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model", ""),
                              "usage": {"prompt_tokens": total, "total_tokens": total}})
        return 200
