"""Lexical metrics: ROUGE, BLEU, GLEU, METEOR, WER, exact match, token F1, MRR, lengths, pass@k.

Each module declares one metric (its :class:`~textgen_core.metrics.spec.MetricSpec`)
next to the code computing it. :func:`score_lexical` scores several of them
at once, sharing tokens between them.
"""

from __future__ import annotations

from ..spec import MetricSpec
from . import bleu, gleu, lengths, meteor, mrr, pass_at_k, qa, rouge, wer
from .engine import score_lexical

SPECS: tuple[MetricSpec, ...] = (
    rouge.SPEC,
    bleu.SPEC,
    gleu.SPEC,
    meteor.SPEC,
    wer.SPEC,
    qa.EXACT_MATCH,
    qa.TOKEN_F1,
    mrr.SPEC,
    lengths.SPEC,
    pass_at_k.SPEC,
)

__all__ = ["SPECS", "score_lexical"]
