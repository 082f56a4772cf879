"""Scoring several lexical metrics in one pass over a chunk of rows."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import ParameterError
from ...model import Cell, Datum
from .base import LexicalSpec
from .tokenize import TextCache


def _specs() -> dict[str, LexicalSpec]:
    from . import SPECS

    return {spec.name: spec for spec in SPECS}  # type: ignore[misc]


def score_lexical(
    rows: Sequence[Datum], selected: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[dict[str, Cell]]]:
    """Score ``rows`` with every metric in ``selected`` ({metric name: parameters}).

    Each text is tokenized once per tokenizer and its n-gram counts are built
    once, whatever the number of metrics sharing them. Module-level and fed
    only picklable values, so a process pool can run it on chunks of rows.
    """
    specs = _specs()
    unknown = [name for name in selected if name not in specs]
    if unknown:
        raise ParameterError(f"not lexical metrics: {', '.join(unknown)}; lexical metrics: {', '.join(specs)}")
    rows = list(rows)
    cache = TextCache()
    out: dict[str, list[dict[str, Cell]]] = {}
    for name, params in selected.items():
        spec = specs[name]
        out[name] = spec.inner(rows, spec.resolve(params), cache)
    return out
