"""What must be said wherever a judge score is shown: a judge whose verdicts never vary, a judge whose reasons are
one word, and a score with some human labels but fewer than the small-sample rule's minimum.

Results, Compare, Explore and the calibrated card draw these the same way: the library's words (a command line
hint becomes the page that does it) and a link that opens the Label page (or Explore) on this run and score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import streamlit as st

from textgen_core.compare.small_sample import MIN_LABELS

from . import data
from .safe_text import plain
from .widgets import link

CONSTANT, FEW_LABELS, REASONS, OTHER = "constant", "few labels", "one-word reasons", "other"
#: Command-line hints in the library's warnings, and what a page says instead (its link follows the warning).
_CLI_HINTS = {" (textgen-eval agreement)": " on the Label page"}


@dataclass(frozen=True)
class ScoreWarning:
    """One warning about one score of a run: its kind (what link it gets) and its text for people."""

    score: str
    kind: str
    text: str


def parse(text: str) -> ScoreWarning:
    """A library warning ('qa_grade (0-1, ...): every one of ...', 'qa_grade: only 3 human label(s) ...') as a
    ScoreWarning: the score is what precedes the first ':' or ' ('."""
    cut = min((i for i in (text.find(":"), text.find(" (")) if i > 0), default=0)
    kind = (CONSTANT if "do not vary" in text else FEW_LABELS if "human label" in text else
            REASONS if "one word" in text else OTHER)
    for hint, words in _CLI_HINTS.items():
        text = text.replace(hint, words)
    return ScoreWarning(text[:cut].strip(), kind, text)


def few_labels(label_counts: dict[str, int]) -> list[ScoreWarning]:
    """A warning per score with some human labels but fewer than MIN_LABELS (none: not a warning, an invitation)."""
    return [ScoreWarning(score, FEW_LABELS, f"{score}: only {n} human label{'' if n == 1 else 's'}; at least "
                         f"{MIN_LABELS} are needed to check the judge against people or to correct its numbers "
                         "with them")
            for score, n in sorted(label_counts.items()) if 0 < n < MIN_LABELS]


def label_counts(run_id: int) -> dict[str, int]:
    """Human labels per score of a run (people label while others read: not cached)."""
    labels = data.store().labels(run_id)
    return {str(k): int(v) for k, v in labels.groupby("score").size().items()} if not labels.empty else {}


def run_warnings(run_id: int) -> list[ScoreWarning]:
    """The run's judge warnings (data.review) and its few-labels warnings, in that order."""
    return [parse(w) for w in data.review(run_id)[1]] + few_labels(label_counts(run_id))


def show(run_id: int, warnings: Iterable[ScoreWarning], scores: Iterable[str] | None = None,
         kinds: Iterable[str] | None = None) -> None:
    """Each warning (of ``scores`` and ``kinds`` only, when given) with its link: the Label page for a constant
    judge or too few labels, Explore for one-word reasons."""
    wanted = None if scores is None else set(scores)
    shown = None if kinds is None else set(kinds)
    for warning in warnings:
        if (wanted is not None and warning.score not in wanted) or (shown is not None and warning.kind not in shown):
            continue
        st.warning(plain(warning.text), icon=":material/warning:")
        if warning.kind in (CONSTANT, FEW_LABELS) and warning.score:
            link("label", f"Label cells of {warning.score} in run {run_id}", icon=":material/label:",
                 run_id=run_id, params={"score": warning.score})
        elif warning.kind == REASONS:
            link("explore", f"Read the judge's replies in run {run_id}", icon=":material/search:", run_id=run_id,
                 params={"score": warning.score} if warning.score else None)
