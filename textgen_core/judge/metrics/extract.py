"""The shared extraction steps: statements, claims and opinions of a text.

Each is one request per text, byte-identical wherever it is used, so the
engine asks it once: a prediction's statements serve answer correctness and
answer relevance; a reference's statements serve answer correctness and
context recall (and the prediction's, when the texts are equal); the opinions
serve bias and toxicity; the claims serve faithfulness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ...metrics.spec import Param

from ..metric import Asker, VerdictRow
from ..prompting import (Request, fence, guess_claims, guess_opinions, guess_sentences, item_list, messages,
                        strict_object)

STATEMENTS_VERSION = "statements/4"
CLAIMS_VERSION = "claims/3"
OPINIONS_VERSION = "opinions/3"

_STATEMENTS = """\
Split a text into statements for a grader. Reply with JSON only: {"statements": [...]}.
A statement is one thing the text says that reads on its own: split compound sentences, replace pronouns \
with what they refer to, keep numbers, names, dates and qualifiers exactly. Keep everything the text says, \
including wrong, hedged, off-topic or filler sentences (such as an offer of help) and questions (kept as \
questions); judge nothing, add nothing. A bare short answer or a single word is one statement. Say the \
same thing twice and it is listed twice. Nothing said: an empty list."""

_CLAIMS = """\
List the factual claims of a text for a fact-checker. Reply with JSON only: {"claims": [...]}.
A claim asserts something about the world that could be checked true or false. Write each as a \
self-contained sentence (pronouns replaced; numbers, names and dates exact), including claims that look \
wrong. Leave out greetings, offers of help, questions and the author's opinions. A claim made twice is \
listed twice. No claims: an empty list."""

_OPINIONS = """\
List the opinions a text expresses. Reply with JSON only: {"opinions": [...]}.
An opinion is the author's own subjective judgment or belief ("this law is a disaster"). Not opinions: \
verifiable facts, false factual claims, and views attributed to someone else. Quote or closely paraphrase \
each; an opinion voiced twice is listed twice. None: an empty list."""


def _request(step: str, version: str, system: str, field: str, text: str,
             guess: Callable[[str], list[str]]) -> Request:
    """The placeholder holds the sentences the judge will probably return, or one stand-in when none look likely:
    the verdicts built on them are still counted, so the call count stays an upper bound."""
    expected = guess(text) or [f"({field} 1)"]
    return Request(step, version, messages(system, fence("Text", text)), strict_object({field: item_list()}),
                   placeholder={field: expected})


def statements_request(text: str) -> Request:
    return _request("statements", STATEMENTS_VERSION, _STATEMENTS, "statements", text, guess_sentences)


def claims_request(text: str) -> Request:
    return _request("claims", CLAIMS_VERSION, _CLAIMS, "claims", text, guess_claims)


def opinions_request(text: str) -> Request:
    return _request("opinions", OPINIONS_VERSION, _OPINIONS, "opinions", text, guess_opinions)


#: One sample request per extraction step (versions and prompt hashes).
SAMPLES = (statements_request("Sample text."), claims_request("Sample text."), opinions_request("Sample text."))


#: How items a text repeats count, declared by every metric that counts extracted items.
DUPLICATES = Param(
    "duplicates", "choice", "all",
    "how an item the text repeats (the same sentence, claim or opinion twice) counts: 'all' counts each "
    "repeat, as the seed system does; 'distinct' counts it once. Either way the judge rules on it once.",
    choices=("all", "distinct"))

#: The note every metric with DUPLICATES adds.
DUPLICATES_NOTE = ("Repeated items count every time by default (duplicates = 'all', the seed system's rule), so "
                   "a model that loops is not flattered; the judge rules on each distinct item once.")


@dataclass(frozen=True)
class Extracted:
    """Items a judge extracted from a text (distinct, in first-seen order), how often each was listed,
    and the exchange they came from."""

    kind: str
    items: tuple[str, ...]
    cache_key: str | None
    #: How many times the judge listed each item (1 each when not given).
    repeats: tuple[int, ...] = ()

    def weights(self, params: Mapping[str, Any]) -> tuple[int, ...]:
        """What each item counts for under the ``duplicates`` parameter: its repeats, or 1."""
        if params.get("duplicates", "all") == "distinct" or not self.repeats:
            return (1,) * len(self.items)
        return self.repeats

    def total(self, params: Mapping[str, Any]) -> int:
        return sum(self.weights(params))

    def rows(self, step: str) -> list[VerdictRow]:
        """What was extracted; an empty extraction still leaves one row pointing at the exchange."""
        if not self.items:
            return [(step, 0, None, f"no {self.kind}s", None, self.cache_key)]
        counts = self.repeats or (1,) * len(self.items)
        return [(step, i, item, self.kind if n == 1 else f"{self.kind} x{n}", None, self.cache_key)
                for i, (item, n) in enumerate(zip(self.items, counts))]


def _clean(items: object) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Extracted strings, whitespace-normalised, empty ones dropped; repeats counted on the first."""
    seen: dict[str, int] = {}
    for item in items if isinstance(items, list) else ():
        text = " ".join(str(item).split())
        if text:
            seen[text] = seen.get(text, 0) + 1
    return tuple(seen), tuple(seen.values())


async def _extract(ask: Asker, request: Request, field: str, kind: str) -> Extracted:
    answer = await ask.ask(request)
    items, repeats = _clean(answer.value.get(field))
    return Extracted(kind, items, answer.cache_key, repeats)


async def statements(ask: Asker, text: str) -> Extracted:
    return await _extract(ask, statements_request(text), "statements", "statement")


async def claims(ask: Asker, text: str) -> Extracted:
    return await _extract(ask, claims_request(text), "claims", "claim")


async def opinions(ask: Asker, text: str) -> Extracted:
    return await _extract(ask, opinions_request(text), "opinions", "opinion")
