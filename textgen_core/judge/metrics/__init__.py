"""The judge metrics: one module per metric, each defining ``SPEC`` (see :func:`..metric.declare`).

To add a judge metric: write ``textgen_core/judge/metrics/<name>.py`` with its
prompt (a ``Request`` builder using :mod:`..prompting`), its ``async def
score(ask, row, params) -> Outcome`` and ``SPEC = declare(...)`` (inputs, notes,
``JudgePlan(score, steps=(sample requests...), empty=...)``); then add the
module to :data:`MODULES` below. Shared extraction steps are in :mod:`..extract`.
"""

from __future__ import annotations

from typing import Any, Mapping

from ...metrics.spec import MetricSpec
from ..settings import JudgeSettings
from . import (answer_correctness, answer_relevance, bias, coherence, context_precision, context_recall,
               context_relevance, faithfulness, hallucination, pairwise_preference, perplexity, qa_grade,
               semantic_similarity, summary_coherence, toxicity)

MODULES = (answer_correctness, answer_relevance, bias, toxicity, context_precision, context_recall,
           context_relevance, faithfulness, hallucination, summary_coherence, coherence, qa_grade,
           semantic_similarity, perplexity, pairwise_preference)

SPECS: tuple[MetricSpec, ...] = tuple(m.SPEC for m in MODULES)
BY_NAME: dict[str, MetricSpec] = {spec.name: spec for spec in SPECS}


def prompt_signature(metric: str) -> str:
    """Prompt versions behind a judge metric, for its reproducibility signature ('' for none)."""
    return BY_NAME[metric].plan.prompt_versions()


def prompt_hashes(metrics: list[str] | None = None) -> dict[str, str]:
    """{prompt version: hash of its text} of the steps behind ``metrics`` (all by default)."""
    return {r.version: r.text_hash() for name in (metrics or list(BY_NAME))
            for r in BY_NAME[name].plan.steps}


def fingerprint(settings: JudgeSettings, metrics: list[str]) -> dict[str, Any]:
    """The judge a run is scored by: the settings that decide verdicts and a hash of every prompt it uses."""
    return settings.fingerprint() | {"prompts": prompt_hashes([m for m in metrics if m in BY_NAME])}


def fingerprint_changes(stored: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """Human-readable differences between two fingerprints ("model: 'judge-a' -> 'judge-b'")."""
    changes = [f"{name}: {stored.get(name)!r} -> {now.get(name)!r}" for name in sorted(set(stored) | set(now))
               if name != "prompts" and stored.get(name) != now.get(name)]
    old, new = stored.get("prompts") or {}, now.get("prompts") or {}
    changes += [f"prompt {v} changed" for v in sorted(set(old) | set(new)) if old.get(v) != new.get(v)]
    return changes
