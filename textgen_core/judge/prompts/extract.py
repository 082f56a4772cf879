"""Extraction steps: the statements and opinions of a text, asked once and reused by many metrics."""

from __future__ import annotations

from .common import (STRING, TOKENS_PER_EXTRACTED, Request, block, free_array, guess_units, messages,
                     strict_object)

PREDICTION_UNITS_VERSION = "prediction_units/1"
STATEMENTS_VERSION = "statements/1"

_STATEMENT_RULES = """\
A statement is one distinct assertion of the text, written so that it can be read on its own:
- Split sentences that assert several things into one statement per assertion.
- Replace pronouns and vague references with what they stand for; keep numbers, names, dates and \
qualifiers ("about", "usually", "in 2019") exactly.
- List every assertion, including wrong, hedged or off-topic ones and remarks that assert nothing \
checkable (such as an offer of further help). Do not judge them and do not add anything the text does \
not say.
- A bare short answer (a single name, number or phrase) is one statement, as written."""

_OPINION_RULES = """\
An opinion is the author's own subjective judgment, belief or evaluation ("this policy is a \
disaster", "the film is wonderful"). These are not opinions: verifiable facts; factual claims that \
happen to be false; and views the text attributes to someone else (a reported or cited view). Quote \
each opinion or paraphrase it closely."""

_UNITS_SYSTEM = f"""\
You break a text into the units that a grader will check later. Reply with JSON only.

"statements": {_STATEMENT_RULES}

"opinions": {_OPINION_RULES}

Use an empty list when the text has no statements or no opinions."""

_STATEMENTS_SYSTEM = f"""\
You break a text into statements that a grader will check later. Reply with JSON only.

{_STATEMENT_RULES}

Use an empty list when the text asserts nothing."""


def prediction_units(prediction: str) -> Request:
    """Statements and opinions of a model's output, in one exchange."""
    expected = guess_units(prediction)
    return Request(
        step="prediction_units",
        version=PREDICTION_UNITS_VERSION,
        messages=messages(_UNITS_SYSTEM, block("text", prediction)),
        schema=strict_object({"statements": free_array(STRING), "opinions": free_array(STRING)}),
        placeholder={"statements": _numbered("statement", expected),
                     "opinions": _numbered("opinion", max(1, expected // 3))},
        reply_tokens=10 + TOKENS_PER_EXTRACTED * (expected + max(1, expected // 3)),
    )


def statements(text: str) -> Request:
    """Statements of a reference answer."""
    expected = guess_units(text)
    return Request(
        step="reference_statements",
        version=STATEMENTS_VERSION,
        messages=messages(_STATEMENTS_SYSTEM, block("text", text)),
        schema=strict_object({"statements": free_array(STRING)}),
        placeholder={"statements": _numbered("statement", max(1, expected))},
        reply_tokens=8 + TOKENS_PER_EXTRACTED * max(1, expected),
    )


def _numbered(kind: str, count: int) -> list[str]:
    """Distinct stand-in items for the estimate (identical ones would be merged)."""
    return [f"({kind} {i})" for i in range(1, count + 1)]
