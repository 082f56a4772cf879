"""`textgen-eval run`: the command line turned into one plan object, in one place.

:func:`plan_from_args` reads every flag of ``run`` once and checks what can be
checked before a file is opened (metric names, parameters, the judge a judge
metric needs). Running (:mod:`.run_exec`) and printing (:mod:`.run_print`) read
the plan, never the flags. A new flag of ``run`` is one field here and one line in
:func:`plan_from_args`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParameterError
from ..registry import get_metric
from .metrics import define_judge_metrics

#: Fields ``--map FIELD=COLUMN`` may map.
MAPPABLE = ("id", "model", "query", "prediction", "references", "contexts")


@dataclass(frozen=True)
class ColumnChoices:
    """How the user mapped the file's columns (on top of the guessed mapping)."""

    maps: tuple[str, ...] = ()
    wide: tuple[str, ...] = ()
    list_format: str | None = None
    delimiter: str | None = None
    null_references: str | None = None

    def mapping(self, columns: list[str]) -> Any:
        """The :class:`~textgen_core.datasets.ColumnMapping` of a file with ``columns``: guessed, then the
        user's choices on top. A malformed ``--map`` is a ParameterError naming it."""
        from ..datasets import ColumnMapping, guess_mapping

        guessed = guess_mapping(columns).to_dict()
        for item in self.maps:
            name, sep, column = item.partition("=")
            if not sep or name not in MAPPABLE:
                raise ParameterError(f"--map {item!r}: expected FIELD=COLUMN with FIELD one of {', '.join(MAPPABLE)}")
            parts = [c.strip() for c in column.split(",") if c.strip()]
            guessed[name] = tuple(parts) if name in {"references", "contexts"} else (parts[0] if parts else None)
        if self.wide:
            guessed["format"] = "wide"
            guessed["wide_predictions"] = dict(item.split("=", 1) for item in self.wide if "=" in item)
        if self.list_format:
            guessed["list_format"] = self.list_format
        if self.delimiter is not None:
            guessed["delimiter"] = self.delimiter
        if self.null_references:
            guessed["null_references"] = self.null_references
        return ColumnMapping.from_dict(guessed)


@dataclass(frozen=True)
class RunCommand:
    """Everything ``textgen-eval run`` was asked to do."""

    data: str
    metrics: list[str]
    params: dict[str, dict[str, str]]
    columns: ColumnChoices
    models: list[str] | None = None
    judge: Any | None = None  # JudgeSettings
    jury: Any | None = None  # runs.panel.Jury: --samples, --jury-model, --jury-panel
    engine: str = "local"
    ray_address: str | None = None
    workers: int | None = None
    name: str | None = None  # the dataset's name (default: the file's)
    run_name: str | None = None  # the run's name (store/run_names_sql.py)
    tags: list[str] = field(default_factory=list)
    out: str | None = None
    unscored_above: float | None = None
    calibrate: list[str] = field(default_factory=list)
    dry_run: bool = False
    probe: bool = True

    @property
    def required(self) -> set[str]:
        """The fields the chosen metrics read."""
        return {need for m in self.metrics for need in get_metric(m).needs}

    @property
    def judged(self) -> list[str]:
        """The chosen metrics a judge scores."""
        return [m for m in self.metrics if not get_metric(m).is_local(self.params.get(m))]


def parse_params(items: list[str]) -> dict[str, dict[str, str]]:
    """['rouge.use_stemmer=true'] -> {'rouge': {'use_stemmer': 'true'}}"""
    params: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        metric, dot, name = key.partition(".")
        if not sep or not dot or not metric or not name:
            raise ParameterError(f"--param {item!r}: expected METRIC.NAME=VALUE")
        params.setdefault(get_metric(metric).name, {})[name.strip()] = value
    return params


def metric_names(text: str) -> list[str]:
    """'rouge, bleu' -> ['rouge', 'bleu']."""
    return [m.strip() for m in text.split(",") if m.strip()]


def plan_from_args(args: argparse.Namespace) -> RunCommand:
    """The plan of ``run``; refused (ParameterError, nothing stored) when a judge metric has no judge or a panel
    is asked of the Ray engine."""
    from ..store.run_names_sql import clean_name, clean_tag
    from .judge_args import judge_settings_from_args, jury_from_args

    metrics = metric_names(args.metrics)
    define_judge_metrics(args, metrics)
    for name in metrics:
        get_metric(name)  # an unknown name is refused before anything is read
    judge = judge_settings_from_args(args)
    plan = RunCommand(
        data=args.data, metrics=metrics, params=parse_params(args.param),
        columns=ColumnChoices(tuple(args.map), tuple(args.wide), args.list_format, args.delimiter,
                              getattr(args, "null_references", None)),
        models=[m.strip() for m in args.models.split(",")] if args.models else None,
        judge=judge, jury=jury_from_args(args, judge), engine=args.engine, ray_address=args.ray_address,
        workers=args.workers, name=args.name, run_name=clean_name(args.run_name) if args.run_name else None,
        tags=[clean_tag(t) for t in args.tag], out=args.out, unscored_above=args.fail_if_unscored_above,
        calibrate=list(args.calibrate), dry_run=args.dry_run, probe=not args.no_probe)
    if plan.judged and judge is None:
        raise ParameterError(f"{', '.join(plan.judged)} need a judge: give --judge-base-url and --judge-model "
                             "(or TEXTGEN_EVAL_JUDGE_* variables); nothing was stored")
    if plan.jury is not None and plan.engine == "ray":
        raise ParameterError("--samples and judge panels run on the local engine only: drop --engine ray")
    return plan
