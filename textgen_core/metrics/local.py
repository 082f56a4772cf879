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
from .models.embeddings import SCORER as EMBEDDINGS
from .models.embeddings import problems as embedding_problems
from .models.lsa import SPEC as LSA

LOCAL_SPECS: tuple[LexicalSpec, ...] = (*LEXICAL_SPECS, CLASSIFICATION, BERTSCORE, LSA)  # type: ignore[assignment]
#: Endpoint metrics that can also run here (their spec's ``local_when``), by name: the scorer of the local way.
LOCAL_WAYS = {"semantic_similarity": EMBEDDINGS}
#: What keeps a local way from running here (model not installed...), checked before a run.
LOCAL_WAY_PROBLEMS = {"semantic_similarity": embedding_problems}


def score_local(rows: Sequence[Datum], selected: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Cell]]]:
    """Score ``rows`` with every metric in ``selected`` ({metric name: parameters}); lexical metrics share tokens.

    Module-level and fed only picklable values, so a process pool can run it on chunks of rows.
    """
    specs = {spec.name: spec for spec in LOCAL_SPECS}
    unknown = [name for name in selected if name not in specs and name not in LOCAL_WAYS]
    if unknown:
        raise ParameterError(f"not local metrics: {', '.join(unknown)}; local metrics: {', '.join(specs)}")
    jobs = [(specs[name].score, specs[name].resolve(params)) if name in specs else (LOCAL_WAYS[name], params)
            for name, params in selected.items()]  # a local way gets the parameters its spec resolved
    return dict(zip(selected, run(rows, jobs)))  # type: ignore[arg-type]
