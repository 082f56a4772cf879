"""Scoring several lexical metrics in one pass over a chunk of rows."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import ParameterError
from ...model import Cell, Datum
from .base import LexicalSpec, run
from .specs import SPECS


def score_lexical(
    rows: Sequence[Datum], selected: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[dict[str, Cell]]]:
    """Score ``rows`` with every metric in ``selected`` ({metric name: parameters}).

    Each text is tokenized once per tokenizer and its n-gram counts are built
    once, however many metrics share them. Module-level and fed only picklable
    values, so a process pool can run it on chunks of rows.
    """
    specs: dict[str, LexicalSpec] = {spec.name: spec for spec in SPECS}  # type: ignore[misc]
    unknown = [name for name in selected if name not in specs]
    if unknown:
        raise ParameterError(f"not lexical metrics: {', '.join(unknown)}; lexical metrics: {', '.join(specs)}")
    jobs = [(specs[name].score, specs[name].resolve(params)) for name, params in selected.items()]
    return dict(zip(selected, run(rows, jobs)))  # type: ignore[arg-type]
