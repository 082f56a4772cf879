"""The judge metrics: one module per metric, each defining ``SPEC`` (see :func:`..metric.declare`).

To add a judge metric: write ``textgen_core/judge/metrics/<name>.py`` with its
prompt (a ``Request`` builder using :mod:`..prompting`), its ``async def
score(ask, row, params) -> Outcome`` and ``SPEC = declare(...)`` (inputs, notes,
``JudgePlan(score, steps=(sample requests...), empty=...)``); then add the
module to :data:`MODULES` below, and regenerate the docs' tables (``python scripts/docs-tables.py``).
Nothing else lists the judge metrics: the CLI, the dashboard and the test suites read the registry
(tests/judge/test_judge_metric_registry.py); the one deliberate exception is the lock of prompt hashes
(RECORDED in tests/judge/test_judge_metrics_formulas.py, whose failure prints the line to add), which
keeps a prompt from changing without a new version. Shared extraction steps are in :mod:`.extract`.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Mapping

from ...metrics.spec import MetricSpec
from ...metrics.endpoint import perplexity, semantic_similarity
from .criteria.known import defined, definition, definitions  # not the package's define: no import circle
from ..settings import JudgeSettings
from . import (answer_correctness, answer_relevance, bias, coherence, context_precision, context_recall,
               context_relevance, faithfulness, hallucination, pairwise_preference, qa_grade, summary_coherence,
               toxicity)

MODULES = (answer_correctness, answer_relevance, bias, toxicity, context_precision, context_recall,
           context_relevance, faithfulness, hallucination, summary_coherence, coherence, qa_grade,
           semantic_similarity, perplexity, pairwise_preference)

SPECS: tuple[MetricSpec, ...] = tuple(m.SPEC for m in MODULES)
BUILT_IN: dict[str, MetricSpec] = {spec.name: spec for spec in SPECS}


class _JudgeMetrics(Mapping[str, MetricSpec]):
    """The built-in judge metrics, then the custom ones defined in this process (see :mod:`.criteria`)."""

    def __getitem__(self, name: str) -> MetricSpec:
        found = BUILT_IN.get(name) or defined(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        yield from BUILT_IN
        yield from (n for n in definitions() if n not in BUILT_IN)

    def __len__(self) -> int:
        return sum(1 for _ in self)


#: Every judge metric by name, built-in and custom.
BY_NAME: Mapping[str, MetricSpec] = _JudgeMetrics()


def prompt_signature(metric: str) -> str:
    """Prompt versions behind a judge metric, for its reproducibility signature ('' for none)."""
    return BY_NAME[metric].plan.prompt_versions()


def prompt_hashes(metrics: list[str] | None = None) -> dict[str, str]:
    """{prompt version: hash of its text} of the steps behind ``metrics`` (all by default)."""
    return {r.version: r.text_hash() for name in (metrics or list(BUILT_IN))
            for r in BY_NAME[name].plan.steps}


def fingerprint(settings: JudgeSettings, metrics: list[str]) -> dict[str, Any]:
    """The judge a run is scored by: the settings that decide verdicts and a hash of every prompt it uses."""
    found = settings.fingerprint() | {"prompts": prompt_hashes([m for m in metrics if m in BY_NAME])}
    custom = {m: c.as_dict() for m in metrics if m not in BUILT_IN and (c := definition(m)) is not None}
    return found | ({"criteria": custom} if custom else {})


def fingerprint_changes(stored: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """Human-readable differences between two fingerprints ("model: 'judge-a' -> 'judge-b'")."""
    # A setting a newer version left out of the fingerprint (max_tokens) is no change.
    changes = [f"{name}: {stored.get(name)!r} -> {now.get(name)!r}" for name in sorted(set(now))
               if name not in ("prompts", "criteria") and stored.get(name) != now.get(name)]
    was, given = stored.get("criteria") or {}, now.get("criteria") or {}
    for name in sorted(set(was) | set(given)):
        if was.get(name) != given.get(name):
            changes.append(f"judge metric {name} was edited ({_edits(was.get(name), given.get(name))})")
    old, new = stored.get("prompts") or {}, now.get("prompts") or {}
    changes += [f"prompt {v} changed" for v in sorted(set(old) | set(new)) if old.get(v) != new.get(v)]
    return changes


def _edits(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    """Which keys of a custom metric's definition differ: "criteria: 'a' -> 'b'; output: ..."."""
    if before is None or after is None:
        return "not defined before" if before is None else "no longer defined"
    return "; ".join(f"{key}: {json.dumps(before.get(key), ensure_ascii=False)[:80]} -> "
                     f"{json.dumps(after.get(key), ensure_ascii=False)[:80]}"
                     for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key))
