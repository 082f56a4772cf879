"""What every engine (in-process, streaming, Ray) applies the same way.

Which metrics can run on a dataset, the signature each score carries, and how
scored cells become stored records. Engines import this; it imports no engine.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping, Sequence

from .errors import ParameterError
from .registry import get_metric
from .metrics.spec import MetricSpec
from .model import Cell, Datum
from .store import CellRecord


def check_metrics(metrics: Sequence[str], params: Mapping[str, Mapping[str, Any]], fields: set[str],
                  judge: Any | None) -> list[str]:
    """Every reason the chosen metrics cannot run on this dataset, as 'metric: reason' lines."""
    problems = []
    for name in metrics:
        spec = get_metric(name)
        problems += [f"{name}: {reason}" for reason in spec.missing(fields, params.get(name, {}))]
        if spec.group != "lexical" and spec.is_local(params.get(name, {})):
            from .metrics.local import LOCAL_WAY_PROBLEMS

            problems += [f"{name}: {reason}" for reason in LOCAL_WAY_PROBLEMS[name](spec.resolve(params.get(name)))]
        elif not spec.is_local(params.get(name, {})) and judge is None:
            problems.append(f"{name}: needs a judge endpoint (base URL and model)")
    return problems


def signature(spec: MetricSpec, params: Mapping[str, Any], judge: Any | None, jury: Any | None = None) -> str:
    """The reproducibility signature a metric's scores carry (judge settings and prompt versions for judge metrics)."""
    text = spec.signature(params)
    if not spec.is_local(params) and judge is not None:
        from .judge.metrics import prompt_signature  # judge metrics only: a lexical run never loads the judge

        prompts = prompt_signature(spec.name)
        text += (f"|judge:{judge.model}|base_url:{judge.endpoint}|temperature:{judge.temperature}"
                 f"|seed:{judge.seed}|embedding:{judge.embedding_model or judge.model}"
                 f"|response:{judge.response_mode}")
        text += f"|prompts:{prompts}" if prompts else ""
        if jury is not None and not jury.plain:  # repeated judging or a panel (a plain run's signature stays)
            text += f"|samples:{jury.samples}|panel:{','.join(jury.names)}|aggregate:{jury.aggregate or 'auto'}"
    return text


#: The stored cell of a score the metric did not return.
NO_VALUE = Cell.unscored("the metric returned no value")


def cell_records(rows: Sequence[Datum], metric: str, outputs: Sequence[str], cells: Sequence[Mapping[str, Cell]]) -> Iterator[CellRecord]:
    """Stored records of a chunk's cells; a missing or non-finite value becomes unscored with its reason."""
    for row, by_score in zip(rows, cells):
        for score in outputs:
            cell = by_score.get(score) or NO_VALUE
            value, reason = stored_value(cell)
            yield row.datum_id, row.model, metric, score, value, cell.details, reason


def stored_value(cell: Cell) -> tuple[float | None, str | None]:
    """(value, reason) as a cell is stored: a non-finite value is unscored, its reason naming it."""
    value = cell.value
    if value is not None and not math.isfinite(value):
        return None, f"non-finite value {value}"
    return value, cell.reason


def cell_columns(rows: Sequence[Datum], metric: str, outputs: Sequence[str], cells: Sequence[Mapping[str, Cell]],
                 into: dict[str, list[Any]]) -> None:
    """:func:`cell_records`' records appended column by column to ``into`` (the lists of datum_id, model,
    metric, score, value, details, reason), in the same order and by the same rule: a chunk of a million-row
    file skips building a tuple per cell."""
    if len(cells) != len(rows):
        raise ValueError(f"{metric} returned {len(cells)} rows of cells for {len(rows)} rows")
    width = len(outputs)
    into["datum_id"].extend(row.datum_id for row in rows for _ in range(width))
    into["model"].extend(row.model for row in rows for _ in range(width))
    into["metric"].extend([metric] * (width * len(rows)))
    into["score"].extend(list(outputs) * len(rows))
    values, details, reasons = into["value"], into["details"], into["reason"]
    for by_score in cells:
        for score in outputs:
            cell = by_score.get(score) or NO_VALUE
            value, reason = stored_value(cell)
            values.append(value)
            details.append(cell.details)
            reasons.append(reason)


def judge_record(judge: Any | None, metrics: Sequence[str], jury: Any | None = None) -> dict[str, Any] | None:
    """What a run stores about its judge: public settings (never the key), the judge's fingerprint, and its
    panel and samples (``jury``, a :class:`~textgen_core.runs.panel.Jury`) when it has more than one vote."""
    if judge is None:
        return None
    panel = {"jury": jury.public()} if jury is not None and not jury.plain else {}
    return judge.public() | {"fingerprint": judge_fingerprint(judge, metrics, jury)} | panel


#: Fingerprint keys of a panel or of repeated judging (absent from a plain run's).
JURY_KEYS = ("samples", "aggregate", "panel")


def judge_fingerprint(judge: Any, metrics: Sequence[str], jury: Any | None = None) -> dict[str, Any]:
    """The judge's fingerprint, with the panel's and the samples' when there is more than one vote."""
    from .judge.metrics import fingerprint

    return fingerprint(judge, list(metrics)) | (jury.fingerprint() if jury is not None else {})


def check_same_judge(run_id: int, stored: Mapping[str, Any] | None, judge: Any | None,
                     metrics: Sequence[str], jury: Any | None = None) -> None:
    """Refuse to resume a run with a judge that would rule differently (model, endpoint, prompts...)."""
    before = (stored or {}).get("fingerprint")
    if judge is None or not before:
        return
    from .judge.metrics import fingerprint_changes

    now = judge_fingerprint(judge, metrics, jury)
    changes = fingerprint_changes(before, now)
    changes += [f"{name}: {before[name]!r} -> None" for name in JURY_KEYS if name in before and name not in now]
    if changes:
        raise ParameterError(f"run {run_id} was scored by another judge; resuming it would mix two judges' "
                             f"verdicts. What differs: {'; '.join(changes)}. Resume with the run's judge settings "
                             "(the key, timeout, concurrency and retries may change), or start a new run.")
