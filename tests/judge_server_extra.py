"""Helpers of the loopback judge (tests/judge_server.py): server slots, and /v1/completions replies."""

from __future__ import annotations

import contextlib
import re
import select
import socket
import threading
import time
from typing import Any, Callable


class SlotGate:
    """Requests served at once, like a llama.cpp server's slots: the rest queue (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._semaphore: threading.Semaphore | None = None

    def hold(self, slots: int | None) -> Any:
        """A context holding one of ``slots`` (no limit when None; the count is fixed at first use)."""
        if slots is None:
            return contextlib.nullcontext()
        with self._lock:
            if self._semaphore is None:
                self._semaphore = threading.Semaphore(slots)
        return self._semaphore


def client_gone(connection: socket.socket) -> bool:
    """True when the client closed the connection (it gave up waiting)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def completions_payload(body: dict, logprob: Callable[[str], float], reply_id: str) -> dict[str, Any]:
    """A text_completion reply with per-token prompt log-probabilities (whitespace tokens)."""
    prompt = body.get("prompt", "")
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt and isinstance(prompt[0], str) else ""
    max_tokens = int(body.get("max_tokens") if body.get("max_tokens") is not None else 16)
    tokens = re.findall(r"\s*\S+", prompt) or [prompt]
    logprobs: list[float | None] = [None] + [logprob(t) for t in tokens[1:]]
    generated = [" end"] * max_tokens
    text = "".join(generated)
    choice: dict[str, Any] = {"index": 0, "finish_reason": "length", "text": text}
    if body.get("echo"):
        choice["text"] = prompt + text
    if body.get("logprobs") is not None:
        shown = (tokens if body.get("echo") else []) + generated
        values = (logprobs if body.get("echo") else []) + [-0.5] * len(generated)
        offsets, position = [], 0
        for token in shown:
            offsets.append(position)
            position += len(token)
        choice["logprobs"] = {"tokens": shown, "token_logprobs": values, "text_offset": offsets,
                              "top_logprobs": None}
    return {
        "id": reply_id, "object": "text_completion", "created": int(time.time()),
        "model": body.get("model", ""), "choices": [choice],
        "usage": {"prompt_tokens": len(tokens), "completion_tokens": max_tokens,
                  "total_tokens": len(tokens) + max_tokens},
    }
