"""The request shape and the share shared by the metrics that rule on each retrieved passage."""

from __future__ import annotations

from ...model import Cell
from ..metric import Asker, Outcome, ask_verdicts
from ..prompting import (Request, keyed_check, messages, passages, placeholder_verdicts,
                         strict_object, verdict_list)

def request(step: str, version: str, system: str, head: str, contexts: list[str], *labels: str) -> Request:
    """A verdict per passage; ``head`` is the fenced text shown before the passages."""
    n = len(contexts)
    return Request(step, version, messages(system, f"{head}\n\n{passages(contexts)}".strip()),
                   strict_object({"verdicts": verdict_list(*labels)}),
                   placeholder={"verdicts": placeholder_verdicts(n, labels[-1])},
                   check=keyed_check({"verdicts": n}, "passage"))


async def share(ask: Asker, req: Request, ctx: list[str], label: str, counted: str) -> Outcome:
    """Share of the passages judged ``label``, with the count under ``counted`` in the details."""
    judged = await ask_verdicts(ask, req, ctx)
    hits = judged.count(label)
    return Outcome(Cell(hits / len(ctx), {counted: hits, "contexts": len(ctx)}), judged.rows(req.step))
