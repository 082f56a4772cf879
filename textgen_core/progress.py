"""One progress record and callback type shared by the CLI, the dashboard and the engines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class Progress:
    """A snapshot of a run: rows or judge cells done, failed (unscored) and in flight; while judging, the
    judge requests made, retried and answered from the cache so far (:mod:`textgen_core.runs.calls`)."""

    phase: str  # "lexical", "judge", "aggregate", "done"
    total: int
    done: int
    failed: int = 0
    in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: int = 0
    #: Judge requests refused with 429 and waited out, and seconds requests waited for rate limits.
    rate_limited: int = 0
    waited_s: float = 0.0
    #: Extra judge attempts (transient failures, re-asks), and attempts that timed out or got a 5xx/429.
    retries: int = 0
    unanswered: int = 0
    #: Judge requests this session made that the endpoint may bill (answered, timed out or refused; retries
    #: included; cache hits are not calls): what the run's ``judge_calls`` adds up.
    calls: int = 0

    @property
    def unit(self) -> str:
        """What ``done`` and ``total`` count: judge cells, or rows."""
        return "cells" if self.phase == "judge" else "rows"

    @property
    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)


ProgressCallback = Callable[[Progress], None]
