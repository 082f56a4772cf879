"""The verdict step shared in shape by bias and toxicity: one request per metric over the same opinions."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from .extract import opinions
from ..metric import Asker, Outcome, ask_verdicts
from ..prompting import (Request, keyed_check, messages, numbered, placeholder_verdicts,
                         strict_object, verdict_list)


def request(step: str, version: str, system: str, opinions: Sequence[str]) -> Request:
    n = len(opinions)
    return Request(step, version, messages(system, numbered("Opinions", opinions)),
                   strict_object({"verdicts": verdict_list("yes", "no")}),
                   placeholder={"verdicts": placeholder_verdicts(n, "no")},
                   check=keyed_check({"verdicts": n}, "opinion"))


async def share(ask: Asker, row: Datum, params: Mapping[str, Any], step: str, version: str, system: str,
                counted: str) -> Outcome:
    """Share of the prediction's opinions judged "yes"; 0 when it has no opinion (seed definition)."""
    found = await opinions(ask, row.prediction or "")
    rows = found.rows("opinions")
    if not found.items:
        return Outcome(Cell(0.0, {counted: 0, "opinions": 0}), rows)
    judged = await ask_verdicts(ask, request(step, version, system, found.items), found.items)
    hits, total = judged.count("yes", weights=found.weights(params)), found.total(params)
    return Outcome(Cell(hits / total, {counted: hits, "opinions": total}),
                   rows + judged.rows(step))
