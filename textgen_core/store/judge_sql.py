"""SQL for the judge: reply cache, verdicts and exchanges. Mixed into :class:`Store`."""

from __future__ import annotations


class JudgeTablesMixin:
    """Judge-related reads and writes; uses the owning Store's cursor and transaction helpers."""
