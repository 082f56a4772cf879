"""One limiter per (endpoint, model) for the whole process, shared by every client on any thread or loop.

Concurrency adapts (slow start from 8, then about +1 per window; a 429, a 503 or a timeout halves it);
requests are paced at the requests- and tokens-per-minute limits (given, or read from ``x-ratelimit-*``
headers) before the endpoint refuses; a Retry-After pauses every request to the endpoint. ``waited``
counts the seconds requests were held.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections import deque
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping

#: Where the adaptive concurrency starts (it grows while replies are clean).
START = 8
#: Longest one request is held by pacing and pauses in all (the bound of Retry-After too): nonsense
#: headers (a reset in a day, a limit of one token) cost a request at most this.
MAX_HOLD = 120.0
#: Longest pause taken from ``x-ratelimit-reset-*`` headers: the limits they describe are per minute.
HEADER_HOLD = 60.0
#: Holds at least this long are announced on stderr with what they wait for (once per ANNOUNCE_EVERY s).
ANNOUNCE_HOLD = 2.0
ANNOUNCE_EVERY = 10.0
log = logging.getLogger("textgen_core.judge")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(raw: str | None) -> float | None:
    """OpenAI-style reset durations ('1s', '6m0s', '20ms', '0.5') in seconds; None when unreadable."""
    if not raw:
        return None
    text = str(raw).strip()
    try:
        value = float(text)
        return max(0.0, value) if math.isfinite(value) else None  # 'inf', '1e400', 'nan': no usable reset
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def _int(raw: Any) -> int | None:
    """A non-negative whole number from a header; None for anything else ('inf', '1e400', 'nan', text)."""
    try:
        number = float(raw)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number) or number < 0 or number > 1e15:
        return None
    return int(number)


@dataclass
class Permit:
    """One admitted request; hand it back with :meth:`Limiter.release`."""

    tokens: int
    #: Seconds it was held by pacing or a pause (not by waiting for a free slot, which is plain queueing).
    paced_s: float
    #: When it was admitted (monotonic): a timeout cuts concurrency once per wave of requests.
    at: float = 0.0


class Limiter:
    """Concurrency, request pacing, token pacing and pauses for one endpoint and model."""

    def __init__(self, cap: int, rpm: int | None = None, tpm: int | None = None, *,
                 max_hold: float = MAX_HOLD, header_hold: float = HEADER_HOLD) -> None:
        self._lock = threading.Lock()
        self.max_hold, self.header_hold = max_hold, header_hold
        self._announced = -ANNOUNCE_EVERY
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
        self._hold_why = ""  # what the current hold waits for (said on stderr when it is long)
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = deque()
        self.waited = 0.0
        self.refused = 0
        self.timeouts = 0
        #: Concurrency learned from timeouts (None until one): what the server serves within the timeout.
        self.ceiling: int | None = None
        self._cut_at = 0.0
        self._why = ""

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
                wait = self._admit(tokens, paced_out=paced >= self.max_hold)
                why = self._why
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
                wait = min(wait, max(0.01, self.max_hold - paced))  # a request is held max_hold s at most
                if wait >= min(ANNOUNCE_HOLD, self.max_hold / 2) and self._announce():
                    log.warning("judge: waiting %.0f s for the endpoint's rate limit (%s; %.0f s at most)",
                                wait, why, self.max_hold)
                await asyncio.sleep(wait)
                paced += wait
        if paced:
            with self._lock:
                self.waited += paced
        return Permit(tokens, paced, time.monotonic())

    def release(self, permit: Permit, *, status: int | None = None, headers: Mapping[str, str] | None = None,
                retry_after: float | None = None, timed_out: bool = False, slow: bool = False) -> None:
        """Hand a slot back, learning from the reply: a 429, a 503 or a timeout cuts concurrency, a clean
        reply grows it. A timeout is what a server with fewer slots than our concurrency shows: the
        requests it queues wait out their timeout there (a one-slot llama.cpp server at concurrency 16).
        ``slow``: the reply took more than half the timeout; concurrency does not grow on it."""
        now = time.monotonic()
        with self._lock:
            self.in_use -= 1
            if timed_out:
                self.timeouts += 1
                if permit.at >= self._cut_at:  # one cut per wave: those sent with it time out together
                    self.limit = max(1.0, self.limit / 2)
                    self.ceiling = int(self.limit)  # the server's pace: growth stops here from now on
                    self._cut_at = now
                self._slow_start = False
            elif status in (429, 503):
                self.refused += status == 429
                self.limit = max(1.0, self.limit / 2)
                self._slow_start = False
                if retry_after is not None:
                    self._hold(now, retry_after, f"Retry-After {retry_after:.0f} s")
            elif slow:
                self._slow_start = False  # near the timeout already: more requests at once would cross it
            elif status is not None and status < 400:
                self.limit = min(float(min(self.cap, self.ceiling or self.cap)),
                                 self.limit + (1.0 if self._slow_start else 1.0 / self.limit))
            if headers:
                self._learn(headers, now, permit.tokens if status is not None and status < 400 else 0)
        self._wake(max(1, int(self.limit) - self.in_use))

    # -- internals (under the lock) -------------------------------------------------------
    def _announce(self) -> bool:
        """True at most once per :data:`ANNOUNCE_EVERY` seconds (many requests wait for one hold)."""
        with self._lock:
            now = time.monotonic()
            if now - self._announced < ANNOUNCE_EVERY:
                return False
            self._announced = now
            return True

    def _hold(self, now: float, seconds: float, why: str) -> None:
        """Pause every request until ``seconds`` from now (at most ``max_hold``)."""
        until = now + min(max(0.0, seconds), self.max_hold)
        if until > self._hold_until:
            self._hold_until, self._hold_why = until, why

    def _admit(self, tokens: int, paced_out: bool = False) -> float | None:
        """0.0 when admitted now, seconds to wait for pacing, or None to wait for a free slot.

        ``paced_out``: this request was already held :data:`MAX_HOLD` s; it skips pacing and pauses.
        Sets ``_why`` to what a wait is for.
        """
        now = time.monotonic()
        self._why = ""
        if now < self._hold_until and not paced_out:
            self._why = self._hold_why
            return self._hold_until - now
        if self.in_use >= max(1, int(self.limit)):
            return None
        rpm = self.rpm or self.learned_rpm
        if rpm and now < self._next_at and not paced_out:
            self._why = f"{rpm} requests per minute"
            return self._next_at - now
        tpm = self.tpm or self.learned_tpm
        if tpm and tokens and not paced_out:
            per_second = tpm / 60.0
            self._tokens = min(max(per_second, float(tokens)), self._tokens + (now - self._tokens_at) * per_second)
            self._tokens_at = now
            if self._tokens < min(tokens, max(per_second, float(tokens))):
                self._why = f"{tpm} tokens per minute, about {tokens} for this request"
                return (tokens - self._tokens) / per_second
            self._tokens -= tokens
        if rpm:
            self._next_at = max(now, self._next_at) + 60.0 / rpm
        self.in_use += 1
        return 0.0

    def _learn(self, headers: Mapping[str, str], now: float, served: int = 0) -> None:
        """Limits from ``x-ratelimit-*`` headers; ``served``: tokens of the request just answered (a tokens
        limit below it is nonsense: the endpoint just served more)."""
        limit = _int(headers.get("x-ratelimit-limit-requests"))
        if limit:
            self.learned_rpm = limit
        remaining = _int(headers.get("x-ratelimit-remaining-requests"))
        reset = duration_seconds(headers.get("x-ratelimit-reset-requests"))
        if remaining == 0 and reset:
            # reset is when the bucket is full again; it refills continuously, so one request is back after
            # 60/limit s (holding for the whole reset cost a quarter of the allowed rate at 600 rpm)
            self._hold(now, min(reset, 60.0 / limit if limit else reset, self.header_hold),
                       f"x-ratelimit-remaining-requests 0, reset in {reset:.0f} s")
        tokens = _int(headers.get("x-ratelimit-limit-tokens"))
        if tokens and tokens >= served:
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
