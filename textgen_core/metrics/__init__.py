"""The metrics computed here (lexical, classification, models, corpus aggregates) and the declaration
contract every metric follows; the registry of all metrics by name is :mod:`textgen_core.registry`."""

from .spec import MetricSpec, Param

__all__ = ["MetricSpec", "Param"]
