"""The declarations of every lexical metric, in the order the picker and the docs show them."""

from __future__ import annotations

from ..spec import MetricSpec
from . import bleu, gleu, lengths, meteor, mrr, pass_at_k, qa, rouge, wer

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
