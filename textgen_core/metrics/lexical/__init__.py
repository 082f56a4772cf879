"""Lexical metrics: ROUGE, BLEU, GLEU, METEOR, WER, exact match, token F1, MRR, lengths, pass@k.

Each module declares one metric (its :class:`~textgen_core.metrics.spec.MetricSpec`)
next to the code computing it. :func:`score_lexical` scores several of them
at once, sharing tokens between them.
"""

from __future__ import annotations

from .engine import score_lexical
from .specs import SPECS

__all__ = ["SPECS", "score_lexical"]
