"""Classification of label outputs: one metric family counted as the seed system (valor-lite) counts it."""

from __future__ import annotations

from .report import cell_datums, report
from .spec import SPEC

__all__ = ["SPEC", "cell_datums", "report"]
