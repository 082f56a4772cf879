"""The declarations of every lexical metric, in the order the picker and the docs show them."""

from __future__ import annotations

from ..spec import MetricSpec
from .bleu import SPEC as BLEU
from .gleu import SPEC as GLEU
from .lengths import SPEC as LENGTHS
from .meteor import SPEC as METEOR
from .mrr import SPEC as MRR
from .pass_at_k import SPEC as PASS_AT_K
from .qa import EXACT_MATCH, TOKEN_F1
from .rouge import SPEC as ROUGE
from .wer import SPEC as WER

SPECS: tuple[MetricSpec, ...] = (
    ROUGE,
    BLEU,
    GLEU,
    METEOR,
    WER,
    EXACT_MATCH,
    TOKEN_F1,
    MRR,
    LENGTHS,
    PASS_AT_K,
)
