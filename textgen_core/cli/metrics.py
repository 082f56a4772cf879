"""`textgen-eval metrics`: every metric's declaration, read from the registry."""

from __future__ import annotations

import argparse

from ..metrics.endpoint import DEPARTS
from ..registry import all_metrics, get_metric
from ..metrics.spec import GROUP_WORDS, MetricSpec


def register(sub: argparse._SubParsersAction) -> None:
    from .main import add_db_argument

    metrics = sub.add_parser("metrics", help="list metrics with their inputs, parameters and direction, and the "
                                             "judge metrics saved in the database")
    metrics.add_argument("name", nargs="?", help="show one metric in full (a custom one with its prompt)")
    metrics.add_argument("--markdown", nargs="?", const="metrics", choices=("metrics", "settings"),
                         help="print the docs' table of metrics (default) or of judge settings, generated from "
                              "their declarations")
    add_judge_metric_argument(metrics)
    add_db_argument(metrics)
    metrics.set_defaults(handler=_metrics)


def add_judge_metric_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge-metric", action="append", default=[], metavar="FILE",
                        help="a TOML file defining custom judge metrics (name, title, criteria, steps, inputs, "
                             "[output]); repeatable. Saved definitions are found by name in the database.")


def define_judge_metrics(args: argparse.Namespace, wanted: list[str]) -> None:
    """Define the metrics of every --judge-metric file, then any ``wanted`` name that is neither built in nor
    defined by a file but saved in the database (its latest version)."""
    from ..errors import ParameterError
    from ..judge.metrics.criteria import define, define_files

    define_files(getattr(args, "judge_metric", None) or [])
    missing = []
    for name in wanted:
        try:
            get_metric(name)
        except ParameterError:
            missing.append(name)
    store = _saved_store(args) if missing else None
    for name in missing:
        saved = store.load_criterion(name) if store is not None else None
        if saved is not None:
            define(saved[1], f"saved version {saved[0]}")


def _saved_store(args: argparse.Namespace):  # noqa: ANN202 - a Store or None
    """The database read-only, or None when the file does not exist (listing creates no database)."""
    from pathlib import Path

    from .main import open_store

    db = getattr(args, "db", None)
    if not db or db == ":memory:" or not Path(db).exists():
        return None
    return open_store(args, read_only=True)


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


_ARROWS = {"higher": "↑", "lower": "↓", "none": "–"}


def metrics_markdown() -> str:
    """The docs' metric table (docs/metrics.md): one row per declared metric, every cell read from its declaration."""
    lines = ["| metric | kind | scores written | needs | better | what it measures |",
             "| --- | --- | --- | --- | --- | --- |"]
    for spec in all_metrics().values():
        needs = ", ".join(spec.needs) or "–"
        columns = [f"`{p.name}`" + (f" (default `{p.default}`)" if p.default else "") for p in spec.params
                   if p.is_column]
        if columns:
            needs += "; column parameters " + ", ".join(columns)
        cells = (f"`{spec.name}`", GROUP_WORDS[spec.group], ", ".join(spec.outputs(spec.resolve())), needs,
                 _ARROWS[spec.direction], spec.description)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _metrics(args: argparse.Namespace) -> int:
    if args.markdown:
        from ..judge.settings import settings_markdown

        print(metrics_markdown() if args.markdown == "metrics" else settings_markdown(), end="")
        return 0
    define_judge_metrics(args, [args.name] if args.name else [])
    if args.name:
        spec = get_metric(args.name)
        print(describe(spec))
        if _custom(spec.name) is not None:
            print("  prompt (system):\n" + _indent(spec.plan.steps[0].messages[0]["content"]))
            print("  prompt (user, for a sample row):\n" + _indent(spec.plan.steps[0].messages[1]["content"]))
        return 0
    for spec in all_metrics().values():
        print(f"{spec.name:<22} {GROUP_WORDS[spec.group]:<9} {spec.direction:<7} {spec.description}")
    from ..judge.metrics.criteria import definitions

    for name, c in definitions().items():
        print(f"{name:<22} {'custom':<9} {c.direction:<7} {c.title} (from {c.source or 'Python'})")
    store = _saved_store(args)
    saved = store.criteria() if store is not None else None
    if saved is not None and len(saved):
        print("\nsaved judge metrics (custom; use by name in --metrics):")
        for row in saved.itertuples():
            print(f"{row.name:<22} v{row.version:<8} {row.title} (saved {str(row.created_at)[:16]})")
    return 0


def _custom(name: str):  # noqa: ANN202 - a Criterion or None
    from ..judge.metrics.criteria import definition

    return definition(name)


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())
