"""Spending caps: a run stops before its judge calls or cost pass ``max_calls`` / ``max_cost``.

What the cap promises (whole run, resumes included; every billed attempt counted) is in the README's
"Spending cap". Here: a request on the wire is held at an upper estimate -- its prompt bound
(:func:`~.prompting.prompt_bound`) and the longest reply seen so far (:data:`FIRST_REPLY_TOKENS` before
any), at the run's prices -- until its reply reports what it cost.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from ..llm.accounting import Usage
from .asker import Stopped
from .prompting import prompt_bound
from .settings import JudgeSettings

#: Completion tokens assumed for a request before any reply has been seen.
FIRST_REPLY_TOKENS = 256


class CapReached(Stopped):
    """This request was not sent: it could pass the run's spending cap. Its cell is left for the resume."""


@dataclass(frozen=True, eq=False)
class Hold:
    """One request admitted under the cap, until its reply is counted (the cap knows which are open)."""

    cap: "SpendingCap"
    cost: float
    #: The estimate had the reply been cut at ``max_tokens`` (kept for an attempt that timed out).
    cut_off_cost: float = 0.0

    def release(self, reply: Any = None, *, billed: bool = True, cut_off: bool = False) -> None:
        """The request is over; ``reply`` (its JSON body, if any) tells how long replies get.

        ``billed``: the endpoint may bill it; without a reported usage its estimate stays spent
        (``cut_off``: at a reply of ``max_tokens``, since it timed out).
        """
        self.cap.settle(self, reply, billed, cut_off)


class SpendingCap:
    """Admits billed judge requests while calls and cost stay within ``max_calls`` and ``max_cost``.

    ``usage`` returns the client's running totals; ``start`` is that usage when
    the run began and ``spent_calls``/``spent_cost`` what the run spent before
    (an earlier, interrupted part).
    """

    def __init__(self, settings: JudgeSettings, usage: Callable[[], Usage], *, spent_calls: int = 0,
                 spent_cost: float = 0.0) -> None:
        self.settings = settings
        self.max_calls = settings.max_calls
        self.max_cost = settings.max_cost
        self._usage = usage
        self._start = replace(usage())
        self.spent_calls = spent_calls
        self.spent_cost = spent_cost
        self._lock = threading.Lock()
        self._open: set[Hold] = set()  # admitted requests whose reply is not counted yet
        self._held_cost = 0.0
        self._longest_reply = 0
        self._unreported = 0.0  # estimated cost of billed attempts whose usage the endpoint did not report
        self.reached = threading.Event()
        self.reason = ""

    @classmethod
    def for_run(cls, settings: JudgeSettings, usage: Callable[[], Usage], run: Mapping[str, Any]) -> "SpendingCap | None":
        """The cap of a run (None when no cap is set), counting what the run already spent."""
        if settings.max_calls is None and settings.max_cost is None:
            return None
        priced = settings.price(int(run.get("prompt_tokens") or 0), int(run.get("completion_tokens") or 0))
        return cls(settings, usage, spent_calls=int(run.get("judge_calls") or 0),
                   spent_cost=max(float(run.get("cost") or 0.0), priced or 0.0))

    # -- what the run spent ------------------------------------------------------------------
    def calls(self) -> int:
        """Billed calls of the run so far (earlier parts included), not counting requests on the wire."""
        return self.spent_calls + self._usage().calls - self._start.calls

    def cost(self) -> float:
        """Cost of the run so far (earlier parts included) at the run's prices."""
        now = self._usage()
        cost = self.settings.price(now.prompt_tokens - self._start.prompt_tokens,
                                   now.completion_tokens - self._start.completion_tokens)
        return self.spent_cost + (cost or 0.0) + self._unreported

    # -- admission ---------------------------------------------------------------------------
    def admit(self, payload: Mapping[str, Any]) -> Hold:
        """Hold room for one request with this JSON body, or raise :class:`CapReached`."""
        estimate = self._estimate(payload)
        with self._lock:
            if self.reached.is_set():
                raise CapReached(self.reason)
            calls = self.calls() + len(self._open) + 1
            cost = self.cost() + self._held_cost + estimate
            if self.max_calls is not None and calls > self.max_calls:
                self._reach(f"budget reached: {self.max_calls} judge calls (--max-calls)")
            if self.max_cost is not None and cost > self.max_cost + 1e-12:
                self._reach(f"budget reached: the next judge call could take the cost past "
                            f"${self.max_cost:g} (--max-cost; ${self.cost():.4f} spent)")
            hold = Hold(self, estimate, cut_off_cost=self._estimate(payload, self.settings.max_tokens))
            self._open.add(hold)
            self._held_cost += estimate
            return hold

    def _reach(self, reason: str) -> None:
        self.reason = reason
        self.reached.set()
        raise CapReached(reason)

    def settle(self, hold: Hold, reply: Any, billed: bool, cut_off: bool) -> None:
        """Book a finished request of ``hold``: its reported usage, else its estimate stays spent."""
        usage = reply.get("usage") if isinstance(reply, Mapping) else None
        completion = usage.get("completion_tokens") if isinstance(usage, Mapping) else None
        reported = isinstance(completion, int) and not isinstance(completion, bool)
        with self._lock:
            first = hold in self._open  # a hold is settled once; a second release changes nothing
            self._open.discard(hold)
            if reported:
                self._longest_reply = max(self._longest_reply, completion)  # bounds what a request may cost
            elif billed and first:  # billed without a usage: its upper estimate stays spent
                self._unreported += hold.cut_off_cost if cut_off else hold.cost
            if first:
                self._held_cost -= hold.cost

    def _estimate(self, payload: Mapping[str, Any], reply: int | None = None) -> float:
        prompt = prompt_bound(payload)
        if reply is None:
            reply = min(self._longest_reply or FIRST_REPLY_TOKENS, self.settings.max_tokens)
        return self.settings.price(prompt, reply) or 0.0
