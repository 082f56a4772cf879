"""A dependency-free progress bar for the terminal; a plain line every few seconds when not a TTY (CI logs).

Both forms show the rate and, once something is done, the time left; judge retries and attempts that
timed out or were refused (5xx, 429) show as soon as there are any, so a slow server is visible
before the first cell is. Counts keep their unit (cells while judging, rows otherwise).
"""

from __future__ import annotations

import time
from typing import TextIO

from ..progress import Progress


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class ProgressBar:
    """Redraws one line per update on a TTY; when output is redirected, prints a line every ``log_interval`` s."""

    def __init__(self, stream: TextIO, width: int = 30, min_interval: float = 0.1, log_interval: float = 5.0) -> None:
        self.stream = stream
        self.width = width
        self.min_interval = min_interval
        self.enabled = hasattr(stream, "isatty") and stream.isatty()
        self.log_interval = log_interval
        self._started = time.monotonic()
        self._phase_started: dict[str, tuple[float, int]] = {}
        self._logged = False
        self._last = 0.0
        self._drawn = 0  # length of the line on screen (a shorter redraw blanks the rest)
        #: The last progress of each phase ('judge': its calls made, retries and cache hits, for the summary).
        self.last: dict[str, Progress] = {}

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()

    def details(self, p: Progress, now: float) -> str:
        """Rate, time left and what went wrong so far, e.g. ', 0.4 cells/s, 2m10s left, 3 retries'."""
        started, first = self._phase_started.setdefault(p.phase, (now, p.done))
        elapsed = max(now - started, 1e-9)
        rate = (p.done - first) / elapsed
        parts = [f"{rate:,.2g} {p.unit}/s" if rate < 10 else f"{rate:,.0f} {p.unit}/s"]
        if rate > 0 and p.done < p.total:
            parts.append(f"{_duration((p.total - p.done) / rate)} left")
        if p.failed:
            parts.append(f"unscored {p.failed}")
        if p.in_flight:
            parts.append(f"in flight {p.in_flight}")
        if p.calls:
            parts.append(f"calls {p.calls}")
        if p.retries:
            parts.append(f"retries {p.retries}")
        if p.unanswered:
            parts.append(f"timed out or refused {p.unanswered}")
        if p.prompt_tokens or p.completion_tokens:
            parts.append(f"tokens {p.prompt_tokens + p.completion_tokens}")
        return ", ".join(parts)

    def update(self, p: Progress) -> None:
        self.last[p.phase] = p
        now = time.monotonic()
        if not self.enabled:
            self._log(p, now)
            return
        if now - self._last < self.min_interval and p.done < p.total:
            return
        self._last = now
        filled = int(self.width * p.fraction)
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"{p.phase:<9} [{bar}] {p.done}/{p.total} {p.unit} ({self.details(p, now)})"
        self.stream.write("\r" + line + " " * max(0, self._drawn - len(line)))
        self.stream.flush()
        self._drawn = len(line)

    def _log(self, p: Progress, now: float) -> None:
        """One complete line (no carriage return) at the first update, then every ``log_interval`` seconds."""
        if self._logged and now - self._last < self.log_interval and p.phase != "done":
            return
        self._last, self._logged = now, True
        self.stream.write(f"{p.phase}: {p.done}/{p.total} {p.unit} ({100 * p.fraction:.0f}%, {self.details(p, now)})\n")
        self.stream.flush()
