"""The preflight of every run: which metrics, with which parameters, can run on which fields.

One function for the command line, the Python API, the dashboard's runs and
every engine: metric names are made canonical, parameters resolved and
checked, every reason a metric cannot run on the data is gathered into one
message (nothing is stored before it passes), and the signatures and the judge
record a run keeps are derived once. The data's fields come from a column
mapping (a file about to be read in chunks or blocks) or from a loaded dataset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..datasets.mapping import ColumnMapping
from ..errors import ParameterError
from ..registry import get_metric, resolve_params
from ..model import TEXT_FIELDS, Dataset
from ..run_rules import check_metrics, judge_record, signature
from ..store import Store


@dataclass(frozen=True)
class RunPlan:
    """What a run will score, as the store records it."""

    metrics: list[str]
    params: dict[str, dict[str, Any]]
    signatures: dict[str, str]
    judge: dict[str, Any] | None

    def start(self, store: Store, dataset_id: int, models: Sequence[str], kind: str) -> int:
        """Register the run ('running', this program as its runner, ``kind``: 'stored', 'streamed' or 'ray',
        which decides how it is resumed); returns its id."""
        return store.runs.create_run(dataset_id, self.metrics, self.params, self.signatures, list(models),
                                     self.judge, kind)


def plan_run(metrics: Sequence[str], params: Mapping[str, Mapping[str, Any]] | None, fields: set[str],
             judge: Any | None = None, *, note: str = "", jury: Any | None = None) -> RunPlan:
    """The plan of a run of ``metrics`` on data offering ``fields``; a ParameterError names every problem.

    ``note`` ends the message's first line (e.g. '; nothing was stored'); ``jury``: the run's panel and samples
    (:class:`~textgen_core.runs.panel.Jury`), recorded with the judge.
    """
    names = list(dict.fromkeys(get_metric(m).name for m in metrics))
    if not names:
        raise ParameterError("choose at least one metric")
    resolved = resolve_params(names, params)
    problems = plan_problems(names, resolved, fields, judge)
    if problems:
        raise ParameterError(f"cannot run these metrics on this dataset{note}:\n  " + "\n  ".join(problems))
    return RunPlan(names, resolved, {m: signature(get_metric(m), resolved[m], judge, jury) for m in names},
                   judge_record(judge, names, jury))


def plan_problems(metrics: Sequence[str], params: Mapping[str, Mapping[str, Any]], fields: set[str],
                  judge: Any | None = None) -> list[str]:
    """Every reason ``metrics`` (with resolved ``params``) cannot run on data offering ``fields``; empty when
    they can. The check :func:`plan_run` makes, for a form that lists the reasons before anything runs."""
    return check_metrics(metrics, params, fields, judge)


def mapped_fields(mapping: ColumnMapping, columns: Sequence[str]) -> set[str]:
    """The fields a file offers under ``mapping``: the mapped text fields and the columns left as metadata."""
    used = set(mapping.columns_used())
    fields = {f for f in TEXT_FIELDS if (bool(mapping.wide_predictions) if f == "prediction" and
                                         mapping.format == "wide" else bool(getattr(mapping, f, None)))}
    return fields | {c for c in columns if c not in used}


def dataset_fields(dataset: Dataset) -> set[str]:
    """The fields a loaded dataset offers: text fields with at least one value, and its metadata columns."""
    return {f for f in TEXT_FIELDS if dataset.has_field(f)} | set(dataset.metadata_columns)
