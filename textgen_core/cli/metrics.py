"""`textgen-eval metrics`: every metric's declaration, read from the registry."""

from __future__ import annotations

import argparse

from ..judge.metric import DEPARTS
from ..metrics.registry import all_metrics, get_metric
from ..metrics.spec import GROUP_WORDS, MetricSpec


def register(sub: argparse._SubParsersAction) -> None:
    metrics = sub.add_parser("metrics", help="list metrics with their inputs, parameters and direction")
    metrics.add_argument("name", nargs="?", help="show one metric in full")
    metrics.set_defaults(handler=_metrics)


def describe(spec: MetricSpec) -> str:
    """A plain-text page for one metric: what it needs, its parameters with defaults, its rules."""
    low, high = spec.value_range
    lines = [f"{spec.name} - {spec.label} ({GROUP_WORDS[spec.group]})", f"  {spec.description}",
             f"  needs: {', '.join(spec.needs) or 'nothing beyond the row'}",
             f"  scores: {', '.join(spec.outputs(spec.resolve()))}; range {low} to {'inf' if high is None else high}; "
             f"{'higher is better' if spec.direction == 'higher' else 'lower is better' if spec.direction == 'lower' else 'no direction'}"]
    for p in spec.params:
        lines.append(f"  --param {spec.name}.{p.name}={p.default!r}  ({p.kind}) {p.help}")
    departures = tuple(getattr(spec.plan, "departures", ()) or ())
    notes = spec.notes.split(f" {DEPARTS} ")[0] if departures else spec.notes
    if notes:
        lines.append(f"  notes: {notes}")
    if departures:
        lines.append(f"  {DEPARTS}")
        lines.extend(f"    - {d}" for d in departures)
    reason = spec.unavailable()
    if reason:
        lines.append(f"  unavailable here: {reason}")
    return "\n".join(lines)


def _metrics(args: argparse.Namespace) -> int:
    if args.name:
        print(describe(get_metric(args.name)))
        return 0
    for spec in all_metrics().values():
        print(f"{spec.name:<22} {GROUP_WORDS[spec.group]:<9} {spec.direction:<7} {spec.description}")
    return 0
