"""Metric declarations and their registry."""

from .registry import all_metrics, direction_of, get_metric, resolve_params
from .spec import MetricSpec, Param

__all__ = ["MetricSpec", "Param", "all_metrics", "direction_of", "get_metric", "resolve_params"]
