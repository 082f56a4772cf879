"""One adaptive limiter per (endpoint, model) for the whole process: concurrency, pacing, pauses.

Every client of the process (each CLI run, each dashboard job on its own
thread and event loop) that talks to the same endpoint and model takes its
slots from the same :class:`Limiter`, so two jobs never send twice the load the
endpoint allows. It is thread-safe and loop-agnostic: waiters are woken with
``call_soon_threadsafe`` on their own loop.

What it does, and what each piece buys (see bench/judge.py's rate-limit run):

* **Concurrency that adapts** (AIMD): starts at 8 (or the cap), grows by one per
  clean reply until the first refusal (slow start), then by about one per
  window; a 429 or an overload (503) halves it. Without it a run keeps the
  whole configured concurrency hammering an endpoint that already refuses.
* **Pacing before refusal**: requests are spaced at the requests-per-minute
  limit (``settings.rpm``, or the endpoint's ``x-ratelimit-limit-requests``),
  and held until ``x-ratelimit-reset-requests`` when the endpoint says none
  remain; tokens per minute likewise (``settings.tpm`` or
  ``x-ratelimit-limit-tokens``). This is what keeps 429s rare instead of
  paying a Retry-After each time.
* **Shared pauses**: a ``Retry-After`` pauses every request to the endpoint,
  not just the one refused.

:attr:`Limiter.waited` (and each permit's ``paced_s``) counts the seconds
requests spent held by pacing and pauses, so a run can say how long rate
limits cost it.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping

#: Where the adaptive concurrency starts (it grows while replies are clean).
START = 8
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(raw: str | None) -> float | None:
    """OpenAI-style reset durations ('1s', '6m0s', '20ms', '0.5') in seconds; None when unreadable."""
    if not raw:
        return None
    text = str(raw).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def _int(raw: Any) -> int | None:
    try:
        value = int(float(raw))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


@dataclass
class Permit:
    """One admitted request; hand it back with :meth:`Limiter.release`."""

    tokens: int
    #: Seconds it was held by pacing or a pause (not by waiting for a free slot, which is plain queueing).
    paced_s: float


class Limiter:
    """Concurrency, request pacing, token pacing and pauses for one endpoint and model."""

    def __init__(self, cap: int, rpm: int | None = None, tpm: int | None = None) -> None:
        self._lock = threading.Lock()
        self.cap = cap
        self.limit = float(min(cap, START))
        self.in_use = 0
        self.rpm, self.tpm = rpm, tpm  # the user's limits; None: learned from headers
        self.learned_rpm: int | None = None
        self.learned_tpm: int | None = None
        self._slow_start = True
        self._next_at = 0.0  # earliest start of the next request (request pacing)
        self._tokens = 0.0  # token bucket level (token pacing)
        self._tokens_at = time.monotonic()
        self._hold_until = 0.0  # Retry-After or 'no requests remaining until reset'
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = deque()
        self.waited = 0.0
        self.refused = 0

    # -- settings of the run(s) using it --------------------------------------------------
    def configure(self, cap: int, rpm: int | None, tpm: int | None) -> None:
        """The latest settings on this endpoint win (one limit for every run)."""
        with self._lock:
            self.cap = cap
            self.limit = min(self.limit, float(cap))
            self.rpm, self.tpm = rpm or self.rpm, tpm or self.tpm
        self._wake()

    # -- acquire / release --------------------------------------------------------------
    async def acquire(self, tokens: int = 0) -> Permit:
        """Wait for a slot and for the pacing; returns the permit to release."""
        loop = asyncio.get_running_loop()
        paced = 0.0
        while True:
            with self._lock:
                wait = self._admit(tokens)
                future = None
                if wait is None:  # no free slot: woken by a release
                    future = loop.create_future()
                    self._waiters.append((loop, future))
            if wait == 0.0:
                break
            if future is not None:
                try:  # the timeout only guards against a lost wake-up
                    await asyncio.wait_for(future, 0.5)
                except asyncio.TimeoutError:
                    pass
            else:
                await asyncio.sleep(wait)
                paced += wait
        if paced:
            with self._lock:
                self.waited += paced
        return Permit(tokens, paced)

    def release(self, permit: Permit, *, status: int | None = None, headers: Mapping[str, str] | None = None,
                retry_after: float | None = None) -> None:
        """Hand a slot back, learning from the reply: a 429 or 503 cuts concurrency, a clean reply grows it."""
        now = time.monotonic()
        with self._lock:
            self.in_use -= 1
            if status in (429, 503):
                self.refused += status == 429
                self.limit = max(1.0, self.limit / 2)
                self._slow_start = False
                if retry_after is not None:
                    self._hold_until = max(self._hold_until, now + retry_after)
            elif status is not None and status < 400:
                self.limit = min(float(self.cap), self.limit + (1.0 if self._slow_start else 1.0 / self.limit))
            if headers:
                self._learn(headers, now)
        self._wake(max(1, int(self.limit) - self.in_use))

    # -- internals (under the lock) -------------------------------------------------------
    def _admit(self, tokens: int) -> float | None:
        """0.0 when admitted now, seconds to wait for pacing, or None to wait for a free slot."""
        now = time.monotonic()
        if now < self._hold_until:
            return self._hold_until - now
        if self.in_use >= max(1, int(self.limit)):
            return None
        rpm = self.rpm or self.learned_rpm
        if rpm and now < self._next_at:
            return self._next_at - now
        tpm = self.tpm or self.learned_tpm
        if tpm and tokens:
            per_second = tpm / 60.0
            self._tokens = min(max(per_second, float(tokens)), self._tokens + (now - self._tokens_at) * per_second)
            self._tokens_at = now
            if self._tokens < min(tokens, max(per_second, float(tokens))):
                return (tokens - self._tokens) / per_second
            self._tokens -= tokens
        if rpm:
            self._next_at = max(now, self._next_at) + 60.0 / rpm
        self.in_use += 1
        return 0.0

    def _learn(self, headers: Mapping[str, str], now: float) -> None:
        limit = _int(headers.get("x-ratelimit-limit-requests"))
        if limit:
            self.learned_rpm = limit
        remaining = _int(headers.get("x-ratelimit-remaining-requests"))
        reset = duration_seconds(headers.get("x-ratelimit-reset-requests"))
        if remaining == 0 and reset:
            # reset is when the bucket is full again; it refills continuously, so one request is back after
            # 60/limit s (holding for the whole reset cost a quarter of the allowed rate at 600 rpm)
            self._hold_until = max(self._hold_until, now + min(reset, 60.0 / limit if limit else reset))
        tokens = _int(headers.get("x-ratelimit-limit-tokens"))
        if tokens:
            self.learned_tpm = tokens

    def _wake(self, count: int | None = None) -> None:
        """Wake the first ``count`` waiters (all by default), in arrival order: one per free slot, so a
        release does not stir hundreds of waiting asks for one slot."""
        with self._lock:
            woken = []
            while self._waiters and (count is None or len(woken) < count):
                loop, future = self._waiters.popleft()
                if not future.done():
                    woken.append((loop, future))
        for loop, future in woken:
            try:
                loop.call_soon_threadsafe(_resolve, future)
            except RuntimeError:  # that loop is closed: nobody waits there any more
                pass


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


_LIMITERS: dict[tuple[str, str], Limiter] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter_for(endpoint: str, model: str, cap: int, rpm: int | None = None, tpm: int | None = None) -> Limiter:
    """The process's limiter of (endpoint, model), configured with the latest settings."""
    with _LIMITERS_LOCK:
        limiter = _LIMITERS.get((endpoint, model))
        if limiter is None:
            limiter = _LIMITERS[(endpoint, model)] = Limiter(cap, rpm, tpm)
            return limiter
    limiter.configure(cap, rpm, tpm)
    return limiter


def use_limiter(endpoint: str, model: str, limiter: Any) -> None:
    """Make ``limiter`` the process's limiter of (endpoint, model): e.g. a proxy of one shared by a cluster.

    It needs :meth:`Limiter.acquire`, :meth:`Limiter.release` and :meth:`Limiter.configure`.
    """
    with _LIMITERS_LOCK:
        _LIMITERS[(endpoint, model)] = limiter
