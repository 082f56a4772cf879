"""Every metric computed on this machine without a judge: the lexical metrics, the classification family,
BERTScore and LSA. :func:`score_local` scores several of them over a chunk of rows in one pass."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import ParameterError
from ..model import Cell, Datum
from .classification.spec import SPEC as CLASSIFICATION
from .lexical.base import LexicalSpec, run
from .lexical.specs import SPECS as LEXICAL_SPECS
from .models.bertscore import SPEC as BERTSCORE
from .models.lsa import SPEC as LSA

LOCAL_SPECS: tuple[LexicalSpec, ...] = (*LEXICAL_SPECS, CLASSIFICATION, BERTSCORE, LSA)  # type: ignore[assignment]


def score_local(rows: Sequence[Datum], selected: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Cell]]]:
    """Score ``rows`` with every metric in ``selected`` ({metric name: parameters}); lexical metrics share tokens.

    Module-level and fed only picklable values, so a process pool can run it on chunks of rows.
    """
    specs = {spec.name: spec for spec in LOCAL_SPECS}
    unknown = [name for name in selected if name not in specs]
    if unknown:
        raise ParameterError(f"not local metrics: {', '.join(unknown)}; local metrics: {', '.join(specs)}")
    jobs = [(specs[name].score, specs[name].resolve(params)) for name, params in selected.items()]
    return dict(zip(selected, run(rows, jobs)))  # type: ignore[arg-type]
