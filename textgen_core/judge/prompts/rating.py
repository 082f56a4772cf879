"""Direct 1-5 ratings: coherence of a text, and coherence of a summary given its source."""

from __future__ import annotations

from .common import STRING, TOKENS_PER_RATING, Request, block, messages, strict_object

COHERENCE_VERSION = "coherence/1"
SUMMARY_COHERENCE_VERSION = "summary_coherence/1"

_SCORE = {"type": "integer", "enum": [1, 2, 3, 4, 5]}

_COHERENCE_SYSTEM = """\
You rate the coherence of a text on a scale from 1 to 5. Coherence is the collective quality of its \
sentences: each builds on what came before, the ideas follow a logical order, and together they form a \
well-structured whole rather than a heap of loosely related sentences. Judge the text alone: not whether \
it is true, and not how well it fits any task.

5: clearly organized and easy to follow from start to end.
4: well organized, with a minor jump or an awkward transition.
3: understandable, but the order or the links between ideas get in the way.
2: mostly disjointed; the reader has to reconstruct how the ideas connect.
1: incoherent.

Reply with JSON only: a short reason first, then the score."""

_SUMMARY_SYSTEM = """\
You rate a summary of a source text on a scale from 1 to 5 for coherence: how well the summary, taken \
as a whole, presents the key points of the source in a logical, well-organized account that a reader \
can follow without the source.

5: covers the key points of the source in a clear, well-structured order.
4: covers the key points, with a minor gap or an awkward transition.
3: misses some key points, or its organization makes it harder to follow.
2: misses most key points, or reads as a list of loosely related facts.
1: incoherent, or unrelated to the source.

Reply with JSON only: a short reason first, then the score."""


def coherence(prediction: str) -> Request:
    return Request(
        step="coherence",
        version=COHERENCE_VERSION,
        messages=messages(_COHERENCE_SYSTEM, block("text", prediction)),
        schema=strict_object({"reason": STRING, "score": _SCORE}),
        placeholder={"reason": "", "score": 3},
        reply_tokens=TOKENS_PER_RATING,
    )


def summary_coherence(source: str, summary: str) -> Request:
    return Request(
        step="summary_coherence",
        version=SUMMARY_COHERENCE_VERSION,
        messages=messages(_SUMMARY_SYSTEM, block("source", source) + "\n\n" + block("summary", summary)),
        schema=strict_object({"reason": STRING, "score": _SCORE}),
        placeholder={"reason": "", "score": 3},
        reply_tokens=TOKENS_PER_RATING,
    )
