"""A dependency-free progress bar for the terminal; a plain line every few seconds when not a TTY (CI logs)."""

from __future__ import annotations

import time
from typing import TextIO

from ..progress import Progress


class ProgressBar:
    """Redraws one line per update on a TTY; when output is redirected, prints a line every ``log_interval`` s."""

    def __init__(self, stream: TextIO, width: int = 30, min_interval: float = 0.1, log_interval: float = 5.0) -> None:
        self.stream = stream
        self.width = width
        self.min_interval = min_interval
        self.enabled = hasattr(stream, "isatty") and stream.isatty()
        self.log_interval = log_interval
        self._started = time.monotonic()
        self._logged = False
        self._last = 0.0
        self._drawn = False

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()

    def update(self, p: Progress) -> None:
        now = time.monotonic()
        if not self.enabled:
            self._log(p, now)
            return
        if now - self._last < self.min_interval and p.done < p.total:
            return
        self._last = now
        filled = int(self.width * p.fraction)
        bar = "#" * filled + "-" * (self.width - filled)
        extra = f" unscored {p.failed}" if p.failed else ""
        if p.in_flight:
            extra += f" in flight {p.in_flight}"
        if p.prompt_tokens or p.completion_tokens:
            extra += f" tokens {p.prompt_tokens + p.completion_tokens}"
        self.stream.write(f"\r{p.phase:<9} [{bar}] {p.done}/{p.total}{extra}   ")
        self.stream.flush()
        self._drawn = True

    def _log(self, p: Progress, now: float) -> None:
        """One complete line (no carriage return) at the first update, then every ``log_interval`` seconds."""
        if self._logged and now - self._last < self.log_interval and p.phase != "done":
            return
        self._last, self._logged = now, True
        rate = p.done / max(now - self._started, 1e-9)
        extra = f", unscored {p.failed}" if p.failed else ""
        self.stream.write(f"{p.phase}: {p.done}/{p.total} ({100 * p.fraction:.0f}%, {rate:,.0f}/s{extra})\n")
        self.stream.flush()
