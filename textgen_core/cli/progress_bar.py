"""A dependency-free progress bar for the terminal (silent when not a TTY)."""

from __future__ import annotations

import time
from typing import TextIO

from ..progress import Progress


class ProgressBar:
    """Draws one line per update on a TTY; prints nothing when output is redirected."""

    def __init__(self, stream: TextIO, width: int = 30, min_interval: float = 0.1) -> None:
        self.stream = stream
        self.width = width
        self.min_interval = min_interval
        self.enabled = hasattr(stream, "isatty") and stream.isatty()
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
        if not self.enabled or (now - self._last < self.min_interval and p.done < p.total):
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
