"""Pairwise preference: which of two models' answers is better, asked in both orders.

For each datum, each model other than the baseline is compared with the baseline's
answer. The judge sees the question, the reference answers when there are any, and
the two answers as "Answer A" and "Answer B", and names the better one (or a tie)
with its reason. It is asked twice, baseline first and candidate first; a verdict
counts only when both orders agree. The candidate's cell is 1 (preferred both
times), 0 (the baseline preferred both times) or 0.5 (a tie both times, or the two
orders disagree: "order-inconsistent"); both verdicts, both reasons and both
answers' lengths are in its details, for the flip rate and the length-bias probe.
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

from ...metrics.spec import Param
from ...model import Cell, Datum
from ..metric import Answer, Asker, JudgePlan, Outcome, StepFailed, declare, has_text, references, unscored
from ..prompting import STRING, Request, fence, labels, messages, strict_object

NAME = "pairwise_preference"
VERSION = "pairwise_preference/2"
BASELINE_FIRST, CANDIDATE_FIRST = "baseline first", "candidate first"
WIN, LOSS, TIE, INCONSISTENT = "win", "loss", "tie", "order-inconsistent"
IS_BASELINE = "baseline: the model the others are compared with"

SYSTEM = """\
Two answers to the same question are shown: Answer A and Answer B. Say which one answers the question \
better. Reply with JSON only: a short reason first, then the preference.

- "A": Answer A is better.
- "B": Answer B is better.
- "TIE": neither is better; they are equally good or equally poor.

Judge correctness first (against the reference answers when they are given), then whether the answer \
gives what the question asks for, then clarity. A longer answer is not better for being longer, and the \
order in which the answers are shown says nothing about their quality."""


def request(query: str, refs: Sequence[str], first: str, second: str) -> Request:
    parts = [fence("Question", query)]
    parts += [fence(f"Reference answer {i}", r) for i, r in enumerate(refs, start=1)]
    parts += [fence("Answer A", first), fence("Answer B", second)]
    return Request(NAME, VERSION, messages(SYSTEM, "\n\n".join(parts)),
                   strict_object({"reason": STRING, "preferred": labels("A", "B", "TIE")}),
                   placeholder={"reason": "", "preferred": "TIE"})


def baseline_of(params: Mapping[str, Any]) -> str | None:
    """The baseline model: the parameter, else the first model of the run's rows."""
    models = params.get("models") or ()
    return params.get("baseline") or (models[0] if models else None)


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    baseline = baseline_of(params)
    if baseline is None or baseline not in (params.get("models") or ()):
        return unscored(f"baseline model {baseline!r} is not among the run's models")
    if row.model == baseline:
        return unscored(IS_BASELINE)
    base = next((p for p in params.get("peers", ()) if p.model == baseline), None)
    if base is None:
        return unscored(f"the baseline {baseline} has no answer for this datum")
    if not has_text(row.query):
        return unscored("no query")
    lengths = {"candidate_words": _words(row.prediction), "baseline_words": _words(base.prediction)}
    empty = _empty_pair(has_text(base.prediction), has_text(row.prediction))
    if empty is not None:
        value, why = empty
        return Outcome(Cell(value, {"baseline": baseline, "outcome": why, **lengths}))
    refs = references(row)
    candidate, reference = row.prediction or "", base.prediction or ""
    first, second = await asyncio.gather(ask.ask(request(row.query or "", refs, reference, candidate)),
                                         ask.ask(request(row.query or "", refs, candidate, reference)))
    said_first = _preferred(first, {"A": "baseline", "B": "candidate"})
    said_second = _preferred(second, {"A": "candidate", "B": "baseline"})
    value, outcome = _agree(said_first, said_second)
    details = {"baseline": baseline, "outcome": outcome, **lengths,
               BASELINE_FIRST: said_first, CANDIDATE_FIRST: said_second,
               "reasons": {BASELINE_FIRST: _reason(first), CANDIDATE_FIRST: _reason(second)}}
    rows = [(NAME, 0, f"{BASELINE_FIRST}: A = {baseline}, B = {row.model}", said_first, _reason(first),
             first.cache_key),
            (NAME, 1, f"{CANDIDATE_FIRST}: A = {row.model}, B = {baseline}", said_second, _reason(second),
             second.cache_key)]
    return Outcome(Cell(value, details), rows)


def _preferred(answer: Answer, roles: Mapping[str, str]) -> str:
    """'baseline', 'candidate' or 'tie' from one order's reply; anything else fails the step (never a silent tie)."""
    said = str(answer.value.get("preferred") if isinstance(answer.value, Mapping) else None)
    if said == "TIE":
        return "tie"
    if said not in roles:
        raise StepFailed(f"the judge named no answer: preferred {said!r}")
    return roles[said]


def _reason(answer: Answer) -> str:
    return str(answer.value.get("reason", "")) if isinstance(answer.value, Mapping) else ""


def _agree(first: str, second: str) -> tuple[float, str]:
    """The candidate's cell from the two orders' preferences: counted only when both agree."""
    if first != second:
        return 0.5, INCONSISTENT
    return {"candidate": (1.0, WIN), "baseline": (0.0, LOSS)}.get(first, (0.5, TIE))


def _empty_pair(baseline_has: bool, candidate_has: bool) -> tuple[float, str] | None:
    """An empty answer loses to any answer, and two empty answers tie, without a judge call."""
    if baseline_has and candidate_has:
        return None
    if not baseline_has and not candidate_has:
        return 0.5, "tie: both answers empty"
    return (1.0, "win: the baseline's answer is empty") if candidate_has else (0.0, "loss: empty prediction")


def _words(text: str | None) -> int:
    return len((text or "").split())


SPEC = declare(
    NAME, "Pairwise preference",
    "Is this model's answer preferred to the baseline model's? 1 when the judge prefers it in both orders "
    "(shown first and shown second), 0 when it prefers the baseline's in both, 0.5 for a tie or when the "
    "two orders disagree (order-inconsistent).",
    ("query", "prediction"),
    JudgePlan(score, (request("q", ["r"], "a", "b"),), empty="n/a", peers=True),
    "Two judge calls per datum and candidate (baseline first, then candidate first); the reference answers "
    "are shown when the datum has any. The baseline's own cells are unscored ('baseline'). A datum the "
    "baseline has no row for is unscored. An empty answer loses to a non-empty one and two empty answers "
    "tie, without a judge call. Per model, the Compare and Results pages show wins / ties / losses, the win "
    "rate with a bootstrap interval, the flip rate (order-inconsistent share) and how often the longer "
    "answer is preferred (length bias).",
    params=(Param("baseline", "str", None, "model every other model is compared with (default: the first "
                  "model of the dataset)"),),
)
