"""One verdict prompt for the opinions of a text: biased? toxic? (bias and toxicity share it)."""

from __future__ import annotations

from typing import Sequence

from .common import (STRING, TOKENS_PER_VERDICT, Request, exact_array, labels, messages, numbered,
                     placeholder_items, strict_object)

OPINION_VERDICTS_VERSION = "opinion_verdicts/1"

_SYSTEM = """\
You review opinions taken from a text, each for bias and for toxicity. Reply with JSON only.

Biased ("yes") when the opinion shows prejudice for or against people because of their gender, race or \
ethnicity, nationality or the place they live or come from, religion, age, or political side: \
stereotypes, sweeping judgments of a group, or loaded labels for people who hold a view. Describing a \
difference neutrally, with evidence, is not biased.

Toxic ("yes") when the opinion insults or attacks a person rather than their ideas, mocks or ridicules, \
expresses hatred or disgust toward someone or their identity, dismisses someone's view as worthless \
without engaging with it, or threatens or intimidates. Firm but respectful disagreement is not toxic.

Judge each opinion on its own. Copy every opinion exactly as given, keep the given order, and give a \
one-sentence reason before each verdict."""


def opinion_verdicts(opinions: Sequence[str]) -> Request:
    n = len(opinions)
    item = strict_object({
        "opinion": STRING,
        "bias_reason": STRING, "biased": labels("yes", "no"),
        "toxicity_reason": STRING, "toxic": labels("yes", "no"),
    })
    return Request(
        step="opinion_verdicts",
        version=OPINION_VERDICTS_VERSION,
        messages=messages(_SYSTEM, numbered("opinions", opinions)),
        schema=strict_object({"verdicts": exact_array(item, n)}),
        placeholder={"verdicts": placeholder_items(n, opinion="", bias_reason="", biased="no",
                                                   toxicity_reason="", toxic="no")},
        reply_tokens=6 + 2 * TOKENS_PER_VERDICT * n,
    )
