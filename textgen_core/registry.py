"""All metrics by name, and the lookups everyone else uses.

It stands above both families that declare metrics, ``metrics/`` (computed here) and ``judge/metrics/``
(asked of a judge or an endpoint); neither imports it. The judge's metrics are imported when first
looked up, so a process that scores only local metrics (a pool worker) never loads the judge client.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from .errors import ParameterError
from .metrics.spec import MetricSpec


@lru_cache(maxsize=1)
def all_metrics() -> dict[str, MetricSpec]:
    """Every declared metric, lexical first, in a stable order."""
    from .judge.metrics import SPECS as judge_specs  # a broken judge import fails loudly, never hides metrics
    from .metrics.local import LOCAL_SPECS as lexical_specs

    specs: list[MetricSpec] = [*lexical_specs, *judge_specs]
    by_name: dict[str, MetricSpec] = {}
    for spec in specs:
        if spec.name in by_name:
            raise RuntimeError(f"metric {spec.name} is declared twice")
        by_name[spec.name] = spec
    return by_name


def get_metric(name: str) -> MetricSpec:
    specs = all_metrics()
    key = name.strip()
    if key in specs:
        return specs[key]
    owner = _score_owner().get(key)
    if owner is not None:
        return specs[owner]
    from .judge.metrics.criteria.known import defined  # custom judge metrics defined in this process

    custom = defined(key)
    if custom is not None:
        return custom
    raise ParameterError(f"unknown metric {name!r}; known metrics: {', '.join(specs)}")


@lru_cache(maxsize=1)
def _score_owner() -> dict[str, str]:
    """Score name -> metric name, for default parameters (e.g. 'rouge1' -> 'rouge')."""
    owner: dict[str, str] = {}
    for spec in all_metrics().values():
        for score in spec.outputs(spec.resolve()):
            owner.setdefault(score, spec.name)
    return owner


def direction_of(score: str) -> str:
    """'higher', 'lower' or 'none' for a score name or a metric name."""
    try:
        return get_metric(score).direction
    except ParameterError:
        return "higher"


def resolve_params(metrics: list[str], raw: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Validated parameters for each metric; unknown metric names in ``raw`` are an error."""
    raw = raw or {}
    unknown = sorted(set(raw) - set(metrics))
    if unknown:
        raise ParameterError(f"parameters given for metrics not selected: {', '.join(unknown)}")
    return {name: get_metric(name).resolve(raw.get(name)) for name in metrics}
