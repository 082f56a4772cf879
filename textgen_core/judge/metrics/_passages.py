"""The request shape shared by the metrics that rule on each retrieved passage."""

from __future__ import annotations

from ..prompting import (TOKENS_PER_VERDICT, Request, keyed_check, messages, passages, placeholder_verdicts,
                         strict_object, verdict_list)

def request(step: str, version: str, system: str, head: str, contexts: list[str], *labels: str) -> Request:
    """A verdict per passage; ``head`` is the fenced text shown before the passages."""
    n = len(contexts)
    return Request(step, version, messages(system, f"{head}\n\n{passages(contexts)}".strip()),
                   strict_object({"verdicts": verdict_list(*labels)}),
                   placeholder={"verdicts": placeholder_verdicts(n, labels[-1])},
                   reply_tokens=6 + TOKENS_PER_VERDICT * n, check=keyed_check({"verdicts": n}, "passage"))
