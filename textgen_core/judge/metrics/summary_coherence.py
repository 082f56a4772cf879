"""Summary coherence: a 1-5 rating of a summary given its source text (seed definition)."""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Datum
from ..metric import Asker, JudgePlan, Outcome, declare, has_text, unscored
from ..prompting import Request, fence
from . import _rating

VERSION = "summary_coherence/2"

SYSTEM = f"""\
Rate a summary of a source text from 1 to 5 for coherence: how well the summary, taken as a whole, \
presents the key points of the source in a logical, well-organized account that a reader can follow \
without the source.

5: covers the key points of the source in a clear, well-structured order.
4: covers the key points, with a minor gap or an awkward transition.
3: misses some key points, or its organization makes it harder to follow.
2: misses most key points, or reads as a list of loosely related facts.
1: incoherent, or unrelated to the source.

{_rating.CLOSING}"""


def request(source: str, summary: str) -> Request:
    return _rating.request("summary_coherence", VERSION, SYSTEM,
                           fence("Source", source) + "\n\n" + fence("Summary", summary))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    if not has_text(row.query):
        return unscored("no source text (the query column holds the text that was summarized)")
    return await _rating.rate(ask, request(row.query or "", row.prediction or ""), "summary")


SPEC = declare(
    "summary_coherence", "Summary coherence",
    "1-5 rating of how coherently the prediction summarizes the source text held in the query column.",
    ("query", "prediction"), JudgePlan(score, (request("s", "p"),), empty="unscored"),
    "The query column holds the text that was summarized; no source: unscored. A rating written 4, 4.0 or "
    "\"4\" is read as 4.", value_range=(1.0, 5.0))
