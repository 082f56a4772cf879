"""The judge calls of an alignment: the reflective rewrite and each candidate on the held-out rows.

They go through the judge client built for the alignment (its reply cache in the store, so a second
alignment asks nothing again; its spending cap when ``--max-calls``/``--max-cost`` are set) and through the
same asker and cell scorer as a run, so a reply is validated, re-asked once and, failing that, leaves the cell
unscored with its reason. :func:`estimate` counts the calls before any is made.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import BudgetReached
from ..judge.asker import ClientAsker, Gate, Stopped
from ..judge.budget import SpendingCap
from ..judge.client import JudgeClient, Unscored
from ..judge.engine import run_sync
from ..judge.metric import StepFailed
from ..judge.metrics.criteria import Criterion, request
from ..judge.metrics.criteria.metric import scorer
from ..judge.prompting import Request, estimate_tokens
from ..judge.settings import JudgeSettings
from ..model import Datum

#: (datum_id, model) of a cell.
Key = tuple[str, str]


@dataclass(frozen=True)
class Judged:
    """A candidate's values on the held-out rows: the value of each scored cell, the reason of each other."""

    values: dict[Key, float]
    unscored: dict[Key, str]


@dataclass(frozen=True)
class CallEstimate:
    """Judge calls an alignment would make (cached replies excluded), tokens and cost (None without prices)."""

    calls: int
    cached: int
    prompt_tokens: int
    cost: float | None
    #: Calls counted as an upper bound (the rewrite's cells, before its reply is known).
    bound: int = 0

    def text(self) -> str:
        cost = "" if self.cost is None else f", about ${self.cost:.4f}"
        upper = f" (at most; {self.bound} of them depend on the rewrite's reply)" if self.bound else ""
        return (f"{self.calls} judge calls{upper}, {self.cached} served by the cache, about {self.prompt_tokens} "
                f"prompt tokens{cost}")


def make_client(settings: JudgeSettings, store: Any) -> tuple[JudgeClient, SpendingCap | None]:
    """The alignment's client: the store's reply cache, and a spending cap when the settings set one."""
    parent = JudgeClient(settings, store)
    if settings.max_calls is None and settings.max_cost is None:
        return parent, None
    cap = SpendingCap(settings, lambda: parent.usage)
    return parent.for_run(cap=cap), cap


def _stopped(cap: SpendingCap | None) -> BudgetReached:
    reason = cap.reason if cap is not None and cap.reason else "the judge stopped"
    return BudgetReached(f"{reason}; the alignment stopped before judging every candidate. The replies so far "
                         "are cached: run it again with a higher cap, and they are not asked again")


def ask_once(client: JudgeClient, cap: SpendingCap | None, req: Request) -> Any:
    """One judge call (the reflective rewrite): its reply value, or the reason it has none."""
    async def go() -> Any:
        try:
            return (await client.ask(list(req.messages), req.schema, schema_name=req.step,
                                     prompt_version=req.version)).value
        except Unscored as exc:
            return exc
        finally:
            await client.aclose()
    try:
        return run_sync(go)
    except Stopped:
        raise _stopped(cap) from None


def judge_rows(client: JudgeClient, cap: SpendingCap | None, c: Criterion, rows: Sequence[Datum]) -> Judged:
    """Score ``rows`` with the criterion ``c``, as a run would (cached, capped, unscored with reasons)."""
    score = scorer(c)
    values: dict[Key, float] = {}
    unscored: dict[Key, str] = {}
    limit = max(1, client.settings.concurrency)

    async def go() -> None:
        gate, room = Gate(), asyncio.Semaphore(limit)
        asker = ClientAsker(client, gate)

        async def one(row: Datum) -> None:
            key = (row.datum_id, row.model)
            if "prediction" in c.inputs and not (row.prediction or "").strip():
                unscored[key] = "empty prediction"
                return
            async with room:
                try:
                    outcome = await score(asker, row, {})
                except StepFailed as exc:
                    unscored[key] = exc.reason
                    return
            if outcome.cell.value is None:
                unscored[key] = str(outcome.cell.reason)
            else:
                values[key] = float(outcome.cell.value)
        try:
            await asyncio.gather(*(one(r) for r in rows))
        finally:
            await client.aclose()
    try:
        run_sync(go)
    except Stopped:
        raise _stopped(cap) from None
    return Judged(values, unscored)


def estimate(client: JudgeClient, criteria: Sequence[Criterion], rows: Sequence[Datum],
             extra: Sequence[Request] = (), unknown: int = 0) -> CallEstimate:
    """Calls to judge each of ``criteria`` on ``rows`` plus the ``extra`` requests, minus those cached;
    ``unknown`` more calls for candidates whose prompt depends on a reply not made yet (an upper bound)."""
    asks = [request(c, row) for c in criteria for row in rows
            if not ("prediction" in c.inputs and not (row.prediction or "").strip())] + list(extra)
    keys = {client.cache_key(list(r.messages), r.schema, prompt_version=r.version): r for r in asks}
    cached = set(client.cached_values(list(keys)))
    fresh = [r for k, r in keys.items() if k not in cached]
    tokens = sum(estimate_tokens(m["content"]) for r in fresh for m in r.messages)
    per_call = tokens / len(fresh) if fresh else 0
    tokens += int(per_call * unknown)
    calls = len(fresh) + unknown
    settings = client.settings
    return CallEstimate(calls, len(keys) - len(fresh), tokens,
                        settings.price(tokens, calls * min(settings.max_tokens, 200)), unknown)
