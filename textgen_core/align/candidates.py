"""Candidate edits of a criterion, made from the training cells only (the held-out cells are never shown).

* **few-shot**: training cells where the judge and people disagree, largest disagreement first, added to the
  definition as worked examples with the people's verdict and note;
* **rewrite**: the judge model is shown the criterion and the training disagreements and proposes new
  criterion words and steps (one reflective call; its prompt is kept to show);
* **both**: the rewrite with the few-shot examples;
* **yours**: a definition the analyst wrote (a TOML file or the dashboard's editor), checked like any other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Sequence

from ..errors import ParameterError
from ..judge.metrics.criteria import Criterion, Example, criterion
from ..judge.metrics.criteria.definition import MAX_EXAMPLES
from ..judge.prompting import STRING, Request, fence, messages, strict_object
from ..model import Datum

#: Characters of one input an example or the reflective prompt shows (longer texts are cut, and say so).
SHOWN_CHARS = 1500
#: Training disagreements the reflective call is shown at most.
REFLECT_CELLS = 20
REWRITE_VERSION = "align.rewrite/1"
REWRITE_SYSTEM = (
    "You help an analyst make an LLM judge agree with people. You are shown the criterion the judge follows "
    "(its words and evaluation steps) and cases where the judge's verdict differed from the people's, with their "
    "notes. Find what the criterion fails to say that the people clearly care about, and rewrite the criterion "
    "and its steps so that a judge following them would give the people's verdicts. Keep what already works, "
    "state rules in general terms (never quote a case), and do not change the scale. Reply with JSON only: "
    "\"criteria\" (the new criterion text) and \"steps\" (a list of short evaluation steps).")
REWRITE_SCHEMA = strict_object({"criteria": STRING, "steps": {"type": "array", "items": STRING}})


@dataclass(frozen=True)
class TrainingCell:
    """A labelled training cell: its row, the people's value, the judge's current value, their note."""

    row: Datum
    people: float
    judge: float | None
    note: str = ""


@dataclass(frozen=True)
class Candidate:
    """A proposed version of the criterion and where it came from."""

    kind: str
    criterion: Criterion
    #: The reflective call's prompt (rewrite and both), shown to the analyst.
    prompt: str = ""


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + " [cut]"


def _input_text(row: Datum, name: str) -> str:
    if name == "query":
        return row.query or ""
    if name == "prediction":
        return row.prediction or ""
    if name in ("references", "contexts"):
        items = row.references if name == "references" else row.contexts
        return "\n\n".join(str(i) for i in (items or ()))
    value = row.metadata.get(name)
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def verdict_of(base: Criterion, value: float) -> Any:
    """The verdict that gives the cell value ``value``: the rating itself, or a (non-)passing label."""
    out = base.output
    if out.type == "rating":
        return int(round(value))
    passing = value >= 0.5
    return next(c for c in out.choices if (c in out.passing) == passing)


def disagreements(base: Criterion, cells: Sequence[TrainingCell]) -> list[TrainingCell]:
    """Training cells where the judge's value differs from the people's, largest difference first."""
    found = [c for c in cells if c.judge is not None and c.judge != c.people]
    return sorted(found, key=lambda c: (-abs(float(c.judge) - c.people), c.row.datum_id, c.row.model))


def few_shot(base: Criterion, cells: Sequence[TrainingCell]) -> Candidate | None:
    """The base with up to :data:`MAX_EXAMPLES` training disagreements as worked examples (None: no disagreement)."""
    picked = disagreements(base, cells)[:MAX_EXAMPLES - len(base.examples)]
    if not picked:
        return None
    examples = tuple(Example(tuple((name, _cut(_input_text(c.row, name))) for name in base.inputs),
                             verdict_of(base, c.people), " ".join(c.note.split()))
                     for c in picked)
    return Candidate("few-shot", replace(base, examples=base.examples + examples))


def rewrite_request(base: Criterion, cells: Sequence[TrainingCell]) -> Request | None:
    """The one reflective request (None: no training disagreement to learn from)."""
    picked = disagreements(base, cells)[:REFLECT_CELLS]
    if not picked:
        return None
    field = base.output.field
    parts = [fence("Criterion", base.criteria)]
    if base.steps:
        parts.append(fence("Evaluation steps", "\n".join(f"{i}. {s}" for i, s in enumerate(base.steps, start=1))))
    for i, cell in enumerate(picked, start=1):
        shown = "\n\n".join(fence(name, _cut(_input_text(cell.row, name))) for name in base.inputs)
        said = (f"Judge's {field}: {json.dumps(verdict_of(base, float(cell.judge)))}; people's {field}: "
                f"{json.dumps(verdict_of(base, cell.people))}")
        if cell.note:
            said += f"; their note: {json.dumps(cell.note, ensure_ascii=False)}"
        parts.append(f"Case {i}:\n{shown}\n{said}")
    return Request("align.rewrite", REWRITE_VERSION, messages(REWRITE_SYSTEM, "\n\n".join(parts)), REWRITE_SCHEMA,
                   placeholder={"criteria": base.criteria, "steps": list(base.steps)})


def from_rewrite(base: Criterion, reply: Any, prompt: str) -> Candidate:
    """The rewrite candidate from the reflective reply; a reply that is not a usable definition is refused."""
    try:
        made = criterion(base.as_dict() | {"criteria": reply.get("criteria"), "steps": reply.get("steps") or []},
                         "the judge's rewrite")
    except (ParameterError, AttributeError) as exc:
        raise ParameterError(f"the judge's rewrite is not a usable criterion: {exc}") from None
    return Candidate("rewrite", made, prompt)


def both(rewrite: Candidate, shots: Candidate) -> Candidate:
    return Candidate("both", replace(rewrite.criterion, examples=shots.criterion.examples), rewrite.prompt)


def yours(base: Criterion, raw: Any, where: str) -> Candidate:
    """The analyst's own edit: it must keep the criterion's name, inputs and output (the scale the labels use)."""
    made = criterion(raw, where)
    for key in ("name", "inputs", "output"):
        if getattr(made, key) != getattr(base, key):
            raise ParameterError(f"candidate {where}: key {key!r} must stay as in {base.name} (labels and runs "
                                 f"depend on it); change the criterion words, steps or examples")
    return Candidate(f"yours ({where})", made)


def prompt_text(request: Request) -> str:
    """The reflective call's messages as one text, for showing."""
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in request.messages)
