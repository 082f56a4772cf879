"""Reads that review a run's judge: why cells are unscored, and whether its verdicts and reasons say anything.

Mixed into :class:`~textgen_core.store.Store`; read-only, one query each.
"""

from __future__ import annotations

import pandas as pd


class ReviewReadsMixin:
    """Grouped reasons of unscored cells, and the variety of a run's verdict reasons."""

    def unscored_reasons(self, run_id: int) -> pd.DataFrame:
        """score, model, reason, n: unscored cells of a run grouped by their exact reason, most frequent first."""
        return self._cur().execute(  # type: ignore[attr-defined]
            "SELECT score, model, coalesce(reason, '(no reason stored)') AS reason, count(*) AS n FROM scores "
            "WHERE run_id = ? AND value IS NULL GROUP BY score, model, reason ORDER BY score, n DESC, reason, model",
            [run_id]).df()

    def verdict_reason_words(self, run_id: int) -> pd.DataFrame:
        """metric, n_reasons, n_one_word: the judge's stated reasons per metric, and how many are one word or none."""
        return self._cur().execute(  # type: ignore[attr-defined]
            "SELECT metric, count(*) AS n_reasons, count(*) FILTER (WHERE len(string_split_regex("
            "trim(coalesce(reason, '')), '\\s+')) <= 1) AS n_one_word FROM verdicts WHERE run_id = ? "
            "GROUP BY metric ORDER BY metric", [run_id]).df()
