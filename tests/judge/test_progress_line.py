"""The judge's progress line (#18.8, #18.14): rate, time left, retries and timeouts; no stale characters."""

from __future__ import annotations

import io

import pytest

from textgen_core.cli.progress_bar import ProgressBar
from textgen_core.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def screen(text: str) -> str:
    """What a terminal shows after ``text``: each carriage return overwrites the line from its start."""
    line = ""
    for part in text.split("\r"):
        line = part + line[len(part):]
    return line


def test_a_shorter_redraw_leaves_no_stale_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 0.0, 1.0, 2.0, 3.0])
    monkeypatch.setattr("textgen_core.cli.progress_bar.time.monotonic", lambda: next(clock))
    out = Terminal()
    bar = ProgressBar(out, min_interval=0.0)
    bar.update(Progress("judge", 72, 0, in_flight=16, prompt_tokens=123456, retries=4, unanswered=12))
    bar.update(Progress("judge", 72, 1))
    bar.update(Progress("judge", 72, 2))
    shown = screen(out.getvalue())
    assert shown.rstrip().endswith("2/72 cells (1 cells/s, 1m10s left)"), shown
    assert "tokens" not in shown and "retries" not in shown  # blanked, not left over from the longer line


def test_retries_and_timeouts_show_before_any_cell_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 0.0, 200.0])
    monkeypatch.setattr("textgen_core.cli.progress_bar.time.monotonic", lambda: next(clock))
    out = io.StringIO()  # not a terminal: plain lines
    bar = ProgressBar(out, log_interval=5.0)
    bar.update(Progress("judge", 72, 0))
    bar.update(Progress("judge", 72, 0, in_flight=1, retries=3, unanswered=3))
    last = out.getvalue().splitlines()[-1]
    assert last == "judge: 0/72 cells (0%, 0 cells/s, in flight 1, retries 3, timed out or refused 3)", last


def test_units_stay_with_their_counts() -> None:
    out = io.StringIO()
    bar = ProgressBar(out, log_interval=0.0)
    bar.update(Progress("judge", 72, 72))
    bar.update(Progress("done", 4, 4))
    first, second = out.getvalue().splitlines()
    assert "72/72 cells" in first and "4/4 rows" in second
