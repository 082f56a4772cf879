"""Spending caps: a run stops before its judge calls or its judge cost pass the limits the user set.

The cap covers the whole run, resumes included: it starts from what the run
has already spent (``runs.judge_calls`` and ``runs.cost``). Before each billed
request (a direct HTTP attempt, or a line of a batch) :meth:`SpendingCap.admit`
adds up what is spent, what is on the wire and what this request may cost; if
that would pass a cap, the request is not sent and the cap is marked reached:
every later request is refused too, while those admitted before finish (they
fit). The cells that needed a refused request are left unwritten. Finished cells are kept; the run ends
``interrupted`` with the reason "budget reached", and ``resume`` (with a higher
cap, or none) finishes it.

A request's cost is known only once it is answered, so the cap counts a
request on the wire at an upper estimate: its prompt at 4 characters per token
(more tokens than the usual tokenizers count) and the longest reply seen so far
(256 tokens before any), at the run's prices -- batch prices in batch mode.

Every attempt the endpoint may bill counts: one that timed out (the endpoint
may have written the whole reply: counted with ``max_tokens``), or got a 5xx or
a 429, is a call, and its cost stays at the estimate; so does a reply whose
endpoint reports no usage. A resume starts from the earlier parts' calls and
cost, the cost taken from their tokens at this run's prices when that is more
(an earlier part run without prices counted $0). What each request billed is
written to the run's totals as the request ends, with its cached reply and
before its cell (the store's judge write queue), so a process killed with kill -9 loses
from them only the requests it had on the wire (at most ``concurrency``) and
those that ended in the writer's last batch window: a resume's cap starts from
everything else.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from .accounting import Usage
from .asker import Stopped
from .prompting import prompt_bound
from .settings import JudgeSettings

#: Completion tokens assumed for a request before any reply has been seen.
FIRST_REPLY_TOKENS = 256


class CapReached(Stopped):
    """This request was not sent: it could pass the run's spending cap. Its cell is left for the resume."""


@dataclass
class Hold:
    """One request admitted under the cap, until its reply is counted."""

    cap: "SpendingCap"
    cost: float
    released: bool = False
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
        self._holds = 0
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
            calls = self.calls() + self._holds + 1
            cost = self.cost() + self._held_cost + estimate
            if self.max_calls is not None and calls > self.max_calls:
                self._reach(f"budget reached: {self.max_calls} judge calls (--max-calls)")
            if self.max_cost is not None and cost > self.max_cost + 1e-12:
                self._reach(f"budget reached: the next judge call could take the cost past "
                            f"${self.max_cost:g} (--max-cost; ${self.cost():.4f} spent)")
            self._holds += 1
            self._held_cost += estimate
            return Hold(self, estimate, cut_off_cost=self._estimate(payload, self.settings.max_tokens))

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
            if reported:
                self._longest_reply = max(self._longest_reply, completion)  # bounds what a request may cost
            elif billed and not hold.released:  # billed without a usage: its upper estimate stays spent
                self._unreported += hold.cut_off_cost if cut_off else hold.cost
            if not hold.released:
                hold.released = True
                self._holds -= 1
                self._held_cost -= hold.cost

    def _estimate(self, payload: Mapping[str, Any], reply: int | None = None) -> float:
        prompt = prompt_bound(payload)
        if reply is None:
            reply = min(self._longest_reply or FIRST_REPLY_TOKENS, self.settings.max_tokens)
        return self.settings.price(prompt, reply) or 0.0
