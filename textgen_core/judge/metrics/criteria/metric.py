"""A custom judge metric's prompt, row scorer and declaration, built from its definition.

The prompt is ours, not the analyst's: the definition's words go into a fixed
frame (the criterion, the steps, the scale or labels), the row's data is
fenced, the judge writes a reason before its verdict, and the reply has a
strict schema (the client falls back to JSON mode or plain text and re-asks
once when a reply does not fit). So a custom metric keeps every promise of the
built-in ones: unscored with a reason, never flattered by an empty prediction,
cached, fingerprinted (the step's version carries a hash of the definition),
batched, capped and estimated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any, Mapping

from ....metrics.spec import MetricSpec
from ....model import Cell, Datum
from ...metric import Asker, JudgePlan, Outcome, contexts, declare, has_text, references, unscored
from ...prompting import STRING, Request, fence, labels, messages, passages, strict_object
from ...ratings import RATING, asking_weights, rating_cell, wants_weights
from .definition import FIELDS, Criterion

#: The sample row every definition's sample request is built from (prompt hash and --dry-run shapes).
_SAMPLE = Datum("sample", "model", "Sample question?", "Sample answer.", ("Sample reference.",),
                ("Sample passage.",), {})


def version(c: Criterion) -> str:
    """The step's prompt version: the metric's name and a hash of its definition (an edit is a new version)."""
    return f"custom.{c.name}/{c.digest()}"


def _what(c: Criterion) -> str:
    out = c.output
    if out.type == "rating":
        return f'"score", a whole number from {out.min} to {out.max}'
    if out.type == "labels":
        return f'"label", one of {", ".join(json.dumps(label) for label in out.labels)}'
    return '"verdict", "yes" or "no"'


def system_prompt(c: Criterion) -> str:
    """The frame the definition's words are set in (made once per definition: it is the same for every row,
    and rendering its worked examples cost up to 2 ms a request)."""
    try:
        hash(c)
    except TypeError:  # an example's verdict that is not hashable (a definition built in Python)
        return _frame(c)
    return _cached_frame(c)


def _frame(c: Criterion) -> str:
    out = c.output
    parts = [f"Judge the data below by an analyst's criterion, {json.dumps(c.title, ensure_ascii=False)}. "
             f"Reply with JSON only: a one-sentence \"reason\" first, then {_what(c)}.",
             f"Criterion:\n{c.criteria}"]
    if c.steps:
        parts.append("Evaluation steps:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(c.steps, start=1)))
    if out.type == "rating" and out.levels:
        parts.append("Scale:\n" + "\n".join(f"{level}: {text}" for level, text in
                                            zip(range(out.min, out.max + 1), out.levels)))
    elif out.type == "rating":
        parts.append(f"Scale: {out.min} is the lowest rating, {out.max} the highest.")
    elif out.type == "labels":
        parts.append("Give the one label that fits best.")
    else:
        parts.append('Answer the criterion: "yes" or "no".')
    if c.examples:
        parts.append(_examples(c))
    parts.append("Judge only what is shown. An answer that is missing or says nothing meets no criterion.")
    return "\n\n".join(parts)


#: Equal definitions (their source aside, which the prompt does not show) have equal frames.
_cached_frame = lru_cache(maxsize=64)(_frame)


def _examples(c: Criterion) -> str:
    """The worked examples, their data fenced like a row's, each with the people's verdict and note."""
    field = c.output.field
    shown = []
    for i, example in enumerate(c.examples, start=1):
        blocks = [fence(_LABELS.get(name, name), text) for name, text in example.inputs]
        said = f"People's {field}: {json.dumps(example.verdict, ensure_ascii=False)}"
        if example.note:
            said += f". Their note: {json.dumps(example.note, ensure_ascii=False)}"
        shown.append(f"Example {i}:\n" + "\n\n".join(blocks) + f"\n{said}")
    return ("Worked examples (data people judged; judge new data the way they did):\n\n"
            + "\n\n".join(shown))


#: How an example's input is labelled in the prompt (as the row's own inputs are).
_LABELS = {"query": "Question", "prediction": "Answer", "references": "Reference answer", "contexts": "Passage"}


def _shown(c: Criterion, row: Datum) -> str:
    """The row's inputs, fenced, in the definition's order."""
    blocks = []
    for name in c.inputs:
        if name == "query":
            blocks.append(fence("Question", row.query or ""))
        elif name == "prediction":
            blocks.append(fence("Answer", row.prediction or ""))
        elif name == "references":
            blocks += [fence(f"Reference answer {i}", r) for i, r in enumerate(references(row), start=1)]
        elif name == "contexts":
            blocks.append(passages(contexts(row)))
        else:
            blocks.append(fence(name, _metadata_text(row.metadata.get(name))))
    return "\n\n".join(b for b in blocks if b)


def _metadata_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def request(c: Criterion, row: Datum) -> Request:
    out = c.output
    verdict: dict[str, Any] = ({"type": "integer", "enum": list(out.choices)} if out.type == "rating"
                               else labels(*out.choices))
    return Request(f"custom.{c.name}", version(c), messages(system_prompt(c), _shown(c, row)),
                   strict_object({"reason": STRING, out.field: verdict}),
                   placeholder={"reason": "", out.field: out.worst()})


def scorer(c: Criterion):  # noqa: ANN201 - a CellScorer
    """The row scorer: a missing metadata input is unscored, otherwise one judge call gives the cell."""
    out = c.output

    async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
        for column in c.metadata_columns:
            if not has_text(_metadata_text(row.metadata.get(column))):
                return unscored(f"no {column} (metadata column)")
        req = request(c, row)
        weighted = out.type == "rating" and wants_weights(params)
        if weighted:
            req = asking_weights(req, out.field)
        answer = await ask.ask(req)
        verdict = answer.value[out.field]
        verdict = int(verdict) if out.type == "rating" else str(verdict)
        reason = str(answer.value.get("reason", ""))
        cell = (rating_cell(verdict, answer, out.choices, params, out.field) if out.type == "rating"
                else Cell(out.value(verdict), {out.field: verdict}))
        return Outcome(cell, [(req.step, 0, "answer", str(verdict), reason, answer.cache_key)])

    return score


def describe_output(c: Criterion) -> str:
    out = c.output
    if out.type == "rating":
        return f"a rating from {out.min} to {out.max}"
    if out.type == "labels":
        return f"a label ({', '.join(out.labels)}); 1 for {', '.join(out.passing)}, 0 otherwise"
    return f"yes or no; 1 for {out.passing[0]}, 0 otherwise"


@dataclass(frozen=True)
class CustomSpec(MetricSpec):
    """A custom metric's declaration: a built-in judge metric's, plus the metadata columns its judge is shown,
    which the run's preflight requires in the data (a misspelt column, or ``id``/``model``, which are mapped
    and so never metadata, is refused before anything is stored -- not a run of unscored cells)."""

    columns: tuple[str, ...] = ()

    def missing(self, available_fields: set[str], params: Mapping[str, Any]) -> list[str]:
        reasons = super().missing(available_fields, params)
        for column in self.columns:
            if column not in available_fields:
                mapped = " (it is mapped as the datum's id or model, never shown to a judge)" \
                    if column in ("id", "model", "datum_id") else ""
                reasons.append(f"input {column!r} of its definition is not a column of this dataset{mapped}")
        return reasons


def spec(c: Criterion) -> MetricSpec:
    """The metric's one declaration, like a built-in judge metric's."""
    needs = tuple(i for i in FIELDS if i in c.inputs)
    out = c.output
    sample = replace(_SAMPLE, metadata={column: f"Sample {column}." for column in c.metadata_columns})
    plan = JudgePlan(scorer(c), (request(c, sample),), empty="unscored" if "prediction" in c.inputs else "n/a")
    shown = ", ".join(c.inputs)
    notes = (f"Custom judge metric ({c.source or 'defined in Python'}; definition {c.digest()}). The judge sees "
             f"{shown} and gives {describe_output(c)}, after a one-sentence reason. A metadata input that is "
             "empty leaves the cell unscored. Editing the definition changes its prompt version, so a run is "
             "never resumed with another definition. Not a metric of the seed system.")
    made = declare(c.name, c.title, " ".join(c.criteria.split()), needs, plan, notes, direction=c.direction,
                   value_range=(float(out.min), float(out.max)) if out.type == "rating" else (0.0, 1.0),
                   params=(RATING,) if out.type == "rating" else ())
    return CustomSpec(**{f.name: getattr(made, f.name) for f in fields(made)}, columns=c.metadata_columns)
