"""The request shape and the share shared by the metrics that rule on each retrieved passage."""

from __future__ import annotations

from ...model import Cell
from ..metric import Asker, Outcome, ask_verdicts
from ..prompting import (Request, keyed_check, messages, passages, placeholder_verdicts,
                         strict_object, verdict_list)

#: Missing inputs of the passage metrics: why they stay unscored where the seed system gives a number.
NOT_MEASURED = ("Missing is not zero: a row without retrieval data or without a reference was not measured, and a "
                "0 or a 1 for it would move the mean of the rows that were.")


def blank_contexts(effect: str) -> str:
    """The departure every metric that counts passages states: blank chunks are dropped at load."""
    return ("Blank contexts (empty or whitespace-only chunks) are dropped when the dataset is loaded, so they are "
            f"neither judged nor counted; the seed system keeps an empty chunk as a context, {effect}. The loader "
            "drops blank list items once for every metric, lexical and judge, so that all scores of a run read "
            "the same contexts; count empty chunks in your data before comparing retrievers on this metric.")


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
