"""Summary coherence: a 1-5 rating of a summary given its source text (seed definition)."""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Datum
from ..metric import Asker, JudgePlan, Outcome, declare
from ..prompting import Request, fence
from ..ratings import RATING
from ._rating import CLOSING, rate, request as rating_request

VERSION = "summary_coherence/3"

SYSTEM = f"""\
Rate a summary of a source text from 1 to 5 for coherence: how well it presents the source's key points \
as a logical, well-organized account a reader can follow without the source.
5: the key points, clear and well structured. 4: the key points, with a minor gap or awkward transition. \
3: misses some key points, or is hard to follow. 2: misses most key points, or is a list of loosely \
related facts. 1: incoherent, or unrelated to the source.
{CLOSING}"""


def request(source: str, summary: str) -> Request:
    return rating_request("summary_coherence", VERSION, SYSTEM,
                           fence("Source", source) + "\n\n" + fence("Summary", summary))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    return await rate(ask, request(row.query or "", row.prediction or ""), "summary", params)


SPEC = declare(
    "summary_coherence", "Summary coherence",
    "1-5 rating of how coherently the prediction summarizes the source text held in the query column.",
    ("query", "prediction"), JudgePlan(score, (request("s", "p"),), empty="unscored",
                                          input_names={"query": "source text (the query column holds the text "
                                                                "that was summarized)"}),
    "The query column holds the text that was summarized; no source: unscored. A rating written 4, 4.0 or "
    "\"4\" is read as 4.", value_range=(1.0, 5.0), params=(RATING,),
    departures=(
        "No source text (an empty query column): unscored; the seed system asks the judge with an empty source "
        "and reports its rating. A summary of nothing cannot be rated against its source.",
        "Empty prediction: unscored (\"empty prediction\"); the seed system asks the judge to rate the empty "
        "summary and reports that rating.",
        "The judge writes a one-sentence reason before its rating and reads a sentence per level of the scale; "
        "the seed system asks for the bare number. The reason is kept so every rating can be checked, and "
        "describing the levels keeps ratings comparable between judges."))
