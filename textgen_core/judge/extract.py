"""The shared extraction steps: statements, claims and opinions of a text.

Each is one request per text, byte-identical wherever it is used, so the
engine asks it once: a prediction's statements serve answer correctness and
answer relevance; a reference's statements serve answer correctness and
context recall (and the prediction's, when the texts are equal); the opinions
serve bias and toxicity; the claims serve faithfulness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .metric import Asker, VerdictRow
from .prompting import (Request, fence, guess_claims, guess_opinions, guess_sentences, item_list, messages,
                        strict_object)

STATEMENTS_VERSION = "statements/3"
CLAIMS_VERSION = "claims/2"
OPINIONS_VERSION = "opinions/2"

_STATEMENTS = """\
Split a text into statements for a grader. Reply with JSON only: {"statements": [...]}.
A statement is one assertion that reads on its own: split compound sentences, replace pronouns with what \
they refer to, keep numbers, names, dates and qualifiers exactly. Keep every assertion, including wrong, \
hedged, off-topic or filler ones (such as an offer of help); judge nothing, add nothing. A bare short \
answer is one statement. No assertions: an empty list."""

_CLAIMS = """\
List the factual claims of a text for a fact-checker. Reply with JSON only: {"claims": [...]}.
A claim asserts something about the world that could be checked true or false. Write each as a \
self-contained sentence (pronouns replaced; numbers, names and dates exact), including claims that look \
wrong. Leave out greetings, offers of help, questions and the author's opinions. No claims: an empty list."""

_OPINIONS = """\
List the opinions a text expresses. Reply with JSON only: {"opinions": [...]}.
An opinion is the author's own subjective judgment or belief ("this law is a disaster"). Not opinions: \
verifiable facts, false factual claims, and views attributed to someone else. Quote or closely paraphrase \
each. None: an empty list."""


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


@dataclass(frozen=True)
class Extracted:
    """Items a judge extracted from a text, and the exchange they came from."""

    kind: str
    items: tuple[str, ...]
    cache_key: str | None

    def rows(self, step: str) -> list[VerdictRow]:
        """What was extracted; an empty extraction still leaves one row pointing at the exchange."""
        if not self.items:
            return [(step, 0, None, f"no {self.kind}s", None, self.cache_key)]
        return [(step, i, item, self.kind, None, self.cache_key) for i, item in enumerate(self.items)]


def _clean(items: object) -> tuple[str, ...]:
    """Extracted strings, whitespace-normalised, empty ones dropped, exact duplicates kept once."""
    seen: dict[str, None] = {}
    for item in items if isinstance(items, list) else ():
        text = " ".join(str(item).split())
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


async def _extract(ask: Asker, request: Request, field: str, kind: str) -> Extracted:
    answer = await ask.ask(request)
    return Extracted(kind, _clean(answer.value.get(field)), answer.cache_key)


async def statements(ask: Asker, text: str) -> Extracted:
    return await _extract(ask, statements_request(text), "statements", "statement")


async def claims(ask: Asker, text: str) -> Extracted:
    return await _extract(ask, claims_request(text), "claims", "claim")


async def opinions(ask: Asker, text: str) -> Extracted:
    return await _extract(ask, opinions_request(text), "opinions", "opinion")
