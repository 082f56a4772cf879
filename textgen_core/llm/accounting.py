"""Token and request accounting of a judge client, with a change callback for progress displays."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from typing import Callable

log = logging.getLogger("textgen_core.judge")


@dataclass
class Usage:
    """Running totals of a client.

    ``calls``: HTTP requests the endpoint may bill: those answered, and those that timed out or were
    refused with a 5xx or 429 (``unanswered``, counted in ``calls`` too);
    ``cached``: requests answered from the cache; ``failed``: requests that
    ended :class:`~textgen_core.judge.client.Unscored`; ``retries``: extra
    attempts (transient errors, re-asks of invalid replies, format fallbacks);
    ``in_flight``: HTTP requests on the wire right now.
    """

    calls: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Requests the endpoint refused with 429 (waited out and sent again, never a lost cell).
    rate_limited: int = 0
    #: Seconds requests were held by the shared limiter (pacing, Retry-After pauses, concurrency).
    waited_s: float = 0.0
    #: Attempts that got no usable reply but may be billed (timeouts, 5xx, 429); also in ``calls``.
    unanswered: int = 0
    #: Upper estimates of what those attempts may be billed, since no usage came back: the prompt's bound,
    #: and a reply of ``max_tokens`` for one that timed out (the endpoint may have written it all).
    unanswered_prompt_tokens: int = 0
    unanswered_completion_tokens: int = 0


class Meter:
    """Thread-safe updates of one :class:`Usage`, reported to ``on_change`` after each change."""

    def __init__(self, endpoint: str, on_change: Callable[[Usage], None] | None = None) -> None:
        self.usage = Usage()
        self.endpoint = endpoint
        self.on_change = on_change
        self._lock = threading.Lock()
        self._warned_usage = False
        self._on_change_failed = False

    def count_call(self, prompt_tokens: int, completion_tokens: int, reported: bool) -> None:
        """One billed request; warns once when the endpoint reports no token usage."""
        if not reported and not self._warned_usage:
            self._warned_usage = True
            log.warning("judge endpoint %s reports no token usage; token counts and costs will be too low",
                        self.endpoint)
        self.bump(calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    def bump(self, **deltas: float) -> None:
        with self._lock:
            usage = self.usage
            for name, delta in deltas.items():
                setattr(usage, name, getattr(usage, name) + delta)
            snapshot = replace(usage) if self.on_change is not None else None
        if snapshot is not None:
            try:
                self.on_change(snapshot)  # type: ignore[misc]
            except Exception:  # noqa: BLE001 - a progress display must not break judging
                if not self._on_change_failed:
                    self._on_change_failed = True
                    log.exception("judge on_change callback failed; further failures are not logged")
